// tf::function: TensorFlow's tracing rules (counts, input_signature, reduce_retracing, the
// retracing warning), replays bit for bit equal to eager execution (training steps with Adam,
// dropout, a global step), side effects (host statements at trace time only, variable reads and
// assignments at every replay, variable creation on the first trace only), and bad input.
#include <atomic>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

#include "digits.hpp"
#include "transformer_model.hpp"

namespace tf = tapeflow;
using Catch::Contains;

namespace {

bool same_bits(const tf::Tensor& a, const tf::Tensor& b) {
    return a.shape() == b.shape() && a.dtype() == b.dtype() &&
           std::memcmp(a.cpu().raw_data(), b.cpu().raw_data(), a.nbytes()) == 0;
}

std::vector<std::string>& captured() {
    static std::vector<std::string> lines;
    return lines;
}

void capture(tf::logging::Level, std::string_view message) {
    captured().emplace_back(message);
}

struct Mlp {
    tf::Variable w1, b1, w2, b2;
    explicit Mlp(uint64_t seed)
        : w1(tf::random::normal({8, 16}, 0, 0.3, tf::float32, seed)),
          b1(tf::zeros({16})),
          w2(tf::random::normal({16, 1}, 0, 0.3, tf::float32, seed + 1)),
          b2(tf::zeros({1})) {}
    std::vector<tf::Variable> vars() const { return {w1, b1, w2, b2}; }
    tf::Tensor operator()(const tf::Tensor& x, bool dropout) const {
        tf::Tensor h = tf::nn::relu(tf::matmul(x, w1) + b1);
        if (dropout) h = tf::nn::dropout(h, 0.25, 7);
        return tf::matmul(h, w2) + b2;
    }
};

// One Adam step on the MLP: the loss. The same code runs eagerly and under tf::function.
tf::Tensor train_step(const Mlp& m,
                      tf::train::Optimizer& opt,
                      const tf::Variable& step,
                      const tf::Tensor& x,
                      const tf::Tensor& y) {
    tf::GradientTape tape;
    const tf::Tensor loss = tf::reduce_mean(tf::square(m(x, true) - y));
    const std::vector<tf::Gradient> grads = tape.gradient(loss, m.vars());
    std::vector<tf::train::GradAndVar> pairs;
    for (std::size_t i = 0; i < grads.size(); ++i)
        pairs.push_back({grads[i], m.vars()[i]});
    opt.apply_gradients(pairs, step);
    return loss;
}

}  // namespace

TEST_CASE("tf::function traces once per signature, as TensorFlow", "[function]") {
    std::atomic<int> traced{0};
    auto f = tf::function([&](const tf::Tensor& x, int64_t k) {
        ++traced;  // a host statement: runs while tracing only
        return x * static_cast<float>(k) + 1.0f;
    });
    const tf::Tensor a = tf::constant({1.f, 2.f});
    CHECK(same_bits(f(a, 2), tf::constant({3.f, 5.f})));
    CHECK(same_bits(f(tf::constant({4.f, 5.f}), 2), tf::constant({9.f, 11.f})));  // replay
    CHECK(f.experimental_get_tracing_count() == 1);
    CHECK(traced == 1);
    f(tf::constant({1.f, 2.f, 3.f}), 2);  // a new shape
    CHECK(f.experimental_get_tracing_count() == 2);
    f(tf::constant({1.0, 2.0}), 2);  // a new dtype
    CHECK(f.experimental_get_tracing_count() == 3);
    CHECK(same_bits(f(a, 3), tf::constant({4.f, 7.f})));  // a new plain value
    CHECK(f.experimental_get_tracing_count() == 4);
    f(a, 3);
    f(a, 2);
    CHECK(f.experimental_get_tracing_count() == 4);
    CHECK(traced == 4);
}

TEST_CASE("tf::function: input_signature with None dims traces once", "[function]") {
    auto f = tf::function([](const tf::Tensor& x) { return tf::reduce_sum(x * x, {1}); },
                          {.input_signature = {{{-1, 3}, tf::float32, "x"}}, .name = "sumsq"});
    for (int64_t n : {2, 5, 1, 5, 2}) {
        const tf::Tensor x = tf::random::uniform({n, 3}, 0, 1, tf::float32, 1);
        CHECK(same_bits(f(x), tf::reduce_sum(x * x, {1})));
    }
    CHECK(f.experimental_get_tracing_count() == 1);
    // A call the signature does not admit names the argument and both shapes.
    const auto bad = [&] {
        f(tf::zeros({2, 4}));
    };
    CHECK_THROWS_AS(bad(), tf::errors::InvalidArgumentError);
    CHECK_THROWS_WITH(
        bad(),
        Contains("argument 0 ('x')") && Contains("shape=(2, 4)") && Contains("shape=(None, 3)"));
    CHECK_THROWS_WITH(f(tf::zeros({2, 3}, tf::float64)), Contains("dtype=tf.float64"));
    CHECK(f.experimental_get_tracing_count() == 1);
}

