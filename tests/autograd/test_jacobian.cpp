// Vectorized jacobians (docs/autograd.md "How jacobians are computed"): jacobian and batch_jacobian
// by one batched backward walk must equal the per-element loop (experimental_use_pfor = false) for
// batchable rows, rows that fall back to a per-row loop, custom gradients, IndexedSlices, chunking,
// and under nested tapes (Hessians); and the batched path really is one walk.
#include <algorithm>
#include <functional>

#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;
using Catch::Contains;

namespace {

using Fn = std::function<tf::Tensor(const tf::Tensor&)>;

std::vector<double> vals(const tf::Tensor& t) {
    return t.to_vector<double>();
}

// Deterministic float64 values in [-1, 1] (no two alike, none zero), shaped `shape`.
tf::Tensor values(const tf::Shape& shape, double phase = 0.3) {
    std::vector<double> v(static_cast<std::size_t>(shape.num_elements()));
    for (std::size_t i = 0; i < v.size(); ++i)
        v[i] = std::sin(1.7 * static_cast<double>(i) + phase) * 0.9;
    for (double& x : v)
        x = x == 0.0 ? 0.05 : x;
    return tf::constant(v, shape, tf::DType::float64);
}

void check_close(const tf::Tensor& got, const tf::Tensor& want, double tol = 1e-12) {
    REQUIRE(got.defined() == want.defined());
    if (!got.defined()) return;
    REQUIRE(got.shape() == want.shape());
    const auto g = vals(got);
    const auto w = vals(want);
    for (std::size_t i = 0; i < g.size(); ++i) {
        INFO("element " << i);
        CHECK(g[i] == Approx(w[i]).margin(tol).epsilon(tol));
    }
}

// jacobian(f(x), x) (or batch_jacobian) three ways on one persistent tape: looped (the reference),
// vectorized in one walk, and vectorized in chunks of 2 rows.
void check_jacobian(const Fn& f, const tf::Tensor& x, bool batch = false) {
    tf::GradientTape tape(true);
    tape.watch(x);
    const tf::Tensor y = f(x);
    auto jacobian = [&](const tf::JacobianOptions& options) {
        return batch ? tape.batch_jacobian(y, x, options) : tape.jacobian(y, x, options);
    };
    const tf::Tensor looped = jacobian({.experimental_use_pfor = false});
    check_close(jacobian({}), looped);
    check_close(jacobian({.parallel_iterations = 2}), looped);
}

void check_batch_jacobian(const Fn& f, const tf::Tensor& x) {
    check_jacobian(f, x, true);
}

}  // namespace

TEST_CASE("vectorized jacobian of element-wise unary ops equals the loop", "[jacobian][pfor]") {
    const tf::Tensor x = values({2, 3});
    const tf::Tensor pos = tf::abs(x) + 0.5;  // for log, sqrt, rsqrt
    const std::vector<std::pair<const char*, Fn>> cases = {
        {"negative",
         [](auto& t) {
             return tf::negative(t);
         }},
        {"abs",
         [](auto& t) {
             return tf::abs(t);
         }},
        {"sign",
         [](auto& t) {
             return tf::sign(t) * t;
         }},
        {"exp",
         [](auto& t) {
             return tf::exp(t);
         }},
        {"expm1",
         [](auto& t) {
             return tf::expm1(t);
         }},
        {"log1p",
         [](auto& t) {
             return tf::log1p(t);
         }},
        {"square",
         [](auto& t) {
             return tf::square(t);
         }},
        {"reciprocal",
         [](auto& t) {
             return tf::reciprocal(t);
         }},
        {"sin",
         [](auto& t) {
             return tf::sin(t);
         }},
        {"cos",
         [](auto& t) {
             return tf::cos(t);
         }},
        {"tanh",
         [](auto& t) {
             return tf::tanh(t);
         }},
        {"sigmoid",
         [](auto& t) {
             return tf::sigmoid(t);
         }},
        {"erf",
         [](auto& t) {
             return tf::erf(t);
         }},
        {"softplus",
         [](auto& t) {
             return tf::softplus(t);
         }},
        {"floor (no gradient) plus x",
         [](auto& t) {
             return tf::floor(t) + t;
         }},
        {"cast to float32 and back",
         [](auto& t) {
             return tf::cast(tf::cast(t, tf::DType::float32), tf::DType::float64) * t;
         }},
        {"identity",
         [](auto& t) {
             return tf::identity(t);
         }},
    };
    for (const auto& [name, f] : cases) {
        INFO(name);
        check_jacobian(f, x);
    }
    for (const Fn f : {Fn([](auto& t) { return tf::log(t); }),
                       Fn([](auto& t) { return tf::sqrt(t); }),
                       Fn([](auto& t) { return tf::rsqrt(t); })}) {
        check_jacobian(f, pos);
    }
}

