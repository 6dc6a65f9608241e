// Overflow-checked dimension, element and byte arithmetic (see sizes.hpp).
#include "core/sizes.hpp"

#include <cmath>
#include <limits>
#include <new>
#include <stdexcept>

namespace tapeflow {

namespace {

[[noreturn]] void overflow(int64_t a, char sign, int64_t b, std::string_view op) {
    throw errors::InvalidArgumentError(
        fmt::format("{} {} {} overflows int64 (the largest is 2^63-1)", a, sign, b),
        std::string(op));
}

}  // namespace

int64_t checked_dim_add(int64_t a, int64_t b, std::string_view op) {
    int64_t out = 0;
    if (__builtin_add_overflow(a, b, &out)) overflow(a, '+', b, op);
    return out;
}

int64_t checked_dim_mul(int64_t a, int64_t b, std::string_view op) {
    int64_t out = 0;
    if (__builtin_mul_overflow(a, b, &out)) overflow(a, '*', b, op);
    return out;
}

int64_t checked_count(double count, std::string_view op) {
    // 2^63 is the first double above int64's range; NaN fails the comparison too.
    if (!(count >= 0 && count < 9223372036854775808.0)) {
        throw errors::InvalidArgumentError(
            fmt::format("the number of elements, {}, is not an int64 (at most 2^63-1)", count),
            std::string(op));
    }
    return static_cast<int64_t>(count);
}

Shape op_shape(std::vector<int64_t> dims, std::string_view op) {
    try {
        return Shape(std::move(dims));
    } catch (const errors::InvalidArgumentError& e) {
        throw errors::InvalidArgumentError(e.message(), std::string(op));
    }
}

std::string oom_message(const Shape& shape, DType dtype, Device device) {
    return fmt::format("OOM when allocating tensor of shape {} and type {} on {}",
                       shape.debug_string(),
                       tf_type_name(dtype),
                       device.str());
}

std::size_t checked_nbytes(const Shape& shape, DType dtype, Device device) {
    // PTRDIFF_MAX: the most any allocator (and pointer arithmetic on the result) can serve.
    constexpr auto kMax = static_cast<uint64_t>(std::numeric_limits<std::ptrdiff_t>::max());
    const auto n = static_cast<uint64_t>(shape.num_elements());
    const uint64_t size = dtype_size(dtype);
    if (n > kMax / size) throw errors::ResourceExhaustedError(oom_message(shape, dtype, device));
    return static_cast<std::size_t>(n * size);
}

void rethrow_as_oom(std::string_view op) {
    try {
        throw;
    } catch (const std::bad_alloc&) {
        throw errors::ResourceExhaustedError("OOM when allocating host memory", std::string(op));
    } catch (const std::length_error&) {  // a std::vector longer than max_size()
        throw errors::ResourceExhaustedError("OOM when allocating host memory", std::string(op));
    } catch (const errors::ResourceExhaustedError& e) {
        if (!e.op_name().empty() || op.empty()) throw;
        throw errors::ResourceExhaustedError(e.message(), std::string(op));
    }
}

std::string_view tf_type_name(DType dtype) {
    switch (dtype) {
        case DType::float32:
            return "float";
        case DType::float64:
            return "double";
        case DType::float16:
            return "half";
        default:
            return dtype_name(dtype);
    }
}

}  // namespace tapeflow