TEST_CASE("tf::function: reduce_retracing generalizes changing dims", "[function]") {
    auto f = tf::function([](const tf::Tensor& x) { return x + 1.0f; }, {.reduce_retracing = true});
    f(tf::zeros({2, 3}));
    f(tf::zeros({4, 3}));  // retraces with (None, 3)
    f(tf::zeros({6, 3}));
    f(tf::zeros({9, 3}));
    CHECK(f.experimental_get_tracing_count() == 2);
    f(tf::zeros({9, 4}));  // another dimension changes: one more, generalized
    CHECK(f.experimental_get_tracing_count() == 3);
}

TEST_CASE("tf::function warns after frequent retracing, in TensorFlow's words", "[function]") {
    captured().clear();
    tf::logging::set_sink(capture);
    auto f = tf::function([](const tf::Tensor& x) { return x * 2.0f; }, {.name = "grow"});
    for (int64_t n = 1; n <= 5; ++n)
        f(tf::zeros({n}));
    tf::logging::set_sink(nullptr);
    REQUIRE(captured().size() == 1);
    CHECK_THAT(captured()[0],
               Contains("5 out of the last 5 calls to <function grow> triggered tf.function "
                        "retracing. Tracing is expensive"));
    CHECK_THAT(captured()[0], Contains("reduce_retracing=True"));
}

TEST_CASE("tf::function replays a training step bit for bit as eager execution", "[function]") {
    // Two identical models: one trained eagerly, one through tf::function; dropout and the
    // optimizer's slots, powers and step counter included.
    const tf::Tensor x = tf::random::normal({32, 8}, 0, 1, tf::float32, 11);
    const tf::Tensor y = tf::random::normal({32, 1}, 0, 1, tf::float32, 12);
    tf::random::set_seed(5);
    Mlp eager_model(3);
    tf::train::AdamOptimizer eager_opt(0.01);
    tf::Variable eager_step(tf::constant(int64_t{0}));
    std::vector<tf::Tensor> eager_losses;
    for (int i = 0; i < 10; ++i)
        eager_losses.push_back(train_step(eager_model, eager_opt, eager_step, x, y));

    tf::random::set_seed(5);
    Mlp model(3);
    tf::train::AdamOptimizer opt(0.01);
    tf::Variable step(tf::constant(int64_t{0}));
    auto fn = tf::function([&](const tf::Tensor& xs, const tf::Tensor& ys) {
        return train_step(model, opt, step, xs, ys);
    });
    captured().clear();
    tf::logging::set_sink(capture);
    for (int i = 0; i < 10; ++i)
        CHECK(same_bits(fn(x, y), eager_losses[static_cast<std::size_t>(i)]));
    tf::logging::set_sink(nullptr);
    CHECK(captured().empty());  // replayed, not run eagerly
    CHECK(fn.experimental_get_tracing_count() == 1);
    CHECK(fn.get_concrete_function(x, y).num_ops() > 20);
    for (std::size_t i = 0; i < model.vars().size(); ++i)
        CHECK(same_bits(model.vars()[i].value(), eager_model.vars()[i].value()));
    CHECK(step.value().item<int64_t>() == 10);
    for (const char* slot : {"m", "v"})
        CHECK(same_bits(opt.get_slot(model.w1, slot)->value(),
                        eager_opt.get_slot(eager_model.w1, slot)->value()));
}

TEST_CASE("tf::function: random ops draw what eager execution draws", "[function]") {
    tf::random::set_seed(42);
    std::vector<tf::Tensor> eager;
    for (int i = 0; i < 3; ++i)
        eager.push_back(tf::random::uniform({4}) + tf::random::normal({4}, 0, 1, tf::float32, 9));
    tf::random::set_seed(42);
    auto f = tf::function(
        [] { return tf::random::uniform({4}) + tf::random::normal({4}, 0, 1, tf::float32, 9); });
    for (int i = 0; i < 3; ++i)
        CHECK(same_bits(f(), eager[static_cast<std::size_t>(i)]));
    CHECK(f.experimental_get_tracing_count() == 1);
}

