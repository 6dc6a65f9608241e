// tf::nn::dot_product_attention: values and gradients against a float64 composite of Keras'
// definition (matmul, masked softmax, matmul), finite differences, masks, the causal band, bias,
// fully masked rows, sizes that do not divide the kernels' blocks, higher derivatives, the 16-bit
// dtypes and bad shapes.
#include <algorithm>
#include <cmath>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

#include "nn/nn_testing.hpp"
#include "support/gradcheck.hpp"

namespace {

namespace tf = tapeflow;
using nn_testing::check_throws_with;
using nn_testing::gradient_fn;
using nn_testing::Tensors;
using tf::nn::DotProductAttentionOptions;
using tf::testing::check_gradients;
using tf::testing::random_f64;

// Keras' _dot_product_attention_xla in float64: einsum BTNH,BSNH->BNTS, scale, bias, where(mask,
// logits, -0.7 * 3.38953e38), softmax, einsum BNTS,BSNH->BTNH.
tf::Tensor reference(const tf::Tensor& q,
                     const tf::Tensor& k,
                     const tf::Tensor& v,
                     const DotProductAttentionOptions& o) {
    const auto heads = [](const tf::Tensor& t) {
        return tf::transpose(t, {0, 2, 1, 3});
    };
    const int64_t t = q.shape()[1];
    const int64_t s = k.shape()[1];
    // Keras: scale = 1 / sqrt(float32(H)) in float32, then converted to the logits' dtype.
    const double scale = o.scale.value_or(1.0F / std::sqrt(static_cast<float>(q.shape()[3])));
    tf::Tensor logits = tf::matmul(heads(q), heads(k), false, true) * scale;
    if (o.bias.defined()) logits = logits + o.bias;
    tf::Tensor keep = o.mask;
    if (o.is_causal) {
        const tf::Tensor band =
            tf::greater_equal(tf::reshape(tf::range(0, t, 1, tf::int32), {t, 1}),
                              tf::reshape(tf::range(0, s, 1, tf::int32), {1, s}));
        keep = keep.defined() ? tf::logical_and(keep, band) : band;
    }
    if (keep.defined())
        logits = tf::where(keep, logits, tf::scalar_like(logits, -0.7 * 3.38953e38));
    return heads(tf::matmul(tf::nn::softmax(logits), heads(v)));
}

double max_diff(const tf::Tensor& a, const tf::Tensor& b) {
    REQUIRE(a.shape() == b.shape());
    const std::vector<double> x = tf::cast(a, tf::float64).to_vector<double>();
    const std::vector<double> y = tf::cast(b, tf::float64).to_vector<double>();
    double worst = 0;
    for (std::size_t i = 0; i < x.size(); ++i)
        worst = std::max(worst, std::abs(x[i] - y[i]));
    return worst;
}

struct Case {
    const char* name;
    int64_t b, t, s, n, h;
    bool causal = false;
    tf::Shape bias;  // rank 0: none
    tf::Shape mask;
    double mask_density = 0.7;
};

DotProductAttentionOptions options_for(const Case& c, uint64_t seed) {
    DotProductAttentionOptions o;
    o.is_causal = c.causal;
    if (c.bias.rank() > 0) o.bias = random_f64(c.bias, -1, 1, seed);
    if (c.mask.rank() > 0)
        o.mask = tf::less(random_f64(c.mask, 0, 1, seed + 1), tf::constant(c.mask_density));
    return o;
}

const std::vector<Case> kCases = {
    {"plain", 2, 5, 7, 3, 4},
    {"odd blocks", 2, 67, 131, 2, 5},
    {"causal", 1, 150, 150, 2, 8, true},
    {"two key blocks, H not a multiple of the SIMD width", 1, 140, 300, 2, 20},
    {"causal T > S", 1, 140, 70, 1, 3, true},
    {"causal T < S", 1, 70, 200, 1, 3, true},
    {"bias [N, T, S]", 2, 9, 13, 3, 4, false, {3, 9, 13}},
    {"bias [B, 1, 1, S] and mask [T, S]", 2, 70, 140, 2, 4, false, {2, 1, 1, 140}, {70, 140}},
    {"mask [B, N, T, S] with causal", 2, 33, 33, 2, 6, true, {}, {2, 2, 33, 33}, 0.5},
    {"sparse mask: fully masked rows",
     1,
     80,
     150,
     2,
     4,
     false,
     {1, 80, 150},
     {1, 2, 80, 150},
     0.01},
};

}  // namespace

