// Forward mode (docs/autograd.md "Forward mode", "Hessians"): every differentiable op-case row's
// JVP against central finite differences in float64 and against reverse mode (<u, J v> two ways),
// forward-over-reverse Hessian-vector products against reverse-over-reverse ones for every row,
// tf::hessians, and TensorFlow's edge conventions (integer outputs, unconnected targets,
// stop_gradient, variables, nesting with accumulators and tapes, custom_gradient, bad arguments).
#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

#include "ops/op_cases.hpp"

namespace tf = tapeflow;
using Catch::Contains;
using tf::Tensor;
using tf::autodiff::ForwardAccumulator;
using namespace tf::op_cases;

namespace {

bool runs_in(const Case& c, tf::DType d) {
    return std::find(c.dtypes.begin(), c.dtypes.end(), d) != c.dtypes.end();
}

// Fixed weights (a cosine ramp) of the shape of `y`.
Tensor weights(const Tensor& y) {
    const double n = static_cast<double>(y.num_elements());
    return tf::reshape(tf::cos(tf::range(1, 1 + n, 1, tf::float64)), y.shape());
}

// sum_k sum(y_k w_k) over the float64 outputs (undefined when there is none).
Tensor contract(const std::vector<Tensor>& ys) {
    Tensor total;
    for (const Tensor& y : ys) {
        if (!y.defined() || y.dtype() != tf::float64) continue;
        const Tensor term = tf::reduce_sum(tf::multiply(y, weights(y)));
        total = total.defined() ? total + term : term;
    }
    return total;
}

// A float64 input of the row: its index and a random direction of its shape.
struct Source {
    std::size_t at;
    Tensor direction;
};

std::vector<Source> sources_of(const Case& c, const std::vector<Tensor>& x) {
    std::mt19937_64 rng(std::hash<std::string>{}(c.name) ^ 0x5eedULL);
    std::normal_distribution<double> normal;
    std::vector<Source> s;
    for (std::size_t i = 0; i < x.size(); ++i) {
        if (x[i].dtype() != tf::float64) continue;
        std::vector<double> v(static_cast<std::size_t>(x[i].num_elements()));
        for (double& e : v)
            e = normal(rng);
        s.push_back({i, tf::constant(v, x[i].shape(), tf::float64)});
    }
    return s;
}

// x + h v on the sources.
std::vector<Tensor> moved(const std::vector<Tensor>& x, const std::vector<Source>& s, double h) {
    std::vector<Tensor> y = x;
    for (const Source& src : s)
        y[src.at] = x[src.at] + tf::multiply(src.direction, tf::scalar_like(src.direction, h));
    return y;
}

double max_abs(const Tensor& t) {
    return tf::reduce_max(tf::abs(t)).item<double>();
}

// The inputs the sources perturb, and their directions: the accumulator's two lists.
std::pair<std::vector<Tensor>, std::vector<Tensor>> primals_and_tangents(
    const std::vector<Tensor>& x, const std::vector<Source>& s) {
    std::vector<Tensor> primals;
    std::vector<Tensor> tangents;
    for (const Source& src : s) {
        primals.push_back(x[src.at]);
        tangents.push_back(src.direction);
    }
    return {primals, tangents};
}

}  // namespace

