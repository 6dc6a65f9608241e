// Creation functions: constants, fills, ranges, identity matrices, one_hot.
// New tensors go to the default device (tf::device scope), the CPU unless a scope says otherwise.
#pragma once

#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <type_traits>
#include <vector>

#include <tapeflow/core/export.hpp>
#include <tapeflow/core/tensor.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow {

namespace detail {
/// Builds a tensor of `shape` from `count` host values of `src_dtype`, converted to `dtype`
/// (default: `src_dtype`). `count` must equal shape.num_elements(), or be 1 (the value fills the
/// shape).
Tensor make_constant(const void* values,
                     DType src_dtype,
                     std::size_t count,
                     const Shape& shape,
                     std::optional<DType> dtype);
[[noreturn]] void throw_ragged(std::size_t expected, std::size_t got, int depth);
/// InvalidArgumentError naming `op`: an unsigned argument above INT64_MAX.
[[noreturn]] void throw_int_too_large(uint64_t value, const char* op);
/// A C++ integer as the int64 a Python int argument is (unsigned values above INT64_MAX throw).
template <std::integral I>
int64_t python_int(I value, const char* op) {
    if constexpr (std::is_unsigned_v<I> && sizeof(I) >= sizeof(int64_t)) {
        if (value > static_cast<I>(INT64_MAX)) throw_int_too_large(value, op);
    }
    return static_cast<int64_t>(value);
}
}  // namespace detail

/// A scalar: float -> float32, double -> float64, int -> int32, int64_t -> int64, bool -> bool.
template <ScalarType T>
Tensor constant(T value) {
    return detail::make_constant(&value, dtype_of_v<T>, 1, Shape{}, std::nullopt);
}

/// A scalar converted to `dtype`.
template <ScalarType T>
Tensor constant(T value, DType dtype) {
    return detail::make_constant(&value, dtype_of_v<T>, 1, Shape{}, dtype);
}

/// Values with an explicit shape (row-major). A single value fills the whole shape; otherwise the
/// count must match, else InvalidArgumentError.
template <ScalarType T>
Tensor constant(const std::vector<T>& values, const Shape& shape, std::optional<DType> dtype = {}) {
    if constexpr (std::is_same_v<T, bool>) {
        std::vector<uint8_t> bytes(values.begin(), values.end());
        return detail::make_constant(bytes.data(), DType::bool_, bytes.size(), shape, dtype);
    } else {
        return detail::make_constant(values.data(), dtype_of_v<T>, values.size(), shape, dtype);
    }
}

template <ScalarType T>
Tensor constant(const std::vector<T>& values, const Shape& shape, DType dtype) {
    return constant(values, shape, std::optional<DType>(dtype));
}

/// Rank 1: tf::constant({1, 2, 3}) is an int32 vector.
template <ScalarType T>
Tensor constant(std::initializer_list<T> values, std::optional<DType> dtype = {}) {
    return constant(std::vector<T>(values), Shape{static_cast<int64_t>(values.size())}, dtype);
}

/// Rank 2: tf::constant({{1.f, 2.f}, {3.f, 4.f}}). Rows of different lengths throw
/// InvalidArgumentError.
template <ScalarType T>
Tensor constant(std::initializer_list<std::initializer_list<T>> rows,
                std::optional<DType> dtype = {}) {
    std::vector<T> flat;
    const std::size_t cols = rows.size() ? rows.begin()->size() : 0;
    for (const auto& row : rows) {
        if (row.size() != cols) detail::throw_ragged(cols, row.size(), 1);
        flat.insert(flat.end(), row.begin(), row.end());
    }
    return constant(
        flat, Shape{static_cast<int64_t>(rows.size()), static_cast<int64_t>(cols)}, dtype);
}

/// Rank 3, likewise.
template <ScalarType T>
Tensor constant(std::initializer_list<std::initializer_list<std::initializer_list<T>>> planes,
                std::optional<DType> dtype = {}) {
    std::vector<T> flat;
    const std::size_t rows = planes.size() ? planes.begin()->size() : 0;
    const std::size_t cols = rows ? planes.begin()->begin()->size() : 0;
    for (const auto& plane : planes) {
        if (plane.size() != rows) detail::throw_ragged(rows, plane.size(), 1);
        for (const auto& row : plane) {
            if (row.size() != cols) detail::throw_ragged(cols, row.size(), 2);
            flat.insert(flat.end(), row.begin(), row.end());
        }
    }
    return constant(flat,
                    Shape{static_cast<int64_t>(planes.size()),
                          static_cast<int64_t>(rows),
                          static_cast<int64_t>(cols)},
                    dtype);
}

