// vectorized_map (docs/autograd.md "vectorized_map"): every row of the op-case table mapped over a
// batch of examples against a loop over them, with and without a GradientTape inside fn
// (per-example gradients); the ops that run once per example (the fallback and its warning); random
// ops; control flow that differs between examples; values fn computes without the examples; nesting
// in an outer tape; and bad arguments.
#include <algorithm>
#include <random>
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

#include "autograd/vmap_rules.hpp"
#include "ops/op_cases.hpp"

namespace tf = tapeflow;
using Catch::Contains;
using tf::Tensor;
using namespace tf::op_cases;

namespace {

// The warnings logged while alive.
struct Warnings {
    static std::string& text() {
        static std::string t;
        return t;
    }
    Warnings() {
        text().clear();
        tf::logging::set_sink([](tf::logging::Level level, std::string_view m) {
            if (level >= tf::logging::WARN) text() += std::string(m) + "\n";
        });
    }
    ~Warnings() { tf::logging::set_sink(nullptr); }
};

tf::DType dtype_of(const Case& c) {
    for (const tf::DType d : c.dtypes) {
        if (d == tf::float64) return d;
    }
    return c.dtypes.front();
}

constexpr int64_t kBatch = 3;

// Per-example inputs (each drawn anew), stacked along a new axis 0.
std::vector<Tensor> batch_of(const Case& c, tf::DType dtype, std::mt19937_64& rng) {
    std::vector<Tensor> stacked;
    for (const In& in : c.inputs) {
        std::vector<Tensor> rows;
        for (int64_t b = 0; b < kBatch; ++b)
            rows.push_back(make_input(in, dtype, rng));
        stacked.push_back(tf::stack(rows, 0));
    }
    return stacked;
}

// fn on each example, each output stacked.
std::vector<Tensor> loop(const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& fn,
                         const std::vector<Tensor>& elems) {
    std::vector<std::vector<Tensor>> outs;
    for (int64_t b = 0; b < kBatch; ++b) {
        std::vector<Tensor> x;
        for (const Tensor& e : elems)
            x.push_back(tf::unstack(e, 0)[static_cast<std::size_t>(b)]);
        const std::vector<Tensor> y = fn(x);
        outs.resize(y.size());
        for (std::size_t k = 0; k < y.size(); ++k)
            outs[k].push_back(y[k]);
    }
    std::vector<Tensor> r;
    for (const auto& o : outs)
        r.push_back(tf::stack(o, 0));
    return r;
}

// The per-example gradient of sum(float outputs * fixed weights) in the float inputs.
std::function<std::vector<Tensor>(const std::vector<Tensor>&)> gradient_of(const Case& c) {
    return [&c](const std::vector<Tensor>& x) {
        tf::GradientTape tape;
        std::vector<Tensor> sources;
        for (const Tensor& t : x) {
            if (is_float(t.dtype())) sources.push_back(t);
        }
        tape.watch(sources);
        Tensor loss;
        for (const Tensor& y : c.f(x)) {
            if (!y.defined() || !is_float(y.dtype())) continue;
            const Tensor w = tf::cast(
                tf::reshape(tf::cos(tf::range(1, 1 + static_cast<double>(y.num_elements()), 1)),
                            y.shape()),
                y.dtype());
            const Tensor term = tf::reduce_sum(y * w);
            loss = loss.defined() ? loss + term : term;
        }
        std::vector<Tensor> out;
        if (!loss.defined()) return out;
        for (const tf::Gradient& g : tape.gradient(
                 loss, sources, {.unconnected_gradients = tf::UnconnectedGradients::zero}))
            out.push_back(g.dense());
        return out;
    };
}

std::string compare(const std::string& name,
                    const std::vector<Tensor>& expected,
                    const std::vector<Tensor>& got,
                    tf::DType dtype) {
    if (expected.size() != got.size()) return "\n  " + name + ": output count differs";
    std::string out;
    for (std::size_t k = 0; k < got.size(); ++k) {
        if (expected[k].shape() != got[k].shape()) {
            out += fmt::format(
                "\n  {} output {}: shape {} vs {}", name, k, got[k].shape(), expected[k].shape());
            continue;
        }
        const std::string d = first_difference(expected[k], got[k], 4 * tolerance(dtype));
        if (!d.empty()) out += fmt::format("\n  {} output {}: {}", name, k, d);
    }
    return out;
}

bool covers_any(const Case& c, std::initializer_list<tf::Op> ops) {
    for (const tf::Op op : c.covers) {
        if (std::find(ops.begin(), ops.end(), op) != ops.end()) return true;
    }
    return false;
}

bool is_training_row(const Case& c) {
    return c.name.rfind("train/", 0) == 0;
}

// One sweep over the table: every row's outputs (and, for differentiable rows, its gradients
// computed by a tape inside fn) mapped over kBatch examples against a loop. `shared`: only the
// first input differs between examples, fn captures the others (weights, filters, indices).
// Returns the failures; `looped` gets the rows that ran an op once per example.
std::string sweep(bool shared, std::set<std::string>& looped, int& checked) {
    std::string failures;
    for (const Case& c : all_cases()) {
        if (c.inputs.empty()) continue;  // nothing to map over (fill, the random ops)
        const tf::DType dtype = dtype_of(c);
        std::mt19937_64 rng(std::hash<std::string>{}(c.name));
        std::vector<Tensor> elems = batch_of(c, dtype, rng);
        std::vector<Tensor> fixed;  // the shared inputs: example 0's
        if (shared) {
            for (std::size_t i = 1; i < elems.size(); ++i)
                fixed.push_back(tf::unstack(elems[i], 0)[0]);
            elems.resize(1);
        }
        const auto with_fixed = [&](const auto& f) {
            return [&, f](const std::vector<Tensor>& x) {
                std::vector<Tensor> all = x;
                all.insert(all.end(), fixed.begin(), fixed.end());
                return f(all);
            };
        };
        const std::function<std::vector<Tensor>(const std::vector<Tensor>&)> fn = with_fixed(c.f);
        const Warnings warnings;
        try {
            if (is_training_row(c)) {  // in-place updates: refused before anything changes
                CHECK_THROWS_WITH(tf::vectorized_map(fn, elems), Contains("must not change state"));
                continue;
            }
            const std::vector<Tensor> got = tf::vectorized_map(fn, elems);
            const std::vector<Tensor> expected = loop(fn, elems);
            if (covers_any(c, {tf::Op::random_shuffle})) {  // other numbers: compare shapes
                for (std::size_t k = 0; k < got.size(); ++k)
                    CHECK(got[k].shape() == expected[k].shape());
            } else {
                failures += compare(c.name, expected, got, dtype);
            }
            if (c.grad) {
                const auto g = with_fixed(gradient_of(c));
                const std::function<std::vector<Tensor>(const std::vector<Tensor>&)> gf = g;
                failures += compare(
                    c.name + " (gradient)", loop(gf, elems), tf::vectorized_map(gf, elems), dtype);
            }
        } catch (const std::exception& e) {
            failures += "\n  " + c.name + ": " + e.what();
        }
        if (!Warnings::text().empty()) looped.insert(c.name + ": " + Warnings::text());
        ++checked;
    }
    return failures;
}

std::string lines(const std::set<std::string>& items) {
    std::string out;
    for (const std::string& s : items)
        out += "\n  " + s;
    return out;
}

}  // namespace