TEST_CASE("every differentiable op-case row: JVP = finite differences = reverse mode (float64)",
          "[forward][op_cases]") {
    std::string failures;
    int checked = 0;
    for (const Case& c : all_cases()) {
        if (!c.grad || !runs_in(c, tf::float64)) continue;
        const std::vector<Tensor> x = make_inputs(c, tf::float64);
        const std::vector<Source> s = sources_of(c, x);
        if (s.empty()) continue;
        const auto [primals, tangents] = primals_and_tangents(x, s);
        // Forward mode: every output's tangent (zeros where unconnected).
        std::vector<Tensor> ys;
        std::vector<Tensor> jvps;
        {
            const ForwardAccumulator acc(primals, tangents);
            ys = c.f(x);
            for (const Tensor& y : ys)
                jvps.push_back(acc.jvp(y, tf::UnconnectedGradients::zero));
        }
        // Central differences of each float64 output along the direction.
        const double h = 1e-5;
        const std::vector<Tensor> up = c.f(moved(x, s, h));
        const std::vector<Tensor> down = c.f(moved(x, s, -h));
        for (std::size_t k = 0; k < ys.size(); ++k) {
            if (ys[k].dtype() != tf::float64) {
                if (jvps[k].defined() && max_abs(tf::cast(jvps[k], tf::float64)) != 0) {
                    failures += "\n  " + c.name + ": an integer output has a nonzero tangent";
                }
                continue;
            }
            if (ys[k].num_elements() == 0) continue;
            const Tensor fd =
                tf::divide(tf::subtract(up[k], down[k]), tf::scalar_like(up[k], 2 * h));
            const double scale = 1 + max_abs(fd);
            const double err = max_abs(tf::subtract(jvps[k], fd));
            if (!(err <= 1e-5 * scale)) {
                failures += "\n  " + c.name + " output " + std::to_string(k) +
                            ": |JVP - finite differences| = " + std::to_string(err);
            }
        }
        // <w, J v> forward against <J^T w, v> reverse.
        const Tensor fwd = contract(jvps);
        tf::GradientTape tape;
        tape.watch(primals);
        const Tensor loss = contract(c.f(x));
        if (!fwd.defined() || !loss.defined()) continue;
        const std::vector<tf::Gradient> g =
            tape.gradient(loss, primals, {.unconnected_gradients = tf::UnconnectedGradients::zero});
        double rev = 0;
        for (std::size_t i = 0; i < s.size(); ++i)
            rev += tf::reduce_sum(tf::multiply(g[i].dense(), s[i].direction)).item<double>();
        const double f = fwd.item<double>();
        if (!(std::abs(f - rev) <= 1e-9 * (1 + std::abs(rev)))) {
            failures += "\n  " + c.name + ": <w, Jv> = " + std::to_string(f) +
                        " but <J^T w, v> = " + std::to_string(rev);
        }
        ++checked;
    }
    INFO("op-case rows whose JVP is wrong:" << failures);
    CHECK(failures.empty());
    CHECK(checked > 100);
}

TEST_CASE("every differentiable op-case row: forward-over-reverse HVP = reverse-over-reverse",
          "[forward][op_cases][higher]") {
    std::string failures;
    int checked = 0;
    for (const Case& c : all_cases()) {
        if (!c.grad || !runs_in(c, tf::float64)) continue;
        const std::vector<Tensor> x = make_inputs(c, tf::float64);
        const std::vector<Source> s = sources_of(c, x);
        if (s.empty()) continue;
        const auto [primals, tangents] = primals_and_tangents(x, s);
        const tf::GradientOptions zero{.unconnected_gradients = tf::UnconnectedGradients::zero};
        // Forward over reverse: the accumulator differentiates the backward walk.
        std::vector<Tensor> fwd;
        {
            const ForwardAccumulator acc(primals, tangents);
            std::vector<tf::Gradient> g;
            {
                tf::GradientTape tape;
                tape.watch(primals);
                const Tensor loss = contract(c.f(x));
                if (!loss.defined()) continue;
                g = tape.gradient(loss, primals, zero);
            }
            for (const tf::Gradient& gi : g)
                fwd.push_back(acc.jvp(gi.dense(), tf::UnconnectedGradients::zero));
        }
        // Reverse over reverse: d <grad, v> / dx.
        std::vector<tf::Gradient> rev;
        {
            tf::GradientTape outer;
            outer.watch(primals);
            Tensor inner_product;
            {
                tf::GradientTape tape;
                tape.watch(primals);
                const Tensor loss = contract(c.f(x));
                const std::vector<tf::Gradient> g = tape.gradient(loss, primals, zero);
                for (std::size_t i = 0; i < g.size(); ++i) {
                    const Tensor term = tf::reduce_sum(tf::multiply(g[i].dense(), tangents[i]));
                    inner_product = inner_product.defined() ? inner_product + term : term;
                }
            }
            rev = outer.gradient(inner_product, primals, zero);
        }
        for (std::size_t i = 0; i < fwd.size(); ++i) {
            const double scale = 1 + max_abs(rev[i].dense());
            const double err = max_abs(tf::subtract(fwd[i], rev[i].dense()));
            if (!(err <= 1e-9 * scale)) {
                failures +=
                    "\n  " + c.name + " input " + std::to_string(s[i].at) +
                    ": |Hv forward-over-reverse - reverse-over-reverse| = " + std::to_string(err);
            }
        }
        ++checked;
    }
    INFO("op-case rows whose second-order JVPs are wrong:" << failures);
    CHECK(failures.empty());
    CHECK(checked > 100);
}

