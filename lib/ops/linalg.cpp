// Linear algebra: matmul. Two rank-2 operands run TensorFlow's MatMul; anything of higher rank runs
// BatchMatMulV2, whose batch axes broadcast (as tf.linalg.matmul chooses). Gradients follow
// TensorFlow's _MatMulGrad / _BatchMatMulV2Grad; the engine sums broadcast batch axes back down.
#include <algorithm>

#include <tapeflow/ops/math.hpp>

#include "ops/apply.hpp"
#include "ops/op_families.hpp"

namespace tapeflow {
namespace {

// The transpose flags have TensorFlow's attribute names: transpose_a/b on MatMul, adj_x/y on
// BatchMatMulV2.
std::pair<bool, bool> flags(Op op, const Attrs& attrs) {
    if (op == Op::matmul) return {attrs.get<bool>("transpose_a"), attrs.get<bool>("transpose_b")};
    return {attrs.get<bool>("adj_x"), attrs.get<bool>("adj_y")};
}

Shape batch_shape(const Shape& s) {
    return Shape(std::vector<int64_t>(s.dims().begin(), s.dims().end() - 2));
}

Tensor matmul_impl(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b) {
    const bool batched = !(a.defined() && b.defined()) || a.rank() > 2 || b.rank() > 2;
    const Op op = batched ? Op::batch_matmul : Op::matmul;
    if (!a.defined() || !b.defined()) {
        op_fail(op, "input {} of 'matmul' is an undefined tensor", a.defined() ? 1 : 0);
    }
    if (a.dtype() != b.dtype()) fail_input_dtype(op, 1, a.dtype(), b.dtype());
    for (int i = 0; i < 2; ++i) {
        const Tensor& t = i == 0 ? a : b;
        if (t.rank() >= 2) continue;
        if (batched) op_fail(op, "In[{}] ndims must be >= 2: {}", i, t.rank());
        op_fail(op, "In[{}] is not a matrix. Instead it has shape {}", i, t.shape().debug_string());
    }
    const int64_t m = a.shape()[transpose_a ? -1 : -2];
    const int64_t k = a.shape()[transpose_a ? -2 : -1];
    const int64_t k_b = b.shape()[transpose_b ? -1 : -2];
    const int64_t n = b.shape()[transpose_b ? -2 : -1];
    if (k != k_b) {
        op_fail(op,
                "Matrix size-incompatible: In[0]: {}, In[1]: {}",
                a.shape().debug_string(),
                b.shape().debug_string());
    }
    std::vector<int64_t> dims;
    dims.reserve(static_cast<std::size_t>(std::max(a.rank(), b.rank())));
    Attrs attrs;
    if (batched) {
        const Shape sa = batch_shape(a.shape());
        const Shape sb = batch_shape(b.shape());
        try {
            dims = broadcast_shapes(sa, sb).dims();
        } catch (const errors::InvalidArgumentError&) {
            op_fail(op,
                    "In[0] and In[1] must have compatible batch dimensions: {} vs. {}",
                    a.shape().debug_string(),
                    b.shape().debug_string());
        }
        attrs.set("adj_x", transpose_a).set("adj_y", transpose_b);
    } else {
        attrs.set("transpose_a", transpose_a).set("transpose_b", transpose_b);
    }
    dims.push_back(m);
    dims.push_back(n);
    return apply(op, {a, b}, {Shape(std::move(dims)), a.dtype()}, attrs);
}

// d(AB) = dA B + A dB, so dA = g B^T and dB = A^T g, with the transposes folded into the flags
// (TensorFlow's four cases). Batch axes that were broadcast are summed by the engine. An input
// that needs no gradient gets none (GradCtx::needs: a first layer's dX, or in a vectorized jacobian
// dB of a rank-2 B, a batch of outer products [n, k, p], however little of it is used).
Grads matmul_grad(const GradCtx& c) {
    const auto [ta, tb] = flags(c.attrs.has("adj_x") ? Op::batch_matmul : Op::matmul, c.attrs);
    const Tensor& a = c.in[0];
    const Tensor& b = c.in[1];
    const Tensor& g = c.grad();
    Gradient da;
    Gradient db;
    if (c.needs_grad(0)) da = ta ? matmul_impl(b, g, tb, true) : matmul_impl(g, b, false, !tb);
    if (c.needs_grad(1)) db = tb ? matmul_impl(g, a, true, ta) : matmul_impl(a, g, !ta, false);
    return {da, db};
}

const OpDef kLinalgOps[] = {
    // Batchable: a batched g (one more leading axis) makes these batch matmuls that broadcast.
    {Op::matmul, Save::inputs, matmul_grad, kBatchable, jvp_bilinear},  // dA = g B^T, dB = A^T g
    {Op::batch_matmul, Save::inputs, matmul_grad, kBatchable, jvp_bilinear},  // the same per batch
};

}  // namespace

std::span<const OpDef> linalg_op_defs() {
    return kLinalgOps;
}

Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b) {
    return matmul_impl(a, b, transpose_a, transpose_b);
}

}  // namespace tapeflow