TEST_CASE("dot_product_attention matches Keras' composite in float64", "[attention]") {
    for (const Case& c : kCases) {
        INFO(c.name);
        const tf::Tensor q = random_f64({c.b, c.t, c.n, c.h}, -2, 2, 1);
        const tf::Tensor k = random_f64({c.b, c.s, c.n, c.h}, -2, 2, 2);
        const tf::Tensor v = random_f64({c.b, c.s, c.n, c.h}, -2, 2, 3);
        const DotProductAttentionOptions o = options_for(c, 4);
        const tf::Tensor w = random_f64({c.b, c.t, c.n, c.h}, -1, 1, 6);
        const Tensors in = {q, k, v};
        Tensors sources = in;
        if (o.bias.defined()) sources.push_back(o.bias);
        std::vector<tf::Gradient> fused, want;
        tf::Tensor y, y_ref;
        {
            tf::GradientTape tape;
            tape.watch(sources);
            y = tf::nn::dot_product_attention(q, k, v, o);
            fused = tape.gradient(tf::reduce_sum(y * w), sources);
        }
        {
            tf::GradientTape tape;
            tape.watch(sources);
            y_ref = reference(q, k, v, o);
            want = tape.gradient(tf::reduce_sum(y_ref * w), sources);
        }
        CHECK(max_diff(y, y_ref) < 1e-12);
        for (std::size_t i = 0; i < sources.size(); ++i) {
            INFO("gradient " << i);
            CHECK(max_diff(fused[i].dense(), want[i].dense()) < 1e-11);
        }
    }
}

TEST_CASE("a row with every key masked averages the values", "[attention]") {
    const tf::Tensor q = random_f64({1, 3, 1, 2}, -1, 1, 7);
    const tf::Tensor k = random_f64({1, 4, 1, 2}, -1, 1, 8);
    const tf::Tensor v = random_f64({1, 4, 1, 2}, -1, 1, 9);
    DotProductAttentionOptions o;
    o.mask = tf::constant(
        std::vector<bool>{
            true, false, true, false, false, false, false, false, false, false, false, true},
        {3, 4});
    const std::vector<double> y = tf::nn::dot_product_attention(q, k, v, o).to_vector<double>();
    const std::vector<double> vs = v.to_vector<double>();
    CHECK(y[2] == Approx((vs[0] + vs[2] + vs[4] + vs[6]) / 4));  // row 1: the mean of v
    CHECK(y[3] == Approx((vs[1] + vs[3] + vs[5] + vs[7]) / 4));
    CHECK(y[4] == Approx(vs[6]));  // row 2 attends to key 3 only
}

TEST_CASE("dot_product_attention gradients match finite differences", "[attention][gradcheck]") {
    const Case c{"all options", 1, 5, 6, 2, 3, true, {1, 2, 5, 6}, {1, 1, 5, 6}, 0.6};
    const DotProductAttentionOptions o = options_for(c, 10);
    const auto f = [o](const Tensors& in) {
        DotProductAttentionOptions with_bias = o;
        with_bias.bias = in[3];
        return tf::nn::dot_product_attention(in[0], in[1], in[2], with_bias);
    };
    const Tensors in = {random_f64({1, 5, 2, 3}, -1, 1, 11),
                        random_f64({1, 6, 2, 3}, -1, 1, 12),
                        random_f64({1, 6, 2, 3}, -1, 1, 13),
                        o.bias};
    check_gradients(f, in, 1e-6, 1e-8);
    DotProductAttentionOptions scaled;
    scaled.scale = 0.37;
    check_gradients(
        [scaled](const Tensors& x) {
            return tf::nn::dot_product_attention(x[0], x[1], x[2], scaled);
        },
        {in[0], in[1], in[2]},
        1e-6,
        1e-8);
}

