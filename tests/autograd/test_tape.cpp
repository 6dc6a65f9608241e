// GradientTape : recording rules, gradient() options and
// errors, persistence, nesting, aggregation methods, jacobians, custom gradients, IndexedSlices.
#include <algorithm>
#include <cmath>

#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

#include "support/gradcheck.hpp"

namespace tf = tapeflow;
using Catch::Contains;

namespace {
std::vector<double> vals(const tf::Tensor& t) {
    return t.to_vector<double>();
}
}  // namespace

TEST_CASE("gradient of a watched tensor", "[tape]") {
    auto x = tf::constant({1.0, 2.0, 3.0});
    tf::GradientTape tape;
    tape.watch(x);
    auto y = tf::reduce_sum(x * x);
    CHECK(vals(tape.gradient(y, x)) == std::vector<double>{2, 4, 6});
}

TEST_CASE("unwatched tensors are not recorded", "[tape]") {
    auto x = tf::constant(3.0);
    tf::GradientTape tape;
    auto y = x * x;
    CHECK_FALSE(tape.gradient(y, x).defined());
}

TEST_CASE("trainable variables read under the tape are watched", "[tape][variable]") {
    tf::Variable w(tf::constant({1.0, -2.0}), {.name = "w"});
    tf::Variable frozen(tf::constant(5.0), {.name = "frozen", .trainable = false});
    tf::GradientTape tape;
    auto y = tf::reduce_sum(tf::square(w.value())) * frozen;
    auto grads = tape.gradient(y, std::vector<tf::Variable>{w, frozen});
    CHECK(vals(grads[0]) == std::vector<double>{10, -20});
    CHECK_FALSE(grads[1].defined());
    REQUIRE(tape.watched_variables().size() == 1);
    CHECK(tape.watched_variables()[0] == w);
}

TEST_CASE("watch_accessed_variables = false watches only what is asked", "[tape][variable]") {
    tf::Variable a(tf::constant(2.0)), b(tf::constant(3.0));
    tf::GradientTape tape(false, false);
    tape.watch(b);
    auto y = a * b;
    auto grads = tape.gradient(y, std::vector<tf::Variable>{a, b});
    CHECK_FALSE(grads[0].defined());
    CHECK(grads[1].dense().item<double>() == 2.0);
}

TEST_CASE("a non-persistent tape computes one set of gradients", "[tape][errors]") {
    auto x = tf::constant(2.0);
    tf::GradientTape tape;
    tape.watch(x);
    auto y = x * x;
    CHECK(tape.gradient(y, x).dense().item<double>() == 4.0);
    CHECK_THROWS_AS(tape.gradient(y, x), tf::errors::RuntimeError);
    CHECK_THROWS_WITH(tape.gradient(y, x),
                      Contains("non-persistent GradientTape can only be used"));
    CHECK_THROWS_AS(tape.jacobian(y, x), tf::errors::RuntimeError);
}

TEST_CASE("a persistent tape allows many calls", "[tape]") {
    auto x = tf::constant(3.0);
    tf::GradientTape tape(true);
    tape.watch(x);
    auto y = x * x;
    auto z = y * y;
    CHECK(tape.gradient(y, x).dense().item<double>() == 6.0);
    CHECK(tape.gradient(z, x).dense().item<double>() == 108.0);  // 4 x^3
    CHECK(tape.gradient(z, y).dense().item<double>() == 18.0);   // 2 y
}

TEST_CASE("several targets are summed; output_gradients weight them", "[tape]") {
    auto x = tf::constant({1.0, 2.0});
    tf::GradientTape tape(true);
    tape.watch(x);
    auto y1 = x * x;
    auto y2 = 3.0 * x;
    auto g = tape.gradient(std::vector<tf::Tensor>{y1, y2}, std::vector<tf::Tensor>{x});
    CHECK(vals(g[0]) == std::vector<double>{5, 7});
    tf::GradientOptions options;
    options.output_gradients = {tf::constant({1.0, 0.0}), tf::constant({0.0, 2.0})};
    g = tape.gradient(std::vector<tf::Tensor>{y1, y2}, std::vector<tf::Tensor>{x}, options);
    CHECK(vals(g[0]) == std::vector<double>{2, 6});
    tf::GradientOptions bad;
    bad.output_gradients = {tf::constant({1.0})};
    CHECK_THROWS_AS(tape.gradient(y1, x, bad), tf::errors::InvalidArgumentError);
}

