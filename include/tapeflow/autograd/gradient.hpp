// tf::Gradient: what a gradient is — nothing (undefined), a dense Tensor, or IndexedSlices (the
// sparse gradient of gather/embedding_lookup w.r.t. its params).
#pragma once

#include <variant>

#include <tapeflow/core/export.hpp>
#include <tapeflow/core/tensor.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow {

/// Rows `values[i]` added into row `indices[i]` of a tensor of `dense_shape` (duplicates add up,
/// missing rows are 0). values: [N, d1..dk], indices: [N] int32 or int64.
struct IndexedSlices {
    Tensor values;
    Tensor indices;
    Shape dense_shape;
};

/// A gradient: undefined (no gradient), dense, or IndexedSlices. Converts implicitly to Tensor
/// (densifying), so `tf::Tensor g = tape.gradient(y, x);` works for every kind.
class Gradient {
public:
    Gradient() = default;
    Gradient(Tensor dense);          // NOLINT(google-explicit-constructor): implicit by design
    Gradient(IndexedSlices sparse);  // NOLINT(google-explicit-constructor)

    bool defined() const;
    explicit operator bool() const { return defined(); }
    bool is_sparse() const { return std::holds_alternative<IndexedSlices>(value_); }
    /// The dense tensor (IndexedSlices are summed into dense_shape); undefined when undefined.
    Tensor dense() const;
    /// The slices; FailedPreconditionError unless is_sparse().
    const IndexedSlices& sparse() const;
    operator Tensor() const { return dense(); }  // NOLINT(google-explicit-constructor)
    /// Shape of the gradient as a dense tensor (dense_shape for slices).
    Shape shape() const;
    DType dtype() const;

private:
    std::variant<std::monostate, Tensor, IndexedSlices> value_;
};

}  // namespace tapeflow

TAPEFLOW_API_END
