// Shape: the dimensions of a tensor (int64 each, row-major), with broadcasting helpers.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include <tapeflow/core/export.hpp>
#include <tapeflow/core/fmt_support.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow {

/// Dimensions of a tensor. A default-constructed Shape has rank 0 (a scalar, one element).
/// Dimensions are >= 0 (0: an empty tensor) or -1, unknown: reshape infers it, no tensor has it.
///
///     tf::Shape s{2, 3};   s.rank() == 2, s.num_elements() == 6, s[-1] == 3
class Shape {
public:
    Shape() = default;
    Shape(std::initializer_list<int64_t> dims);
    Shape(std::vector<int64_t> dims);  // NOLINT(google-explicit-constructor): Shape is a value list

    int64_t rank() const { return static_cast<int64_t>(dims_.size()); }
    /// Product of the dims (1 for a scalar); -1 when a dimension is -1 (unknown).
    int64_t num_elements() const { return num_elements_; }
    /// Dimension `axis`; a negative axis counts from the end. Out of range throws
    /// InvalidArgumentError.
    int64_t operator[](int64_t axis) const;
    const std::vector<int64_t>& dims() const { return dims_; }
    bool operator==(const Shape& other) const { return dims_ == other.dims_; }

    /// NumPy/TensorFlow style: "(2, 3)", "(3,)", "()".
    std::string str() const;
    /// TensorFlow's error-message style: "[2,3]", "[]".
    std::string debug_string() const;

private:
    std::vector<int64_t> dims_;
    int64_t num_elements_ = 1;
};

/// Normalizes `axis` (negative counts from the end) for a tensor of rank `rank`; throws
/// InvalidArgumentError naming `op` when it is outside [-rank, rank).
int64_t normalize_axis(int64_t axis, int64_t rank, std::string_view op = "");

/// The NumPy broadcast of two shapes; throws InvalidArgumentError
/// "Incompatible shapes: [2,3] vs. [4]" with `op` as the op name when they do not broadcast.
Shape broadcast_shapes(const Shape& a, const Shape& b, std::string_view op = "");

}  // namespace tapeflow

template <>
struct fmt::formatter<tapeflow::Shape> : tapeflow::detail::StrFormatter {
    template <class Ctx>
    auto format(const tapeflow::Shape& v, Ctx& ctx) const {
        return write(v.str(), ctx);
    }
};

TAPEFLOW_API_END
