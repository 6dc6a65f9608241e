// format_tensor: TensorFlow 2's print(t), "tf.Tensor(<str(t.numpy())>, shape=..., dtype=...)".
// The array text ports NumPy 1.24's arrayprint with its default options (precision 8, threshold
// 1000, edgeitems 3, linewidth 75, floatmode 'maxprec', sign '-'). Float digits reproduce NumPy's
// Dragon4 (shortest round-trip digits for the element's own type) from exact decimal expansions.
#include "core/format.hpp"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <tapeflow/core/half.hpp>

namespace tapeflow {
namespace {

constexpr int64_t kThreshold = 1000;
constexpr int64_t kEdgeItems = 3;
constexpr std::size_t kLineWidth = 75;
constexpr int kPrecision = 8;
constexpr int kUnbounded = 1 << 20;

enum class FloatKind { f16, f32, f64 };

// sign * d1.d2...dn * 10^exponent; `digits` has no trailing zeros.
struct Decimal {
    bool negative = false;
    std::string digits = "0";
    int exponent = 0;
};

// The exact value of a finite non-zero |x| and the interval of reals that round to it in its own
// type, all as exact decimals. Dragon4 (and so NumPy) includes the ends when the mantissa is even.
struct Exact {
    Decimal value, lo, hi;
    bool inclusive = false;
};

void trim_zeros(std::string& digits) {
    while (digits.size() > 1 && digits.back() == '0')
        digits.pop_back();
}

// Every digit of a positive value. Half-way points between doubles need long double (slower); a
// half-way point is N * 2^(e - 53) with N < 2^54, so it has at most 17 + 0.7 * (53 - e) digits.
template <class F>
Decimal exact_decimal(F v) {
    const int e = std::ilogb(v);
    const int precision = std::min(800, 20 + (e < 53 ? (53 - e) * 7 / 10 : e * 31 / 100));
    char buf[900];
    const auto end =
        std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific, precision).ptr;
    const std::string_view s(buf, static_cast<std::size_t>(end - buf));
    const auto epos = s.find('e');
    Decimal d;
    d.digits.clear();
    for (char c : s.substr(0, epos)) {
        if (c != '.') d.digits += c;
    }
    trim_zeros(d.digits);
    const std::string_view exp = s.substr(epos + (s[epos + 1] == '+' ? 2 : 1));
    std::from_chars(exp.data(), exp.data() + exp.size(), d.exponent);
    return d;
}

// Compares positive decimals whose digits start non-zero and carry no trailing zeros.
int compare(const Decimal& a, const Decimal& b) {
    if (a.exponent != b.exponent) return a.exponent < b.exponent ? -1 : 1;
    return a.digits.compare(b.digits);
}

Exact exact_of(double x, FloatKind kind) {
    x = std::fabs(x);
    Exact e;
    double below = 0, above = 0;
    if (kind == FloatKind::f64) {
        below = std::nextafter(x, 0.0);
        above = std::nextafter(x, std::numeric_limits<double>::infinity());
        e.inclusive = (std::bit_cast<uint64_t>(x) & 1) == 0;
    } else if (kind == FloatKind::f32) {
        const auto f = static_cast<float>(x);
        below = std::nextafter(f, 0.0f);
        above = std::nextafter(f, std::numeric_limits<float>::infinity());
        e.inclusive = (std::bit_cast<uint32_t>(f) & 1) == 0;
    } else {
        const uint16_t bits = Half(static_cast<float>(x)).bits;
        below = static_cast<float>(Half::from_bits(static_cast<uint16_t>(bits - 1)));
        above = static_cast<float>(Half::from_bits(static_cast<uint16_t>(bits + 1)));
        e.inclusive = (bits & 1) == 0;
    }
    auto fill = [&](auto lx) {  // lx: a type that holds the half-way points exactly
        e.value = exact_decimal(lx);
        e.lo = exact_decimal((lx + below) / 2);
        e.hi = exact_decimal(std::isinf(above) ? lx + (lx - below) / 2 : (lx + above) / 2);
    };
    if (kind == FloatKind::f64)
        fill(static_cast<long double>(x));
    else
        fill(x);
    return e;
}

struct Rounded {
    Decimal value;
    bool unique = false;  // some n-digit decimal already rounds back to x: Dragon4 may stop here
};

// Dragon4 stopping after `n` significant digits: keep the truncation T or take T + 1 unit,
// whichever still rounds back to x; if both or neither do, round to nearest (ties to even digit).
Rounded round_at(const Exact& e, int n) {
    const auto len = static_cast<std::size_t>(n);
    Decimal t{false, e.value.digits.substr(0, len), e.value.exponent};
    t.digits.resize(len, '0');
    Decimal u = t;
    std::size_t i = len;
    while (i > 0 && u.digits[i - 1] == '9')
        u.digits[--i] = '0';
    if (i > 0) {
        ++u.digits[i - 1];
    } else {
        u.digits.insert(0, 1, '1');
        ++u.exponent;
    }
    const bool even_digit = (t.digits.back() - '0') % 2 == 0;
    trim_zeros(t.digits);
    trim_zeros(u.digits);

    const int lo_cmp = compare(t, e.lo), hi_cmp = compare(u, e.hi);
    const bool low = e.inclusive ? lo_cmp >= 0 : lo_cmp > 0;
    const bool high = e.inclusive ? hi_cmp <= 0 : hi_cmp < 0;
    bool down = low;
    if (low == high) {
        const std::string_view rest =
            len < e.value.digits.size() ? std::string_view(e.value.digits).substr(len) : "";
        if (rest.empty() || rest[0] != '5')
            down = rest.empty() || rest[0] < '5';
        else
            down = rest.size() == 1 && even_digit;
    }
    return {down ? t : u, low || high};
}

// Dragon4 in unique mode: digits until x is unique, but at least `min_n` and at most `max_n`
// digits; counted from the first significant digit, or with `from_units` from the units digit.
Decimal dragon4(double x, FloatKind kind, int min_n, int max_n, bool from_units = false) {
    Decimal d;
    d.negative = std::signbit(x);
    if (x == 0) return d;
    const Exact e = exact_of(x, kind);
    if (from_units) {
        min_n += e.value.exponent + 1;
        max_n += e.value.exponent + 1;
    }
    max_n = std::max(max_n, 1);
    for (int n = std::clamp(min_n, 1, max_n);; ++n) {
        Rounded r = round_at(e, n);
        if (r.unique || n >= max_n) {
            r.value.negative = d.negative;
            return r.value;
        }
    }
}

// Positional mode: at most 8 fractional digits; NumPy's min_digits=0 prints every integer digit.
Decimal positional_digits(double x, FloatKind kind) {
    return dragon4(x, kind, 0, kPrecision, true);
}

struct Split {
    std::string int_part, frac_part;
};

Split split_positional(const Decimal& d) {
    Split s;
    if (d.negative) s.int_part.push_back('-');
    if (d.exponent >= 0) {
        const auto n_int = static_cast<std::size_t>(d.exponent) + 1;
        std::string head = d.digits.substr(0, n_int);
        head.resize(n_int, '0');
        s.int_part += head;
        if (d.digits.size() > n_int) s.frac_part = d.digits.substr(n_int);
    } else {
        s.int_part += '0';
        s.frac_part = std::string(static_cast<std::size_t>(-d.exponent - 1), '0') + d.digits;
    }
    return s;
}

std::string exponent_text(int exponent, int min_digits) {
    return fmt::format("e{}{:0{}d}", exponent < 0 ? '-' : '+', std::abs(exponent), min_digits);
}

// Python's repr of a NumPy float scalar: positional for 1e-4 <= |x| < 1e16 (or 0), else scientific.
std::string float_scalar_text(double x, FloatKind kind) {
    if (std::isnan(x)) return "nan";
    if (std::isinf(x)) return x < 0 ? "-inf" : "inf";
    const Decimal d = dragon4(x, kind, 1, kUnbounded);
    const double a = std::fabs(x);
    if (a == 0 || (a >= 1e-4 && a < 1e16)) {
        const Split s = split_positional(d);
        return s.int_part + "." + (s.frac_part.empty() ? "0" : s.frac_part);
    }
    const std::string frac = d.digits.substr(1);
    return fmt::format("{}{}{}{}{}",
                       d.negative ? "-" : "",
                       d.digits[0],
                       frac.empty() ? "" : ".",
                       frac,
                       exponent_text(d.exponent, 2));
}

// NumPy's FloatingFormat: one layout (positional or scientific, with common paddings) for all
// shown values, so that decimal points line up.
class FloatFormat {
public:
    FloatFormat(const std::vector<double>& values, FloatKind kind) : kind_(kind) {
        std::vector<double> finite;
        for (double v : values) {
            if (std::isfinite(v)) finite.push_back(v);
        }
        choose_notation(finite);
        for (double v : finite) {
            if (scientific_) {
                const Decimal d = dragon4(v, kind_, 1, kPrecision + 1);
                pad_left_ = std::max(pad_left_, d.negative ? 2 : 1);
                precision_ = std::max(precision_, static_cast<int>(d.digits.size()) - 1);
                exp_size_ = std::max(exp_size_,
                                     static_cast<int>(std::to_string(std::abs(d.exponent)).size()));
            } else {
                const Split s = split_positional(positional_digits(v, kind_));
                pad_left_ = std::max(pad_left_, static_cast<int>(s.int_part.size()));
                pad_right_ = std::max(pad_right_, static_cast<int>(s.frac_part.size()));
            }
        }
        if (scientific_) pad_right_ = exp_size_ + 2 + precision_;
        if (finite.size() != values.size()) {  // room for "nan", "inf" and "-inf"
            const bool neg_inf = std::any_of(
                values.begin(), values.end(), [](double v) { return std::isinf(v) && v < 0; });
            pad_left_ = std::max({pad_left_, 3 - (pad_right_ + 1), 3 + neg_inf - (pad_right_ + 1)});
        }
    }