TEST_CASE("vectorized_map of every op-case row equals a loop over the examples",
          "[vectorized_map][op_cases]") {
    std::set<std::string> looped;
    int checked = 0;
    const std::string failures = sweep(/*shared=*/false, looped, checked);
    INFO("rows that ran an op once per example:" << lines(looped));
    INFO("rows whose vectorized result differs from the loop:" << failures);
    CHECK(failures.empty());
    CHECK(checked > 150);
}

TEST_CASE("vectorized_map of every op-case row with shared weights: batched, no loop",
          "[vectorized_map][op_cases]") {
    std::set<std::string> looped;
    int checked = 0;
    const std::string failures = sweep(/*shared=*/true, looped, checked);
    INFO("rows that ran an op once per example:" << lines(looped));
    INFO("rows whose vectorized result differs from the loop:" << failures);
    CHECK(failures.empty());
    CHECK(checked > 150);
}

TEST_CASE("vectorized_map: per-example gradients of an MLP equal a loop of tapes",
          "[vectorized_map]") {
    const tf::Variable w1(tf::random::normal({5, 4}, 0, 1, tf::float64, 1));
    const tf::Variable b1(tf::random::normal({4}, 0, 1, tf::float64, 2));
    const tf::Variable w2(tf::random::normal({4, 3}, 0, 1, tf::float64, 3));
    const Tensor x = tf::random::normal({6, 5}, 0, 1, tf::float64, 4);
    const Tensor labels = tf::constant({0, 2, 1, 1, 0, 2});
    const auto per_example = [&](const std::vector<Tensor>& e) {
        tf::GradientTape tape;
        const Tensor h =
            tf::tanh(tf::matmul(tf::expand_dims(e[0], 0), w1.read_value()) + b1.read_value());
        const Tensor loss = tf::reduce_sum(tf::nn::sparse_softmax_cross_entropy_with_logits(
            tf::expand_dims(e[1], 0), tf::matmul(h, w2.read_value())));
        std::vector<Tensor> g;
        for (const tf::Gradient& gi : tape.gradient(loss, std::vector<tf::Variable>{w1, b1, w2}))
            g.push_back(gi.dense());
        return tf::clip_by_global_norm(g, 0.5).first;  // DP-SGD's per-example clipping
    };
    const Warnings warnings;
    const std::vector<Tensor> got = tf::vectorized_map(per_example, {x, labels});
    CHECK(Warnings::text().empty());
    REQUIRE(got.size() == 3);
    CHECK(got[0].shape() == tf::Shape{6, 5, 4});
    CHECK(got[2].shape() == tf::Shape{6, 4, 3});
    const std::vector<Tensor> xs = tf::unstack(x);
    const std::vector<Tensor> ls = tf::unstack(labels);
    for (int64_t i = 0; i < 6; ++i) {
        const std::vector<Tensor> expected = per_example({xs[i], ls[i]});
        for (std::size_t v = 0; v < 3; ++v) {
            const Tensor row = tf::unstack(got[v])[static_cast<std::size_t>(i)];
            CHECK(first_difference(expected[v], row, 1e-12).empty());
        }
    }
}