TEST_CASE("vectorized jacobian of broadcasting binary ops equals the loop", "[jacobian][pfor]") {
    const tf::Tensor row = values({3}, 1.1) + 2.0;     // broadcast along the rows of x
    const tf::Tensor col = values({2, 1}, 2.3) + 2.0;  // broadcast along the columns
    using Binary = std::function<tf::Tensor(const tf::Tensor&, const tf::Tensor&)>;
    const std::vector<std::pair<const char*, Binary>> ops = {
        {"add",
         [](auto& a, auto& b) {
             return tf::add(a, b);
         }},
        {"subtract",
         [](auto& a, auto& b) {
             return tf::subtract(a, b);
         }},
        {"multiply",
         [](auto& a, auto& b) {
             return tf::multiply(a, b);
         }},
        {"divide",
         [](auto& a, auto& b) {
             return tf::divide(a, b);
         }},
        {"floormod",
         [](auto& a, auto& b) {
             return tf::floormod(a, b);
         }},
        {"pow",
         [](auto& a, auto& b) {
             return tf::pow(tf::abs(a) + 0.5, b);
         }},
        {"maximum",
         [](auto& a, auto& b) {
             return tf::maximum(a, b - 2.0);
         }},
        {"minimum",
         [](auto& a, auto& b) {
             return tf::minimum(a, b - 2.0);
         }},
        {"squared_difference",
         [](auto& a, auto& b) {
             return tf::squared_difference(a, b);
         }},
        {"divide_no_nan",
         [](auto& a, auto& b) {
             return tf::divide_no_nan(a, b);
         }},
        {"add_n",
         [](auto& a, auto& b) {
             return tf::add_n({a, a * 2.0, tf::broadcast_to(b, a.shape())});
         }},
        {"where",
         [](auto& a, auto& b) {
             return tf::where(tf::greater(a, b - 2.0), a * a, b);
         }},
    };
    for (const auto& [name, op] : ops) {
        INFO(name);
        // The source on either side, broadcast or not.
        check_jacobian([&](auto& x) { return op(x, row); }, values({2, 3}));
        check_jacobian([&](auto& x) { return op(values({2, 3}, 0.7), x); }, col);
        check_jacobian([&](auto& x) { return op(x, col); }, values({2, 3}));
        check_jacobian([&](auto& x) { return op(x * x, x); }, values({2, 3}) + 2.0);
    }
}

TEST_CASE("vectorized jacobian of matmul equals the loop", "[jacobian][pfor]") {
    const tf::Tensor w = values({3, 4}, 0.9);
    const tf::Tensor wt = values({4, 3}, 0.9);
    check_jacobian([&](auto& x) { return tf::matmul(x, w); }, values({2, 3}));
    check_jacobian([&](auto& x) { return tf::matmul(x, wt, false, true); }, values({2, 3}));
    check_jacobian([&](auto& x) { return tf::matmul(x, w, true, false); }, values({3, 2}));
    check_jacobian([&](auto& x) { return tf::matmul(wt, x, true, true); }, values({2, 4}));
    check_jacobian([&](auto& v) { return tf::matmul(values({2, 3}), v); }, w);
    // Batched: the source broadcast over the batch, or batched itself.
    check_jacobian([&](auto& x) { return tf::matmul(x, w); }, values({2, 2, 3}));
    check_jacobian([&](auto& v) { return tf::matmul(values({2, 2, 3}), v); }, w);
    check_jacobian(
        [&](auto& v) {
            return tf::matmul(values({2, 3}), v, false, true);
        },
        values({2, 4, 3}));
}