TEST_CASE("ForwardAccumulator: basic JVPs, variables and watched primals", "[forward]") {
    const Tensor x = tf::constant({1., 2., 3.});
    const Tensor t = tf::constant({1., 0.5, -1.});
    const ForwardAccumulator acc({x}, {t});
    CHECK(acc.jvp(x).to_vector<double>() == std::vector<double>{1., 0.5, -1.});
    const Tensor y = tf::multiply(x, x);  // 2 x t
    CHECK(acc.jvp(y).to_vector<double>() == std::vector<double>{2., 2., -6.});
    const Tensor z = tf::reduce_sum(tf::sin(x));
    CHECK(acc.jvp(z).item<double>() ==
          Approx(std::cos(1.) + 0.5 * std::cos(2.) - std::cos(3.)).epsilon(1e-14));

    tf::Variable v(tf::constant({2.f, -1.f}));
    const ForwardAccumulator vacc(std::vector<tf::Variable>{v}, {tf::constant({1.f, 1.f})});
    const Tensor w = tf::square(v.read_value());
    CHECK(vacc.jvp(w).to_vector<float>() == std::vector<float>{4.f, -2.f});
    CHECK(vacc.jvp(v).to_vector<float>() == std::vector<float>{1.f, 1.f});
}

TEST_CASE("ForwardAccumulator: integer outputs, unconnected targets, stop_gradient", "[forward]") {
    const Tensor x = tf::constant({1.5, -2.5});
    const ForwardAccumulator acc({x}, {tf::constant({1., 1.})});
    const Tensor i = tf::cast(x, tf::int32);
    CHECK_FALSE(acc.jvp(i).defined());  // integer outputs have no tangent
    CHECK(acc.jvp(i, tf::UnconnectedGradients::zero).to_vector<int32_t>() ==
          std::vector<int32_t>{0, 0});
    CHECK_FALSE(acc.jvp(tf::argmax(x, 0)).defined());
    const Tensor other = tf::constant({3., 4.});
    CHECK_FALSE(acc.jvp(tf::exp(other)).defined());
    CHECK(acc.jvp(tf::exp(other), tf::UnconnectedGradients::zero).to_vector<double>() ==
          std::vector<double>{0., 0.});
    const Tensor stopped = tf::multiply(tf::stop_gradient(x), x);  // only the second factor
    CHECK(acc.jvp(stopped).to_vector<double>() == std::vector<double>{1.5, -2.5});
    // Ops before the accumulator existed are not differentiated.
    CHECK_FALSE(acc.jvp(tf::floor(x)).defined());
}

TEST_CASE("ForwardAccumulator: argument checks", "[forward]") {
    const Tensor x = tf::constant({1., 2.});
    CHECK_THROWS_AS(ForwardAccumulator({x}, {tf::constant({1., 2., 3.})}),
                    tf::errors::InvalidArgumentError);
    CHECK_THROWS_WITH(ForwardAccumulator({x}, {tf::constant({1., 2., 3.})}),
                      Contains("tangent 0 was expected to be of "
                               "shape"));
    CHECK_THROWS_AS(ForwardAccumulator({x}, {tf::constant({1.f, 2.f})}),
                    tf::errors::InvalidArgumentError);
    CHECK_THROWS_WITH(ForwardAccumulator({x}, {tf::constant({1.f, 2.f})}),
                      Contains("dtype float32"));
    CHECK_THROWS_AS(ForwardAccumulator({x, x}, {tf::constant({1., 2.})}),
                    tf::errors::InvalidArgumentError);
    CHECK_THROWS_WITH(ForwardAccumulator({x, x}, {tf::constant({1., 2.})}),
                      Contains("2 primals but 1 tangents"));
    CHECK_THROWS_AS(ForwardAccumulator({x, x}, {x, x}), tf::errors::InvalidArgumentError);
    CHECK_THROWS_WITH(ForwardAccumulator({x, x}, {x, x}), Contains("primal 1 is given twice"));
    const ForwardAccumulator acc({x}, {x});
    CHECK_THROWS_AS(acc.jvp(Tensor()), tf::errors::InvalidArgumentError);
}

