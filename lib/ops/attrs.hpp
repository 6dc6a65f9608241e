// Attrs: the non-tensor arguments of one op call (axes, shapes, scalars, dtypes, strings), kept by
// name so kernels, gradient formulas and graph export (NodeDef attrs) all read the same record.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <tapeflow/core/dtype.hpp>
#include <tapeflow/core/error.hpp>
#include <tapeflow/core/shape.hpp>

namespace tapeflow {

using AttrValue =
    std::variant<bool, int64_t, double, std::string, std::vector<int64_t>, DType, Shape>;

class Attrs {
public:
    Attrs() = default;
    /// `name` must be a string literal (it is kept as a view).
    Attrs& set(std::string_view name, AttrValue value) {
        for (auto& [key, existing] : items_) {
            if (key == name) {
                existing = std::move(value);
                return *this;
            }
        }
        if (items_.empty()) items_.reserve(4);  // one allocation for most ops, not one per attr
        items_.emplace_back(name, std::move(value));
        return *this;
    }
    bool has(std::string_view name) const { return find(name) != nullptr; }
    /// The value of `name` as T; a missing attribute or another type is a tapeflow bug
    /// (InternalError).
    template <class T>
    const T& get(std::string_view name) const {
        const AttrValue* v = find(name);
        if (v == nullptr || !std::holds_alternative<T>(*v)) missing(name);
        return std::get<T>(*v);
    }
    const std::vector<std::pair<std::string_view, AttrValue>>& items() const { return items_; }

private:
    const AttrValue* find(std::string_view name) const {
        for (const auto& [key, value] : items_) {
            if (key == name) return &value;
        }
        return nullptr;
    }
    [[noreturn]] static void missing(std::string_view name) {
        throw errors::InternalError("op attribute '" + std::string(name) +
                                    "' is missing or has another type; this is a tapeflow bug");
    }
    std::vector<std::pair<std::string_view, AttrValue>> items_;
};

}  // namespace tapeflow