TEST_CASE("vectorized_map: an op without a batching rule runs once per example, with a warning",
          "[vectorized_map]") {
    // A per-example convolution filter gradient: conv2d_backprop_filter sums over its batch.
    const Tensor images = tf::random::normal({4, 1, 5, 5, 2}, 0, 1, tf::float64, 5);
    const tf::Variable filter(tf::random::normal({3, 3, 2, 3}, 0, 1, tf::float64, 6));
    const auto fn = [&](const Tensor& image) {
        tf::GradientTape tape;
        const Tensor y = tf::nn::conv2d(image, filter.read_value(), 1, "SAME");
        return tape.gradient(tf::reduce_sum(tf::square(y)), filter).dense();
    };
    const Warnings warnings;
    const Tensor got = tf::vectorized_map(fn, images);
    CHECK_THAT(Warnings::text(), Contains("Conv2DBackpropFilter"));
    const std::vector<Tensor> rows = tf::unstack(images);
    for (std::size_t i = 0; i < rows.size(); ++i)
        CHECK(first_difference(fn(rows[i]), tf::unstack(got)[i], 1e-12).empty());
    CHECK_THROWS_WITH(tf::vectorized_map(fn, images, {.fallback_to_while_loop = false}),
                      Contains("Conv2DBackpropFilter") && Contains("fallback_to_while_loop"));
}