TEST_CASE("ForwardAccumulator: nested accumulators give second derivatives", "[forward][higher]") {
    const Tensor x = tf::constant({0.5, 2.0});
    const Tensor t1 = tf::constant({1., 2.});
    const Tensor t2 = tf::constant({3., -1.});
    const ForwardAccumulator outer({x}, {t1});
    const ForwardAccumulator inner({x}, {t2});
    const Tensor y = tf::multiply(tf::multiply(x, x), x);  // x^3
    const Tensor d1 = inner.jvp(y);                        // 3 x^2 t2
    const Tensor d2 = outer.jvp(d1);                       // 6 x t1 t2
    CHECK(d2.to_vector<double>() == std::vector<double>{9., -24.});
    // The inner accumulator does not see the outer one's JVP computations.
    CHECK_FALSE(inner.jvp(outer.jvp(y)).defined());
}

TEST_CASE("ForwardAccumulator nests with GradientTape both ways", "[forward][higher]") {
    const Tensor x = tf::constant({0.3, -0.7, 1.1});
    const Tensor v = tf::constant({1., -2., 0.5});
    auto f = [](const Tensor& a) {
        return tf::reduce_sum(tf::multiply(tf::tanh(a), a));
    };
    // Reference: the Hessian by reverse over reverse, times v.
    const Tensor h = tf::hessians(f, x);
    const Tensor hv = tf::reshape(tf::matmul(h, tf::reshape(v, {3, 1})), {3});
    SECTION("forward over reverse (accumulator outside)") {
        const Tensor got = tf::autodiff::hessian_vector_product(f, x, v);
        for (int i = 0; i < 3; ++i)
            CHECK(got.to_vector<double>()[i] == Approx(hv.to_vector<double>()[i]).epsilon(1e-12));
    }
    SECTION("reverse over forward (tape outside)") {
        tf::GradientTape tape;
        tape.watch(x);
        Tensor jvp;
        {
            const ForwardAccumulator acc({x}, {v});
            jvp = acc.jvp(f(x));  // <grad f, v>
        }
        const Tensor got = tape.gradient(jvp, x);
        for (int i = 0; i < 3; ++i)
            CHECK(got.to_vector<double>()[i] == Approx(hv.to_vector<double>()[i]).epsilon(1e-12));
    }
}

TEST_CASE("ForwardAccumulator: custom_gradient JVPs come from the backward function", "[forward]") {
    // forward computes x^2, but the custom gradient says 3 g: the JVP follows the gradient
    // (TensorFlow's double-VJP fallback for functions without a forward rule).
    const Tensor x = tf::constant({1., 2.});
    const ForwardAccumulator acc({x}, {tf::constant({1., -1.})});
    const Tensor y = tf::custom_gradient(
        {x},
        [](const std::vector<Tensor>& in) { return tf::square(in[0]); },
        [](const std::vector<Tensor>&, const Tensor&, const Tensor& g) {
            return std::vector<Tensor>{tf::multiply(g, tf::scalar_like(g, 3))};
        });
    CHECK(acc.jvp(y).to_vector<double>() == std::vector<double>{3., -3.});
}

