// tf::keras::Config: the JSON value of get_config() and config.json. Written as Python's
// json.dumps writes (", " and ": ", floats as repr, ints as ints, None as null); parsed with
// nlohmann-json (ordered, so keys keep the file's order).
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <tapeflow/core/error.hpp>
#include <tapeflow/keras/config.hpp>

namespace tapeflow::keras {

namespace {

const char* type_name(const Config& c) {
    if (c.is_null()) return "null";
    if (c.is_bool()) return "a bool";
    if (c.is_int()) return "an integer";
    if (c.is_number()) return "a number";
    if (c.is_string()) return "a string";
    if (c.is_array()) return "an array";
    return "an object";
}

[[noreturn]] void wrong_type(const Config& c, const char* want) {
    throw errors::InvalidArgumentError(
        fmt::format("Config: expected {} but the value is {} ({})", want, type_name(c), c.dump()));
}

void write_string(std::string& out, const std::string& s) {
    out += '"';
    for (char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        switch (ch) {
            case '"':
                out += "\\\"";
                break;
            case '\\':
                out += "\\\\";
                break;
            case '\n':
                out += "\\n";
                break;
            case '\r':
                out += "\\r";
                break;
            case '\t':
                out += "\\t";
                break;
            case '\b':
                out += "\\b";
                break;
            case '\f':
                out += "\\f";
                break;
            default:
                if (c < 0x20)
                    out += fmt::format("\\u{:04x}", c);
                else
                    out += ch;
        }
    }
    out += '"';
}

// Python's float repr as json.dumps writes it (NaN and Infinity as Python's extensions).
std::string python_float(double v) {
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
    std::string s = fmt::format("{}", v);
    if (s.find_first_of(".en") == std::string::npos) s += ".0";
    return s;
}

void write(std::string& out, const Config& c) {
    if (c.is_null()) {
        out += "null";
    } else if (c.is_bool()) {
        out += c.as_bool() ? "true" : "false";
    } else if (c.is_int()) {
        out += std::to_string(c.as_int());
    } else if (c.is_number()) {
        out += python_float(c.as_double());
    } else if (c.is_string()) {
        write_string(out, c.as_string());
    } else if (c.is_array()) {
        out += '[';
        bool first = true;
        for (const Config& v : c.as_array()) {
            if (!first) out += ", ";
            first = false;
            write(out, v);
        }
        out += ']';
    } else {
        out += '{';
        bool first = true;
        for (const auto& [k, v] : c.as_object()) {
            if (!first) out += ", ";
            first = false;
            write_string(out, k);
            out += ": ";
            write(out, v);
        }
        out += '}';
    }
}

Config from_json(const nlohmann::ordered_json& j) {
    switch (j.type()) {
        case nlohmann::ordered_json::value_t::null:
            return Config();
        case nlohmann::ordered_json::value_t::boolean:
            return Config(j.get<bool>());
        case nlohmann::ordered_json::value_t::number_integer:
        case nlohmann::ordered_json::value_t::number_unsigned:
            return Config(j.get<int64_t>());
        case nlohmann::ordered_json::value_t::number_float:
            return Config(j.get<double>());
        case nlohmann::ordered_json::value_t::string:
            return Config(j.get<std::string>());
        case nlohmann::ordered_json::value_t::array: {
            Config::Array a;
            for (const auto& v : j)
                a.push_back(from_json(v));
            return Config(std::move(a));
        }
        case nlohmann::ordered_json::value_t::object: {
            Config::Object o;
            for (const auto& [k, v] : j.items())
                o.emplace_back(k, from_json(v));
            return Config(std::move(o));
        }
        default:
            return Config();
    }
}

}  // namespace

Config Config::shape(const std::vector<int64_t>& dims) {
    Array a;
    for (int64_t d : dims) {
        if (d < 0)
            a.emplace_back();
        else
            a.emplace_back(d);
    }
    return Config(std::move(a));
}

bool Config::as_bool() const {
    if (!is_bool()) wrong_type(*this, "a bool");
    return std::get<bool>(value_);
}
int64_t Config::as_int() const {
    if (is_number() && !is_int()) {
        const double d = std::get<double>(value_);
        if (d == std::floor(d)) return static_cast<int64_t>(d);
    }
    if (!is_int()) wrong_type(*this, "an integer");
    return std::get<int64_t>(value_);
}
double Config::as_double() const {
    if (is_int()) return static_cast<double>(std::get<int64_t>(value_));
    if (!is_number()) wrong_type(*this, "a number");
    return std::get<double>(value_);
}
const std::string& Config::as_string() const {
    if (!is_string()) wrong_type(*this, "a string");
    return std::get<std::string>(value_);
}
const Config::Array& Config::as_array() const {
    if (!is_array()) wrong_type(*this, "an array");
    return std::get<Array>(value_);
}
const Config::Object& Config::as_object() const {
    if (!is_object()) wrong_type(*this, "an object");
    return std::get<Object>(value_);
}
std::vector<int64_t> Config::as_shape() const {
    std::vector<int64_t> dims;
    if (is_int()) return {as_int()};
    for (const Config& d : as_array())
        dims.push_back(d.is_null() ? -1 : d.as_int());
    return dims;
}

bool Config::contains(std::string_view key) const {
    if (!is_object()) return false;
    for (const auto& [k, v] : std::get<Object>(value_))
        if (k == key) return true;
    return false;
}

const Config& Config::operator[](std::string_view key) const {
    for (const auto& [k, v] : as_object())
        if (k == key) return v;
    throw errors::InvalidArgumentError(
        fmt::format("Config: no key \"{}\" in {}", key, dump().substr(0, 300)));
}

const Config& Config::operator[](std::size_t index) const {
    const Array& a = as_array();
    if (index >= a.size())
        throw errors::InvalidArgumentError(
            fmt::format("Config: index {} out of range for an array of {}", index, a.size()));
    return a[index];
}

Config Config::get(std::string_view key, Config fallback) const {
    return contains(key) ? (*this)[key] : fallback;
}

Config& Config::set(std::string key, Config value) {
    if (is_null()) value_ = Object{};
    if (!is_object()) wrong_type(*this, "an object");
    auto& o = std::get<Object>(value_);
    for (auto& [k, v] : o)
        if (k == key) {
            v = std::move(value);
            return *this;
        }
    o.emplace_back(std::move(key), std::move(value));
    return *this;
}

void Config::push_back(Config value) {
    if (is_null()) value_ = Array{};
    if (!is_array()) wrong_type(*this, "an array");
    std::get<Array>(value_).push_back(std::move(value));
}

std::string Config::dump() const {
    std::string out;
    write(out, *this);
    return out;
}

Config Config::parse(std::string_view json, std::string_view what) {
    auto j = nlohmann::ordered_json::parse(json.begin(), json.end(), nullptr, false);
    if (j.is_discarded()) throw errors::DataLossError(fmt::format("{} is not valid JSON", what));
    return from_json(j);
}

bool Config::operator==(const Config& other) const {
    return value_ == other.value_;
}

}  // namespace tapeflow::keras
