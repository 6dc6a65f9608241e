// tf::Gradient: undefined, dense, or IndexedSlices; densifying sums slices into their dense shape.
#include <tapeflow/autograd/gradient.hpp>
#include <tapeflow/core/error.hpp>
#include <tapeflow/ops/array.hpp>

namespace tapeflow {

Gradient::Gradient(Tensor dense) {
    if (dense.defined()) value_ = std::move(dense);
}

Gradient::Gradient(IndexedSlices sparse) {
    if (!sparse.values.defined() || !sparse.indices.defined()) {
        throw errors::InvalidArgumentError("IndexedSlices needs defined values and indices");
    }
    value_ = std::move(sparse);
}

bool Gradient::defined() const {
    return !std::holds_alternative<std::monostate>(value_);
}

Tensor Gradient::dense() const {
    if (const auto* t = std::get_if<Tensor>(&value_)) return *t;
    if (const auto* s = std::get_if<IndexedSlices>(&value_)) {
        if (s->dense_shape.rank() == 0) {
            throw errors::InvalidArgumentError(
                "Cannot densify IndexedSlices without a dense_shape");
        }
        return unsorted_segment_sum(s->values, s->indices, s->dense_shape[0]);
    }
    return {};
}

const IndexedSlices& Gradient::sparse() const {
    if (const auto* s = std::get_if<IndexedSlices>(&value_)) return *s;
    throw errors::FailedPreconditionError("Gradient::sparse(): this gradient is not IndexedSlices");
}

Shape Gradient::shape() const {
    if (const auto* s = std::get_if<IndexedSlices>(&value_)) return s->dense_shape;
    if (const auto* t = std::get_if<Tensor>(&value_)) return t->shape();
    throw errors::FailedPreconditionError("Gradient::shape(): the gradient is undefined");
}

DType Gradient::dtype() const {
    if (const auto* s = std::get_if<IndexedSlices>(&value_)) return s->values.dtype();
    if (const auto* t = std::get_if<Tensor>(&value_)) return t->dtype();
    throw errors::FailedPreconditionError("Gradient::dtype(): the gradient is undefined");
}

}  // namespace tapeflow
