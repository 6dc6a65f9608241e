// Keras layers: values against their formulas, parameter counts, gradients against finite
// differences (float64, inputs and weights), masks, training-only behaviour and bad inputs.
#include <cmath>

#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

#include "keras/keras_support.hpp"

namespace tf = tapeflow;
namespace kl = tf::keras::layers;
using tf::testing::check_close;
using tf::testing::check_gradients;
using tf::testing::check_variable_gradients;
using tf::testing::random_f64;

TEST_CASE("Dense computes activation(x @ kernel + bias) on the last axis", "[keras][layers]") {
    kl::Dense dense(
        3, {.activation = "tanh", .bias_initializer = tf::keras::initializers::constant(0.5)});
    const tf::Tensor x = random_f64({4, 5});
    const tf::Tensor y = dense(x);
    CHECK(dense.kernel().shape() == tf::Shape{5, 3});
    CHECK(dense.kernel().dtype() == tf::float64);
    check_close(y, tf::tanh(tf::matmul(x, dense.kernel()) + dense.bias().value()), 1e-12, 1e-12);
    CHECK(dense.count_params() == 18);
    // Rank 3: the same kernel on every step.
    const tf::Tensor x3 = random_f64({2, 4, 5}, -1, 1, 3);
    const tf::Tensor y3 = dense(x3);
    CHECK(y3.shape() == tf::Shape{2, 4, 3});
    check_close(tf::slice(y3, {1, 0, 0}, {1, 4, 3}),
                tf::expand_dims(dense(tf::reshape(tf::slice(x3, {1, 0, 0}, {1, 4, 5}), {4, 5})), 0),
                1e-12,
                1e-12);
    check_gradients([&](const std::vector<tf::Tensor>& in) { return dense(in[0]); }, {x});
    check_variable_gradients([&] { return dense(x); }, dense.variables());
}

TEST_CASE("Bad inputs name the layer, the shapes and the fix", "[keras][layers][errors]") {
    kl::Dense dense(3, {.name = "probe"});
    dense(tf::ones({2, 4}));
    try {
        dense(tf::ones({2, 5}));
        FAIL("no error");
    } catch (const tf::errors::InvalidArgumentError& e) {
        const std::string what = e.what();
        CHECK(what.find("\"probe\"") != std::string::npos);
        CHECK(what.find("axis -1") != std::string::npos);
        CHECK(what.find("value 4") != std::string::npos);
        CHECK(what.find("[2,5]") != std::string::npos);
    }
    CHECK_THROWS_AS(dense(tf::ones({4})), tf::errors::InvalidArgumentError);
    CHECK_THROWS_WITH(kl::Dense(3, {.activation = "relux"}),
                      Catch::Contains("Unknown activation \"relux\"") && Catch::Contains("gelu"));
    CHECK_THROWS_AS(kl::Conv2D(4, 3, {.padding = "full"}), tf::errors::InvalidArgumentError);
    kl::Conv2D conv(2, 3);
    CHECK_THROWS_WITH(conv(tf::ones({2, 8, 8})), Catch::Contains("rank 4"));
    CHECK_THROWS_AS(kl::Dropout(1.5), tf::errors::InvalidArgumentError);
}