/// Every element `value`, converted to `dtype`.
Tensor fill(const Shape& shape, double value, DType dtype = DType::float32);
/// An integer `value` without a dtype infers one as tf.fill does from a Python int: int32, or
/// int64 when the value needs it (fill({2}, 5) is int32, fill({2}, 5.0) float32).
Tensor fill(const Shape& shape, int64_t value);
template <std::integral I>
requires(!std::is_same_v<I, bool>) Tensor
    fill(const Shape& shape, I value) {  // exact match: wins over the double overload
    return fill(shape, detail::python_int(value, "Fill"));
}
Tensor zeros(const Shape& shape, DType dtype = DType::float32);
Tensor ones(const Shape& shape, DType dtype = DType::float32);
/// Same shape, dtype and device as `like`.
Tensor zeros_like(const Tensor& like);
Tensor ones_like(const Tensor& like);

/// [start, start + delta, ...) up to but excluding `limit` (tf.range). delta == 0, or a delta that
/// moves away from `limit`, throws InvalidArgumentError.
Tensor range(double start, double limit, double delta = 1, DType dtype = DType::float32);
/// Integer arguments, as tf.range infers from Python ints: int32, or int64 when an argument does
/// not fit int32. Computed exactly in int64.
Tensor range(int64_t start, int64_t limit, int64_t delta = 1);
/// Integer arguments converted to `dtype` (default int32, as above); an integer dtype that cannot
/// hold an argument throws InvalidArgumentError, a floating dtype computes as the double overload.
Tensor range(int64_t start, int64_t limit, int64_t delta, DType dtype);
/// [0, limit): tf.range(limit).
Tensor range(int64_t limit);

namespace detail {
template <class T>
concept RangeInt = std::integral<T> && !std::is_same_v<T, bool>;
template <class T>
concept RangeNumber = RangeInt<T> || std::floating_point<T>;
}  // namespace detail

// Overloads that route every mix of C++ number types to one of the three above without
// ambiguity: integers of any type to the integer overloads (tf::range(0, 10), tf::range(0, 10, 2)),
// a floating-point argument anywhere to the double one (tf::range(0, 1.5)).
template <detail::RangeInt A, detail::RangeInt B, detail::RangeInt C = int64_t>
Tensor range(A start, B limit, C delta = 1) {
    return range(detail::python_int(start, "Range"),
                 detail::python_int(limit, "Range"),
                 detail::python_int(delta, "Range"));
}
template <detail::RangeInt A, detail::RangeInt B, detail::RangeInt C>
Tensor range(A start, B limit, C delta, DType dtype) {
    return range(detail::python_int(start, "Range"),
                 detail::python_int(limit, "Range"),
                 detail::python_int(delta, "Range"),
                 dtype);
}
template <detail::RangeNumber A, detail::RangeNumber B>
requires(std::floating_point<A> || std::floating_point<B>) Tensor range(A start, B limit) {
    return range(static_cast<double>(start), static_cast<double>(limit));
}
template <detail::RangeNumber A, detail::RangeNumber B, detail::RangeNumber C>
requires(std::floating_point<A> || std::floating_point<B> || std::floating_point<C>) Tensor
    range(A start, B limit, C delta, DType dtype = DType::float32) {
    return range(
        static_cast<double>(start), static_cast<double>(limit), static_cast<double>(delta), dtype);
}
template <detail::RangeInt I>
Tensor range(I limit) {
    return range(detail::python_int(limit, "Range"));
}
/// tf.range(5.0): [0, limit) in float32.
template <std::floating_point F>
Tensor range(F limit) {
    return range(0.0, static_cast<double>(limit));
}

/// `num` evenly spaced values from `start` to `stop`, both included (num == 1 gives [start]);
/// num <= 0 throws InvalidArgumentError.
Tensor linspace(double start, double stop, int64_t num, DType dtype = DType::float32);
/// The n x n identity matrix.
Tensor eye(int64_t n, DType dtype = DType::float32);

/// One-hot encoding of integer `indices` (int32, int64 or uint8) along a new axis `axis` (-1 =
/// last) of size `depth`: `on_value` where the index matches, `off_value` elsewhere. Indices
/// outside [0, depth) give a row of `off_value` (as in TensorFlow). Not differentiable.
Tensor one_hot(const Tensor& indices,
               int64_t depth,
               double on_value = 1,
               double off_value = 0,
               int64_t axis = -1,
               DType dtype = DType::float32);

/// A copy of `x` (tf.identity); its gradient is the upstream gradient.
Tensor identity(const Tensor& x);
/// Element-wise conversion to `dtype` (tf.cast). Float -> int truncates toward zero; -> bool is x
/// != 0.
Tensor cast(const Tensor& x, DType dtype);

}  // namespace tapeflow

TAPEFLOW_API_END
