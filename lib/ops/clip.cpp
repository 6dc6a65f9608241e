// Clipping, written with public ops exactly as TensorFlow's clip_ops.py composes them, so the
// gradients (ties, the double select at t = 0, NaN for an infinite global norm) match TensorFlow's.
#include <cmath>

#include <tapeflow/core/error.hpp>
#include <tapeflow/ops/array.hpp>
#include <tapeflow/ops/clip.hpp>
#include <tapeflow/ops/creation.hpp>

#include "ops/number_conversion.hpp"

namespace tapeflow {
namespace {

Tensor as_scalar_of(const Tensor& like, const Tensor& value, const char* what, const char* op) {
    if (!value.defined() || value.rank() != 0) {
        throw errors::InvalidArgumentError(
            fmt::format("{} must be a scalar, got shape {}",
                        what,
                        value.defined() ? value.shape().str() : "None"),
            op);
    }
    return value.dtype() == like.dtype() ? value : cast(value, like.dtype());
}

template <class F>
Gradient on_values(const Gradient& g, F&& f) {
    if (!g.defined()) return {};
    if (!g.is_sparse()) return f(g.dense());
    const IndexedSlices& s = g.sparse();
    return IndexedSlices{f(s.values), s.indices, s.dense_shape};
}

Tensor values_of(const Gradient& g) {
    return g.is_sparse() ? g.sparse().values : g.dense();
}

}  // namespace

Tensor clip_by_value(const Tensor& t, const Tensor& lo, const Tensor& hi) {
    if (!t.defined() || !lo.defined() || !hi.defined()) {
        throw errors::InvalidArgumentError("clip_by_value: t and both bounds must be defined");
    }
    if (lo.dtype() != t.dtype() || hi.dtype() != t.dtype()) {
        throw errors::InvalidArgumentError(
            fmt::format("clip_by_value: the bounds ({}, {}) must have the dtype of t ({})",
                        dtype_name(lo.dtype()),
                        dtype_name(hi.dtype()),
                        dtype_name(t.dtype())));
    }
    Tensor clipped = maximum(minimum(t, hi), lo);
    if (clipped.shape() != t.shape()) {
        throw errors::InvalidArgumentError(
            fmt::format("clip_by_value: the bounds would broadcast the result from {} to {}",
                        t.shape().str(),
                        clipped.shape().str()));
    }
    return clipped;
}

Tensor clip_by_value(const Tensor& t, double lo, double hi) {
    if (t.defined()) {
        detail::check_number_fits(lo, t.dtype(), "ClipByValue");
        detail::check_number_fits(hi, t.dtype(), "ClipByValue");
    }
    return clip_by_value(t, scalar_like(t, lo), scalar_like(t, hi));
}

Tensor clip_by_norm(const Tensor& t, const Tensor& clip_norm, Axes axes) {
    const Tensor c = as_scalar_of(t, clip_norm, "clip_norm", "clip_by_norm");
    const Tensor l2sum = reduce_sum(t * t, axes, /*keepdims=*/true);
    // Two selects keep the gradient finite at t = 0: sqrt only ever sees positive sums.
    const Tensor positive = greater(l2sum, zeros_like(l2sum));
    const Tensor l2sum_safe = where(positive, l2sum, ones_like(l2sum));
    const Tensor l2norm = where(positive, sqrt(l2sum_safe), l2sum);
    return identity((t * c) / maximum(l2norm, c));
}

Tensor clip_by_norm(const Tensor& t, double clip_norm, Axes axes) {
    return clip_by_norm(t, scalar_like(t, clip_norm), std::move(axes));
}

Tensor clip_by_average_norm(const Tensor& t, const Tensor& clip_norm) {
    const Tensor c = as_scalar_of(t, clip_norm, "clip_norm", "clip_by_average_norm");
    const Tensor n = scalar_like(t, static_cast<double>(t.num_elements()));
    const Tensor l2norm_inv = rsqrt(reduce_sum(t * t));
    return identity(t * c * minimum(l2norm_inv * n, reciprocal(c)));
}

Tensor clip_by_average_norm(const Tensor& t, double clip_norm) {
    return clip_by_average_norm(t, scalar_like(t, clip_norm));
}

Tensor global_norm(const std::vector<Tensor>& t_list) {
    std::vector<Tensor> squares;
    for (const Tensor& t : t_list) {
        if (!t.defined()) continue;
        if (!squares.empty() && t.dtype() != squares[0].dtype()) {
            throw errors::InvalidArgumentError(
                fmt::format("global_norm: all tensors must have one dtype, got {} and {}",
                            dtype_name(squares[0].dtype()),
                            dtype_name(t.dtype())));
        }
        squares.push_back(reduce_sum(t * t));
    }
    if (squares.empty()) return constant(0.0f);
    return sqrt(squares.size() == 1 ? squares[0] : add_n(squares));
}

std::pair<std::vector<Tensor>, Tensor> clip_by_global_norm(const std::vector<Tensor>& t_list,
                                                           double clip_norm,
                                                           Tensor use_norm) {
    if (!(clip_norm > 0)) {
        throw errors::InvalidArgumentError(
            fmt::format("clip_by_global_norm: clip_norm must be > 0, got {}", clip_norm));
    }
    const Tensor norm = use_norm.defined() ? use_norm : global_norm(t_list);
    // min(1/N, 1/c): N = 0 gives inf -> scale 1; an inf or NaN norm gives a NaN scale (TF's
    // signal).
    const Tensor inv_c = scalar_like(norm, 1.0 / clip_norm);
    // norm - norm is 0 exactly when the norm is finite (inf - inf and NaN - NaN are NaN).
    const Tensor finite = equal(norm - norm, zeros_like(norm));
    const Tensor scale = scalar_like(norm, clip_norm) * minimum(reciprocal(norm), inv_c) *
                         where(finite, ones_like(norm), scalar_like(norm, NAN));
    std::vector<Tensor> clipped;
    clipped.reserve(t_list.size());
    for (const Tensor& t : t_list) {
        clipped.push_back(
            t.defined()
                ? identity(t * (scale.dtype() == t.dtype() ? scale : cast(scale, t.dtype())))
                : Tensor());
    }
    return {clipped, norm};
}

Gradient clip_by_value(const Gradient& t, double lo, double hi) {
    return on_values(t, [&](const Tensor& v) { return clip_by_value(v, lo, hi); });
}

Gradient clip_by_value(const Gradient& t, const Tensor& lo, const Tensor& hi) {
    return on_values(t, [&](const Tensor& v) { return clip_by_value(v, lo, hi); });
}

Gradient clip_by_norm(const Gradient& t, double clip_norm, Axes axes) {
    return on_values(t, [&](const Tensor& v) { return clip_by_norm(v, clip_norm, axes); });
}

Gradient clip_by_norm(const Gradient& t, const Tensor& clip_norm, Axes axes) {
    return on_values(t, [&](const Tensor& v) { return clip_by_norm(v, clip_norm, axes); });
}

Gradient clip_by_average_norm(const Gradient& t, double clip_norm) {
    return on_values(t, [&](const Tensor& v) { return clip_by_average_norm(v, clip_norm); });
}

Gradient clip_by_average_norm(const Gradient& t, const Tensor& clip_norm) {
    return on_values(t, [&](const Tensor& v) { return clip_by_average_norm(v, clip_norm); });
}

Tensor global_norm_of_gradients(const std::vector<Gradient>& t_list) {
    std::vector<Tensor> values;
    for (const Gradient& g : t_list)
        values.push_back(g.defined() ? values_of(g) : Tensor());
    return global_norm(values);
}

std::pair<std::vector<Gradient>, Tensor> clip_by_global_norm_of_gradients(
    const std::vector<Gradient>& t_list, double clip_norm, Tensor use_norm) {
    std::vector<Tensor> values;
    for (const Gradient& g : t_list)
        values.push_back(g.defined() ? values_of(g) : Tensor());
    auto [clipped, norm] = clip_by_global_norm(values, clip_norm, std::move(use_norm));
    std::vector<Gradient> out;
    for (std::size_t i = 0; i < t_list.size(); ++i) {
        if (!t_list[i].defined()) {
            out.emplace_back();
        } else if (t_list[i].is_sparse()) {
            out.emplace_back(IndexedSlices{
                clipped[i], t_list[i].sparse().indices, t_list[i].sparse().dense_shape});
        } else {
            out.emplace_back(clipped[i]);
        }
    }
    return {out, norm};
}

}  // namespace tapeflow