TEST_CASE("vectorized jacobian of reductions equals the loop", "[jacobian][pfor]") {
    const tf::Tensor x = values({2, 3, 2});
    const std::vector<std::pair<const char*, Fn>> cases = {
        {"sum all",
         [](auto& t) {
             return tf::reduce_sum(t);
         }},
        {"sum axis 1",
         [](auto& t) {
             return tf::reduce_sum(t, 1);
         }},
        {"sum axes {0,2} keepdims",
         [](auto& t) {
             return tf::reduce_sum(t, tf::Axes({0, 2}), true);
         }},
        {"mean axis -1",
         [](auto& t) {
             return tf::reduce_mean(t, -1);
         }},
        {"mean keepdims",
         [](auto& t) {
             return tf::reduce_mean(t, 0, true);
         }},
        {"max axis 1",
         [](auto& t) {
             return tf::reduce_max(t, 1);
         }},
        {"min keepdims",
         [](auto& t) {
             return tf::reduce_min(t, 2, true);
         }},
        {"prod axis 1",
         [](auto& t) {
             return tf::reduce_prod(t, 1);
         }},
        {"cumsum",
         [](auto& t) {
             return tf::cumsum(t, 1);
         }},
        {"cumprod reverse",
         [](auto& t) {
             return tf::cumprod(t, 2, false, true);
         }},
        {"logsumexp",
         [](auto& t) {
             return tf::reduce_logsumexp(t, 1);
         }},
    };
    for (const auto& [name, f] : cases) {
        INFO(name);
        check_jacobian(f, x);
    }
    // Ties: max splits the gradient between equal elements.
    check_jacobian([](auto& t) { return tf::reduce_max(t, 1); },
                   tf::constant({{1.0, 3.0, 3.0}, {2.0, 2.0, 0.0}}));
}

TEST_CASE("vectorized jacobian of shape and indexing ops equals the loop", "[jacobian][pfor]") {
    const tf::Tensor x = values({2, 3});
    const std::vector<std::pair<const char*, Fn>> cases = {
        {"reshape",
         [](auto& t) {
             return tf::reshape(t * t, {3, 2});
         }},
        {"transpose",
         [](auto& t) {
             return tf::transpose(t * t);
         }},
        {"transpose 3-d",
         [](auto& t) {
             return tf::transpose(tf::reshape(t, {1, 2, 3}), {2, 0, 1});
         }},
        {"expand_dims",
         [](auto& t) {
             return tf::expand_dims(t * t, 1);
         }},
        {"squeeze",
         [](auto& t) {
             return tf::squeeze(tf::reshape(t, {2, 1, 3})) * t;
         }},
        {"concat",
         [](auto& t) {
             return tf::concat({t, t * t}, 1);
         }},
        {"stack",
         [](auto& t) {
             return tf::stack({t, t * t}, 1);
         }},
        {"unstack",
         [](auto& t) {
             return tf::unstack(t * t, 1)[2] * 3.0;
         }},
        {"split",
         [](auto& t) {
             return tf::split(t * t, std::vector<int64_t>{1, 2}, 1)[1];
         }},
        {"tile",
         [](auto& t) {
             return tf::tile(t * t, {2, 1});
         }},
        {"broadcast_to",
         [](auto& t) {
             return tf::broadcast_to(tf::reshape(t, {2, 1, 3}), {2, 2, 3});
         }},
        {"slice",
         [](auto& t) {
             return tf::slice(t * t, {0, 1}, {2, 2});
         }},
        {"pad",
         [](auto& t) {
             return tf::pad(t * t, {{1, 0}, {0, 2}});
         }},
        {"slice of pad",
         [](auto& t) {
             return tf::slice(tf::pad(t, {{1, 1}, {0, 0}}), {1, 1}, {3, 2});
         }},
        // Rows without a batched formula: the per-row fallback.
        {"strided_slice",
         [](auto& t) {
             return tf::strided_slice(t, {0, 0}, {2, 3}, {1, 2}) * 2.0;
         }},
        {"gather",
         [](auto& t) {
             return tf::gather(t * t, tf::constant({1, 0, 1}), 1);
         }},
        {"gather rows",
         [](auto& t) {
             return tf::gather(t, tf::constant({1, 1, 0}));
         }},
        {"gather_nd",
         [](auto& t) {
             return tf::gather_nd(t, tf::constant({{0, 2}, {1, 0}}));
         }},
    };
    for (const auto& [name, f] : cases) {
        INFO(name);
        check_jacobian(f, x);
    }
}