TEST_CASE("vectorized_map: fn whose ops depend on the example's values runs per example",
          "[vectorized_map]") {
    const Tensor x = tf::constant({1.0, -2.0, 3.0, -4.0});
    const auto fn = [](const Tensor& v) {  // C++ control flow on the value
        return v.item<double>() > 0 ? tf::square(v) : tf::negative(v) * 10.0;
    };
    const Warnings warnings;
    const Tensor got = tf::vectorized_map(fn, x);
    CHECK(got.to_vector<double>() == std::vector<double>{1, 20, 9, 40});
    CHECK_THAT(Warnings::text(), Contains("once per example"));
    CHECK_THROWS_AS(tf::vectorized_map(fn, x, {.fallback_to_while_loop = false}),
                    tf::errors::InvalidArgumentError);
}

TEST_CASE("vectorized_map: random ops draw different numbers for every example",
          "[vectorized_map]") {
    tf::random::set_seed(3);
    const Tensor x = tf::ones({5, 1000});
    const Tensor dropped =
        tf::vectorized_map([](const Tensor& v) { return tf::nn::dropout(v, 0.5); }, x);
    REQUIRE(dropped.shape() == tf::Shape{5, 1000});
    const std::vector<Tensor> rows = tf::unstack(dropped);
    for (std::size_t i = 1; i < rows.size(); ++i)
        CHECK(tf::reduce_any(tf::not_equal(rows[0], rows[i])).item<bool>());
    const double kept =
        tf::reduce_mean(tf::cast(tf::not_equal(dropped, tf::zeros_like(dropped)), tf::float64))
            .item<double>();
    CHECK(kept == Approx(0.5).margin(0.03));
    // Reproducible under the global seed.
    tf::random::set_seed(3);
    const Tensor again =
        tf::vectorized_map([](const Tensor& v) { return tf::nn::dropout(v, 0.5); }, x);
    CHECK(tf::reduce_all(tf::equal(again, dropped)).item<bool>());
}

TEST_CASE("vectorized_map: outputs that do not depend on the examples are stacked",
          "[vectorized_map]") {
    const Tensor w = tf::constant({1.f, 2.f});
    const std::vector<Tensor> got = tf::vectorized_map(
        [&](const std::vector<Tensor>& e) {
            return std::vector<Tensor>{w * 2.f, e[0] + w, tf::zeros({3})};
        },
        {tf::constant({{1.f, 1.f}, {2.f, 2.f}, {3.f, 3.f}})});
    CHECK(got[0].shape() == tf::Shape{3, 2});
    CHECK(got[0].to_vector<float>() == std::vector<float>{2, 4, 2, 4, 2, 4});
    CHECK(got[1].to_vector<float>() == std::vector<float>{2, 3, 3, 4, 4, 5});
    CHECK(got[2].shape() == tf::Shape{3, 3});
}

TEST_CASE("vectorized_map: an outer tape differentiates through it", "[vectorized_map]") {
    const tf::Variable w(tf::constant({{1.0, 2.0}, {3.0, 4.0}}));
    const Tensor x = tf::constant({{1.0, 0.0}, {0.0, 1.0}, {1.0, 1.0}});
    tf::GradientTape tape;
    const Tensor y = tf::vectorized_map(
        [&](const Tensor& v) {
            return tf::reduce_sum(tf::square(tf::matmul(tf::expand_dims(v, 0), w.read_value())));
        },
        x);
    const Tensor g = tape.gradient(tf::reduce_sum(y), w).dense();
    tf::GradientTape plain;
    const Tensor expected =
        plain.gradient(tf::reduce_sum(tf::square(tf::matmul(x, w.read_value()))), w).dense();
    CHECK(first_difference(expected, g, 1e-12).empty());
}

