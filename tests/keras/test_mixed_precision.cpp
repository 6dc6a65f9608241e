// Mixed precision (docs/mixed-precision.md): Keras' dtype policies, Keras 3's LossScaleOptimizer
// (the scale sequence over a scripted run with injected infs: skip and halve, growth after
// dynamic_growth_steps finite steps; gradients unscaled exactly), Model.compile wrapping its
// optimizer under mixed_float16, TF1's MixedPrecisionLossScaleOptimizer (dynamic and fixed), and
// bad arguments.
#include <cmath>
#include <limits>

#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;
namespace mp = tf::keras::mixed_precision;
using Catch::Contains;
using tf::Tensor;

namespace {

// Restores the float32 global policy after a test.
struct PolicyGuard {
    ~PolicyGuard() { mp::set_global_policy("float32"); }
};

// One gradient pair for `v`: the constant `g` (inf or NaN injected by the caller).
std::vector<tf::train::GradAndVar> grad_of(const tf::Variable& v, float g) {
    return {{tf::fill(v.shape(), static_cast<double>(g), tf::float32), v}};
}

}  // namespace

TEST_CASE("Policy: Keras' names, dtypes and message", "[keras][mixed_precision]") {
    const mp::Policy mixed("mixed_float16");
    CHECK(mixed.compute_dtype() == tf::float16);
    CHECK(mixed.variable_dtype() == tf::float32);
    const mp::Policy bf("mixed_bfloat16");
    CHECK(bf.compute_dtype() == tf::bfloat16);
    CHECK(bf.variable_dtype() == tf::float32);
    for (const char* name : {"float32", "float64", "float16", "bfloat16"}) {
        const mp::Policy p(name);
        CHECK(p.compute_dtype() == tf::parse_dtype(name));
        CHECK(p.variable_dtype() == tf::parse_dtype(name));
        CHECK(p.name() == name);
    }
    CHECK_THROWS_WITH(mp::Policy("mixed_float32"),
                      Contains("Cannot convert 'mixed_float32' to a mixed precision DTypePolicy"));
    CHECK_THROWS_AS(mp::Policy("float"), tf::errors::InvalidArgumentError);  // not Keras' name
    const PolicyGuard guard;
    CHECK(mp::global_policy().name() == "float32");
    mp::set_global_policy("mixed_bfloat16");
    CHECK(mp::global_policy() == mp::Policy("mixed_bfloat16"));
    CHECK_THROWS_AS(mp::set_global_policy("bogus"), tf::errors::InvalidArgumentError);
    CHECK(mp::global_policy().name() == "mixed_bfloat16");  // a bad name changes nothing
}

TEST_CASE("LossScaleOptimizer: Keras 3's dynamic rule over a scripted run",
          "[keras][mixed_precision]") {
    const tf::Variable w(tf::zeros({3}), {.name = "w"});
    auto sgd = std::make_shared<tf::keras::optimizers::SGD>(
        tf::keras::optimizers::SGDOptions{.learning_rate = 1.0});
    mp::LossScaleOptimizer opt(sgd, /*initial_scale=*/1024.0, /*dynamic_growth_steps=*/3);
    const float inf = std::numeric_limits<float>::infinity();
    // Each step: the gradient injected (scaled), then the expected scale, counter, iterations
    // and w (SGD with lr 1 moves w by -g / scale on a finite step).
    struct Step {
        float g;
        double scale;
        int64_t counter;
        int64_t iterations;
        float w;
    };
    const Step script[] = {
        {1024.f, 1024, 1, 1, -1.f},        // finite
        {inf, 512, 0, 1, -1.f},            // skipped, halved
        {std::nanf(""), 256, 0, 1, -1.f},  // skipped, halved
        {512.f, 256, 1, 2, -3.f},          // finite: 512 / 256 = 2
        {256.f, 256, 2, 3, -4.f},          // finite
        {256.f, 512, 0, 4, -5.f},          // the 3rd finite step in a row: doubled after it
        {-inf, 256, 0, 4, -5.f},           // skipped
    };
    for (const Step& s : script) {
        opt.apply_gradients(grad_of(w, s.g));
        INFO("gradient " << s.g);
        CHECK(opt.dynamic_scale().value().item<float>() == s.scale);
        CHECK(opt.step_counter().value().item<int64_t>() == s.counter);
        CHECK(opt.iterations() == s.iterations);
        CHECK(w.value().to_vector<float>() == std::vector<float>(3, s.w));
    }
    // Unscaling is exact (the scale is a power of two): 3 * 256 / 256 = 3 bit for bit.
    CHECK(opt.scale_loss(tf::constant(0.1f)).item<float>() == 0.1f * 256);
    const std::vector<tf::Variable> vars = opt.variables();
    REQUIRE(vars.size() >= 2);
    CHECK(vars[0].name() == "loss_scale_optimizer/dynamic_scale");
    CHECK(vars[1].name() == "loss_scale_optimizer/step_counter");
}