TEST_CASE("tf::function: variables are read and assigned at every replay", "[function]") {
    tf::Variable v(tf::constant({1.f, 2.f}));
    tf::Variable count(tf::constant(0.f));
    auto f = tf::function([&](const tf::Tensor& d) {
        v.assign_add(d);
        count.assign(count.value() + 1.0f);
        return v.value() * 2.0f;
    });
    CHECK(same_bits(f(tf::constant({1.f, 1.f})), tf::constant({4.f, 6.f})));
    CHECK(same_bits(f(tf::constant({1.f, 1.f})), tf::constant({6.f, 8.f})));
    v.assign(tf::constant({0.f, 0.f}));  // a change from outside is seen by the next replay
    CHECK(same_bits(f(tf::constant({2.f, 3.f})), tf::constant({4.f, 6.f})));
    CHECK(count.value().item<float>() == 3.f);
    CHECK(f.experimental_get_tracing_count() == 1);
}

TEST_CASE("tf::function: variables may be created on the first trace only", "[function]") {
    std::optional<tf::Variable> w;
    auto f = tf::function([&](const tf::Tensor& x) {
        if (!w) w.emplace(tf::ones({x.shape()[0]}), tf::VariableOptions{.name = "w"});
        return x * w->value();
    });
    CHECK(same_bits(f(tf::constant({2.f, 3.f})), tf::constant({2.f, 3.f})));
    w->assign(tf::constant({2.f, 2.f}));
    CHECK(same_bits(f(tf::constant({2.f, 3.f})), tf::constant({4.f, 6.f})));
    auto g = tf::function([](const tf::Tensor& x) {
        tf::Variable fresh(x);  // a new variable at every trace
        return fresh.value();
    });
    g(tf::zeros({2}));
    CHECK_THROWS_AS(g(tf::zeros({3})), tf::errors::InvalidArgumentError);
    CHECK_THROWS_WITH(g(tf::zeros({3})), Contains("only supports creating variables on the first"));
}

TEST_CASE("tf::function: an exception while tracing leaves no trace behind", "[function]") {
    bool fail = true;
    auto f = tf::function([&](const tf::Tensor& x) {
        if (fail) return tf::matmul(x, tf::zeros({5, 1}));  // bad shapes: throws
        return x + 1.0f;
    });
    CHECK_THROWS_AS(f(tf::zeros({2, 3})), tf::errors::InvalidArgumentError);
    CHECK(f.experimental_get_tracing_count() == 0);
    fail = false;
    CHECK(same_bits(f(tf::zeros({2, 3})), tf::ones({2, 3})));
    CHECK(f.experimental_get_tracing_count() == 1);
}

TEST_CASE("tf::function: differentiable under an outer tape, and nests", "[function]") {
    auto square = tf::function([](const tf::Tensor& x) { return x * x; });
    auto outer = tf::function([&](const tf::Tensor& x) { return square(x) + 1.0f; });
    const tf::Tensor x = tf::constant({1.f, 2.f, 3.f});
    CHECK(same_bits(outer(x), tf::constant({2.f, 5.f, 10.f})));
    CHECK(same_bits(outer(x), tf::constant({2.f, 5.f, 10.f})));
    tf::GradientTape tape;
    tape.watch(x);
    const tf::Tensor y = tf::reduce_sum(outer(x));
    CHECK(same_bits(tape.gradient(y, x), tf::constant({2.f, 4.f, 6.f})));
}

