// tf::nn::layer_norm: values against a float64 composite of the definition, gradients against
// finite differences and the composite's tape gradients, second and third derivatives, the 16-bit
// dtypes, non-trailing axes and bad arguments.
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
using tf::testing::check_gradients;
using tf::testing::random_f64;

// (x - mean) / sqrt(var + eps) * gamma + beta, gamma and beta broadcast against the normalized
// axes (given in `param_shape`, the shape that broadcasts them).
tf::Tensor reference(const tf::Tensor& x,
                     const tf::Tensor& gamma,
                     const tf::Tensor& beta,
                     const tf::Axes& axes,
                     double eps,
                     const tf::Shape& param_shape) {
    const tf::Tensor mean = tf::reduce_mean(x, axes, true);
    const tf::Tensor var = tf::reduce_mean(tf::square(x - mean), axes, true);
    tf::Tensor y = (x - mean) * tf::rsqrt(var + eps);
    if (gamma.defined()) y = y * tf::reshape(gamma, param_shape);
    if (beta.defined()) y = y + tf::reshape(beta, param_shape);
    return y;
}

void check_close(const tf::Tensor& a, const tf::Tensor& b, double tol) {
    REQUIRE(a.shape() == b.shape());
    const std::vector<double> x = tf::cast(a, tf::float64).to_vector<double>();
    const std::vector<double> y = tf::cast(b, tf::float64).to_vector<double>();
    double worst = 0;
    for (std::size_t i = 0; i < x.size(); ++i)
        worst = std::max(worst, std::abs(x[i] - y[i]));
    INFO("max abs difference " << worst);
    CHECK(worst <= tol);
}

}  // namespace

TEST_CASE("layer_norm matches its definition over trailing and other axes", "[layer_norm]") {
    struct Case {
        tf::Shape x;
        tf::Axes axes;
        tf::Shape param;  // gamma's shape
        tf::Shape bcast;  // the shape that broadcasts it against x
    };
    const std::vector<Case> cases = {
        {{5, 7}, -1, {7}, {1, 7}},
        {{3, 4, 33}, -1, {33}, {1, 1, 33}},
        {{2, 3, 5}, std::vector<int64_t>{1, 2}, {3, 5}, {1, 3, 5}},
        {{4, 6, 3}, 1, {6}, {1, 6, 1}},  // not the last axis: transposed
        {{3, 4, 5}, std::vector<int64_t>{0, 2}, {3, 5}, {3, 1, 5}},
        {{300, 1029}, -1, {1029}, {1, 1029}},  // many rows, odd width
    };
    for (const auto& c : cases) {
        INFO("x " << c.x.debug_string());
        const tf::Tensor x = random_f64(c.x, -2, 3, 1);
        const tf::Tensor gamma = random_f64(c.param, 0.5, 1.5, 2);
        const tf::Tensor beta = random_f64(c.param, -1, 1, 3);
        check_close(tf::nn::layer_norm(x, gamma, beta, c.axes, 1e-3),
                    reference(x, gamma, beta, c.axes, 1e-3, c.bcast),
                    1e-12);
        check_close(tf::nn::layer_norm(x, tf::Tensor(), tf::Tensor(), c.axes, 1e-5),
                    reference(x, {}, {}, c.axes, 1e-5, c.bcast),
                    1e-12);
    }
}

TEST_CASE("layer_norm gradients match finite differences", "[layer_norm][gradcheck]") {
    const tf::Tensor x = random_f64({4, 6}, -1, 1, 4);
    const tf::Tensor gamma = random_f64({6}, 0.5, 1.5, 5);
    const tf::Tensor beta = random_f64({6}, -1, 1, 6);
    const auto f = [](const Tensors& in) {
        return tf::nn::layer_norm(in[0], in[1], in[2], -1, 1e-3);
    };
    check_gradients(f, {x, gamma, beta}, 1e-6, 1e-8);
    const auto g = [](const Tensors& in) {
        return tf::nn::layer_norm(in[0], in[1], in[2], std::vector<int64_t>{0, 2}, 1e-2);
    };
    check_gradients(g,
                    {random_f64({3, 2, 4}, -1, 1, 7),
                     random_f64({3, 4}, 0.5, 1.5, 8),
                     random_f64({3, 4}, -1, 1, 9)},
                    1e-6,
                    1e-8);
}