TEST_CASE("vectorized jacobian of nn ops and an MLP layer equals the loop", "[jacobian][pfor]") {
    const tf::Tensor x = values({2, 3});
    const tf::Tensor w = values({3, 4}, 0.4);
    const tf::Tensor b = values({4}, 1.3);
    const std::vector<std::pair<const char*, Fn>> cases = {
        {"relu",
         [](auto& t) {
             return tf::nn::relu(t);
         }},
        {"relu6",
         [](auto& t) {
             return tf::nn::relu6(t * 8.0);
         }},
        {"elu",
         [](auto& t) {
             return tf::nn::elu(t);
         }},
        {"selu",
         [](auto& t) {
             return tf::nn::selu(t);
         }},
        {"leaky_relu",
         [](auto& t) {
             return tf::nn::leaky_relu(t, 0.1);
         }},
        {"softmax",
         [](auto& t) {
             return tf::nn::softmax(t);
         }},
        {"softmax axis 0",
         [](auto& t) {
             return tf::nn::softmax(t, 0);
         }},
        {"log_softmax",
         [](auto& t) {
             return tf::nn::log_softmax(t);
         }},
        {"softmax_xent",
         [](auto& t) {
             return tf::nn::softmax_cross_entropy_with_logits(tf::nn::softmax(values({2, 3}, 2.0)),
                                                              t);
         }},
        {"sparse_softmax_xent",
         [](auto& t) {
             return tf::nn::sparse_softmax_cross_entropy_with_logits(tf::constant({2, 0}), t);
         }},
        {"bias_add",
         [&](auto& t) {
             return tf::nn::bias_add(tf::matmul(t, w), b);
         }},
        {"relu MLP",
         [&](auto& t) {
             return tf::nn::relu(tf::matmul(t, w) + b);
         }},
        {"tanh MLP",
         [&](auto& t) {
             return tf::tanh(tf::matmul(tf::tanh(tf::matmul(t, w) + b), tf::transpose(w)));
         }},
        {"sigmoid MLP",
         [&](auto& t) {
             return tf::reduce_mean(tf::sigmoid(tf::matmul(t, w) + b), 1);
         }},
    };
    for (const auto& [name, f] : cases) {
        INFO(name);
        check_jacobian(f, x);
    }
}

TEST_CASE("vectorized jacobian with a custom gradient runs it per row", "[jacobian][pfor]") {
    int calls = 0;
    auto f = [&](const tf::Tensor& x) {
        return tf::custom_gradient(
            {x * x},
            [](const std::vector<tf::Tensor>& in) { return tf::tanh(in[0]); },
            [&calls](const std::vector<tf::Tensor>&, const tf::Tensor& y, const tf::Tensor& g) {
                ++calls;
                return std::vector<tf::Tensor>{g * (1.0 - y * y) * 2.0};  // not the true derivative
            });
    };
    const tf::Tensor x = values({3});
    check_jacobian(f, x);
    calls = 0;
    tf::GradientTape tape;
    tape.watch(x);
    auto j = tape.jacobian(f(x), x);
    CHECK(calls == 3);  // once per row of the jacobian, each with an unbatched upstream
    CHECK(j.shape() == tf::Shape{3, 3});
}

TEST_CASE("vectorized jacobian of variables and IndexedSlices", "[jacobian][pfor]") {
    tf::Variable table(values({4, 2}), {.name = "table"});
    tf::Variable w(values({2, 3}, 0.2), {.name = "w"});
    tf::GradientTape tape(true);
    // gather from a variable: its gradient is IndexedSlices (densified per row by the fallback).
    auto rows = tf::gather(table.value(), tf::constant({3, 1, 3}));
    auto y = tf::matmul(rows, w.value());  // [3, 3]
    for (const tf::Variable* v : {&table, &w}) {
        const tf::Tensor looped = tape.jacobian(y, *v, {.experimental_use_pfor = false});
        CHECK(looped.shape() == tf::Shape{3, 3, v->shape().dims()[0], v->shape().dims()[1]});
        check_close(tape.jacobian(y, *v), looped);
        check_close(tape.jacobian(y, *v, {.parallel_iterations = 4}), looped);
    }
}