TEST_CASE("vectorized_map: one example, no examples, and bad arguments", "[vectorized_map]") {
    const auto square = [](const Tensor& v) {
        return tf::square(v);
    };
    CHECK(tf::vectorized_map(square, tf::constant({{2.0, 3.0}})).to_vector<double>() ==
          std::vector<double>{4, 9});
    const Tensor none = tf::vectorized_map(square, tf::zeros({0, 4}));
    CHECK(none.shape() == tf::Shape{0, 4});
    CHECK_THROWS_WITH(tf::vectorized_map(square, tf::constant(1.0)), Contains("scalar"));
    CHECK_THROWS_WITH(tf::vectorized_map([](const std::vector<Tensor>& e) { return e; },
                                         {tf::zeros({2, 3}), tf::zeros({3, 3})}),
                      Contains("same first dimension") && Contains("(3, 3)"));
    CHECK_THROWS_AS(tf::vectorized_map([](const std::vector<Tensor>& e) { return e; }, {}),
                    tf::errors::InvalidArgumentError);
    CHECK_THROWS_WITH(tf::vectorized_map([](const Tensor&) { return Tensor(); }, tf::zeros({2})),
                      Contains("undefined"));
    // Every example's labels are checked, not only the traced one's.
    const Tensor logits = tf::zeros({3, 4});
    CHECK_THROWS_WITH(tf::vectorized_map(
                          [](const std::vector<Tensor>& e) {
                              return std::vector<Tensor>{
                                  tf::nn::sparse_softmax_cross_entropy_with_logits(e[1], e[0])};
                          },
                          {logits, tf::constant({1, 2, 7})}),
                      Contains("label value of 7"));
    tf::Variable v(tf::zeros({2}));
    CHECK_THROWS_WITH(tf::vectorized_map(
                          [&](const Tensor& e) {
                              v.assign_add(e);
                              return e;
                          },
                          tf::zeros({3, 2})),
                      Contains("vectorized_map"));
}

TEST_CASE("vectorized_map nests", "[vectorized_map]") {
    const Tensor xs = tf::constant({1.0, 2.0, 3.0});
    const Tensor ys = tf::constant({10.0, 20.0});
    const Warnings warnings;
    const Tensor got = tf::vectorized_map(
        [&](const Tensor& x) {
            return tf::vectorized_map([&](const Tensor& y) { return tf::square(x * 2.0) + y; }, ys);
        },
        xs);
    CHECK(Warnings::text().empty());
    CHECK(got.shape() == tf::Shape{3, 2});
    CHECK(got.to_vector<double>() == std::vector<double>{14, 24, 26, 36, 46, 56});
}

TEST_CASE("vectorized_map with random ops inside recompute_grad: the recompute draws the same",
          "[vectorized_map]") {
    const auto f = [](const std::vector<Tensor>& in) {
        const Tensor dropped =
            tf::vectorized_map([](const Tensor& v) { return tf::nn::dropout(v, 0.5); }, in[0]);
        return tf::reduce_sum(tf::square(dropped));
    };
    const Tensor x = tf::random::normal({4, 50}, 0, 1, tf::float64, 9);
    tf::random::set_seed(5);
    tf::GradientTape plain;
    plain.watch(x);
    const Tensor y = f({x});
    const Tensor expected = plain.gradient(y, x).dense();
    tf::random::set_seed(5);
    tf::GradientTape tape;
    tape.watch(x);
    const Tensor y2 = tf::recompute_grad(f)({x});
    const Tensor got = tape.gradient(y2, x).dense();
    CHECK(y2.item<double>() == y.item<double>());
    CHECK(tf::reduce_all(tf::equal(got, expected)).item<bool>());
}

TEST_CASE("vectorized_map: a ForwardAccumulator inside fn gives every example its JVP",
          "[vectorized_map]") {
    // The accumulator's JVP ops run after their primal op: the trace must order them so.
    const Tensor w = tf::random::normal({6, 3}, 0, 1, tf::float64, 10);
    const Tensor v = tf::random::normal({6}, 0, 1, tf::float64, 11);
    const Tensor x = tf::random::normal({4, 6}, 0, 1, tf::float64, 12);
    const auto fn = [&](const Tensor& e) {
        const tf::autodiff::ForwardAccumulator acc({e}, {v});
        return acc.jvp(tf::tanh(tf::matmul(tf::expand_dims(e, 0), w)));
    };
    const Tensor got = tf::vectorized_map(fn, x);
    const std::vector<Tensor> rows = tf::unstack(x);
    for (std::size_t i = 0; i < rows.size(); ++i)
        CHECK(first_difference(fn(rows[i]), tf::unstack(got)[i], 1e-12).empty());
}
