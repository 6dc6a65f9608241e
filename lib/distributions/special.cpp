#include "distributions/special.hpp"

#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include <tapeflow/autograd/gradient_tape.hpp>
#include <tapeflow/core/error.hpp>
#include <tapeflow/ops/array.hpp>
#include <tapeflow/ops/creation.hpp>
#include <tapeflow/ops/math.hpp>
#include <tapeflow/random.hpp>

#include "distributions/special_math.hpp"

namespace tapeflow::distributions::special {

namespace sm = special_math;

namespace {

std::vector<double> host_values(const Tensor& t) {
    return t.to_vector<double>();
}

// A tensor like `like` (shape, dtype, device) holding `values`.
Tensor from_host(const std::vector<double>& values, const Shape& shape, const Tensor& like) {
    return constant(values, shape, like.dtype()).to(like.device());
}

Tensor map_unary(const Tensor& x, const std::function<double(double)>& f) {
    std::vector<double> v = host_values(x);
    for (double& e : v)
        e = f(e);
    return from_host(v, x.shape(), x);
}

// Element-wise f over tensors of one shape.
Tensor map_nary(const std::vector<Tensor>& xs,
                const std::function<double(const std::vector<double>&)>& f) {
    std::vector<std::vector<double>> values;
    for (const Tensor& x : xs)
        values.push_back(host_values(x));
    std::vector<double> out(values[0].size());
    std::vector<double> args(xs.size());
    for (std::size_t i = 0; i < out.size(); ++i) {
        for (std::size_t j = 0; j < xs.size(); ++j)
            args[j] = values[j][i];
        out[i] = f(args);
    }
    return from_host(out, xs[0].shape(), xs[0]);
}

// An op of `inputs` computed by `forward` whose own gradient TensorFlow does not define: a gradient
// through it raises LookupError, as TF's "No gradient defined for operation". Its inputs are the
// real ones (not a host copy), so that a higher-order gradient reaches it instead of silently
// finding no path.
Tensor not_differentiable(const std::vector<Tensor>& inputs,
                          std::function<Tensor(const std::vector<Tensor>&)> forward,
                          const std::string& op_type) {
    return custom_gradient(
        inputs,
        std::move(forward),
        [op_type](const std::vector<Tensor>&, const Tensor&, const Tensor&) -> std::vector<Tensor> {
            throw errors::LookupError("No gradient defined for operation '" + op_type +
                                      "' (op type: " + op_type + ")");
        });
}

void check_float(const Tensor& x, const char* op, const char* arg) {
    if (!x.defined() || !is_floating(x.dtype()))
        throw errors::InvalidArgumentError(
            std::string(op) + ": " + arg + " must be a floating-point tensor" +
            (x.defined() ? ", got " + std::string(dtype_name(x.dtype())) : ""));
}

// The inputs broadcast to one shape (the tape un-broadcasts their gradients).
std::vector<Tensor> broadcast_all(const std::vector<Tensor>& xs, const char* op) {
    Shape shape = xs[0].shape();
    for (std::size_t i = 1; i < xs.size(); ++i) {
        if (xs[i].dtype() != xs[0].dtype())
            throw errors::InvalidArgumentError(std::string(op) +
                                               ": inputs must have one dtype, got " +
                                               std::string(dtype_name(xs[0].dtype())) + " and " +
                                               std::string(dtype_name(xs[i].dtype())));
        shape = broadcast_shapes(shape, xs[i].shape(), op);
    }
    std::vector<Tensor> out;
    for (const Tensor& x : xs)
        out.push_back(x.shape() == shape ? x : broadcast_to(x, shape));
    return out;
}

}  // namespace

Tensor polygamma(int n, const Tensor& x) {
    check_float(x, "Polygamma", "x");
    return custom_gradient(
        {x},
        [n](const std::vector<Tensor>& in) {
            return map_unary(in[0], [n](double v) { return sm::polygamma(n, v); });
        },
        [n](const std::vector<Tensor>& in, const Tensor&, const Tensor& upstream) {
            return std::vector<Tensor>{multiply(upstream, polygamma(n + 1, in[0]))};
        });
}

Tensor digamma(const Tensor& x) {
    check_float(x, "Digamma", "x");
    return polygamma(0, x);
}

Tensor lgamma(const Tensor& x) {
    check_float(x, "Lgamma", "x");
    return custom_gradient(
        {x},
        [](const std::vector<Tensor>& in) {
            return map_unary(in[0], [](double v) { return sm::log_gamma(v); });
        },
        [](const std::vector<Tensor>& in, const Tensor&, const Tensor& upstream) {
            return std::vector<Tensor>{multiply(upstream, digamma(in[0]))};
        });
}

Tensor lbeta(const Tensor& a, const Tensor& b) {
    return subtract(add(lgamma(a), lgamma(b)), lgamma(add(a, b)));
}

namespace {

// P (lower) or Q of broadcast a, x. d/dx P = x^(a-1) e^-x / Gamma(a), written with ops so that it
// is differentiable again; d/da P is TF's IgammaGradA, computed on the host.
Tensor incomplete_gamma(const Tensor& a, const Tensor& x, bool lower) {
    const char* op = lower ? "Igamma" : "Igammac";
    check_float(a, op, "a");
    check_float(x, op, "x");
    const std::vector<Tensor> ax = broadcast_all({a, x}, op);
    return custom_gradient(
        ax,
        [lower](const std::vector<Tensor>& in) {
            return map_nary(in, [lower](const std::vector<double>& v) {
                return lower ? sm::igamma(v[0], v[1]) : sm::igammac(v[0], v[1]);
            });
        },
        [lower](const std::vector<Tensor>& in, const Tensor&, const Tensor& upstream) {
            const Tensor& av = in[0];
            const Tensor& xv = in[1];
            const Tensor log_density = subtract(
                subtract(multiply(subtract(av, scalar_like(av, 1)), log(xv)), xv), lgamma(av));
            Tensor dx = exp(log_density);
            Tensor da = not_differentiable(
                in,
                [](const std::vector<Tensor>& v) {
                    return map_nary(v, [](const std::vector<double>& e) {
                        return sm::igamma_grad_a(e[0], e[1]);
                    });
                },
                "IgammaGradA");
            if (!lower) {
                dx = negative(dx);
                da = negative(da);
            }
            return std::vector<Tensor>{multiply(upstream, da), multiply(upstream, dx)};
        });
}

}  // namespace

Tensor igamma(const Tensor& a, const Tensor& x) {
    return incomplete_gamma(a, x, true);
}

Tensor igammac(const Tensor& a, const Tensor& x) {
    return incomplete_gamma(a, x, false);
}

Tensor betainc(const Tensor& a, const Tensor& b, const Tensor& x) {
    check_float(a, "Betainc", "a");
    check_float(b, "Betainc", "b");
    check_float(x, "Betainc", "x");
    const std::vector<Tensor> abx = broadcast_all({a, b, x}, "Betainc");
    return custom_gradient(
        abx,
        [](const std::vector<Tensor>& in) {
            return map_nary(
                in, [](const std::vector<double>& v) { return sm::betainc(v[0], v[1], v[2]); });
        },
        [](const std::vector<Tensor>& in, const Tensor&, const Tensor& upstream) {
            // d/dx I_x(a, b) = x^(a-1) (1-x)^(b-1) / B(a, b); TF gives no gradient for a and b.
            const Tensor& av = in[0];
            const Tensor& bv = in[1];
            const Tensor& xv = in[2];
            const Tensor one = scalar_like(xv, 1);
            const Tensor log_density =
                subtract(add(multiply(subtract(av, one), log(xv)),
                             multiply(subtract(bv, one), log1p(negative(xv)))),
                         lbeta(av, bv));
            return std::vector<Tensor>{Tensor(), Tensor(), multiply(upstream, exp(log_density))};
        });
}

namespace {

Shape concat_shapes(const Shape& a, const Shape& b) {
    std::vector<int64_t> dims = a.dims();
    dims.insert(dims.end(), b.dims().begin(), b.dims().end());
    return Shape(dims);
}

// One uniform in (0, 1) per output element, float64: the quantile methods need u > 0.
std::vector<double> uniforms(const Shape& shape, std::optional<uint64_t> seed) {
    return tapeflow::random::uniform(
               shape, std::numeric_limits<double>::min(), 1, DType::float64, seed)
        .to_vector<double>();
}

}  // namespace

Tensor random_gamma(const Shape& sample_shape, const Tensor& alpha, std::optional<uint64_t> seed) {
    check_float(alpha, "RandomGamma", "alpha");
    const Shape out_shape = concat_shapes(sample_shape, alpha.shape());
    const int64_t sample_rank = sample_shape.rank();
    return custom_gradient(
        {alpha},
        [out_shape, seed](const std::vector<Tensor>& in) {
            const std::vector<double> a = host_values(in[0]);
            std::vector<double> u = uniforms(out_shape, seed);
            for (std::size_t i = 0; i < u.size(); ++i)
                u[i] = sm::gamma_quantile(a[i % a.size()], u[i]);
            return from_host(u, out_shape, in[0]);
        },
        [sample_rank](const std::vector<Tensor>& in, const Tensor& output, const Tensor& upstream) {
            // TF's RandomGammaGrad: d sample / d alpha at the sample, summed over sample dims.
            const Tensor dsample = not_differentiable(
                {in[0], output},
                [](const std::vector<Tensor>& v) {
                    const std::vector<double> a = host_values(v[0]);
                    std::vector<double> x = host_values(v[1]);
                    for (std::size_t i = 0; i < x.size(); ++i)
                        x[i] = sm::random_gamma_grad(a[i % a.size()], x[i]);
                    return from_host(x, v[1].shape(), v[1]);
                },
                "RandomGammaGrad");
            Tensor grad = multiply(upstream, dsample);
            if (sample_rank > 0) {
                std::vector<int64_t> axes(static_cast<std::size_t>(sample_rank));
                std::iota(axes.begin(), axes.end(), 0);
                grad = reduce_sum(grad, axes);
            }
            return std::vector<Tensor>{grad};
        });
}

Tensor random_poisson(const Shape& sample_shape, const Tensor& rate, std::optional<uint64_t> seed) {
    check_float(rate, "RandomPoisson", "rate");
    const Shape out_shape = concat_shapes(sample_shape, rate.shape());
    const std::vector<double> r = host_values(rate);
    std::vector<double> u = uniforms(out_shape, seed);
    for (std::size_t i = 0; i < u.size(); ++i)
        u[i] = sm::poisson_quantile(r[i % r.size()], u[i]);
    return from_host(u, out_shape, rate);
}

}  // namespace tapeflow::distributions::special
