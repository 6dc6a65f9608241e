// The smooth activations gelu (both forms), silu/swish, softsign and log_sigmoid: values against
// their closed forms in double, every dtype, stability for large |x|, float64 finite-difference
// gradients to the third order, deferred fusion with the other element-wise ops, and the errors.
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

#include "kernels/cpu/fusion.hpp"
#include "nn/nn_testing.hpp"
#include "support/gradcheck.hpp"

namespace tf = tapeflow;
using tf::testing::check_gradients;
using tf::testing::random_f64;

namespace {

using Tensors = std::vector<tf::Tensor>;

struct Activation {
    std::string name;
    std::function<tf::Tensor(const tf::Tensor&)> f;
    double (*reference)(double);
};

double gelu_ref(double x) {
    return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
}
double gelu_tanh_ref(double x) {
    return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
}
double silu_ref(double x) {
    return x / (1 + std::exp(-x));
}
double softsign_ref(double x) {
    return x / (1 + std::abs(x));
}
double log_sigmoid_ref(double x) {  // -log1p(e^-x), rewritten so that it never overflows
    return x < 0 ? x - std::log1p(std::exp(x)) : -std::log1p(std::exp(-x));
}

const std::vector<Activation>& activations() {
    static const std::vector<Activation> list = {
        {"gelu", [](const tf::Tensor& x) { return tf::nn::gelu(x); }, gelu_ref},
        {"gelu_approximate",
         [](const tf::Tensor& x) { return tf::nn::gelu(x, true); },
         gelu_tanh_ref},
        {"silu", [](const tf::Tensor& x) { return tf::nn::silu(x); }, silu_ref},
        {"swish", [](const tf::Tensor& x) { return tf::nn::swish(x); }, silu_ref},
        {"softsign", [](const tf::Tensor& x) { return tf::nn::softsign(x); }, softsign_ref},
        {"log_sigmoid",
         [](const tf::Tensor& x) { return tf::nn::log_sigmoid(x); },
         log_sigmoid_ref},
        {"math::log_sigmoid",
         [](const tf::Tensor& x) { return tf::math::log_sigmoid(x); },
         log_sigmoid_ref},
    };
    return list;
}

struct FusionThreshold {
    explicit FusionThreshold(int64_t n) : saved(tf::cpu::fusion::fusion_min_elements()) {
        tf::cpu::fusion::set_fusion_min_elements(n);
    }
    ~FusionThreshold() { tf::cpu::fusion::set_fusion_min_elements(saved); }
    int64_t saved;
};

}  // namespace

TEST_CASE("smooth activations match their closed forms in every float dtype", "[nn][smooth]") {
    // 1003 elements: the SIMD loops and their padded tail both run.
    const tf::Tensor x64 = random_f64({1003}, -9, 9, 21);
    const std::vector<double> x = x64.to_vector<double>();
    const std::vector<std::pair<tf::DType, double>> dtypes = {
        {tf::float64, 1e-13}, {tf::float32, 2e-6}, {tf::float16, 2e-3}, {tf::bfloat16, 1.6e-2}};
    for (const Activation& a : activations()) {
        for (const auto& [dtype, tol] : dtypes) {
            INFO(a.name << " in " << tf::dtype_name(dtype));
            const tf::Tensor xd = x64.cast(dtype);
            const tf::Tensor y = a.f(xd);
            REQUIRE(y.dtype() == dtype);
            const std::vector<double> xs = xd.cast(tf::float64).to_vector<double>();
            const std::vector<double> got = y.cast(tf::float64).to_vector<double>();
            for (std::size_t i = 0; i < xs.size(); ++i) {
                const double want = a.reference(xs[i]);
                CHECK(std::abs(got[i] - want) <= tol * std::max(1.0, std::abs(want)) + 1e-300);
            }
        }
    }
    // TensorFlow's values (tf.nn.gelu, tf.nn.silu, tf.nn.softsign, tf.math.log_sigmoid at 1.0).
    const tf::Tensor one = tf::constant({1.0});
    CHECK(tf::nn::gelu(one).item<double>() == Approx(0.8413447460685429).epsilon(1e-15));
    CHECK(tf::nn::gelu(one, true).item<double>() == Approx(0.8411919906082768).epsilon(1e-15));
    CHECK(tf::nn::silu(one).item<double>() == Approx(0.7310585786300049).epsilon(1e-15));
    CHECK(tf::nn::softsign(one).item<double>() == 0.5);
    CHECK(tf::math::log_sigmoid(one).item<double>() == Approx(-0.31326168751822286).epsilon(1e-15));
}

