// The Distribution base class (TFP's method names and their checks) and the shared helpers.
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/ops/array.hpp>
#include <tapeflow/ops/creation.hpp>
#include <tapeflow/ops/math.hpp>

#include "distributions/common.hpp"

namespace tapeflow::distributions {

namespace detail {

std::vector<Tensor> resolve(const std::string& dist,
                            const std::vector<std::pair<const char*, const Param*>>& params) {
    std::optional<DType> dtype;
    const char* first = nullptr;
    for (const auto& [name, p] : params) {
        if (!p->is_tensor()) continue;
        const DType d = p->tensor().dtype();
        if (!is_floating(d))
            throw errors::InvalidArgumentError(
                fmt::format("{}: Argument `{}` must be a floating-point tensor, got {}",
                            dist,
                            name,
                            dtype_name(d)));
        if (dtype && *dtype != d)
            throw errors::InvalidArgumentError(
                fmt::format("{}: Arguments `{}` ({}) and `{}` ({}) must have one dtype",
                            dist,
                            first,
                            dtype_name(*dtype),
                            name,
                            dtype_name(d)));
        if (!dtype) {
            dtype = d;
            first = name;
        }
    }
    std::vector<Tensor> out;
    for (const auto& [name, p] : params)
        out.push_back(p->is_tensor() ? p->tensor()
                                     : constant(p->number(), dtype.value_or(DType::float32)));
    return out;
}

Shape broadcast_params(const std::string& dist,
                       const std::vector<std::pair<const char*, Shape>>& shapes) {
    Shape out = shapes[0].second;
    for (std::size_t i = 1; i < shapes.size(); ++i) {
        try {
            out = broadcast_shapes(out, shapes[i].second);
        } catch (const errors::InvalidArgumentError&) {
            throw errors::InvalidArgumentError(
                fmt::format("{}: the shapes of `{}` {} and `{}` {} do not broadcast",
                            dist,
                            shapes[0].first,
                            shapes[0].second.str(),
                            shapes[i].first,
                            shapes[i].second.str()));
        }
    }
    return out;
}

ParamPair resolve_pair(const std::string& dist,
                       const char* first_name,
                       const Param& first,
                       const char* second_name,
                       const Param& second) {
    const auto t = resolve(dist, {{first_name, &first}, {second_name, &second}});
    return {t[0],
            t[1],
            broadcast_params(dist, {{first_name, t[0].shape()}, {second_name, t[1].shape()}})};
}

Shape drop_last(const std::string& dist, const char* param, const Shape& shape, int n) {
    if (shape.rank() < n)
        throw errors::InvalidArgumentError(
            fmt::format("{}: Argument `{}` must have rank at least {}, got shape {}",
                        dist,
                        param,
                        n,
                        shape.str()));
    return Shape(std::vector<int64_t>(shape.dims().begin(), shape.dims().end() - n));
}

Shape concat(const Shape& a, const Shape& b) {
    std::vector<int64_t> dims = a.dims();
    dims.insert(dims.end(), b.dims().begin(), b.dims().end());
    return Shape(dims);
}

void require(const std::string& dist,
             const char* param,
             const Tensor& ok,
             const Tensor& value,
             const char* what) {
    const std::vector<bool> flags = ok.to_vector<bool>();
    for (std::size_t i = 0; i < flags.size(); ++i) {
        if (flags[i]) continue;
        const Tensor flat = reshape(broadcast_to(value, ok.shape()), {-1});
        const double bad = flat.to_vector<double>()[i];
        throw errors::InvalidArgumentError(fmt::format(
            "{}: Argument `{}` {} (got {} at flat index {})", dist, param, what, bad, i));
    }
}

void require_positive(const std::string& dist, const char* param, const Tensor& t) {
    require(dist, param, greater(t, scalar(t, 0)), t, "must be positive.");
}

Tensor scalar(const Tensor& like, double value) {
    return scalar_like(like, value);
}

Tensor mul_no_nan(const Tensor& x, const Tensor& y) {
    // Only a non-finite y beside x == 0 is replaced (by 0, before the product, so that its inf or
    // NaN stays out of the gradient); elsewhere x * y keeps d/dx = y, also at x == 0 (TF's xlogy
    // gradient is 0 there, which loses d/da of (a - 1) log x at a = 1).
    const Tensor replace =
        logical_and(equal(x, scalar(x, 0)), logical_not(less(abs(y), scalar(y, INFINITY))));
    const Tensor safe_y = where(replace, zeros_like(y) + zeros_like(x), y + zeros_like(x));
    return x * safe_y;
}

Tensor where_scalar(const Tensor& cond, const Tensor& x, double y) {
    return where(cond, x, scalar(x, y));
}

}  // namespace detail

Distribution::Distribution(Common common)
    : name_(std::move(common.name)),
      validate_args_(common.validate_args),
      allow_nan_stats_(common.allow_nan_stats),
      reparameterization_(common.reparameterization) {}

void Distribution::unimplemented(const char* method) const {
    throw errors::UnimplementedError(fmt::format("{} is not implemented: {}", method, name_));
}

Tensor Distribution::to_param_dtype(const Tensor& value, const char* method) const {
    if (!value.defined())
        throw errors::InvalidArgumentError(
            fmt::format("{}.{}: the value is undefined", name_, method));
    if (value.dtype() == param_dtype_) return value;
    if (is_floating(value.dtype()))
        throw errors::InvalidArgumentError(
            fmt::format("{}.{}: the value has dtype {}, the distribution's parameters {}",
                        name_,
                        method,
                        dtype_name(value.dtype()),
                        dtype_name(param_dtype_)));
    return cast(value, param_dtype_);
}

namespace {

// TFP's statistics have shape batch_shape + event_shape whatever parameter they come from.
Tensor full(const Tensor& t, const Shape& shape) {
    return t.shape() == shape ? t : broadcast_to(t, shape);
}

}  // namespace

Tensor Distribution::sample(const Shape& sample_shape, std::optional<uint64_t> seed) const {
    for (int64_t d : sample_shape.dims())
        if (d < 0)
            throw errors::InvalidArgumentError(fmt::format(
                "{}.sample: sample_shape {} has a negative dimension", name_, sample_shape.str()));
    return sample_impl(sample_shape, seed);
}

Tensor Distribution::log_prob(const Tensor& value) const {
    const Tensor v = to_param_dtype(value, "log_prob");
    if (validate_args_) check_support(v);
    return log_prob_impl(v);
}

Tensor Distribution::prob(const Tensor& value) const {
    const Tensor v = to_param_dtype(value, "prob");
    if (validate_args_) check_support(v);
    return prob_impl(v);
}

Tensor Distribution::cdf(const Tensor& value) const {
    const Tensor v = to_param_dtype(value, "cdf");
    return cdf_impl(v);
}

Tensor Distribution::log_cdf(const Tensor& value) const {
    const Tensor v = to_param_dtype(value, "log_cdf");
    return log_cdf_impl(v);
}

Tensor Distribution::survival_function(const Tensor& value) const {
    const Tensor c = cdf(value);
    return subtract(scalar_like(c, 1), c);
}

Tensor Distribution::entropy() const {
    return full(entropy_impl(), batch_shape_);
}

Tensor Distribution::mean() const {
    return full(mean_impl(), detail::concat(batch_shape_, event_shape_));
}

Tensor Distribution::variance() const {
    return full(variance_impl(), detail::concat(batch_shape_, event_shape_));
}

Tensor Distribution::stddev() const {
    return full(stddev_impl(), detail::concat(batch_shape_, event_shape_));
}

Tensor Distribution::mode() const {
    return full(mode_impl(), detail::concat(batch_shape_, event_shape_));
}

Tensor Distribution::kl_divergence(const Distribution& other) const {
    return distributions::kl_divergence(*this, other);
}

Tensor Distribution::prob_impl(const Tensor& value) const {
    return exp(log_prob_impl(value));
}
Tensor Distribution::cdf_impl(const Tensor&) const {
    unimplemented("cdf");
}
Tensor Distribution::log_cdf_impl(const Tensor& value) const {
    return log(cdf_impl(value));
}
Tensor Distribution::entropy_impl() const {
    unimplemented("entropy");
}
Tensor Distribution::mean_impl() const {
    unimplemented("mean");
}
Tensor Distribution::variance_impl() const {
    unimplemented("variance");
}
Tensor Distribution::stddev_impl() const {
    return sqrt(variance_impl());
}
Tensor Distribution::mode_impl() const {
    unimplemented("mode");
}
void Distribution::check_support(const Tensor&) const {}

}  // namespace tapeflow::distributions