TEST_CASE("hessians: tf.hessians' shape and values; the HVP over variables", "[forward][hessian]") {
    const Tensor x = tf::constant({{1., 2.}, {3., -1.}});
    tf::GradientTape tape;
    tape.watch(x);
    const Tensor y = tf::multiply(tf::square(x), x);  // sum(x^3): H = diag(6 x)
    const Tensor h = tf::hessians(y, x);
    REQUIRE(h.shape() == tf::Shape{2, 2, 2, 2});
    const auto hv = h.to_vector<double>();
    const std::vector<double> xs{1., 2., 3., -1.};
    for (std::size_t i = 0; i < 4; ++i)
        for (std::size_t j = 0; j < 4; ++j)
            CHECK(hv[i * 4 + j] == (i == j ? 6 * xs[i] : 0.));
    // Linear in x: a zero Hessian, not undefined.
    const Tensor lin = tf::multiply(x, tf::scalar_like(x, 2));
    CHECK(max_abs(tf::hessians(lin, x)) == 0);
    CHECK_THROWS_AS(tf::hessians(tf::constant(1.), x), tf::errors::InvalidArgumentError);
    CHECK_THROWS_WITH(tf::hessians(tf::constant(1.), x), Contains("no recording GradientTape"));

    tf::Variable w(tf::constant({0.5, -1.5}));
    tf::Variable b(tf::constant(0.25));
    auto loss = [&] {
        return tf::reduce_sum(
            tf::exp(tf::add(tf::multiply(w.read_value(), b.read_value()), w.read_value())));
    };
    const std::vector<Tensor> vec{tf::constant({1., 2.}), tf::constant(-1.)};
    const std::vector<Tensor> got =
        tf::autodiff::hessian_vector_product(loss, std::vector<tf::Variable>{w, b}, vec);
    // Reverse over reverse for the reference.
    tf::GradientTape outer;
    Tensor dot;
    {
        tf::GradientTape inner;
        const std::vector<tf::Gradient> g = inner.gradient(loss(), std::vector<tf::Variable>{w, b});
        dot = tf::add(tf::reduce_sum(tf::multiply(g[0].dense(), vec[0])),
                      tf::reduce_sum(tf::multiply(g[1].dense(), vec[1])));
    }
    const std::vector<tf::Gradient> want = outer.gradient(dot, std::vector<tf::Variable>{w, b});
    for (std::size_t k = 0; k < 2; ++k)
        CHECK(max_abs(tf::subtract(got[k], want[k].dense())) < 1e-12);
}

TEST_CASE("forward mode: the heat-equation residual of docs/autograd.md", "[forward][higher]") {
    // u(t, x) = exp(-t) sin(x) solves u_t = u_xx: the residual is zero, u_x = exp(-t) cos(x).
    const Tensor points = tf::constant({{0.1, 0.4}, {0.7, -1.2}, {1.5, 2.0}});
    const Tensor e_t = tf::constant({{1., 0.}, {1., 0.}, {1., 0.}});
    const Tensor e_x = tf::constant({{0., 1.}, {0., 1.}, {0., 1.}});
    auto net = [](const Tensor& p) {
        const std::vector<Tensor> tx = tf::unstack(p, 1);
        return tf::multiply(tf::exp(tf::negative(tx[0])), tf::sin(tx[1]));
    };
    const ForwardAccumulator outer({points}, {e_x});
    const ForwardAccumulator inner({points}, {e_x});
    const Tensor u = net(points);
    const Tensor u_x = inner.jvp(u);
    const Tensor u_xx = outer.jvp(u_x);
    Tensor u_t;
    {
        const ForwardAccumulator time({points}, {e_t});
        u_t = time.jvp(net(points));
    }
    CHECK(max_abs(tf::subtract(u_t, u_xx)) < 1e-14);
    const auto p = points.to_vector<double>();
    for (std::size_t i = 0; i < 3; ++i)
        CHECK(u_x.to_vector<double>()[i] ==
              Approx(std::exp(-p[2 * i]) * std::cos(p[2 * i + 1])).epsilon(1e-14));
}

