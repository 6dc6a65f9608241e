// tf.custom_gradient from C++: log(1 + e^x) with a numerically stable gradient (TensorFlow's own
// example: the automatic gradient of the naive formula is NaN at x = 100), and a gradient that is
// clipped on the way back. Exits 1 unless the gradients come out as expected.
#include <cmath>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;

namespace {

// log(1 + e^x); its gradient 1 - 1 / (1 + e^x) stays finite where e^x overflows.
tf::Tensor log1pexp(const tf::Tensor& x) {
    return tf::custom_gradient(
        {x},
        [](const std::vector<tf::Tensor>& in) { return tf::log(1.f + tf::exp(in[0])); },
        [](const std::vector<tf::Tensor>& in,
           const tf::Tensor& /*output*/,
           const tf::Tensor& upstream) {
            return std::vector<tf::Tensor>{upstream * (1.f - 1.f / (1.f + tf::exp(in[0])))};
        });
}

// The identity on the way forward; on the way back the gradient is clipped to norm 1.
tf::Tensor clip_gradient_norm(const tf::Tensor& x) {
    return tf::custom_gradient(
        {x},
        [](const std::vector<tf::Tensor>& in) { return tf::identity(in[0]); },
        [](const std::vector<tf::Tensor>&, const tf::Tensor&, const tf::Tensor& upstream) {
            return std::vector<tf::Tensor>{tf::clip_by_norm(upstream, 1.0)};
        });
}

}  // namespace

int main() {
    auto x = tf::constant({0.f, 100.f});
    tf::GradientTape naive_tape;
    naive_tape.watch(x);
    auto naive = tf::log(1.f + tf::exp(x));
    auto naive_grad = naive_tape.gradient(naive, x).dense().to_vector<float>();

    tf::GradientTape tape;
    tape.watch(x);
    auto y = log1pexp(x);
    auto grad = tape.gradient(y, x).dense().to_vector<float>();
    fmt::print("d/dx log(1 + e^x) at [0, 100]: naive [{}, {}], custom [{}, {}]\n",
               naive_grad[0],
               naive_grad[1],
               grad[0],
               grad[1]);

    auto v = tf::constant({3.f, 4.f});
    tf::GradientTape clip_tape;
    clip_tape.watch(v);
    auto loss = tf::reduce_sum(10.f * clip_gradient_norm(v));
    auto clipped = clip_tape.gradient(loss, v).dense().to_vector<float>();
    fmt::print(
        "gradient of sum(10 * v) clipped to norm 1: [{:.3f}, {:.3f}]\n", clipped[0], clipped[1]);

    bool ok = std::isnan(naive_grad[1]) && std::abs(grad[0] - 0.5f) < 1e-6f &&
              std::abs(grad[1] - 1.f) < 1e-6f && std::abs(clipped[0] - 0.7071f) < 1e-3f &&
              std::abs(clipped[1] - 0.7071f) < 1e-3f;
    return ok ? 0 : 1;
}