TEST_CASE("LossScaleOptimizer: the default growth after 2000 finite steps",
          "[keras][mixed_precision]") {
    const tf::Variable w(tf::zeros({1}));
    auto sgd = std::make_shared<tf::keras::optimizers::SGD>(
        tf::keras::optimizers::SGDOptions{.learning_rate = 0.0});
    mp::LossScaleOptimizer opt(sgd);
    CHECK(opt.dynamic_scale().value().item<float>() == 32768);
    for (int i = 0; i < 1999; ++i)
        opt.apply_gradients(grad_of(w, 1.f));
    CHECK(opt.dynamic_scale().value().item<float>() == 32768);
    opt.apply_gradients(grad_of(w, 1.f));
    CHECK(opt.dynamic_scale().value().item<float>() == 65536);
    CHECK(opt.step_counter().value().item<int64_t>() == 0);
}

TEST_CASE("LossScaleOptimizer: minimize differentiates the scaled loss and applies it unscaled",
          "[keras][mixed_precision]") {
    // float16 gradients of 1e-8 underflow to 0 unscaled; scaled by 2^15 they survive.
    const tf::Variable w(tf::constant({1.f, 2.f}));
    auto plain = std::make_shared<tf::keras::optimizers::SGD>(
        tf::keras::optimizers::SGDOptions{.learning_rate = 0.5});
    mp::LossScaleOptimizer opt(std::make_shared<tf::keras::optimizers::SGD>(
        tf::keras::optimizers::SGDOptions{.learning_rate = 0.5}));
    const auto loss_fn = [&] {
        return tf::reduce_sum(tf::square(w.read_value()));
    };
    const Tensor loss = opt.minimize(loss_fn, {w});
    CHECK(loss.item<float>() == 5.f);                                     // unscaled
    CHECK(w.value().to_vector<float>() == std::vector<float>{0.f, 0.f});  // w - 0.5 * 2w
    const std::vector<tf::train::GradAndVar> g = opt.compute_gradients(loss_fn, {w});
    REQUIRE(g.size() == 1);
    CHECK(tf::reduce_sum(g[0].gradient.dense()).item<float>() == 0.f);  // scaled zeros

    // The underflow: a float16 loss term of 1e-4 * x^2 at x = 1e-4 has gradient 2e-8 (0 in f16).
    const tf::Variable h(tf::constant({1e-4f}));
    const auto tiny = [&] {
        const Tensor x = tf::cast(h.read_value(), tf::float16);
        return tf::reduce_sum(tf::square(x) * tf::cast(tf::constant(1e-4f), tf::float16));
    };
    tf::GradientTape unscaled_tape;
    const Tensor direct = unscaled_tape.gradient(tiny(), h).dense();
    CHECK(direct.item<float>() == 0.f);
    tf::GradientTape tape;
    const Tensor scaled = tape.gradient(opt.scale_loss(tiny()), h).dense();
    CHECK(scaled.item<float>() / opt.dynamic_scale().value().item<float>() ==
          Approx(2e-8).epsilon(0.01));
}

TEST_CASE("Model.compile under mixed_float16 wraps a Keras optimizer", "[keras][mixed_precision]") {
    const PolicyGuard guard;
    mp::set_global_policy("mixed_float16");
    tf::keras::Sequential model({std::make_shared<tf::keras::layers::Dense>(2)});
    model.compile(std::make_shared<tf::keras::optimizers::SGD>(),
                  std::make_shared<tf::keras::losses::MeanSquaredError>());
    const auto* wrapped = dynamic_cast<const mp::LossScaleOptimizer*>(model.optimizer());
    REQUIRE(wrapped != nullptr);
    // The step differentiates the scaled loss: the update equals the float32 one to float16's
    // precision (the mixed model computes in float16).
    mp::set_global_policy("float32");
    const Tensor x = tf::random::normal({8, 3}, 0, 1, tf::float32, 1);
    const Tensor y = tf::random::normal({8, 2}, 0, 1, tf::float32, 2);
    tf::keras::Sequential plain({std::make_shared<tf::keras::layers::Dense>(2)});
    plain.compile(std::make_shared<tf::keras::optimizers::SGD>(),
                  std::make_shared<tf::keras::losses::MeanSquaredError>());
    REQUIRE(dynamic_cast<const mp::LossScaleOptimizer*>(plain.optimizer()) == nullptr);
    model(x);
    plain(x);
    plain.set_weights(model.get_weights());
    model.fit(x, y, {.batch_size = 8, .epochs = 1, .verbose = 0, .shuffle = false});
    plain.fit(x, y, {.batch_size = 8, .epochs = 1, .verbose = 0, .shuffle = false});
    const auto a = model.get_weights();
    const auto b = plain.get_weights();
    for (std::size_t i = 0; i < a.size(); ++i) {
        const auto va = a[i].to_vector<float>();
        const auto vb = b[i].to_vector<float>();
        for (std::size_t j = 0; j < va.size(); ++j)
            CHECK(va[j] == Approx(vb[j]).margin(2e-3));
    }
}