TEST_CASE("layer_norm's fused backward matches the composite's tape gradients", "[layer_norm]") {
    const tf::Tensor x = random_f64({64, 300}, -3, 3, 10);
    const tf::Tensor gamma = random_f64({300}, 0.5, 1.5, 11);
    const tf::Tensor beta = random_f64({300}, -1, 1, 12);
    const tf::Tensor w = random_f64({64, 300}, -1, 1, 13);
    std::vector<tf::Gradient> fused, composite;
    {
        tf::GradientTape tape;
        tape.watch(std::vector<tf::Tensor>{x, gamma, beta});
        fused =
            tape.gradient(tf::reduce_sum(tf::nn::layer_norm(x, gamma, beta) * w), {x, gamma, beta});
    }
    {
        tf::GradientTape tape;
        tape.watch(std::vector<tf::Tensor>{x, gamma, beta});
        const tf::Tensor y = reference(x, gamma, beta, -1, 1e-3, {1, 300});
        composite = tape.gradient(tf::reduce_sum(y * w), {x, gamma, beta});
    }
    for (std::size_t i = 0; i < 3; ++i)
        check_close(fused[i].dense(), composite[i].dense(), 1e-10);
}

TEST_CASE("layer_norm has exact second and third derivatives", "[layer_norm][gradcheck]") {
    const auto f = [](const Tensors& in) {
        return tf::nn::layer_norm(in[0], in[1], in[2], -1, 1e-2);
    };
    const Tensors in = {
        random_f64({3, 5}, -1, 1, 14), random_f64({5}, 0.5, 1.5, 15), random_f64({5}, -1, 1, 16)};
    check_gradients(gradient_fn(f, 0), in, 1e-5, 1e-7);  // Hessian-vector products through x
    check_gradients(gradient_fn(f, 1), in, 1e-5, 1e-7);  // ... through gamma
    check_gradients(gradient_fn(gradient_fn(f, 0), 0), in, 1e-4, 1e-6);  // third order
}

TEST_CASE("layer_norm in float32 and the 16-bit floats", "[layer_norm]") {
    const tf::Tensor x = random_f64({37, 130}, -2, 6, 17);
    const tf::Tensor gamma = random_f64({130}, 0.5, 1.5, 18);
    const tf::Tensor beta = random_f64({130}, -1, 1, 19);
    const tf::Tensor want = reference(x, gamma, beta, -1, 1e-3, {1, 130});
    const std::vector<std::pair<tf::DType, double>> types = {
        {tf::float32, 1e-5}, {tf::float16, 2e-2}, {tf::bfloat16, 1e-1}};
    for (const auto& [dtype, tol] : types) {
        INFO(tf::dtype_name(dtype));
        const tf::Tensor y =
            tf::nn::layer_norm(tf::cast(x, dtype), tf::cast(gamma, dtype), tf::cast(beta, dtype));
        CHECK(y.dtype() == dtype);
        check_close(y, want, tol);
        tf::GradientTape tape;
        const tf::Tensor xd = tf::cast(x, dtype);
        tape.watch(xd);
        const tf::Tensor dx =
            tape.gradient(tf::reduce_sum(tf::square(tf::nn::layer_norm(xd, {}, {}))), xd).dense();
        CHECK(dx.dtype() == dtype);
    }
    // Statistics in float32: a float16 row with a large common offset keeps its spread.
    const tf::Tensor offset = tf::cast(x + 100.0, tf::float16);
    const tf::Tensor y16 = tf::nn::layer_norm(offset, {}, {}, -1, 1e-6);
    check_close(y16, reference(tf::cast(offset, tf::float64), {}, {}, -1, 1e-6, {1, 130}), 2e-2);
}

TEST_CASE("layer_norm rejects bad arguments", "[layer_norm][errors]") {
    const tf::Tensor x = tf::zeros({2, 3});
    check_throws_with([&] { tf::nn::layer_norm(x, tf::ones({4}), {}); }, "gamma", "[3]");
    check_throws_with(
        [&] { tf::nn::layer_norm(x, {}, tf::ones({3}, tf::float64)); }, "beta", "LayerNorm");
    check_throws_with([&] { tf::nn::layer_norm(x, {}, {}, 2); }, "LayerNorm");
    check_throws_with(
        [&] {
            tf::nn::layer_norm(x, {}, {}, std::vector<int64_t>{1, -1});
        },
        "repeat");
    check_throws_with([&] { tf::nn::layer_norm(x, {}, {}, -1, -1.0); }, "epsilon");
    check_throws_with(
        [&] {
            tf::nn::layer_norm(tf::zeros({2, 3}, tf::int32), {}, {});
        },
        "LayerNorm");
}