TEST_CASE("dot_product_attention has exact second and third derivatives",
          "[attention][gradcheck]") {
    const Case c{"all options", 1, 4, 5, 2, 3, true, {2, 4, 5}, {4, 5}, 0.7};
    const DotProductAttentionOptions o = options_for(c, 14);
    const auto f = [o](const Tensors& in) {
        DotProductAttentionOptions with_bias = o;
        with_bias.bias = in[3];
        return tf::nn::dot_product_attention(in[0], in[1], in[2], with_bias);
    };
    const Tensors in = {random_f64({1, 4, 2, 3}, -1, 1, 15),
                        random_f64({1, 5, 2, 3}, -1, 1, 16),
                        random_f64({1, 5, 2, 3}, -1, 1, 17),
                        o.bias};
    for (std::size_t wrt = 0; wrt < 4; ++wrt) {  // Hessian-vector products through each input
        INFO("wrt " << wrt);
        check_gradients(gradient_fn(f, wrt), in, 1e-5, 1e-7);
    }
    check_gradients(gradient_fn(gradient_fn(f, 0), 1), {in[0], in[1], in[2], in[3]}, 1e-4, 1e-6);
}

TEST_CASE("dot_product_attention in float32 and the 16-bit floats", "[attention]") {
    const tf::Tensor q = random_f64({2, 70, 2, 16}, -1, 1, 18);
    const tf::Tensor k = random_f64({2, 90, 2, 16}, -1, 1, 19);
    const tf::Tensor v = random_f64({2, 90, 2, 16}, -1, 1, 20);
    DotProductAttentionOptions o64;
    o64.is_causal = true;
    const tf::Tensor want = reference(q, k, v, o64);
    const std::vector<std::pair<tf::DType, double>> types = {
        {tf::float32, 1e-5}, {tf::float16, 5e-3}, {tf::bfloat16, 4e-2}};
    for (const auto& [dtype, tol] : types) {
        INFO(tf::dtype_name(dtype));
        const tf::Tensor qd = tf::cast(q, dtype);
        tf::GradientTape tape;
        tape.watch(qd);
        const tf::Tensor y =
            tf::nn::dot_product_attention(qd, tf::cast(k, dtype), tf::cast(v, dtype), o64);
        CHECK(y.dtype() == dtype);
        CHECK(max_diff(y, want) < tol);
        CHECK(tape.gradient(tf::reduce_sum(y), qd).dense().dtype() == dtype);
    }
}

