#include "ops/number_conversion.hpp"

#include <cmath>
#include <cstdint>
#include <limits>

#include <fmt/format.h>

#include <tapeflow/core/error.hpp>

#include "core/dtype_dispatch.hpp"
#include "core/python_repr.hpp"

namespace tapeflow::detail {

void cannot_convert(const std::string& value, DType dtype, std::string_view op) {
    throw errors::InvalidArgumentError(
        fmt::format("Cannot convert {} to EagerTensor of dtype {}", value, dtype_name(dtype)),
        std::string(op));
}

void check_number_fits(double value, DType dtype, std::string_view op) {
    const bool fits = visit_dtype(dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_same_v<T, bool>) {
            return value == 0.0 || value == 1.0;
        } else if constexpr (std::is_integral_v<T>) {
            // [min, max + 1) is exact in double for every integer type up to 64 bits.
            constexpr double lo = static_cast<double>(std::numeric_limits<T>::min());
            constexpr double hi = static_cast<double>(std::numeric_limits<T>::max() / 2 + 1) * 2.0;
            return std::isfinite(value) && std::trunc(value) == value && value >= lo && value < hi;
        } else {
            return true;
        }
    });
    if (fits) return;
    // A whole number most likely came from a C++ integer: printed as one (TensorFlow prints the
    // Python int 300 as "300").
    const bool whole = std::isfinite(value) && std::trunc(value) == value && std::abs(value) < 1e16;
    cannot_convert(
        whole ? fmt::format("{}", static_cast<int64_t>(value)) : python_repr(value), dtype, op);
}

}  // namespace tapeflow::detail