TEST_CASE("unconnected sources: none or zeros", "[tape]") {
    auto x = tf::constant({1.0, 2.0});
    auto u = tf::constant({{1.0, 2.0}, {3.0, 4.0}});
    tf::GradientTape tape(true);
    tape.watch(x);
    tape.watch(u);
    auto y = tf::reduce_sum(x * 2.0);
    CHECK_FALSE(tape.gradient(y, u).defined());
    tf::GradientOptions zero;
    zero.unconnected_gradients = tf::UnconnectedGradients::zero;
    auto g = tape.gradient(y, u, zero);
    REQUIRE(g.defined());
    CHECK(g.dense().shape() == u.shape());
    CHECK(vals(g) == std::vector<double>(4, 0.0));
    // Only connected through stop_gradient counts as unconnected too.
    auto s = tf::reduce_sum(tf::stop_gradient(x));
    CHECK_FALSE(tape.gradient(s, x).defined());
    CHECK(vals(tape.gradient(s, x, zero)) == std::vector<double>{0, 0});
}

TEST_CASE("integer sources and integer intermediates give no gradient", "[tape]") {
    auto i = tf::constant({1, 2});
    auto x = tf::constant({1.5, 2.5});
    tf::GradientTape tape(true);
    tape.watch(i);
    tape.watch(x);
    auto y = tf::reduce_sum(tf::cast(tf::cast(x, tf::int32), tf::float64));
    CHECK_FALSE(tape.gradient(y, x).defined());
    auto z = tf::reduce_sum(tf::cast(i, tf::float64) * x);
    CHECK_FALSE(tape.gradient(z, i).defined());
    CHECK(vals(tape.gradient(z, x)) == std::vector<double>{1, 2});
}

TEST_CASE("the gradient of a target with respect to itself is ones", "[tape]") {
    auto x = tf::constant({4.0, 5.0});
    tf::GradientTape tape;
    tape.watch(x);
    CHECK(vals(tape.gradient(x, x)) == std::vector<double>{1, 1});
}

TEST_CASE("stop_recording pauses the tape", "[tape]") {
    auto x = tf::constant(2.0);
    tf::GradientTape tape(true);
    tape.watch(x);
    tf::Tensor y;
    {
        auto pause = tape.stop_recording();
        y = x * x;
        CHECK_THROWS_AS(tape.stop_recording(), tf::errors::InvalidArgumentError);
    }
    auto z = x * 3.0;
    CHECK_FALSE(tape.gradient(y, x).defined());
    CHECK(tape.gradient(z, x).dense().item<double>() == 3.0);
}

TEST_CASE("stop_recording on a consumed tape is a RuntimeError", "[tape][errors]") {
    auto x = tf::constant(2.0);
    tf::GradientTape tape;
    tape.watch(x);
    auto y = x * x;
    (void)tape.gradient(y, x);
    CHECK_THROWS_AS(tape.stop_recording(), tf::errors::RuntimeError);
}

TEST_CASE("reset forgets the record", "[tape]") {
    auto x = tf::constant(2.0);
    tf::GradientTape tape(true);
    tape.watch(x);
    auto y = x * x;
    tape.reset();
    CHECK_FALSE(tape.gradient(y, x).defined());
    tape.watch(x);
    auto z = x * x * x;
    CHECK(tape.gradient(z, x).dense().item<double>() == 12.0);
}

TEST_CASE("a persistent tape reset again and again records afresh each time", "[tape]") {
    // reset() rebuilds the record on a released arena (NOTE [Tape memory]): no entry or watched id
    // of an earlier round survives, and the same arena serves every round.
    auto x = tf::constant(std::vector<double>{1.0, 2.0, 3.0}, tf::Shape{3});
    tf::GradientTape tape(true);
    for (int round = 0; round < 300; ++round) {
        tape.reset();
        tape.watch(x);
        tf::Tensor y = x;
        for (int i = 0; i < round % 7 + 1; ++i)
            y = y * x;  // y = x^(k+1)
        const int k = round % 7 + 1;
        const std::vector<double> g =
            tape.gradient(tf::reduce_sum(y), x).dense().to_vector<double>();
        for (int i = 0; i < 3; ++i) {
            REQUIRE(g[static_cast<std::size_t>(i)] ==
                    Approx((k + 1) * std::pow(static_cast<double>(i + 1), k)));
        }
    }
    tape.reset();
    CHECK(tape.watched_variables().empty());
    CHECK_FALSE(tape.gradient(x * x, x).defined());  // x is no longer watched
}