    std::string operator()(double v) const {
        if (!std::isfinite(v)) {
            const char* text = std::isnan(v) ? "nan" : v < 0 ? "-inf" : "inf";
            return fmt::format("{:>{}}", text, pad_left_ + pad_right_ + 1);
        }
        if (scientific_) {
            const Decimal d = dragon4(v, kind_, precision_ + 1, precision_ + 1);
            std::string frac = d.digits.substr(1);
            frac.resize(static_cast<std::size_t>(precision_), '0');
            const std::string head = fmt::format("{}{}", d.negative ? "-" : "", d.digits[0]);
            return fmt::format(
                "{:>{}}.{}{}", head, pad_left_, frac, exponent_text(d.exponent, exp_size_));
        }
        const Split s = split_positional(positional_digits(v, kind_));
        return fmt::format("{:>{}}.{:<{}}", s.int_part, pad_left_, s.frac_part, pad_right_);
    }

private:
    // Scientific when the non-zero magnitudes are too large, too small or too spread out.
    void choose_notation(const std::vector<double>& finite) {
        double max_abs = 0, min_abs = std::numeric_limits<double>::infinity();
        for (double v : finite) {
            if (v == 0) continue;
            max_abs = std::max(max_abs, std::fabs(v));
            min_abs = std::min(min_abs, std::fabs(v));
        }
        if (max_abs == 0) return;
        scientific_ = max_abs >= 1e8 || min_abs < 1e-4 || in_own_type(max_abs / min_abs) > 1000;
    }