TEST_CASE("every differentiable op-case row's JVP runs in float32, float16 and bfloat16",
          "[forward][op_cases]") {
    // The float64 JVP on the same (rounded) inputs and tangents is the reference; the tolerance is
    // that of the row's results in that dtype, relative to max(1, |JVP|), times the few ops a rule
    // chains.
    const std::vector<std::pair<tf::DType, double>> dtypes{
        {tf::float32, 1e-3}, {tf::float16, 6e-2}, {tf::bfloat16, 3e-1}};
    std::string failures;
    int checked = 0;
    for (const Case& c : all_cases()) {
        if (!c.grad) continue;
        for (const auto& [d, tol] : dtypes) {
            if (!runs_in(c, d) || !runs_in(c, tf::float64)) continue;
            const std::vector<Tensor> x = make_inputs(c, d);
            std::vector<Tensor> x64;
            for (const Tensor& xi : x)
                x64.push_back(xi.dtype() == d ? tf::cast(xi, tf::float64) : xi);
            const std::vector<Source> s = sources_of(c, x64);
            if (s.empty()) continue;
            std::vector<Tensor> p, t, p64, t64;
            for (const Source& src : s) {
                p.push_back(x[src.at]);
                t.push_back(tf::cast(src.direction, x[src.at].dtype()));
                p64.push_back(x64[src.at]);
                t64.push_back(tf::cast(t.back(), tf::float64));
            }
            auto jvps = [&](const std::vector<Tensor>& in,
                            const std::vector<Tensor>& primals,
                            const std::vector<Tensor>& tangents) {
                const ForwardAccumulator acc(primals, tangents);
                std::vector<Tensor> out;
                for (const Tensor& y : c.f(in))
                    out.push_back(acc.jvp(y, tf::UnconnectedGradients::zero));
                return out;
            };
            const std::vector<Tensor> got = jvps(x, p, t);
            const std::vector<Tensor> want = jvps(x64, p64, t64);
            for (std::size_t k = 0; k < got.size(); ++k) {
                if (want[k].dtype() != tf::float64 || want[k].num_elements() == 0) continue;
                if (got[k].dtype() != d) {
                    failures += "\n  " + c.name + "/" + std::string(tf::dtype_name(d)) +
                                ": a tangent of another dtype";
                    continue;
                }
                const double scale = 1 + max_abs(want[k]);
                // A JVP beyond float16's range (65504) overflows there, as the op itself would:
                // reduce_prod's rows reach 1e5 (the product times a sum of 70 tangent terms).
                if (d == tf::float16 && scale > 3e4) continue;
                const double err = max_abs(tf::subtract(tf::cast(got[k], tf::float64), want[k]));
                if (!(err <= tol * scale)) {
                    failures += "\n  " + c.name + "/" + std::string(tf::dtype_name(d)) +
                                " output " + std::to_string(k) + ": off by " + std::to_string(err);
                }
            }
            ++checked;
        }
    }
    INFO("op-case rows whose low-precision JVPs are wrong:" << failures);
    CHECK(failures.empty());
    CHECK(checked > 100);
}

namespace {

bool ran(const tf::profiler::Profile& p, const std::string& op_type) {
    return std::any_of(p.by_op_type.begin(), p.by_op_type.end(), [&](const auto& row) {
        return row.name == op_type && row.count > 0;
    });
}

}  // namespace

