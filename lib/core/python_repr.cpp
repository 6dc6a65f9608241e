// python_repr: Python's float_repr_style 'short' layout over std::to_chars' shortest digits (both
// pick the shortest decimal that rounds back to the value, the nearer one on ties).
#include "core/python_repr.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>

namespace tapeflow {
namespace {

template <class F>
std::string repr_of(F v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
    char buf[64];
    char* end = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific).ptr;
    std::string s(buf, static_cast<std::size_t>(end - buf));  // [-]d[.ddd]e(+|-)XX
    std::string out;
    if (s[0] == '-') {
        out = "-";
        s.erase(0, 1);
    }
    const std::size_t epos = s.find('e');
    std::string digits = s.substr(0, 1);
    if (epos > 1) digits += s.substr(2, epos - 2);  // skip the '.'
    const int exp = std::atoi(s.c_str() + epos + 1);
    if (exp < -4 || exp >= 16) {
        out += digits.substr(0, 1);
        if (digits.size() > 1) out += "." + digits.substr(1);
        const int a = std::abs(exp);
        out += exp < 0 ? "e-" : "e+";
        if (a < 10) out += '0';
        out += std::to_string(a);
    } else if (exp >= 0) {
        const auto whole = static_cast<std::size_t>(exp) + 1;
        if (digits.size() <= whole) {
            out += digits + std::string(whole - digits.size(), '0') + ".0";
        } else {
            out += digits.substr(0, whole) + "." + digits.substr(whole);
        }
    } else {
        out += "0." + std::string(static_cast<std::size_t>(-exp - 1), '0') + digits;
    }
    return out;
}

}  // namespace

std::string python_repr(double v) {
    return repr_of(v);
}

std::string python_repr(float v) {
    return repr_of(v);
}

}  // namespace tapeflow