    // NumPy divides max by min in the array's dtype (so float16 may overflow to inf).
    double in_own_type(double v) const {
        if (kind_ == FloatKind::f32) return static_cast<float>(v);
        if (kind_ == FloatKind::f16) return static_cast<float>(Half(static_cast<float>(v)));
        return v;
    }

    FloatKind kind_;
    bool scientific_ = false;
    int pad_left_ = 0, pad_right_ = 0, precision_ = 0, exp_size_ = 2;  // exponents have 2+ digits
};

// bfloat16 is not a NumPy float type: NumPy prints each element with the scalar's repr, which
// TensorFlow's bfloat16 type writes as C++ `ostream << float` does (%g, 6 digits), unpadded.
std::string bfloat16_text(float v) {
    if (std::isnan(v)) return "nan";
    char buf[32];
    const auto end = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, 6).ptr;
    return {buf, end};
}

// Flat indices of the elements NumPy shows, in print order: with summarizing, only the first and
// last `kEdgeItems` entries of each axis longer than 2 * kEdgeItems.
void shown_indices(const std::vector<int64_t>& dims,
                   std::size_t axis,
                   int64_t offset,
                   bool summarize,
                   std::vector<int64_t>& out) {
    if (axis == dims.size()) {
        out.push_back(offset);
        return;
    }
    const int64_t n = dims[axis];
    int64_t stride = 1;
    for (std::size_t a = axis + 1; a < dims.size(); ++a)
        stride *= dims[a];
    for (int64_t i = 0; i < n; ++i) {
        if (summarize && n > 2 * kEdgeItems && i == kEdgeItems) i = n - kEdgeItems;
        shown_indices(dims, axis + 1, offset + i * stride, summarize, out);
    }
}

template <class T>
std::vector<T> pick(const Tensor& t, const std::vector<int64_t>& indices) {
    const std::vector<T> all = t.to_vector<T>();
    std::vector<T> out;
    out.reserve(indices.size());
    for (int64_t i : indices)
        out.push_back(all[static_cast<std::size_t>(i)]);
    return out;
}

FloatKind float_kind(DType dtype) {
    return dtype == DType::float64   ? FloatKind::f64
           : dtype == DType::float32 ? FloatKind::f32
                                     : FloatKind::f16;
}

