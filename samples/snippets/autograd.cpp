// The code blocks of docs/autograd.md, compiled and run as a test (tests/docs checks that the
// page's blocks occur here). Exits 1 if a result is not what the page says.
// Laid out as in the page, not by clang-format (tests/docs/check_code_blocks.py compares them).
// clang-format off
#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;

namespace {

tf::Tensor first_gradient(const tf::Tensor& x) {
    tf::Variable w(tf::random::normal({3, 2}), {.name = "w"});
    tf::GradientTape tape;                        // records until destroyed
    auto loss = tf::reduce_sum(tf::square(tf::matmul(x, w)));
    tf::Tensor dw = tape.gradient(loss, w);       // trainable variables read under the tape are watched
    return dw;
}

// "How jacobians are computed": the vectorized jacobian equals the looped one.
bool jacobians_agree() {
    auto x = tf::random::normal({1, 256}, 0, 1, tf::float32, 1);
    auto w = tf::random::normal({256, 256}, 0, 0.06, tf::float32, 2);
    auto b = tf::zeros({256});
    tf::GradientTape tape;
    tape.watch(x);                                   // x: [1, 256]
    auto y = tf::tanh(tf::matmul(x, w) + b);         // y: [1, 256]
    tf::Tensor j = tape.jacobian(y, x);              // [1, 256, 1, 256], one backward walk

    tf::GradientTape looped(/*persistent=*/true);    // the loop needs a persistent tape
    looped.watch(x);
    auto y2 = tf::tanh(tf::matmul(x, w) + b);
    auto pause = looped.stop_recording();            // TF: call it after the `with` block
    tf::Tensor same = looped.jacobian(y2, x, {.experimental_use_pfor = false});  // 256 walks
    const double diff = tf::reduce_max(tf::abs(j - same)).item<float>();
    fmt::print("jacobian {} (vectorized - looped: max {})\n", j.shape(), diff);
    return j.shape() == tf::Shape{1, 256, 1, 256} && diff < 1e-5;
}

}  // namespace

int main() {
    auto dw = first_gradient(tf::ones({4, 3}));
    fmt::print("dw {}\n", dw);
    return dw.shape() == tf::Shape{3, 2} && jacobians_agree() ? 0 : 1;
}
