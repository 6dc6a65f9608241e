// tf::nn::layer_norm: one primitive (LayerNorm) normalizing each row of a [rows, cols] view of x,
// whose outputs are y and the row statistics (mean, 1/sqrt(var + epsilon); float32 for 16-bit
// inputs). Its gradient row runs the fused LayerNormGrad kernel, unless a tape is recording the
// backward pass (a higher derivative): then the same formula runs as differentiable ops, so every
// order is exact. CPU kernels: lib/kernels/cpu/layer_norm_cpu.cpp; CUDA:
// cuda/layer_norm_kernels.cu.
#include <algorithm>
#include <array>
#include <numeric>

#include <tapeflow/ops/array.hpp>
#include <tapeflow/ops/attention.hpp>
#include <tapeflow/ops/creation.hpp>
#include <tapeflow/ops/math.hpp>

#include "autograd/tape.hpp"
#include "ops/nn_common.hpp"
#include "ops/op_families.hpp"

namespace tapeflow {
namespace {

DType stats_dtype(DType dtype) {
    return dtype == DType::float64 ? DType::float64 : DType::float32;
}

Tensor as(const Tensor& t, DType dtype) {
    return t.dtype() == dtype ? t : cast(t, dtype);
}

// dx, dgamma, dbeta of y = xhat gamma + beta with xhat = (x - mean) rstd along the rows of a
// [rows, cols] x, written with differentiable ops (the statistics recomputed from x):
//   dx = rstd (g gamma - mean(g gamma) - xhat mean(g gamma xhat)),
//   dgamma = sum_rows(g xhat), dbeta = sum_rows(g).
Grads layer_norm_composite(const Tensor& x_in,
                           const Tensor& gamma_in,
                           const Tensor& g_in,
                           double epsilon) {
    const DType dtype = x_in.dtype();
    const DType compute = stats_dtype(dtype);
    const Tensor x = as(x_in, compute);
    const Tensor g = as(g_in, compute);
    const Tensor gamma = as(gamma_in, compute);
    const Tensor mean = reduce_mean(x, -1, true);
    const Tensor centered = subtract(x, mean);
    const Tensor rstd =
        rsqrt(add(reduce_mean(square(centered), -1, true), scalar_like(x, epsilon)));
    const Tensor xhat = multiply(centered, rstd);
    const Tensor gg = multiply(g, gamma);
    const Tensor dx = multiply(rstd,
                               subtract(subtract(gg, reduce_mean(gg, -1, true)),
                                        multiply(xhat, reduce_mean(multiply(gg, xhat), -1, true))));
    return {
        as(dx, dtype), as(reduce_sum(multiply(g, xhat), 0), dtype), as(reduce_sum(g, 0), dtype)};
}

Grads layer_norm_grad(const GradCtx& c) {
    const Tensor& x = c.in[0];
    const Tensor& gamma = c.in[1];
    const Tensor& g = c.grad();
    const double epsilon = c.attrs.get<double>("epsilon");
    // grads[1] and grads[2] (the statistics) are always zero: layer_norm() never returns them.
    const std::array<Tensor, 3> read{g, x, gamma};
    if (any_tape_watches(read)) return layer_norm_composite(x, gamma, g, epsilon);
    const Shape cols({x.shape()[1]});
    const std::array<OutputSpec, 3> specs{
        OutputSpec{x.shape(), x.dtype()}, OutputSpec{cols, x.dtype()}, OutputSpec{cols, x.dtype()}};
    const std::array<Tensor, 5> inputs{g, x, gamma, c.out[1], c.out[2]};
    std::vector<Tensor> r = apply_multi(Op::layer_norm_grad, inputs, specs, c.attrs);
    return {r[0], r[1], r[2]};
}

const OpDef kLayerNormOps[] = {
    {Op::layer_norm,
     Save::inputs_and_output,
     layer_norm_grad,
     kNotBatchable,
     jvp_by_double_vjp},  // see layer_norm_composite
    // Runs only where no tape records it (layer_norm_grad above), so it needs no formula.
    {Op::layer_norm_grad, Save::nothing, nullptr},
};

// The normalized axes of x, sorted, without repeats (InvalidArgumentError otherwise).
std::vector<int64_t> norm_axes(const Tensor& x, const Axes& axes) {
    const int64_t rank = x.shape().rank();
    std::vector<int64_t> out;
    if (axes.all()) {
        out.resize(static_cast<std::size_t>(rank));
        std::iota(out.begin(), out.end(), 0);
    }
    for (const int64_t a : axes.list())
        out.push_back(normalize_axis(a, rank, op_type(Op::layer_norm)));
    std::sort(out.begin(), out.end());
    if (std::adjacent_find(out.begin(), out.end()) != out.end()) {
        op_fail(Op::layer_norm,
                "axes must not repeat an axis, got a repeated axis for x of shape {}",
                x.shape().debug_string());
    }
    if (out.empty()) {
        op_fail(Op::layer_norm,
                "axes must name at least one axis of x (shape {})",
                x.shape().debug_string());
    }
    return out;
}

// gamma or beta as a [cols] vector; `fill` (1 or 0) when undefined.
Tensor param(
    const Tensor& p, std::string_view name, const Tensor& x, const Shape& expected, double fill) {
    const int64_t cols = expected.num_elements();
    if (!p.defined()) {
        const DeviceScope scope(x.device());
        return fill == 0 ? zeros(Shape({cols}), x.dtype()) : ones(Shape({cols}), x.dtype());
    }
    nn_detail::check_same_dtype(Op::layer_norm, x, p, "x", name);
    if (p.shape() != expected && p.shape() != Shape({cols})) {
        op_fail(Op::layer_norm,
                "{} must have the shape of the normalized dimensions of x: x {} normalized over "
                "{} needs {} {}, got {}",
                name,
                x.shape().debug_string(),
                expected.debug_string(),
                name,
                expected.debug_string(),
                p.shape().debug_string());
    }
    return reshape(p, Shape({cols}));
}

}  // namespace

std::span<const OpDef> layer_norm_op_defs() {
    return kLayerNormOps;
}

namespace nn {

Tensor layer_norm(
    const Tensor& x, const Tensor& gamma, const Tensor& beta, Axes axes, double epsilon) {
    constexpr Op op = Op::layer_norm;
    nn_detail::check_float(op, x, "x");
    if (!(epsilon >= 0)) op_fail(op, "epsilon must be >= 0, got {}", epsilon);
    const Shape& s = x.shape();
    const int64_t rank = s.rank();
    const std::vector<int64_t> ax = norm_axes(x, axes);
    // Normalized axes go last (a transpose only when they are not already the trailing ones).
    std::vector<int64_t> perm;
    std::vector<int64_t> param_dims;
    for (int64_t d = 0; d < rank; ++d) {
        if (!std::binary_search(ax.begin(), ax.end(), d)) perm.push_back(d);
    }
    int64_t rows = 1;
    for (const int64_t d : perm)
        rows *= s[d];
    for (const int64_t d : ax) {
        perm.push_back(d);
        param_dims.push_back(s[d]);
    }
    const Shape expected(param_dims);
    const int64_t cols = expected.num_elements();
    const Tensor g = param(gamma, "gamma", x, expected, 1);
    const Tensor b = param(beta, "beta", x, expected, 0);
    bool identity = true;
    for (int64_t d = 0; d < rank; ++d)
        identity = identity && perm[d] == d;
    const Tensor xt = identity ? x : transpose(x, perm);
    Attrs attrs;
    attrs.set("epsilon", epsilon);
    const DType stats = stats_dtype(x.dtype());
    const std::array<OutputSpec, 3> specs{OutputSpec{Shape({rows, cols}), x.dtype()},
                                          OutputSpec{Shape({rows}), stats},
                                          OutputSpec{Shape({rows}), stats}};
    const std::array<Tensor, 3> inputs{reshape(xt, Shape({rows, cols})), g, b};
    const Tensor y = reshape(apply_multi(op, inputs, specs, attrs)[0], xt.shape());
    if (identity) return y;
    std::vector<int64_t> inverse(perm.size());
    for (std::size_t i = 0; i < perm.size(); ++i)
        inverse[static_cast<std::size_t>(perm[i])] = static_cast<int64_t>(i);
    return transpose(y, inverse);
}

}  // namespace nn
}  // namespace tapeflow