TEST_CASE(
    "ForwardAccumulator: a matmul shares its gemm with the input's tangent, as the generic "
    "rule computes it",
    "[forward]") {
    // NOTE [Fused matmul tangent] in lib/autograd/tape.hpp: with one accumulator, no tape
    // outside it and a tangent on input 0 only, the primal and t b come from one gemm of [a; t]
    // (its ConcatV2 shows in a profile). A tape outside the accumulator, or a tangent on b too,
    // sends the op the generic way (jvp_bilinear after the op), which the fused path must match.
    const tf::DType dtype = GENERATE(tf::float32, tf::float64);
    const bool transpose_b = GENERATE(false, true);
    const bool tangent_on_b = GENERATE(false, true);
    const std::string dtype_name(tf::dtype_name(dtype));
    CAPTURE(dtype_name, transpose_b, tangent_on_b);
    const Tensor a = tf::random::normal({48, 96}, 0, 1, dtype, 1);
    const Tensor b =
        tf::random::normal(transpose_b ? tf::Shape{80, 96} : tf::Shape{96, 80}, 0, 1, dtype, 2);
    const Tensor ta = tf::random::normal(a.shape(), 0, 1, dtype, 3);
    const Tensor tb = tf::random::normal(b.shape(), 0, 1, dtype, 4);
    const Tensor plain = tf::matmul(a, b, false, transpose_b);
    auto jvp = [&](Tensor& y) {
        std::vector<Tensor> primals{a};
        std::vector<Tensor> tangents{ta};
        if (tangent_on_b) {
            primals.push_back(b);
            tangents.push_back(tb);
        }
        const ForwardAccumulator acc(primals, tangents);
        y = tf::matmul(a, b, false, transpose_b);
        return acc.jvp(y);
    };
    Tensor y_fused;
    Tensor t_fused;
    const tf::profiler::Profile fused = tf::profiler::profile([&] { t_fused = jvp(y_fused); });
    CHECK(ran(fused, "ConcatV2") == !tangent_on_b);
    Tensor y_generic;
    Tensor t_generic;
    const tf::profiler::Profile generic = tf::profiler::profile([&] {
        const tf::GradientTape outside;
        t_generic = jvp(y_generic);
    });
    CHECK_FALSE(ran(generic, "ConcatV2"));
    // A row block of a gemm is the gemm of that block: the primal is the plain matmul's, bit for
    // bit, and so is the tangent.
    CHECK(y_fused.shape() == plain.shape());
    CHECK(tf::reduce_all(tf::equal(y_fused, plain)).item<bool>());
    CHECK(tf::reduce_all(tf::equal(y_generic, plain)).item<bool>());
    CHECK(t_fused.shape() == plain.shape());
    CHECK(tf::reduce_all(tf::equal(t_fused, t_generic)).item<bool>());
}

TEST_CASE(
    "ForwardAccumulator: the fused matmul path records the primal on tapes inside the "
    "accumulator and leaves small products to the generic rule",
    "[forward]") {
    const Tensor a = tf::random::normal({32, 64}, 0, 1, tf::float64, 5);
    const Tensor b = tf::random::normal({64, 64}, 0, 1, tf::float64, 6);
    const Tensor ta = tf::random::normal(a.shape(), 0, 1, tf::float64, 7);
    SECTION("a tape inside sees the matmul: d sum(a b) / da = 1 b^T") {
        const ForwardAccumulator acc({a}, {ta});
        tf::GradientTape tape;
        tape.watch(a);
        const Tensor y = tf::matmul(a, b);
        const Tensor g = tape.gradient(tf::reduce_sum(y), a).dense();
        const Tensor expected = tf::matmul(tf::ones_like(y), b, false, true);
        CHECK(tf::reduce_all(tf::equal(g, expected)).item<bool>());
        CHECK(tf::reduce_all(tf::equal(acc.jvp(y), tf::matmul(ta, b))).item<bool>());
    }
    SECTION("forward over reverse through the fused matmul: the HVP of sum(tanh(a b))") {
        auto f = [&](const Tensor& x) {
            return tf::reduce_sum(tf::tanh(tf::matmul(x, b)));
        };
        const Tensor hv = tf::autodiff::hessian_vector_product(f, a, ta);
        tf::Tensor reference;  // reverse over reverse: d/da <grad f(a), ta>
        {
            tf::GradientTape outer;
            outer.watch(a);
            tf::GradientTape inner;
            inner.watch(a);
            const Tensor y = f(a);
            const Tensor g = inner.gradient(y, a).dense();
            reference = outer.gradient(tf::reduce_sum(tf::multiply(g, ta)), a).dense();
        }
        CHECK(tf::reduce_max(tf::abs(hv - reference)).item<double>() < 1e-10);
    }
    SECTION("below the size threshold the generic rule runs") {
        const Tensor small = tf::random::normal({4, 8}, 0, 1, tf::float64, 8);
        const Tensor w = tf::random::normal({8, 8}, 0, 1, tf::float64, 9);
        Tensor t;
        const tf::profiler::Profile p = tf::profiler::profile([&] {
            const ForwardAccumulator acc({small}, {small});
            t = acc.jvp(tf::matmul(small, w));
        });
        CHECK_FALSE(ran(p, "ConcatV2"));
        CHECK(tf::reduce_all(tf::equal(t, tf::matmul(small, w))).item<bool>());
    }
}