TEST_CASE("Activations by name", "[keras][layers][activations]") {
    const tf::Tensor x = tf::constant({-2.0, -0.5, 0.0, 0.5, 2.0});
    auto value = [&](const char* name) {
        return kl::Activation(name)(x);
    };
    check_close(value("relu"), tf::nn::relu(x));
    check_close(value("linear"), x);
    check_close(value("softsign"), x / (1.0 + tf::abs(x)));
    check_close(value("hard_sigmoid"), tf::clip_by_value(x / 6.0 + 0.5, 0.0, 1.0));
    check_close(value("silu"), x * tf::sigmoid(x));
    check_close(value("swish"), x * tf::sigmoid(x));
    // gelu(x) = x Phi(x): Phi(0.5) = 0.691462461274013, Phi(2) = 0.977249868051821.
    check_close(value("gelu"),
                tf::constant({-2 * (1 - 0.977249868051821),
                              -0.5 * (1 - 0.691462461274013),
                              0.0,
                              0.5 * 0.691462461274013,
                              2 * 0.977249868051821}),
                1e-12,
                1e-12);
    check_close(tf::keras::activations::gelu(x, true),
                0.5 * x * (1.0 + tf::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x))));
    check_close(value("leaky_relu"), tf::nn::leaky_relu(x, 0.2));
    check_gradients(
        [](const std::vector<tf::Tensor>& in) { return tf::keras::activations::gelu(in[0]); },
        {random_f64({6})});
}

TEST_CASE("Conv2D and Conv1D match tf::nn::conv2d", "[keras][layers][conv]") {
    kl::Conv2D conv(3, {2, 3}, {.strides = 2, .padding = "same", .activation = "relu"});
    const tf::Tensor x = random_f64({2, 7, 6, 2});
    const tf::Tensor y = conv(x);
    CHECK(conv.kernel().shape() == tf::Shape{2, 3, 2, 3});
    CHECK(y.shape() == tf::Shape{2, 4, 3, 3});
    check_close(
        y,
        tf::nn::relu(tf::nn::bias_add(tf::nn::conv2d(x, conv.kernel(), 2, "SAME"), conv.bias())),
        1e-12,
        1e-12);
    CHECK(conv.count_params() == 2 * 3 * 2 * 3 + 3);
    check_variable_gradients([&] { return conv(x); }, conv.variables(), 1e-5, 1e-7);

    kl::Conv1D conv1(4, 3, {.padding = "causal", .dilation_rate = 2});
    const tf::Tensor s = random_f64({2, 9, 3}, -1, 1, 4);
    const tf::Tensor z = conv1(s);
    CHECK(z.shape() == tf::Shape{2, 9, 4});
    // Causal: output t depends on inputs t, t-2, t-4 only; at t = 0 only on input 0.
    const tf::Tensor k = conv1.kernel();  // [3, 3, 4]
    const tf::Tensor first = tf::matmul(tf::reshape(tf::slice(s, {0, 0, 0}, {1, 1, 3}), {1, 3}),
                                        tf::reshape(tf::slice(k, {2, 0, 0}, {1, 3, 4}), {3, 4}));
    check_close(tf::reshape(tf::slice(z, {0, 0, 0}, {1, 1, 4}), {1, 4}),
                first + conv1.bias().value(),
                1e-12,
                1e-12);
    check_gradients([&](const std::vector<tf::Tensor>& in) { return conv1(in[0]); }, {s});
}

TEST_CASE("Pooling, flatten and global average pooling", "[keras][layers]") {
    const tf::Tensor x = random_f64({2, 4, 6, 3});
    check_close(kl::MaxPooling2D()(x), tf::nn::max_pool2d(x, 2, 2, "VALID"));
    check_close(kl::MaxPooling2D(3, 1, "same")(x), tf::nn::max_pool2d(x, 3, 1, "SAME"));
    check_close(kl::AveragePooling2D(2)(x), tf::nn::avg_pool2d(x, 2, 2, "VALID"));
    check_close(kl::GlobalAveragePooling2D()(x), tf::reduce_mean(x, {1, 2}));
    CHECK(kl::Flatten()(x).shape() == tf::Shape{2, 72});
    CHECK(kl::Flatten()(tf::ones({5})).shape() == tf::Shape{5, 1});
}

