// tf::Module: Keras' default names (snake case of the class, unique by a per-prefix counter),
// name scopes for the weights a module creates, and the depth-first variable collection.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <mutex>
#include <typeinfo>

#include <cxxabi.h>
#include <fmt/format.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/keras/module.hpp>

#include "autograd/autocast.hpp"

namespace tapeflow {
namespace keras::detail {

std::string snake_case(std::string_view s) {
    // Keras: "(.)([A-Z][a-z]+)" -> "\1_\2", then "([a-z])([A-Z])" -> "\1_\2", lower-cased.
    std::string first;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const bool upper = std::isupper(static_cast<unsigned char>(s[i])) != 0;
        const bool lower_next =
            i + 1 < s.size() && std::islower(static_cast<unsigned char>(s[i + 1]));
        if (i > 0 && upper && lower_next) first += '_';
        first += s[i];
    }
    std::string out;
    for (std::size_t i = 0; i < first.size(); ++i) {
        const auto c = static_cast<unsigned char>(first[i]);
        if (i > 0 && std::isupper(c) && std::islower(static_cast<unsigned char>(first[i - 1])))
            out += '_';
        out += static_cast<char>(std::tolower(c));
    }
    return out;
}

std::string unique_name(const std::string& prefix) {
    static std::mutex mutex;
    static std::map<std::string, int64_t> counts;
    const std::lock_guard lock(mutex);
    const int64_t uid = counts[prefix]++;
    return uid == 0 ? prefix : fmt::format("{}_{}", prefix, uid);
}

// The dynamic class's unqualified name ("MyModel" for `struct MyModel : tf::keras::Model`).
std::string class_name_of(const Module& m) {
    int status = 0;
    char* raw = abi::__cxa_demangle(typeid(m).name(), nullptr, nullptr, &status);
    std::string name = status == 0 && raw != nullptr ? raw : typeid(m).name();
    std::free(raw);
    if (const auto lt = name.find('<'); lt != std::string::npos) name.resize(lt);
    if (const auto colon = name.rfind("::"); colon != std::string::npos)
        name = name.substr(colon + 2);
    return name;
}

}  // namespace keras::detail

Module::Module(std::string name) : name_(std::move(name)) {}

Module::Module(std::string name, std::string_view class_name)
    : name_(name.empty() ? keras::detail::unique_name(keras::detail::snake_case(class_name))
                         : std::move(name)) {}

Module::~Module() = default;

const std::string& Module::name() const {
    // A subclass constructed through the public constructor without a name: the dynamic type is
    // only known once construction is over, so the default is taken on first use.
    if (name_.empty())
        name_ = keras::detail::unique_name(
            keras::detail::snake_case(keras::detail::class_name_of(*this)));
    return name_;
}

Module::Scope::Scope(const Module& module) : module_(module), names_(module.name()) {
    ++module_.open_scopes_;
}

Module::Scope::~Scope() {
    --module_.open_scopes_;
}

Variable Module::add_weight(std::string_view name,
                            const Shape& shape,
                            Initializer initializer,
                            DType dtype,
                            bool trainable) {
    auto make = [&] {
        return Variable(initializer(shape, dtype),
                        VariableOptions{.name = std::string(name), .trainable = trainable});
    };
    Variable v;
    if (open_scopes_ > 0) {
        v = make();
    } else {
        const Scope scope(*this);
        v = make();
    }
    if (autocasts_new_weights()) tapeflow::detail::set_autocast(v, true);
    variables_.push_back(v);
    variable_names_.emplace_back(name);  // the Keras attribute name ("kernel"), unlike v.name()
    return v;
}

void Module::track(const Variable& variable) {
    variables_.push_back(variable);
    variable_names_.emplace_back();
}

void Module::track_as(std::string name, const Variable& variable) {
    if (name.empty()) throw errors::InvalidArgumentError("Module::track_as: the name is empty");
    variables_.push_back(variable);
    variable_names_.push_back(std::move(name));
}

void Module::track_module(std::shared_ptr<Module> submodule, std::string name) {
    if (!submodule) return;
    children_.push_back(std::move(submodule));
    child_names_.push_back(std::move(name));
}

void Module::collect(std::vector<Variable>& out, std::vector<int64_t>& seen) const {
    for (const Variable& v : variables_) {
        if (std::find(seen.begin(), seen.end(), v.id()) != seen.end()) continue;
        seen.push_back(v.id());
        out.push_back(v);
    }
    for (const auto& child : children_)
        child->collect(out, seen);
}

std::vector<Variable> Module::variables() const {
    std::vector<Variable> out;
    std::vector<int64_t> seen;
    collect(out, seen);
    return out;
}

std::vector<Variable> Module::trainable_variables() const {
    std::vector<Variable> out;
    for (Variable& v : variables())
        if (v.trainable()) out.push_back(v);
    return out;
}

std::vector<Variable> Module::non_trainable_variables() const {
    std::vector<Variable> out;
    for (Variable& v : variables())
        if (!v.trainable()) out.push_back(v);
    return out;
}

std::vector<std::shared_ptr<Module>> Module::submodules() const {
    std::vector<std::shared_ptr<Module>> out;
    auto visit = [&](auto&& self, const Module& m) -> void {
        for (const auto& child : m.children_) {
            if (std::find(out.begin(), out.end(), child) != out.end()) continue;
            out.push_back(child);
            self(self, *child);
        }
    };
    visit(visit, *this);
    return out;
}

}  // namespace tapeflow