// The formatted shown elements, in print order, with NumPy's common width for the dtype.
std::vector<std::string> element_words(const Tensor& t, const std::vector<int64_t>& indices) {
    std::vector<std::string> words;
    switch (t.dtype()) {
        case DType::bool_:
            for (bool b : pick<bool>(t, indices))
                words.emplace_back(b ? " True" : "False");
            break;
        case DType::int32:
        case DType::int64:
        case DType::uint8: {
            std::size_t width = 0;
            for (int64_t v : pick<int64_t>(t, indices)) {
                words.push_back(std::to_string(v));
                width = std::max(width, words.back().size());
            }
            for (auto& w : words)
                w.insert(0, width - w.size(), ' ');
            break;
        }
        case DType::bfloat16:
            for (float v : pick<float>(t, indices))
                words.push_back(bfloat16_text(v));
            break;
        default: {
            const std::vector<double> values = pick<double>(t, indices);  // exact for all floats
            const FloatFormat format(values, float_kind(t.dtype()));
            for (double v : values)
                words.push_back(format(v));
        }
    }
    return words;
}

// Port of NumPy's _formatArray (legacy=False): nested brackets, rows wrapped at kLineWidth with
// continuation lines aligned after the brackets, blank lines between blocks of rank >= 3.
class ArrayWriter {
public:
    ArrayWriter(const std::vector<int64_t>& dims,
                bool summarize,
                const std::vector<std::string>& words)
        : dims_(dims), summarize_(summarize), words_(words) {}

    std::string write() { return recurse(0, " ", kLineWidth); }

private:
    std::string recurse(std::size_t axis, const std::string& indent, std::size_t width) {
        if (axis == dims_.size()) return words_[next_++];
        const int64_t n = dims_[axis];
        const bool summary = summarize_ && n > 2 * kEdgeItems;
        const int64_t shown = summary ? 2 * kEdgeItems : n;
        const std::string inner = indent + ' ';
        std::string s;
        if (axis + 1 == dims_.size()) {
            std::string line = indent;
            auto extend = [&](const std::string& word) {
                if (line.size() + word.size() > width - 1 && line.size() > indent.size()) {
                    s += line.substr(0, line.find_last_not_of(' ') + 1) + '\n';
                    line = indent;
                }
                line += word;
            };
            for (int64_t i = 0; i < shown; ++i) {
                if (summary && i == kEdgeItems) {
                    extend("...");
                    line += ' ';
                }
                extend(recurse(axis + 1, inner, width - 1));
                if (i + 1 < shown) line += ' ';
            }
            s += line;
        } else {
            const std::string separator(dims_.size() - axis - 1, '\n');
            for (int64_t i = 0; i < shown; ++i) {
                if (summary && i == kEdgeItems) s += indent + "..." + separator;
                s +=
                    indent + recurse(axis + 1, inner, width - 1) + (i + 1 < shown ? separator : "");
            }
        }
        std::string out(1, '[');  // the first line's indent gives way to the bracket
        out.append(s, indent.size());
        return out += ']';
    }

    const std::vector<int64_t>& dims_;
    bool summarize_;
    const std::vector<std::string>& words_;
    std::size_t next_ = 0;
};

std::string scalar_text(const Tensor& t) {
    switch (t.dtype()) {
        case DType::bool_:
            return t.item<bool>() ? "True" : "False";
        case DType::int32:
        case DType::int64:
        case DType::uint8:
            return std::to_string(t.item<int64_t>());
        case DType::bfloat16:
            return bfloat16_text(t.item<float>());
        case DType::float64:
            return float_scalar_text(t.item<double>(), FloatKind::f64);
        default:
            return float_scalar_text(t.item<float>(), float_kind(t.dtype()));
    }
}

// NumPy's str(ndarray): "[]" for any empty array.
std::string array_text(const Tensor& t) {
    if (t.num_elements() == 0) return "[]";
    const bool summarize = t.num_elements() > kThreshold;
    std::vector<int64_t> indices;
    shown_indices(t.shape().dims(), 0, 0, summarize, indices);
    const std::vector<std::string> words = element_words(t, indices);
    return ArrayWriter(t.shape().dims(), summarize, words).write();
}

}  // namespace

std::string format_tensor(const Tensor& t) {
    const std::string text = t.rank() == 0 ? scalar_text(t) : array_text(t);
    // TensorFlow's numpy_text: multi-line values start on their own line.
    const bool multiline = text.find('\n') != std::string::npos;
    return fmt::format("tf.Tensor({}{}, shape={}, dtype={})",
                       multiline ? "\n" : "",
                       text,
                       t.shape().str(),
                       dtype_name(t.dtype()));
}

}  // namespace tapeflow