TEST_CASE("matmul and conv2d compute no gradient for an input no source needs", "[tape]") {
    // An outer tape watching both operands records every op the inner walk runs: the inner
    // gradient w.r.t. W alone runs one MatMul (dW = x^T g) and no dX = g W^T (GradCtx::needs).
    auto count = [](const tf::Graph& g, const std::string& op) {
        return std::count_if(
            g.nodes().begin(), g.nodes().end(), [&](const tf::GraphNode& n) { return n.op == op; });
    };
    const tf::Tensor x = tf::constant(std::vector<double>{1, 2, 3, 4, 5, 6}, tf::Shape{2, 3});
    const tf::Tensor w = tf::constant(std::vector<double>{1, 0, -1, 2, 0.5, 1}, tf::Shape{3, 2});
    tf::GradientTape outer(true);
    outer.watch(x);
    outer.watch(w);
    tf::Tensor dw;
    {
        tf::GradientTape inner;
        inner.watch(w);
        dw = inner.gradient(tf::reduce_sum(tf::matmul(x, w)), w).dense();
    }
    CHECK(count(outer.graph(), "MatMul") == 2);  // the forward product and dW only
    CHECK(dw.to_vector<double>() == std::vector<double>{5, 5, 7, 7, 9, 9});
    // conv2d: the gradient w.r.t. the filter alone runs no Conv2DBackpropInput.
    const tf::Tensor images = tf::random::normal({1, 4, 4, 2}, 0, 1, tf::float64, 3);
    const tf::Tensor filters = tf::random::normal({3, 3, 2, 2}, 0, 1, tf::float64, 4);
    tf::GradientTape outer2(true);
    outer2.watch(images);
    outer2.watch(filters);
    {
        tf::GradientTape inner;
        inner.watch(filters);
        (void)inner.gradient(tf::reduce_sum(tf::nn::conv2d(images, filters, {1, 1}, "SAME")),
                             filters);
    }
    CHECK(count(outer2.graph(), "Conv2DBackpropFilter") == 1);
    CHECK(count(outer2.graph(), "Conv2DBackpropInput") == 0);
}

TEST_CASE("nested tapes give second derivatives", "[tape]") {
    auto x = tf::constant(3.0);
    tf::GradientTape outer;
    outer.watch(x);
    tf::Tensor dy;
    {
        tf::GradientTape inner;
        inner.watch(x);
        auto y = x * x * x;
        dy = inner.gradient(y, x);
    }
    CHECK(dy.item<double>() == 27.0);                             // 3 x^2
    CHECK(outer.gradient(dy, x).dense().item<double>() == 18.0);  // 6 x
}

TEST_CASE("a persistent tape differentiates its own gradient", "[tape]") {
    auto x = tf::constant(2.0);
    tf::GradientTape tape(true);
    tape.watch(x);
    auto y = tf::exp(x * x);
    tf::Tensor dy = tape.gradient(y, x);    // 2x e^{x^2}, recorded on the same tape
    tf::Tensor d2y = tape.gradient(dy, x);  // (2 + 4x^2) e^{x^2}
    CHECK(d2y.item<double>() == Approx((2 + 16) * std::exp(4.0)));
}

TEST_CASE("aggregation methods agree: one tensor, 64 consumers", "[tape]") {
    using AM = tf::AggregationMethod;
    std::vector<double> reference;
    for (AM method :
         {AM::add_n, AM::default_, AM::experimental_tree, AM::experimental_accumulate_n}) {
        auto x = tf::constant({0.5, -1.5, 2.0});
        tf::GradientTape tape;
        tape.watch(x);
        std::vector<tf::Tensor> terms;
        for (int k = 0; k < 64; ++k)
            terms.push_back(x * static_cast<double>(k + 1));
        auto y = tf::reduce_sum(tf::add_n(terms));
        tf::GradientOptions options;
        options.aggregation_method = method;
        auto g = vals(tape.gradient(y, x, options));
        CHECK(g == std::vector<double>(3, 2080.0));  // 1 + 2 + ... + 64
        if (reference.empty()) reference = g;
        CHECK(g == reference);
    }
}

