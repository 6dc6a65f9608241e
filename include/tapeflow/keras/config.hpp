// tf::keras::Config: a JSON value (null, bool, integer, number, string, array, object with its
// keys in insertion order), what Keras' get_config() returns and config.json holds. dump() and
// parse() read and write JSON text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <tapeflow/core/export.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow::keras {

class Config {
public:
    using Array = std::vector<Config>;
    using Object = std::vector<std::pair<std::string, Config>>;  // insertion order, as Python

    Config() = default;                                 // null
    Config(std::nullptr_t) {}                           // NOLINT: a JSON literal
    Config(bool v) : value_(v) {}                       // NOLINT
    Config(int v) : value_(static_cast<int64_t>(v)) {}  // NOLINT
    Config(int64_t v) : value_(v) {}                    // NOLINT
    Config(double v) : value_(v) {}                     // NOLINT
    Config(const char* v) : value_(std::string(v)) {}   // NOLINT
    Config(std::string v) : value_(std::move(v)) {}     // NOLINT
    Config(Array v) : value_(std::move(v)) {}           // NOLINT
    Config(Object v) : value_(std::move(v)) {}          // NOLINT
    /// An empty object / array.
    static Config object() { return Config(Object{}); }
    static Config array() { return Config(Array{}); }
    /// An array of integers (shapes, kernel sizes, strides); -1 is written as null (None).
    static Config shape(const std::vector<int64_t>& dims);

    bool is_null() const { return value_.index() == 0; }
    bool is_bool() const { return value_.index() == 1; }
    bool is_int() const { return value_.index() == 2; }
    bool is_number() const { return value_.index() == 2 || value_.index() == 3; }
    bool is_string() const { return value_.index() == 4; }
    bool is_array() const { return value_.index() == 5; }
    bool is_object() const { return value_.index() == 6; }

    /// The value; another type raises InvalidArgumentError naming both (as_double takes ints).
    bool as_bool() const;
    int64_t as_int() const;
    double as_double() const;
    const std::string& as_string() const;
    const Array& as_array() const;
    const Object& as_object() const;
    /// An array of integers (null: -1).
    std::vector<int64_t> as_shape() const;

    /// Objects: whether `key` is there; the value (InvalidArgumentError naming the key when
    /// missing); get(key, fallback) for optional keys (a copy).
    bool contains(std::string_view key) const;
    const Config& operator[](std::string_view key) const;
    /// Arrays: element `index` (InvalidArgumentError when out of range).
    const Config& operator[](std::size_t index) const;
    const Config& operator[](int index) const { return (*this)[static_cast<std::size_t>(index)]; }
    Config get(std::string_view key, Config fallback) const;
    /// Sets `key` (added at the end when new); the object is created from null.
    Config& set(std::string key, Config value);
    /// Arrays: appends (the array is created from null).
    void push_back(Config value);

    /// JSON text, compact as Python's json.dumps (", " and ": " separators).
    std::string dump() const;
    /// Parses JSON text (DataLossError naming `what` when it is not JSON).
    static Config parse(std::string_view json, std::string_view what = "JSON text");

    bool operator==(const Config& other) const;

private:
    std::variant<std::monostate, bool, int64_t, double, std::string, Array, Object> value_;
};

}  // namespace tapeflow::keras

TAPEFLOW_API_END