TEST_CASE("tf::function: concrete functions, their graph and arena", "[function]") {
    tf::Variable w(tf::ones({3, 2}), {.name = "w"});
    auto f = tf::function([&](const tf::Tensor& x) { return tf::nn::relu(tf::matmul(x, w)); });
    tf::ConcreteFunction c = f.get_concrete_function(tf::TensorSpec{{4, 3}});
    CHECK(f.experimental_get_tracing_count() == 1);
    const tf::Tensor x = tf::random::normal({4, 3}, 0, 1, tf::float32, 3);
    CHECK(same_bits(c({x})[0], tf::nn::relu(tf::matmul(x, w))));
    CHECK(c.num_ops() == 2);
    CHECK(c.arena_bytes() <= c.arena_unshared_bytes());
    const tf::Graph g = c.graph();
    std::vector<std::string> ops;
    for (const tf::GraphNode& n : g.nodes())
        ops.push_back(n.op);
    CHECK(std::find(ops.begin(), ops.end(), "MatMul") != ops.end());
    CHECK(std::find(ops.begin(), ops.end(), "Relu") != ops.end());
    CHECK(std::find(ops.begin(), ops.end(), "VarHandleOp") != ops.end());
    CHECK_THROWS_AS(c({tf::zeros({4, 4})}), tf::errors::InvalidArgumentError);
    f.get_concrete_function(tf::TensorSpec{{4, 3}});  // exists: no new trace
    CHECK(f.experimental_get_tracing_count() == 1);
}

TEST_CASE("tf::function: a function reading values on the host runs eagerly", "[function]") {
    captured().clear();
    tf::logging::set_sink(capture);
    auto f = tf::function([](const tf::Tensor& x) {
        return x.item<float>() > 0 ? x * 2.0f : x * -1.0f;  // C++ control flow on a value
    });
    CHECK(f(tf::constant(3.f)).item<float>() == 6.f);
    CHECK(f(tf::constant(-3.f)).item<float>() == 3.f);  // correct, not the trace's branch
    tf::logging::set_sink(nullptr);
    REQUIRE(!captured().empty());
    CHECK_THAT(captured()[0], Contains("read tensor values on the host while tracing"));
}

TEST_CASE("tf::function: large element-wise chains still fuse, results escape safely",
          "[function]") {
    auto f = tf::function([](const tf::Tensor& a, const tf::Tensor& b) {
        const tf::Tensor s = tf::reduce_sum(a);  // small: lives in the arena
        return (a * b + a) * s;
    });
    const tf::Tensor a = tf::random::uniform({300000}, 0, 1, tf::float32, 1);
    const tf::Tensor b = tf::random::uniform({300000}, 0, 1, tf::float32, 2);
    const tf::Tensor first = f(a, b);
    const tf::Tensor second = f(b, a);  // a later replay must not change the first result
    CHECK(same_bits(first, (a * b + a) * tf::reduce_sum(a)));
    CHECK(same_bits(second, (b * a + b) * tf::reduce_sum(b)));
}

namespace {

std::shared_ptr<tf::keras::Sequential> keras_model() {
    namespace kl = tf::keras::layers;
    return std::make_shared<tf::keras::Sequential>(std::vector<std::shared_ptr<kl::Layer>>{
        std::make_shared<kl::Dense>(16, kl::DenseOptions{.activation = "relu"}),
        std::make_shared<kl::Dropout>(0.2, 3),
        std::make_shared<kl::Dense>(3)});
}

tf::keras::History fit_keras(tf::keras::Sequential& model, bool run_eagerly) {
    tf::random::set_seed(9);
    const tf::Tensor x =
        tf::random::normal({50, 4}, 0, 1, tf::float32, 1);  // 50: a last batch of 2
    const tf::Tensor y = tf::cast(tf::random::uniform({50}, 0, 3, tf::float32, 2), tf::int32);
    model.compile(std::make_shared<tf::keras::optimizers::Adam>(),
                  std::make_shared<tf::keras::losses::SparseCategoricalCrossentropy>(
                      tf::keras::losses::CrossentropyOptions{.from_logits = true}),
                  {std::make_shared<tf::keras::metrics::SparseCategoricalAccuracy>("accuracy")},
                  {.run_eagerly = run_eagerly});
    return model.fit(x, y, {.batch_size = 16, .epochs = 3, .verbose = 0, .shuffle = false});
}

}  // namespace

TEST_CASE("Keras: fit, evaluate and predict through tf::function equal run_eagerly", "[function]") {
    auto eager = keras_model();
    auto traced = keras_model();
    captured().clear();
    tf::logging::set_sink(capture);
    const tf::keras::History a = fit_keras(*eager, true);
    const tf::keras::History b = fit_keras(*traced, false);
    tf::logging::set_sink(nullptr);
    CHECK(captured().empty());  // traced and replayed, no eager fallback
    CHECK(a.history.at("loss") == b.history.at("loss"));
    CHECK(a.history.at("accuracy") == b.history.at("accuracy"));
    const auto wa = eager->get_weights();
    const auto wb = traced->get_weights();
    REQUIRE(wa.size() == wb.size());
    for (std::size_t i = 0; i < wa.size(); ++i)
        CHECK(same_bits(wa[i], wb[i]));
    const tf::Tensor x = tf::random::normal({20, 4}, 0, 1, tf::float32, 5);
    const tf::Tensor y = tf::zeros({20}, tf::int32);
    CHECK(same_bits(eager->predict(x, 8), traced->predict(x, 8)));
    CHECK(eager->evaluate(x, y, 8) == traced->evaluate(x, y, 8));
}