TEST_CASE("jacobian of an element-wise function is diagonal", "[tape][jacobian]") {
    auto x = tf::constant({1.0, 2.0, 3.0});
    tf::GradientTape tape;
    tape.watch(x);
    auto y = x * x;
    auto j = tape.jacobian(y, x);
    CHECK(j.shape() == tf::Shape{3, 3});
    CHECK(vals(j) == std::vector<double>{2, 0, 0, 0, 4, 0, 0, 0, 6});
}

TEST_CASE("jacobian shapes and unconnected sources", "[tape][jacobian]") {
    auto x = tf::constant({{1.0, 2.0}, {3.0, 4.0}});
    auto u = tf::constant({1.0});
    tf::GradientTape tape(true);
    tape.watch(x);
    tape.watch(u);
    auto y = tf::reduce_sum(x * x, 1);  // [2]
    auto j = tape.jacobian(y, x);
    CHECK(j.shape() == tf::Shape{2, 2, 2});
    CHECK(vals(j) == std::vector<double>{2, 4, 0, 0, 0, 0, 6, 8});
    auto s = tf::reduce_sum(x);  // scalar target: the gradient's shape
    CHECK(tape.jacobian(s, x).shape() == tf::Shape{2, 2});
    CHECK_FALSE(tape.jacobian(y, u).defined());
    auto z = tape.jacobian(y, u, tf::UnconnectedGradients::zero);
    CHECK(z.shape() == tf::Shape{2, 1});
    tf::Variable v(tf::constant({1.0, 2.0}));
    auto yv = v.value() * 2.0;
    CHECK(vals(tape.jacobian(yv, v)) == std::vector<double>{2, 0, 0, 2});
}

TEST_CASE("batch_jacobian gives per-example jacobians", "[tape][jacobian]") {
    auto x = tf::constant({{1.0, 2.0}, {3.0, 4.0}, {5.0, 6.0}});  // [b=3, 2]
    tf::GradientTape tape(true);
    tape.watch(x);
    auto y = x * x;  // [3, 2]
    auto j = tape.batch_jacobian(y, x);
    CHECK(j.shape() == tf::Shape{3, 2, 2});
    CHECK(vals(j) == std::vector<double>{2, 0, 0, 4, 6, 0, 0, 8, 10, 0, 0, 12});
    auto other = tf::constant({{1.0}, {2.0}});
    tape.watch(other);
    CHECK_THROWS_AS(tape.batch_jacobian(y, other), tf::errors::InvalidArgumentError);
    auto unconnected = tf::constant({{1.0}, {1.0}, {1.0}});
    tape.watch(unconnected);
    CHECK(vals(tape.batch_jacobian(y, unconnected)) == std::vector<double>(6, 0.0));
}

TEST_CASE("custom_gradient replaces the op's gradient", "[tape][custom]") {
    auto x = tf::constant({100.0, -3.0});
    auto log1pexp = [](const tf::Tensor& in) {
        return tf::custom_gradient(
            {in},
            [](const std::vector<tf::Tensor>& v) { return tf::log(1.0 + tf::exp(v[0])); },
            [](const std::vector<tf::Tensor>& v, const tf::Tensor&, const tf::Tensor& upstream) {
                return std::vector<tf::Tensor>{upstream * (1.0 - 1.0 / (1.0 + tf::exp(v[0])))};
            });
    };
    tf::GradientTape tape;
    tape.watch(x);
    auto y = log1pexp(x);
    auto g = vals(tape.gradient(y, x));
    CHECK(g[0] == 1.0);  // the naive formula gives nan here
    CHECK(g[1] == Approx(1.0 / (1.0 + std::exp(3.0))));
}

