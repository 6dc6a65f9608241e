// tf::nn cross-entropy losses, l2_loss and tf::losses::mean_squared_error. The two softmax
// losses are fused primitives (one pass over the logits; TensorFlow's kernels), whose gradient rows
// follow nn_grad.py: labels also get -log_softmax(logits) g. sigmoid_cross_entropy_with_logits is
// TensorFlow's stable composite. CPU kernels: lib/kernels/cpu/softmax_cpu.cpp.
#include <algorithm>
#include <numeric>
#include <string>

#include <tapeflow/ops/array.hpp>
#include <tapeflow/ops/creation.hpp>
#include <tapeflow/ops/math.hpp>
#include <tapeflow/ops/nn.hpp>

#include "core/dtype_dispatch.hpp"
#include "core/host_reads.hpp"
#include "ops/nn_common.hpp"
#include "ops/op_families.hpp"

namespace tapeflow {
namespace {

using nn_detail::check_float;

Shape without_last(const Shape& s) {
    return Shape(std::vector<int64_t>(s.dims().begin(), s.dims().end() - 1));
}

Tensor sparse_xent_grad(const Tensor& logits, const Tensor& labels) {
    return apply(
        Op::sparse_xent_grad, {logits, labels}, OutputSpec{logits.shape(), logits.dtype()});
}

// Batchable: g enters through expand_dims(g, -1) and broadcasting, or a reduction at axis -1.
const OpDef kLossOps[] = {
    {Op::softmax_xent,
     Save::inputs,  // (softmax(x) - z, -log_softmax(x)) times g
     [](const GradCtx& c) -> Grads {
         const Tensor& logits = c.in[0];
         const Tensor g = expand_dims(c.grad(), -1);
         return {multiply(g, subtract(nn::softmax(logits), c.in[1])),
                 multiply(g, negative(nn::log_softmax(logits)))};
     },
     kBatchable,
     jvp_by_double_vjp},
    {Op::sparse_softmax_xent,
     Save::inputs,  // softmax(x) - onehot(label), labels have none
     [](const GradCtx& c) -> Grads {
         return {multiply(expand_dims(c.grad(), -1), sparse_xent_grad(c.in[0], c.in[1])),
                 Gradient()};
     },
     kBatchable,
     jvp_by_double_vjp},
    {Op::sparse_xent_grad,
     Save::inputs,  // d softmax(x) = diag(s) - s s^T
     [](const GradCtx& c) -> Grads {
         const Tensor s = nn::softmax(c.in[0]);
         const Tensor& g = c.grad();
         return {multiply(s, subtract(g, reduce_sum(multiply(g, s), -1, true))), Gradient()};
     },
     kBatchable,
     jvp_by_double_vjp},
};

}  // namespace

// TensorFlow's SparseSoftmaxXentWithLogitsOp check, done here because kernels must not throw
// from their parallel loops. Labels on another device are the device kernel's business.
void nn_detail::check_label_range(const Tensor& labels, int64_t num_classes) {
    if (!labels.device().is_cpu() || labels.num_elements() == 0) return;
    std::vector<int64_t> values;
    {
        const detail::UncountedHostReads validation;  // the values decide no op (vectorized_map)
        values = labels.to_vector<int64_t>();
    }
    const bool bad = std::any_of(
        values.begin(), values.end(), [&](int64_t v) { return v < 0 || v >= num_classes; });
    if (!bad) return;
    const auto first = *std::find_if(
        values.begin(), values.end(), [&](int64_t v) { return v < 0 || v >= num_classes; });
    std::string listed;
    for (const int64_t v : values)
        listed += (listed.empty() ? "" : " ") + std::to_string(v);
    op_fail(Op::sparse_softmax_xent,
            "Received a label value of {} which is outside the valid range of [0, {}).  Label "
            "values: {}",
            first,
            num_classes,
            listed);
}

std::span<const OpDef> nn_loss_op_defs() {
    return kLossOps;
}

namespace nn {

Tensor softmax_cross_entropy_with_logits(const Tensor& labels, const Tensor& logits, int64_t axis) {
    constexpr Op op = Op::softmax_xent;
    check_float(op, logits, "logits");
    check_float(op, labels, "labels");
    nn_detail::check_same_dtype(op, logits, labels, "logits", "labels");
    if (logits.shape() != labels.shape()) {
        op_fail(op,
                "logits and labels must be broadcastable: logits_size={} labels_size={}",
                logits.shape().debug_string(),
                labels.shape().debug_string());
    }
    const int64_t rank = logits.shape().rank();
    if (rank == 0) op_fail(op, "logits must have >= 1 dimension, got []");
    const int64_t a = normalize_axis(axis, rank, op_type(op));
    if (a == rank - 1) {
        return apply(
            op, {logits, labels}, OutputSpec{without_last(logits.shape()), logits.dtype()});
    }
    // The class axis goes last (TensorFlow transposes the same way).
    std::vector<int64_t> perm(static_cast<std::size_t>(rank));
    std::iota(perm.begin(), perm.end(), 0);
    perm.erase(perm.begin() + a);
    perm.push_back(a);
    const Tensor x = transpose(logits, perm);
    return apply(op, {x, transpose(labels, perm)}, OutputSpec{without_last(x.shape()), x.dtype()});
}

Tensor sparse_softmax_cross_entropy_with_logits(const Tensor& labels, const Tensor& logits) {
    constexpr Op op = Op::sparse_softmax_xent;
    check_float(op, logits, "logits");
    nn_detail::check_defined(op, labels, "labels");
    if (labels.dtype() != DType::int32 && labels.dtype() != DType::int64) {
        op_fail(op,
                "labels must be int32 or int64, got {} with shape {}",
                dtype_name(labels.dtype()),
                labels.shape().debug_string());
    }
    const Shape& ls = logits.shape();
    if (ls.rank() == 0) op_fail(op, "Logits cannot be scalars - received shape []");
    if (labels.shape() != without_last(ls)) {
        op_fail(op,
                "labels shape must equal logits shape except for the last dimension: labels {} "
                "vs. logits {}",
                labels.shape().debug_string(),
                ls.debug_string());
    }
    nn_detail::check_label_range(labels, ls[-1]);
    return apply(op, {logits, labels}, OutputSpec{labels.shape(), logits.dtype()});
}

Tensor sigmoid_cross_entropy_with_logits(const Tensor& labels, const Tensor& logits) {
    constexpr Op op = Op::sigmoid;
    check_float(op, logits, "logits");
    check_float(op, labels, "labels");
    if (logits.shape() != labels.shape()) {
        throw errors::InvalidArgumentError(
            fmt::format("logits and labels must have the same shape ({} vs {})",
                        logits.shape().debug_string(),
                        labels.shape().debug_string()),
            "logistic_loss");
    }
    // max(x, 0) - x z + log(1 + e^-|x|), with where() so the gradient at x = 0 is sigmoid(0) - z.
    const Tensor zeros = zeros_like(logits);
    const Tensor cond = greater_equal(logits, zeros);
    const Tensor relu_logits = where(cond, logits, zeros);
    const Tensor neg_abs_logits = where(cond, negative(logits), logits);
    return add(subtract(relu_logits, multiply(logits, labels)), log1p(exp(neg_abs_logits)));
}

Tensor l2_loss(const Tensor& x) {
    check_float(Op::reduce_sum, x, "t");
    return multiply(reduce_sum(square(x)), scalar_like(x, 0.5));
}

}  // namespace nn

namespace losses {

Tensor mean_squared_error(const Tensor& labels, const Tensor& predictions) {
    check_float(Op::squared_difference, predictions, "predictions");
    nn_detail::check_defined(Op::squared_difference, labels, "labels");
    const Tensor z =
        labels.dtype() == predictions.dtype() ? labels : cast(labels, predictions.dtype());
    return reduce_mean(squared_difference(predictions, z));
}

}  // namespace losses
}  // namespace tapeflow