TEST_CASE("tf::function: summaries and tf::print run at every replay", "[function]") {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / "tapeflow_function_summaries";
    fs::remove_all(dir);
    tf::Variable step(tf::constant(int64_t{0}));
    std::FILE* out = std::tmpfile();
    REQUIRE(out != nullptr);
    {
        tf::summary::SummaryWriter writer = tf::summary::create_file_writer(dir.string());
        const auto scope = writer.as_default();
        auto f = tf::function([&](const tf::Tensor& x) {
            const tf::Tensor loss = tf::reduce_sum(x);
            step.assign_add(tf::constant(int64_t{1}));
            tf::summary::scalar("loss", loss, step);
            tf::print({std::string("loss:"), loss}, {.output_stream = out});
            return loss;
        });
        for (float v : {1.f, 2.f, 3.f})
            f(tf::constant({v, v}));
        CHECK(f.experimental_get_tracing_count() == 1);
        writer.flush();
        std::vector<std::pair<int64_t, float>> seen;
        for (const tf::summary::Event& e : tf::summary::summary_iterator(writer.path()))
            for (const tf::summary::SummaryValue& v : e.values)
                if (v.tag == "loss") seen.emplace_back(e.step, static_cast<float>(v.scalar_value));
        CHECK(seen == std::vector<std::pair<int64_t, float>>{{1, 2.f}, {2, 4.f}, {3, 6.f}});
    }
    std::rewind(out);
    char buffer[256] = {};
    const std::size_t n = std::fread(buffer, 1, sizeof(buffer) - 1, out);
    std::fclose(out);
    CHECK(std::string(buffer, n) == "loss: 2\nloss: 4\nloss: 6\n");
}

TEST_CASE("tf::print formats tensors as TensorFlow's tf.print", "[function]") {
    CHECK(tf::print_string(tf::constant({1, 2, 3})) == "[1 2 3]");
    CHECK(tf::print_string(tf::range(10)) == "[0 1 2 ... 7 8 9]");
    CHECK(tf::print_string(tf::constant({{1.5f, 2.f}, {3.f, 4.f}})) == "[[1.5 2]\n [3 4]]");
    CHECK(tf::print_string(tf::constant(7.f)) == "7");
    CHECK(tf::print_string(tf::range(10), -1) == "[0 1 2 3 4 5 6 7 8 9]");
}

namespace {

// Ten steps of `step` (returning the loss), eagerly or through tf::function, from the same seed:
// the losses and the variables afterwards.
template <class Make>
std::pair<std::vector<tf::Tensor>, std::vector<tf::Tensor>> ten_steps(const Make& make,
                                                                      bool traced) {
    tf::random::set_seed(21);
    auto [vars, step] = make();
    auto fn = tf::function(step);
    std::vector<tf::Tensor> losses;
    for (int i = 0; i < 10; ++i)
        losses.push_back(traced ? fn() : step());
    std::vector<tf::Tensor> values;
    for (const tf::Variable& v : vars)
        values.push_back(v.value());
    return {losses, values};
}

void check_same(const std::pair<std::vector<tf::Tensor>, std::vector<tf::Tensor>>& a,
                const std::pair<std::vector<tf::Tensor>, std::vector<tf::Tensor>>& b) {
    REQUIRE(a.first.size() == b.first.size());
    for (std::size_t i = 0; i < a.first.size(); ++i)
        CHECK(same_bits(a.first[i], b.first[i]));
    REQUIRE(a.second.size() == b.second.size());
    for (std::size_t i = 0; i < a.second.size(); ++i)
        CHECK(same_bits(a.second[i], b.second[i]));
}

}  // namespace