TEST_CASE("custom_gradient composes with higher order and checks its gradient count",
          "[tape][custom]") {
    auto x = tf::constant(2.0);
    auto cube = [](const tf::Tensor& in) {
        return tf::custom_gradient(
            {in},
            [](const std::vector<tf::Tensor>& v) { return v[0] * v[0] * v[0]; },
            [](const std::vector<tf::Tensor>& v, const tf::Tensor&, const tf::Tensor& upstream) {
                return std::vector<tf::Tensor>{upstream * 3.0 * v[0] * v[0]};
            });
    };
    tf::GradientTape outer;
    outer.watch(x);
    tf::Tensor dy;
    {
        tf::GradientTape inner;
        inner.watch(x);
        dy = inner.gradient(cube(x), x);
    }
    CHECK(dy.item<double>() == 12.0);
    CHECK(outer.gradient(dy, x).dense().item<double>() == 12.0);  // 6x
    auto bad = [](const tf::Tensor& in) {
        return tf::custom_gradient(
            {in},
            [](const std::vector<tf::Tensor>& v) { return v[0] * 2.0; },
            [](const std::vector<tf::Tensor>&, const tf::Tensor&, const tf::Tensor& u) {
                return std::vector<tf::Tensor>{u, u};
            });
    };
    tf::GradientTape tape;
    tape.watch(x);
    auto y = bad(x);
    CHECK_THROWS_WITH(tape.gradient(y, x),
                      Contains("expected to return 1 gradients but returned 2"));
}

TEST_CASE("gather's gradient is IndexedSlices", "[tape][indexed_slices]") {
    tf::Variable params(tf::constant({{1.0, 2.0}, {3.0, 4.0}, {5.0, 6.0}}));
    tf::GradientTape tape;
    auto y = tf::reduce_sum(tf::gather(params.value(), tf::constant({2, 0, 2})));
    tf::Gradient g = tape.gradient(y, params);
    REQUIRE(g.is_sparse());
    CHECK(g.sparse().indices.to_vector<int>() == std::vector<int>{2, 0, 2});
    CHECK(g.sparse().dense_shape == tf::Shape{3, 2});
    CHECK(g.sparse().values.shape() == tf::Shape{3, 2});
    CHECK(vals(g.dense()) == std::vector<double>{1, 1, 0, 0, 2, 2});
    tf::Tensor implicit = g;
    CHECK(implicit.shape() == tf::Shape{3, 2});
}

TEST_CASE("several IndexedSlices contributions concatenate", "[tape][indexed_slices]") {
    tf::Variable params(tf::constant({{1.0}, {2.0}, {3.0}}));
    tf::GradientTape tape;
    auto p = params.value();
    auto y = tf::reduce_sum(tf::gather(p, tf::constant({0}))) +
             tf::reduce_sum(tf::gather(p, tf::constant({2, 0})));
    tf::Gradient g = tape.gradient(y, params);
    REQUIRE(g.is_sparse());
    CHECK(g.sparse().indices.num_elements() == 3);
    CHECK(vals(g.dense()) == std::vector<double>{2, 0, 1});
}

TEST_CASE("Gradient value semantics", "[tape][indexed_slices]") {
    tf::Gradient none;
    CHECK_FALSE(none.defined());
    CHECK_FALSE(none.dense().defined());
    CHECK_THROWS_AS(none.sparse(), tf::errors::FailedPreconditionError);
    tf::Gradient dense = tf::constant({1.f});
    CHECK(dense.defined());
    CHECK_FALSE(dense.is_sparse());
    CHECK_THROWS_AS(dense.sparse(), tf::errors::FailedPreconditionError);
}

TEST_CASE("gradients computed from earlier variable reads survive assignment", "[tape][variable]") {
    tf::Variable w(tf::constant({1.0, 2.0}));
    tf::GradientTape tape;
    auto y = tf::reduce_sum(w.value() * w.value());
    w.assign(tf::constant({10.0, 20.0}));
    CHECK(vals(tape.gradient(y, w)) == std::vector<double>{2, 4});
}

TEST_CASE("finite differences agree with the tape on a composite function", "[tape][gradcheck]") {
    tf::testing::check_gradients(
        [](const std::vector<tf::Tensor>& in) {
            return tf::sigmoid(tf::matmul(in[0], in[1])) +
                   tf::square(tf::reduce_sum(in[0], 0, true));
        },
        {tf::testing::random_f64({2, 3}, -1, 1, 1), tf::testing::random_f64({3, 3}, -1, 1, 2)});
}