TEST_CASE("Dropout is the identity unless training, and seeded masks are reproducible",
          "[keras][layers]") {
    const tf::Tensor x = tf::ones({1000});
    tf::random::set_seed(5);
    kl::Dropout drop(0.25, 7);
    check_close(drop(x), x);
    const tf::Tensor a = drop(x, true), b = drop(x, true);
    const double kept =
        tf::reduce_mean(tf::cast(tf::not_equal(a, tf::zeros_like(a)), tf::float32)).item<double>();
    CHECK(kept == Approx(0.75).margin(0.05));
    CHECK(tf::reduce_max(a).item<double>() == Approx(1 / 0.75));
    CHECK(a.to_vector<float>() != b.to_vector<float>());  // a new mask per call
    tf::random::set_seed(5);  // restarts the seeded streams: the same masks again
    kl::Dropout again(0.25, 7);
    CHECK(again(x, true).to_vector<float>() == a.to_vector<float>());
}

TEST_CASE("BatchNormalization: batch statistics when training, moving ones otherwise",
          "[keras][layers][normalization]") {
    kl::BatchNormalization bn({.momentum = 0.9});
    const tf::Tensor x = random_f64({8, 3}, -2, 3);
    const tf::Tensor y = bn(x, true);
    CHECK(bn.variables().size() == 4);
    CHECK(bn.trainable_variables().size() == 2);
    CHECK(bn.count_params() == 12);
    auto [mean, var] = tf::nn::moments(x, {0});
    check_close(y, (x - mean) / tf::sqrt(var + 1e-3), 1e-10, 1e-10);
    check_close(bn.moving_mean().value(), mean * 0.1, 1e-12, 1e-12);
    check_close(bn.moving_variance().value(), 0.9 + var * 0.1, 1e-12, 1e-12);
    // Inference: the moving statistics, which do not change.
    const tf::Tensor mm = bn.moving_mean().value();
    check_close(bn(x), (x - mm) / tf::sqrt(bn.moving_variance().value() + 1e-3), 1e-10, 1e-10);
    check_close(bn.moving_mean().value(), mm);
    check_gradients(
        [&](const std::vector<tf::Tensor>& in) { return bn(in[0], true); }, {x}, 1e-5, 1e-7);
    check_variable_gradients([&] { return bn(x, true); }, bn.trainable_variables());
    // Channels first: axis 1 of [N, C, H, W].
    kl::BatchNormalization bn1({.axis = 1});
    const tf::Tensor x4 = random_f64({2, 3, 2, 2});
    auto [m4, v4] = tf::nn::moments(x4, {0, 2, 3}, true);
    check_close(bn1(x4, true), (x4 - m4) / tf::sqrt(v4 + 1e-3), 1e-10, 1e-10);
}

TEST_CASE("LayerNormalization normalizes each example over its axes",
          "[keras][layers][normalization]") {
    kl::LayerNormalization ln;
    const tf::Tensor x = random_f64({4, 6}, -1, 2);
    const tf::Tensor y = ln(x);
    auto [mean, var] = tf::nn::moments(x, {-1}, true);
    check_close(y, (x - mean) / tf::sqrt(var + 1e-3), 1e-10, 1e-10);
    CHECK(ln.count_params() == 12);
    check_gradients([&](const std::vector<tf::Tensor>& in) { return ln(in[0]); }, {x}, 1e-5, 1e-7);
    check_variable_gradients([&] { return ln(x); }, ln.variables());
    kl::LayerNormalization ln2({.axis = {1, 2}});
    const tf::Tensor x3 = random_f64({2, 3, 4});
    CHECK(ln2(x3).shape() == x3.shape());
    CHECK(ln2.gamma().shape() == tf::Shape{3, 4});
}

