// visit_dtype: calls a generic lambda with a TypeTag<T> for a runtime DType, the one switch that
// turns a dtype into a C++ type (kernels instantiate their loops through it). Also the element
// conversion used by cast and host reads.
#pragma once

#include <cmath>
#include <limits>
#include <type_traits>

#include <tapeflow/core/dtype.hpp>
#include <tapeflow/core/error.hpp>

namespace tapeflow {

template <class T>
struct TypeTag {
    using type = T;
};

template <class F>
decltype(auto) visit_dtype(DType dtype, F&& f) {
    switch (dtype) {
        case DType::float32:
            return f(TypeTag<float>{});
        case DType::float64:
            return f(TypeTag<double>{});
        case DType::int32:
            return f(TypeTag<int32_t>{});
        case DType::int64:
            return f(TypeTag<int64_t>{});
        case DType::uint8:
            return f(TypeTag<uint8_t>{});
        case DType::bool_:
            return f(TypeTag<bool>{});
        case DType::float16:
            return f(TypeTag<Half>{});
        case DType::bfloat16:
            return f(TypeTag<BFloat16>{});
    }
    throw errors::InternalError("invalid DType in visit_dtype; this is a tapeflow bug");
}

template <class T>
inline constexpr bool is_half_v = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

/// The arithmetic type a value of T computes in: float for the 16-bit floats, T otherwise.
template <class T>
using compute_t = std::conditional_t<is_half_v<T>, float, T>;

/// Converts one element as tf.cast does: to bool is `x != 0`; float to integer truncates toward
/// zero, saturating at the integer's range (NaN gives 0) so that no conversion is undefined.
template <class To, class From>
inline To convert_element(From value) {
    if constexpr (std::is_same_v<To, From>) {
        return value;
    } else if constexpr (is_half_v<From>) {
        return convert_element<To>(static_cast<float>(value));
    } else if constexpr (is_half_v<To>) {
        return To(static_cast<float>(value));
    } else if constexpr (std::is_same_v<To, bool>) {
        return value != From(0);
    } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
        if (std::isnan(value)) return To(0);
        constexpr auto lo = static_cast<From>(std::numeric_limits<To>::min());
        constexpr auto hi = static_cast<From>(std::numeric_limits<To>::max());
        if (value <= lo) return std::numeric_limits<To>::min();
        if (value >= hi) return std::numeric_limits<To>::max();
        return static_cast<To>(value);
    } else {
        return static_cast<To>(value);
    }
}

}  // namespace tapeflow