TEST_CASE("tape.graph() names nodes by scope and links inputs", "[tape][graph]") {
    tf::Variable w(tf::constant({{1.f, 2.f}}), {.name = "graph_w"});
    auto x = tf::constant({{3.f}, {4.f}});
    tf::GradientTape tape;
    tape.watch(x);
    tf::Tensor y;
    {
        auto scope = tf::name_scope("dense");
        y = tf::reduce_sum(tf::matmul(x, w));
    }
    tf::Graph g = tape.graph();
    std::vector<std::string> ops, names;
    for (const auto& n : g.nodes()) {
        ops.push_back(n.op);
        names.push_back(n.name);
    }
    CHECK(std::find(ops.begin(), ops.end(), "MatMul") != ops.end());
    CHECK(std::find(ops.begin(), ops.end(), "Sum") != ops.end());
    CHECK(std::find(ops.begin(), ops.end(), "VarHandleOp") != ops.end());
    CHECK(std::find(names.begin(), names.end(), "dense/MatMul") != names.end());
    CHECK(std::find(names.begin(), names.end(), "graph_w") != names.end());
    const auto& mm = *std::find_if(
        g.nodes().begin(), g.nodes().end(), [](const auto& n) { return n.op == "MatMul"; });
    CHECK(mm.inputs.size() == 2);
    CHECK(mm.attrs.at("T") == "type: DT_FLOAT");
    CHECK(mm.device == "/device:CPU:0");
    const std::string text = g.to_text();
    CHECK_THAT(text,
               Catch::Contains("name: \"dense/MatMul\"") && Catch::Contains("op: \"MatMul\""));
    CHECK(g.num_nodes() == g.nodes().size());
}

// Regression: gradients used to be summed for inputs that depend on no source (here the constant
// b, used three times), wasting an add per contribution; a persistent tape recording its own
// gradient ops shows the extra AddV2 nodes.
TEST_CASE("no gradient work for inputs that depend on no source", "[tape]") {
    auto x = tf::constant(1.0);
    auto b = tf::constant(2.0);
    auto upstream = tf::constant(1.0);
    tf::GradientTape tape(true);
    tape.watch(x);
    tape.watch(upstream);
    auto y = ((x + b) + b) + b;
    auto count_adds = [&] {
        auto g = tape.graph();
        return std::count_if(
            g.nodes().begin(), g.nodes().end(), [](const auto& n) { return n.op == "AddV2"; });
    };
    const auto before = count_adds();
    tf::GradientOptions options;
    options.output_gradients = {upstream};
    CHECK(tape.gradient(y, x, options).dense().item<double>() == 1.0);
    CHECK(count_adds() == before);
}

// the methods agree, but add_n holds every contribution until it sums them,
// while default_ keeps one running sum. One tensor feeding 64 consumers shows the difference.
TEST_CASE("aggregation methods differ in peak gradient memory", "[tape][memory]") {
    using AM = tf::AggregationMethod;
    const int64_t n = 1 << 16;  // 256 KiB per float32 contribution
    auto peak_for = [&](AM method) {
        auto x = tf::ones({n});
        tf::GradientTape tape;
        tape.watch(x);
        std::vector<tf::Tensor> terms;
        for (int k = 0; k < 64; ++k)
            terms.push_back(x * static_cast<float>(k + 1));
        auto y = tf::reduce_sum(tf::add_n(terms));
        terms.clear();
        tf::GradientOptions options;
        options.aggregation_method = method;
        tf::reset_peak_memory_stats();
        const int64_t base = tf::memory_stats().bytes_in_use;
        auto g = tape.gradient(y, x, options).dense();
        CHECK(g.to_vector<float>()[0] == 2080.f);
        return tf::memory_stats().peak_bytes_in_use - base;
    };
    const int64_t add_n = peak_for(AM::add_n);
    const int64_t running = peak_for(AM::default_);
    const int64_t tree = peak_for(AM::experimental_tree);
    const int64_t contribution = n * 4;
    CHECK(add_n >= 64 * contribution);
    CHECK(running <=
          6 * contribution);  // seed, sum, new term, its sum, and the formula's other output
    INFO("peak bytes: add_n " << add_n << ", running sum " << running << ", tree " << tree);
    CHECK(add_n > 8 * running);
    CHECK(tree <= 10 * contribution);
}