TEST_CASE("Embedding looks up rows and has a sparse gradient", "[keras][layers]") {
    kl::Embedding emb(10, 4);
    const tf::Tensor ids = tf::constant({{1, 3}, {3, 9}});
    const tf::Tensor y = emb(ids);
    CHECK(y.shape() == tf::Shape{2, 2, 4});
    CHECK(emb.count_params() == 40);
    check_close(tf::reshape(tf::slice(y, {0, 1, 0}, {1, 1, 4}), {4}),
                tf::reshape(tf::slice(emb.embeddings().value(), {3, 0}, {1, 4}), {4}));
    tf::GradientTape tape;
    const tf::Tensor loss = tf::reduce_sum(emb(ids));
    const tf::Gradient g = tape.gradient(loss, emb.embeddings());
    REQUIRE(g.is_sparse());
    CHECK(g.sparse().indices.num_elements() == 4);
    CHECK(tf::reduce_sum(g.dense()).item<double>() == Approx(16));
    CHECK(emb(tf::constant({2.0f})).shape() == tf::Shape{1, 4});  // float ids are cast
}

TEST_CASE("MultiHeadAttention matches the attention formula, with masks",
          "[keras][layers][attention]") {
    kl::MultiHeadAttention mha(2, 3, {.value_dim = 2});
    const tf::Tensor q = random_f64({2, 4, 5}), v = random_f64({2, 3, 6}, -1, 1, 2);
    const tf::Tensor y = mha(q, v);
    CHECK(y.shape() == tf::Shape{2, 4, 5});
    const int64_t params = (5 * 6 + 6) + (6 * 6 + 6) + (6 * 4 + 4) + (4 * 5 + 5);
    CHECK(mha.count_params() == params);
    const auto vars = mha.variables();
    REQUIRE(vars.size() == 8);
    CHECK(vars[0].name() == mha.name() + "/query/kernel");
    CHECK(vars[6].name() == mha.name() + "/attention_output/kernel");
    CHECK(vars[0].shape() == tf::Shape{5, 2, 3});
    CHECK(vars[6].shape() == tf::Shape{2, 2, 5});

    // The reference: per head h, softmax(q_h k_h^T / sqrt(3)) v_h, then the output projection.
    auto proj = [](const tf::Tensor& x, const tf::Variable& w, const tf::Variable& b) {
        const tf::Shape& s = w.shape();
        return tf::reshape(
            tf::matmul(tf::reshape(x, {-1, s[0]}), tf::reshape(w, tf::Shape{s[0], s[1] * s[2]})) +
                tf::reshape(b, tf::Shape{s[1] * s[2]}),
            tf::Shape{x.shape()[0], x.shape()[1], s[1], s[2]});
    };
    auto reference = [&](const tf::Tensor& mask) {
        const tf::Tensor qh = tf::transpose(proj(q, vars[0], vars[1]), {0, 2, 1, 3});
        const tf::Tensor kh = tf::transpose(proj(v, vars[2], vars[3]), {0, 2, 1, 3});
        const tf::Tensor vh = tf::transpose(proj(v, vars[4], vars[5]), {0, 2, 1, 3});
        tf::Tensor logits = tf::matmul(qh, kh, false, true) / std::sqrt(3.0);
        if (mask.defined())
            logits = logits + (1.0 - tf::cast(tf::expand_dims(mask, 1), tf::float64)) * -1e9;
        const tf::Tensor o = tf::transpose(tf::matmul(tf::nn::softmax(logits), vh), {0, 2, 1, 3});
        return tf::reshape(
            tf::matmul(tf::reshape(o, {8, 4}), tf::reshape(vars[6], tf::Shape{4, 5})) +
                vars[7].value(),
            tf::Shape{2, 4, 5});
    };
    check_close(y, reference({}), 1e-10, 1e-12);
    // Random, with key 0 always visible (a fully masked row is where the two mask rules differ).
    const tf::Tensor mask =
        tf::concat({tf::greater(tf::ones({2, 4, 1}), tf::zeros({2, 4, 1})),
                    tf::greater(random_f64({2, 4, 2}, 0, 1, 9), tf::constant(0.3, tf::float64))},
                   -1);
    check_close(mha(q, v, {}, mask), reference(mask), 1e-10, 1e-12);
    check_variable_gradients([&] { return mha(q, v, {}, mask); }, vars, 1e-5, 1e-8);
    check_gradients(
        [&](const std::vector<tf::Tensor>& in) { return mha(in[0], in[1]); }, {q, v}, 1e-5, 1e-8);

    // Causal self-attention: output t must not change when inputs after t change.
    kl::MultiHeadAttention self(2, 3);
    const tf::Tensor x = random_f64({1, 5, 4});
    const tf::Tensor out = self(x, x, {}, {}, true);
    const tf::Tensor x2 =
        tf::concat({tf::slice(x, {0, 0, 0}, {1, 3, 4}), random_f64({1, 2, 4}, -1, 1, 5)}, 1);
    const tf::Tensor out2 = self(x2, x2, {}, {}, true);
    check_close(
        tf::slice(out2, {0, 0, 0}, {1, 3, 4}), tf::slice(out, {0, 0, 0}, {1, 3, 4}), 1e-10, 1e-12);
    CHECK(tf::reduce_max(tf::abs(out2 - out)).item<double>() > 1e-6);
    CHECK_THROWS_WITH(self(tf::ones({1, 5, 3}, tf::float64), x), Catch::Contains("axis -1"));
}