TEST_CASE("tf::function: the digits convnet and the transformer LM train bit for bit as eagerly",
          "[function]") {
    SECTION("the demo's convnet (Adam, a global step)") {
        auto make = [] {
            auto model = std::make_shared<samples::ConvNet>();
            auto opt = std::make_shared<tf::train::AdamOptimizer>(0.005);
            tf::Variable step(tf::constant(int64_t{0}));
            const tf::Tensor x = tf::random::uniform({16, 8, 8, 1}, 0, 1, tf::float32, 3);
            const tf::Tensor y =
                tf::cast(tf::random::uniform({16}, 0, 10, tf::float32, 4), tf::int32);
            return std::make_pair(model->variables(), std::function<tf::Tensor()>([=] {
                                      return opt->minimize(
                                          [&] { return model->loss(x, y); }, {}, step);
                                  }));
        };
        check_same(ten_steps(make, false), ten_steps(make, true));
    }
    SECTION("the transformer LM (dropout-free; attention, layer norm, embeddings)") {
        namespace tm = transformer_model;
        auto make = [] {
            auto model = std::make_shared<tm::Model>(tm::make_model(40, 1));
            auto opt = std::make_shared<tf::train::AdamOptimizer>(3e-3);
            const tf::Tensor x =
                tf::cast(tf::random::uniform({2, tm::kContext}, 0, 40, tf::float32, 5), tf::int32);
            const tf::Tensor y =
                tf::cast(tf::random::uniform({2 * tm::kContext}, 0, 40, tf::float32, 6), tf::int32);
            std::vector<tf::Variable> vars = tm::variables(*model);
            return std::make_pair(
                vars, std::function<tf::Tensor()>([=] {
                    return opt->minimize([&] { return tm::loss_of(*model, x, y); });
                }));
        };
        check_same(ten_steps(make, false), ten_steps(make, true));
    }
}

TEST_CASE("tf::function: a stateful RNN carries its states across replays", "[function]") {
    namespace kl = tf::keras::layers;
    auto run = [](bool traced) {
        tf::random::set_seed(2);
        kl::LSTM layer(4, {.stateful = true});
        const tf::Tensor x = tf::random::normal({2, 3, 5}, 0, 1, tf::float32, 8);
        auto call = [&] {
            return layer(x);
        };
        auto fn = tf::function(call);
        std::vector<tf::Tensor> outs;
        for (int i = 0; i < 3; ++i)
            outs.push_back(traced ? fn() : call());
        layer.reset_states();
        outs.push_back(traced ? fn() : call());
        return outs;
    };
    const auto eager = run(false);
    const auto traced = run(true);
    for (std::size_t i = 0; i < eager.size(); ++i)
        CHECK(same_bits(eager[i], traced[i]));
    CHECK(!same_bits(eager[0], eager[1]));  // the states moved on
    CHECK(same_bits(eager[0], eager[3]));   // and were reset
}

TEST_CASE("tf::function keys Variables and objects by identity", "[function]") {
    tf::Variable a(tf::constant({1.f, 2.f})), b(tf::constant({3.f, 4.f}));
    auto f = tf::function([](const tf::Variable& v, const std::vector<float>* scale) {
        return v.value() * (*scale)[0];
    });
    std::vector<float> two{2.f}, three{3.f};
    CHECK(same_bits(f(a, &two), tf::constant({2.f, 4.f})));
    CHECK(same_bits(f(a, &two), tf::constant({2.f, 4.f})));
    CHECK(f.experimental_get_tracing_count() == 1);
    CHECK(same_bits(f(b, &two), tf::constant({6.f, 8.f})));  // another variable: a new trace
    CHECK(f.experimental_get_tracing_count() == 2);
    CHECK(same_bits(f(a, &three), tf::constant({3.f, 6.f})));  // another object: a new trace
    CHECK(f.experimental_get_tracing_count() == 3);
    a.assign(tf::constant({5.f, 5.f}));
    CHECK(same_bits(f(a, &two), tf::constant({10.f, 10.f})));  // the same trace reads a again
    CHECK(f.experimental_get_tracing_count() == 3);
    // A ConcreteFunction with a None dimension replays only shapes it was traced for.
    auto g = tf::function([](const tf::Tensor& x) { return x + 1.0f; },
                          {.input_signature = {{{-1}, tf::float32, "x"}}});
    g(tf::zeros({3}));
    tf::ConcreteFunction c = g.get_concrete_function(tf::TensorSpec{{3}});
    CHECK(same_bits(c({tf::zeros({3})})[0], tf::ones({3})));
    CHECK_THROWS_WITH(c({tf::zeros({4})}), Contains("not traced for these exact shapes"));
}