TEST_CASE("MixedPrecisionLossScaleOptimizer: TF1's dynamic and fixed loss scales",
          "[train][mixed_precision]") {
    const tf::Variable w(tf::zeros({2}), {.name = "v"});
    const tf::Variable step(tf::constant(int64_t{0}), {.name = "global_step", .trainable = false});
    tf::train::MixedPrecisionLossScaleOptimizer opt(
        std::make_shared<tf::train::GradientDescentOptimizer>(1.0),
        tf::train::DynamicLossScaleOptions{.initial_loss_scale = 4, .increment_period = 2});
    const float inf = std::numeric_limits<float>::infinity();
    // apply_gradients takes unscaled gradients: inf skips (no global step) and halves, down to 1.
    opt.apply_gradients(grad_of(w, 1.f), step);
    CHECK(opt.loss_scale().value().item<float>() == 4);
    opt.apply_gradients(grad_of(w, 1.f), step);
    CHECK(opt.loss_scale().value().item<float>() == 8);  // 2 good steps: doubled
    CHECK(step.value().item<int64_t>() == 2);
    for (int i = 0; i < 5; ++i)
        opt.apply_gradients(grad_of(w, inf), step);
    CHECK(opt.loss_scale().value().item<float>() == 1);  // 8 4 2 1 1: never below 1
    CHECK(step.value().item<int64_t>() == 2);
    CHECK(w.value().to_vector<float>() == std::vector<float>{-2.f, -2.f});
    // compute_gradients returns unscaled gradients.
    const auto g = opt.compute_gradients([&] { return tf::reduce_sum(w.read_value() * 3.f); }, {w});
    CHECK(g[0].gradient.dense().to_vector<float>() == std::vector<float>{3.f, 3.f});
    CHECK(opt.variables()[0].name() == "MixedPrecisionLossScaleOptimizer/current_loss_scale");

    // Fixed: always applied, the scale never changes.
    const tf::Variable u(tf::zeros({1}));
    tf::train::MixedPrecisionLossScaleOptimizer fixed(
        std::make_shared<tf::train::GradientDescentOptimizer>(1.0), 128.0);
    fixed.minimize([&] { return tf::reduce_sum(u.read_value() * 2.f); }, {u});
    CHECK(u.value().item<float>() == -2.f);
    CHECK(fixed.loss_scale().value().item<float>() == 128);
}

TEST_CASE("loss scaling: bad arguments", "[keras][train][mixed_precision]") {
    CHECK_THROWS_WITH(mp::LossScaleOptimizer(nullptr), Contains("inner_optimizer"));
    auto sgd = std::make_shared<tf::keras::optimizers::SGD>();
    CHECK_THROWS_WITH(mp::LossScaleOptimizer(sgd, 0.0), Contains("initial_scale"));
    CHECK_THROWS_WITH(mp::LossScaleOptimizer(sgd, 1024.0, 0), Contains("dynamic_growth_steps"));
    auto lso = std::make_shared<mp::LossScaleOptimizer>(sgd);
    CHECK_THROWS_WITH(mp::LossScaleOptimizer(lso), Contains("already a LossScaleOptimizer"));
    CHECK_THROWS_WITH(lso->scale_loss(tf::constant(1)), Contains("floating"));
    CHECK_THROWS_AS(tf::train::MixedPrecisionLossScaleOptimizer(nullptr),
                    tf::errors::InvalidArgumentError);
    CHECK_THROWS_WITH(tf::train::MixedPrecisionLossScaleOptimizer(
                          std::make_shared<tf::train::GradientDescentOptimizer>(0.1),
                          std::numeric_limits<double>::infinity()),
                      Contains("loss scale"));
}