// The float32 kernels compute their block products with their own register-blocked gemm (float64
// keeps BLAS): values and every gradient against the float64 kernels over the same cases.
TEST_CASE("dot_product_attention in float32 matches float64 with gradients", "[attention]") {
    for (const Case& c : kCases) {
        INFO(c.name);
        const DotProductAttentionOptions o64 = options_for(c, 4);
        DotProductAttentionOptions o32 = o64;
        if (o64.bias.defined()) o32.bias = tf::cast(o64.bias, tf::float32);
        const Tensors in64 = {random_f64({c.b, c.t, c.n, c.h}, -2, 2, 1),
                              random_f64({c.b, c.s, c.n, c.h}, -2, 2, 2),
                              random_f64({c.b, c.s, c.n, c.h}, -2, 2, 3)};
        const tf::Tensor w = random_f64({c.b, c.t, c.n, c.h}, -1, 1, 6);
        const auto run = [&](const Tensors& in, const DotProductAttentionOptions& o) {
            Tensors sources = in;
            if (o.bias.defined()) sources.push_back(o.bias);
            tf::GradientTape tape;
            tape.watch(sources);
            const tf::Tensor y = tf::nn::dot_product_attention(in[0], in[1], in[2], o);
            Tensors out = {y};
            for (const tf::Gradient& g :
                 tape.gradient(tf::reduce_sum(y * tf::cast(w, y.dtype())), sources))
                out.push_back(g.dense());
            return out;
        };
        Tensors in32;
        for (const tf::Tensor& t : in64)
            in32.push_back(tf::cast(t, tf::float32));
        const Tensors want = run(in64, o64);
        const Tensors got = run(in32, o32);
        REQUIRE(got.size() == want.size());
        for (std::size_t i = 0; i < got.size(); ++i) {
            INFO("output " << i << " (0: y, then the gradients)");
            CHECK(got[i].dtype() == tf::float32);
            CHECK(max_diff(got[i], want[i]) < 2e-4);
        }
    }
}

TEST_CASE("dot_product_attention rejects incompatible shapes", "[attention][errors]") {
    const tf::Tensor q = tf::zeros({2, 5, 3, 4});
    const tf::Tensor kv = tf::zeros({2, 6, 3, 4});
    check_throws_with(
        [&] {
            tf::nn::dot_product_attention(tf::zeros({5, 3, 4}), kv, kv);
        },
        "DotProductAttention",
        "[5,3,4]");
    check_throws_with(
        [&] {
            tf::nn::dot_product_attention(q, tf::zeros({2, 6, 2, 4}), tf::zeros({2, 6, 2, 4}));
        },
        "heads",
        "[2,6,2,4]");
    check_throws_with(
        [&] {
            tf::nn::dot_product_attention(q, kv, tf::zeros({2, 7, 3, 4}));
        },
        "incompatible shapes",
        "[2,7,3,4]");
    check_throws_with(
        [&] {
            tf::nn::dot_product_attention(q, kv, tf::zeros({2, 6, 3, 4}, tf::float64));
        },
        "DotProductAttention");
    DotProductAttentionOptions bad_mask;
    bad_mask.mask = tf::ones({5, 6});
    check_throws_with([&] { tf::nn::dot_product_attention(q, kv, kv, bad_mask); },
                      "mask must be bool");
    DotProductAttentionOptions bad_bias;
    bad_bias.bias = tf::zeros({5, 7});
    check_throws_with(
        [&] { tf::nn::dot_product_attention(q, kv, kv, bad_bias); }, "[5,7]", "[2,3,5,6]");
}

TEST_CASE("the fused backward runs unless a tape records the backward pass", "[attention]") {
    const auto count = [](const tf::Graph& g, const std::string& op) {
        return std::count_if(
            g.nodes().begin(), g.nodes().end(), [&](const tf::GraphNode& n) { return n.op == op; });
    };
    const tf::Tensor q = random_f64({1, 4, 1, 2}, -1, 1, 21);
    const tf::Tensor kv = random_f64({1, 5, 1, 2}, -1, 1, 22);
    const auto gradient = [&] {
        tf::GradientTape tape;
        tape.watch(q);
        return tape.gradient(tf::reduce_sum(tf::nn::dot_product_attention(q, kv, kv)), q).dense();
    };
    tf::Tensor composite;
    {
        tf::GradientTape outer(true);
        outer.watch(q);
        composite = gradient();
        // The outer tape recorded the composite gradient (differentiable), not the fused kernel.
        CHECK(count(outer.graph(), "Softmax") == 1);
        CHECK(count(outer.graph(), "DotProductAttentionGrad") == 0);
    }
    tf::GradientTape unrelated(true);  // records, but watches nothing the gradient reads
    const tf::Tensor fused = gradient();
    CHECK(unrelated.graph().num_nodes() == 0);
    CHECK(max_diff(fused, composite) < 1e-14);
}
