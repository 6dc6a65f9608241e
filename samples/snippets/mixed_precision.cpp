// The code blocks of docs/mixed-precision.md, compiled and run as a test (tests/docs checks that
// the page's blocks occur here). Exits 1 unless the step was applied unscaled.
// Laid out as in the page, not by clang-format (tests/docs/check_code_blocks.py compares them).
// clang-format off
#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;

int main() {
    const tf::Tensor x = tf::random::normal({16, 8}, 0, 1, tf::float32, 1);
    tf::Variable w(tf::random::normal({8, 4}, 0, 1, tf::float32, 2), {.name = "w"});
    const tf::Tensor before = w.value();
namespace mp = tf::keras::mixed_precision;
auto opt = std::make_shared<mp::LossScaleOptimizer>(std::make_shared<tf::keras::optimizers::Adam>());
tf::GradientTape tape;
const tf::Tensor loss = tf::reduce_mean(tf::square(tf::matmul(x, w.read_value())));
const tf::Gradient g = tape.gradient(opt->scale_loss(loss), w);  // the gradient of loss * scale
opt->apply_gradients({{g, w}});                                  // unscaled, or skipped
    // Adam's first step moves every weight by about its learning rate, whatever the scale.
    const float moved = tf::reduce_max(tf::abs(w.value() - before)).item<float>();
    fmt::print("scale {} moved {}\n", opt->dynamic_scale().value().item<float>(), moved);
    return opt->iterations() == 1 && moved > 0.0005f && moved < 0.0015f ? 0 : 1;
}