TEST_CASE("Every layer runs on the GPU and matches the CPU", "[keras][layers][gpu]") {
    if (!tf::cuda::is_available()) {
        WARN("no usable GPU: the layers' GPU check is skipped");
        return;
    }
    const tf::Device gpu = tf::Device::cuda(0);
    auto both = [&](auto make, const tf::Tensor& x, bool training) {
        auto cpu_layer = make();
        auto gpu_layer = make();
        const tf::Tensor on_cpu = (*cpu_layer)(x, training);
        const tf::Tensor on_gpu = (*gpu_layer)(x.to(gpu), training);
        REQUIRE(on_gpu.device() == gpu);
        for (const tf::Variable& v : gpu_layer->variables())
            CHECK(v.device() == gpu);
        // Same weights, so the same outputs: copy the CPU layer's weights over.
        const auto cv = cpu_layer->variables();
        auto gv = gpu_layer->variables();
        for (std::size_t i = 0; i < cv.size(); ++i)
            gv[i].assign(cv[i].value().to(gpu));
        check_close((*gpu_layer)(x.to(gpu), training).cpu(), (*cpu_layer)(x, training), 1e-4, 1e-5);
        tf::GradientTape tape;
        const tf::Tensor loss = tf::reduce_sum(tf::square((*gpu_layer)(x.to(gpu), training)));
        const auto grads = tape.gradient(loss, gpu_layer->trainable_variables());
        for (const auto& g : grads)
            CHECK(g.dense().device() == gpu);
    };
    const tf::Tensor img = tf::random::uniform({2, 6, 6, 3});
    both([] { return std::make_shared<kl::Dense>(4, kl::DenseOptions{.activation = "gelu"}); },
         tf::random::uniform({3, 5}),
         false);
    both([] { return std::make_shared<kl::Conv2D>(4, 3, kl::Conv2DOptions{.padding = "same"}); },
         img,
         false);
    both([] { return std::make_shared<kl::Conv1D>(4, 3, kl::Conv2DOptions{.padding = "causal"}); },
         tf::random::uniform({2, 7, 3}),
         false);
    both([] { return std::make_shared<kl::BatchNormalization>(); }, img, true);
    both([] { return std::make_shared<kl::LayerNormalization>(); }, img, false);
    both([] { return std::make_shared<kl::MultiHeadAttention>(2, 4); },
         tf::random::uniform({2, 5, 6}),
         false);
    both([] { return std::make_shared<kl::Embedding>(10, 3); }, tf::constant({1, 4, 9}), false);
    kl::MultiHeadAttention causal(2, 4);
    const tf::Tensor x = tf::random::uniform({1, 4, 6}).to(gpu);
    CHECK(causal(x, x, {}, {}, true).device() == gpu);
    kl::MaxPooling2D pool;
    CHECK(pool(img.to(gpu)).device() == gpu);
}
