// Overflow-checked size arithmetic, so that no op's output shape wraps around int64 or size_t:
// Shape's constructor checks every element count; ops compute the dimensions they derive (pad,
// concat, split sizes, range's count) with these helpers; Tensor::empty/view get their byte
// counts from checked_nbytes, and apply() turns failed host allocations into typed errors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <tapeflow/core/device.hpp>
#include <tapeflow/core/dtype.hpp>
#include <tapeflow/core/error.hpp>
#include <tapeflow/core/shape.hpp>

namespace tapeflow {

/// a + b for a dimension; throws InvalidArgumentError naming `op` when it exceeds 2^63-1.
int64_t checked_dim_add(int64_t a, int64_t b, std::string_view op);
/// a * b for a dimension or an element count; InvalidArgumentError naming `op` on overflow.
int64_t checked_dim_mul(int64_t a, int64_t b, std::string_view op);
/// An element count computed in floating point (range's ceil((limit - start) / delta)):
/// InvalidArgumentError naming `op` when it is not finite or does not fit in int64.
int64_t checked_count(double count, std::string_view op);

/// Shape(dims) for an output shape an op computed: the element-count check's InvalidArgumentError
/// names `op`.
Shape op_shape(std::vector<int64_t> dims, std::string_view op);

/// Bytes of a tensor of `shape` and `dtype`. Counts that no allocator can serve (over PTRDIFF_MAX
/// bytes, or over size_t) throw ResourceExhaustedError with oom_message(), as a failed allocation.
std::size_t checked_nbytes(const Shape& shape, DType dtype, Device device);
/// TensorFlow's wording: "OOM when allocating tensor of shape [2,3] and type float on
/// /device:CPU:0".
std::string oom_message(const Shape& shape, DType dtype, Device device);

/// TensorFlow's DataTypeString ("float", "double", "half", else the dtype's name), for messages
/// that copy TensorFlow's wording.
std::string_view tf_type_name(DType dtype);

/// Inside a catch block: rethrows the exception being handled, a std::bad_alloc or
/// std::length_error (host memory for bookkeeping proportional to an argument: output lists, index
/// tables) as ResourceExhaustedError naming `op`, a ResourceExhaustedError without an op name
/// (a tensor allocation inside the op) with `op` added, anything else unchanged.
[[noreturn]] void rethrow_as_oom(std::string_view op);

/// Runs f(), with its allocation failures raised as rethrow_as_oom describes.
template <class F>
decltype(auto) oom_as_error(std::string_view op, F&& f) {
    try {
        return f();
    } catch (...) {
        rethrow_as_oom(op);
    }
}

}  // namespace tapeflow