TEST_CASE("layers under mixed_float16: float32 weights, float16 compute, float32 gradients",
          "[keras][mixed_precision]") {
    const PolicyGuard guard;
    mp::set_global_policy("mixed_float16");
    namespace kl = tf::keras::layers;
    auto dense = std::make_shared<kl::Dense>(4);
    auto softmax = std::make_shared<kl::Activation>("softmax");
    softmax->set_dtype_policy(mp::Policy("float32"));  // Keras' advice for the last activation
    CHECK(dense->dtype_policy().name() == "mixed_float16");
    CHECK(dense->compute_dtype() == tf::float16);
    const Tensor x = tf::random::normal({5, 3}, 0, 1, tf::float32, 3);
    tf::GradientTape tape;
    const Tensor h = (*dense)(x);
    CHECK(h.dtype() == tf::float16);
    CHECK(dense->variable_dtype() == tf::float32);
    CHECK(dense->kernel().dtype() == tf::float32);
    CHECK(dense->kernel().value().dtype() == tf::float32);  // outside the call: its own dtype
    const Tensor p = (*softmax)(h);
    CHECK(p.dtype() == tf::float32);
    const Tensor loss = tf::reduce_sum(p * tf::range(0, 4, 1, tf::float32));
    const tf::Gradient g = tape.gradient(loss, dense->kernel());
    REQUIRE(g.defined());
    CHECK(g.dtype() == tf::float32);
    // The float16 computation agrees with a float32 one to float16's precision.
    const Tensor expected = tf::matmul(x, dense->kernel().value()) + dense->bias().value();
    CHECK(tf::reduce_max(tf::abs(tf::cast(h, tf::float32) - expected)).item<float>() < 1e-2f);

    // BatchNormalization and LayerNormalization compute in float32 and return float16; Embedding
    // looks up float32 rows and returns them as float16.
    kl::BatchNormalization bn;
    kl::LayerNormalization ln;
    kl::Embedding emb(10, 4);
    const Tensor hn = bn(h, true);
    CHECK(hn.dtype() == tf::float16);
    CHECK(bn.moving_mean().dtype() == tf::float32);
    CHECK(ln(h).dtype() == tf::float16);
    CHECK(emb(tf::constant({1, 2})).dtype() == tf::float16);

    // A layer's own dtype option overrides the global policy (Keras' dtype=).
    kl::Dense head(2, kl::DenseOptions{.dtype = "float32"});
    CHECK(head(h).dtype() == tf::float32);
    CHECK_THROWS_WITH(kl::Dense(2, kl::DenseOptions{.dtype = "mixed_half"}),
                      Contains("Cannot convert 'mixed_half'"));

    // A float32 layer made before the policy changed keeps following its inputs.
    mp::set_global_policy("float32");
    kl::Dense plain(2);
    CHECK(plain(tf::random::normal({2, 3}, 0, 1, tf::float64, 4)).dtype() == tf::float64);
}

TEST_CASE("fit under mixed_bfloat16 and mixed_float16 trains", "[keras][mixed_precision]") {
    for (const char* policy : {"mixed_bfloat16", "mixed_float16"}) {
        const PolicyGuard guard;
        mp::set_global_policy(policy);
        namespace kl = tf::keras::layers;
        tf::keras::Sequential model(
            {std::make_shared<kl::Dense>(16, kl::DenseOptions{.activation = "relu"}),
             std::make_shared<kl::Dense>(1)});
        model.compile(std::make_shared<tf::keras::optimizers::Adam>(
                          tf::keras::optimizers::AdamOptions{.learning_rate = 0.01}),
                      std::make_shared<tf::keras::losses::MeanSquaredError>());
        const Tensor x = tf::random::normal({64, 4}, 0, 1, tf::float32, 5);
        const Tensor y = tf::reduce_sum(x, -1, true);
        const tf::keras::History h =
            model.fit(x, y, {.batch_size = 16, .epochs = 30, .verbose = 0});
        const auto& losses = h.history.at("loss");
        INFO(policy << ": first loss " << losses.front() << ", last " << losses.back());
        CHECK(losses.back() < 0.2 * losses.front());
        CHECK(model(x).dtype() == mp::Policy(policy).compute_dtype());
    }
}

TEST_CASE("LossScaleOptimizer unscales IndexedSlices gradients and checks their values",
          "[keras][mixed_precision]") {
    const tf::Variable table(tf::zeros({4, 2}));
    mp::LossScaleOptimizer opt(std::make_shared<tf::keras::optimizers::SGD>(
                                   tf::keras::optimizers::SGDOptions{.learning_rate = 1.0}),
                               /*initial_scale=*/8.0);
    const auto slices = [&](float v) {
        return tf::IndexedSlices{tf::fill({1, 2}, static_cast<double>(v), tf::float32),
                                 tf::constant({2}),
                                 tf::Shape{4, 2}};
    };
    opt.apply_gradients({{slices(16.f), table}});  // 16 / 8 = 2 into row 2
    CHECK(table.value().to_vector<float>() == std::vector<float>{0, 0, 0, 0, -2, -2, 0, 0});
    opt.apply_gradients({{slices(std::numeric_limits<float>::infinity()), table}});
    CHECK(opt.dynamic_scale().value().item<float>() == 4);  // skipped and halved
    CHECK(table.value().to_vector<float>() == std::vector<float>{0, 0, 0, 0, -2, -2, 0, 0});
}