TEST_CASE("vectorized jacobian edge cases", "[jacobian][pfor]") {
    SECTION("scalar target: the gradient") {
        const tf::Tensor x = values({2, 2});
        tf::GradientTape tape(true);
        tape.watch(x);
        auto s = tf::reduce_sum(tf::tanh(x));
        check_close(tape.jacobian(s, x), tape.gradient(s, x));
        check_close(tape.jacobian(s, x), tape.jacobian(s, x, {.experimental_use_pfor = false}));
    }
    SECTION("scalar source") {
        check_jacobian(
            [](auto& t) {
                return tf::stack({t, t * t, tf::sin(t)});
            },
            tf::constant(0.7));
    }
    SECTION("the target is the source") {
        const tf::Tensor x = values({3});
        tf::GradientTape tape(true);
        tape.watch(x);
        CHECK(vals(tape.jacobian(x, x)) == std::vector<double>{1, 0, 0, 0, 1, 0, 0, 0, 1});
    }
    SECTION("zero-size target: undefined, or zeros of shape [0, ...]") {
        const tf::Tensor x = values({3});
        tf::GradientTape tape(true);
        tape.watch(x);
        auto y = tf::slice(x, {0}, {0});
        CHECK_FALSE(tape.jacobian(y, x).defined());
        CHECK(tape.jacobian(y, x, tf::UnconnectedGradients::zero).shape() == tf::Shape{0, 3});
    }
    SECTION("unconnected and integer sources") {
        const tf::Tensor x = values({2});
        const tf::Tensor u = values({3});
        const tf::Tensor i = tf::constant({1, 2});
        tf::GradientTape tape(true);
        tape.watch(x);
        tape.watch(u);
        tape.watch(i);
        auto y = x * 3.0 + tf::stop_gradient(tf::reduce_sum(u)) + tf::cast(i, tf::DType::float64);
        CHECK_FALSE(tape.jacobian(y, u).defined());
        CHECK_FALSE(tape.jacobian(y, i).defined());
        CHECK(vals(tape.jacobian(y, u, tf::UnconnectedGradients::zero)) ==
              std::vector<double>(6, 0.0));
        auto zi = tape.jacobian(y, i, {.unconnected_gradients = tf::UnconnectedGradients::zero});
        CHECK(zi.shape() == tf::Shape{2, 2});
        CHECK(zi.dtype() == tf::DType::int32);
        CHECK(vals(tape.jacobian(y, x)) == std::vector<double>{3, 0, 0, 3});
    }
    SECTION("a non-persistent tape is consumed; the loop needs a persistent one") {
        const tf::Tensor x = values({2});
        tf::GradientTape tape;
        tape.watch(x);
        auto y = x * x;
        CHECK_THROWS_WITH(tape.jacobian(y, x, {.experimental_use_pfor = false}),
                          Contains("persistent=True") && Contains("experimental_use_pfor"));
        CHECK_THROWS_AS(
            tape.batch_jacobian(
                tf::reshape(y, {2, 1}), tf::reshape(x, {2, 1}), {.experimental_use_pfor = false}),
            tf::errors::RuntimeError);
        CHECK(tape.jacobian(y, x).shape() == tf::Shape{2, 2});
        CHECK_THROWS_WITH(tape.jacobian(y, x), Contains("non-persistent GradientTape"));
    }
    SECTION("negative parallel_iterations") {
        const tf::Tensor x = values({2});
        tf::GradientTape tape(true);
        tape.watch(x);
        CHECK_THROWS_AS(tape.jacobian(x * x, x, {.parallel_iterations = -1}),
                        tf::errors::InvalidArgumentError);
    }
}

TEST_CASE("vectorized batch_jacobian equals the loop", "[jacobian][pfor]") {
    const tf::Tensor w = values({3, 4}, 0.4);
    const tf::Tensor b = values({4}, 1.3);
    check_batch_jacobian([&](auto& x) { return tf::tanh(tf::matmul(x, w) + b); }, values({5, 3}));
    check_batch_jacobian([&](auto& x) { return tf::nn::softmax(tf::nn::relu(tf::matmul(x, w))); },
                         values({5, 3}));
    check_batch_jacobian([](auto& x) { return x * x; }, values({4, 2, 3}));
    check_batch_jacobian([](auto& x) { return tf::reduce_sum(x, 2); }, values({4, 2, 3}));
    // Slice, a fallback row (gather), and examples that mix (the sum over the batch).
    check_batch_jacobian(
        [](auto& x) {
            return tf::slice(x, {0, 1}, {3, 2}) * 2.0;
        },
        values({3, 3}));
    check_batch_jacobian(
        [](auto& x) {
            return tf::gather(x, tf::constant({2, 0, 1})) * x;
        },
        values({3, 2}));
    tf::GradientTape tape(true);
    const tf::Tensor x = values({3, 2});
    tape.watch(x);
    auto unconnected = values({3, 1});
    tape.watch(unconnected);
    auto y = x * x;
    CHECK(vals(tape.batch_jacobian(y, unconnected)) == std::vector<double>(6, 0.0));
    CHECK_THROWS_WITH(tape.batch_jacobian(y, values({2, 2})), Contains("Need first dimension"));
}

