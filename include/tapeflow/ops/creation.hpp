// Creation functions: constants, fills, ranges, identity matrices, one_hot.
// New tensors go to the default device (tf::device scope), the CPU unless a scope says otherwise.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
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
Tensor zeros(const Shape& shape, DType dtype = DType::float32);
Tensor ones(const Shape& shape, DType dtype = DType::float32);
/// Same shape, dtype and device as `like`.
Tensor zeros_like(const Tensor& like);
Tensor ones_like(const Tensor& like);

/// [start, start + delta, ...) up to but excluding `limit` (tf.range). delta == 0, or a delta that
/// moves away from `limit`, throws InvalidArgumentError.
Tensor range(double start, double limit, double delta = 1, DType dtype = DType::float32);
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