TEST_CASE("smooth activations stay finite and exact for large |x|", "[nn][smooth]") {
    for (tf::DType dtype : {tf::float32, tf::float64}) {
        INFO(tf::dtype_name(dtype));
        const tf::Tensor x = tf::constant({-1000.0, -100.0, 100.0, 1000.0}).cast(dtype);
        const auto ls = tf::nn::log_sigmoid(x).cast(tf::float64).to_vector<double>();
        CHECK(ls[0] == -1000);  // -softplus(1000) = -1000, not log(0) = -inf
        CHECK(ls[1] == -100);
        CHECK(ls[2] <= 0);
        CHECK(ls[2] > -1e-40);
        CHECK(ls[3] == 0);
        const auto si = tf::nn::silu(x).cast(tf::float64).to_vector<double>();
        CHECK(si[0] == 0);  // -1000 / (1 + e^1000) = -0, not NaN
        CHECK(si[1] == Approx(dtype == tf::float64 ? -100 * std::exp(-100.0) : 0.0));
        CHECK(si[2] == 100);
        CHECK(si[3] == 1000);
        for (bool approximate : {false, true}) {
            const auto g = tf::nn::gelu(x, approximate).cast(tf::float64).to_vector<double>();
            CHECK(g[0] == 0);
            CHECK(g[3] == 1000);
        }
        const auto ss = tf::nn::softsign(x).cast(tf::float64).to_vector<double>();
        CHECK(ss[3] == Approx(1000.0 / 1001.0));
        // The gradients at the extremes are finite too.
        for (const Activation& a : activations()) {
            tf::GradientTape tape;
            tape.watch(x);
            const tf::Tensor y = a.f(x);
            for (double g : tape.gradient(y, x).dense().cast(tf::float64).to_vector<double>()) {
                INFO(a.name);
                CHECK(std::isfinite(g));
            }
        }
    }
}

TEST_CASE("smooth activation gradients match finite differences to the third order",
          "[nn][smooth]") {
    const tf::Tensor x = random_f64({2, 7}, -4, 4, 5);
    for (const Activation& a : activations()) {
        SECTION(a.name) {
            const tf::testing::TensorFn f = [g = a.f](const Tensors& in) {
                return g(in[0]);
            };
            check_gradients(f, {x});
            check_gradients(nn_testing::gradient_fn(f), {x}, 1e-5, 1e-7);
            check_gradients(nn_testing::gradient_fn(nn_testing::gradient_fn(f)), {x}, 1e-4, 1e-6);
        }
    }
    SECTION("closed-form first derivatives") {
        const tf::Tensor t = tf::constant({-2.0, -0.5, 0.0, 0.5, 2.0});
        const auto xs = t.to_vector<double>();
        auto grad = [&](const std::function<tf::Tensor(const tf::Tensor&)>& f) {
            tf::GradientTape tape;
            tape.watch(t);
            return tape.gradient(f(t), t).dense().to_vector<double>();
        };
        const auto gelu_g = grad([](const tf::Tensor& v) { return tf::nn::gelu(v); });
        const auto silu_g = grad([](const tf::Tensor& v) { return tf::nn::silu(v); });
        const auto soft_g = grad([](const tf::Tensor& v) { return tf::nn::softsign(v); });
        const auto ls_g = grad([](const tf::Tensor& v) { return tf::nn::log_sigmoid(v); });
        for (std::size_t i = 0; i < xs.size(); ++i) {
            const double v = xs[i];
            const double phi = std::exp(-v * v / 2) / std::sqrt(2 * M_PI);
            const double s = 1 / (1 + std::exp(-v));
            CHECK(gelu_g[i] == Approx(0.5 * (1 + std::erf(v / std::sqrt(2.0))) + v * phi));
            CHECK(silu_g[i] == Approx(s * (1 + v * (1 - s))));
            CHECK(soft_g[i] == Approx(1 / ((1 + std::abs(v)) * (1 + std::abs(v)))));
            CHECK(ls_g[i] == Approx(1 - s));
        }
    }
}

TEST_CASE("smooth activations fuse with other element-wise ops", "[nn][smooth][fusion]") {
    for (tf::DType dtype : {tf::float32, tf::float64}) {
        const tf::Tensor a = tf::random::normal({3, 1000}, 0, 2, dtype, 8);
        for (const Activation& act : activations()) {
            INFO(act.name << " in " << tf::dtype_name(dtype));
            auto chain = [&] {
                return act.f(a * 2.0 + 1.0) - tf::exp(a);
            };
            tf::Tensor eager, fused;
            {
                FusionThreshold off(-1);
                eager = chain();
            }
            {
                FusionThreshold on(1);
                const tf::Tensor inner = act.f(a * 2.0);
                CHECK(inner.impl()->storage->deferred() != nullptr);  // the activation deferred
                fused = chain();
            }
            REQUIRE(eager.nbytes() == fused.nbytes());
            CHECK(std::memcmp(eager.raw_data(), fused.raw_data(), eager.nbytes()) == 0);
        }
    }
}

TEST_CASE("smooth activations reject non-float dtypes", "[nn][smooth][errors]") {
    const tf::Tensor i = tf::constant({1, 2});
    nn_testing::check_throws_with([&] { return tf::nn::gelu(i); }, "[Op:Gelu]", "int32");
    nn_testing::check_throws_with([&] { return tf::nn::gelu(i, true); }, "[Op:GeluApproximate]");
    nn_testing::check_throws_with([&] { return tf::nn::silu(i); }, "[Op:Silu]");
    nn_testing::check_throws_with([&] { return tf::nn::softsign(i); }, "[Op:Softsign]");
    nn_testing::check_throws_with([&] { return tf::math::log_sigmoid(i); }, "[Op:LogSigmoid]");
    CHECK_THROWS_AS(tf::nn::silu(tf::Tensor()), tf::errors::InvalidArgumentError);
}