TEST_CASE("Hessians: vectorized jacobians inside nested tapes", "[jacobian][pfor][higher]") {
    // f(x) = sum(tanh(x W) * x W): its Hessian by jacobian(gradient) three ways.
    const tf::Tensor w = values({3, 3}, 0.8);
    auto f = [&](const tf::Tensor& x) {
        auto h = tf::matmul(tf::reshape(x, {1, 3}), w);
        return tf::reduce_sum(tf::tanh(h) * h);
    };
    const tf::Tensor x = values({3});
    auto hessian = [&](tf::JacobianOptions options) {
        tf::GradientTape outer(true);
        outer.watch(x);
        tf::Tensor g;
        {
            tf::GradientTape inner;
            inner.watch(x);
            g = inner.gradient(f(x), x);
        }
        return outer.jacobian(g, x, options);
    };
    const tf::Tensor looped = hessian({.experimental_use_pfor = false});
    check_close(hessian({}), looped);
    check_close(hessian({.parallel_iterations = 2}), looped);
    // Symmetric, as a Hessian is.
    check_close(tf::transpose(looped), looped, 1e-10);

    // The other way round: differentiate a vectorized jacobian (its formulas and the fallback's
    // stack/unstack are recorded by the outer tape).
    auto outer_of_jacobian = [&]() {
        tf::GradientTape outer;
        outer.watch(x);
        tf::Tensor j;
        {
            tf::GradientTape inner;
            inner.watch(x);
            auto y = tf::gather(tf::sin(x) * x, tf::constant({1, 2}));  // gather: the fallback
            j = inner.jacobian(y, x);
        }
        return outer.gradient(tf::reduce_sum(j * j), x).dense();
    };
    // Against the closed form:
    // j[r, c] = d/dx_c (sin(x_k) x_k) for k = r + 1 = c, so sum j^2 = sum_k (cos x_k x_k + sin
    // x_k)^2.
    const auto xs = vals(x);
    std::vector<double> want(3, 0.0);
    for (std::size_t k = 1; k < 3; ++k) {
        const double d = std::cos(xs[k]) * xs[k] + std::sin(xs[k]);
        const double dd = -std::sin(xs[k]) * xs[k] + 2 * std::cos(xs[k]);
        want[k] = 2 * d * dd;
    }
    check_close(outer_of_jacobian(), tf::constant(want, tf::Shape{3}, tf::DType::float64), 1e-12);
}

TEST_CASE("a vectorized jacobian is one backward walk", "[jacobian][pfor]") {
    // An outer tape records the ops of the inner jacobian's formulas: one walk records the same
    // number of ops whatever the target's size; the loop records one walk per element.
    auto recorded = [](int64_t n, bool pfor) {
        const tf::Tensor x = values({n});
        const tf::Tensor w = values({n, n}, 0.1);
        tf::GradientTape outer(true);
        outer.watch(x);
        tf::GradientTape inner(true);
        inner.watch(x);
        auto y = tf::tanh(tf::matmul(tf::reshape(x, {1, n}), w) + 1.0);
        // recorded ops: the graph's nodes less the Const nodes of shape and axis arguments
        const auto ops = [&] {
            const tf::Graph graph = outer.graph();
            const auto& nodes = graph.nodes();
            return std::count_if(
                nodes.begin(), nodes.end(), [](const tf::GraphNode& n) { return n.op != "Const"; });
        };
        const auto before = ops();
        inner.jacobian(y, x, {.experimental_use_pfor = pfor});
        return ops() - before;
    };
    CHECK(recorded(4, true) == recorded(16, true));
    CHECK(recorded(16, false) >= 4 * recorded(4, false) - 8);
    CHECK(recorded(16, true) * 8 < recorded(16, false));
}
