// The code block of docs/function.md, compiled and run as a test (tests/docs checks that the
// page's block occurs here). Exits 1 unless the step traced once and trained.
// Laid out as in the page, not by clang-format (tests/docs/check_code_blocks.py compares them).
// clang-format off
#include <tapeflow/tapeflow.hpp>
namespace tf = tapeflow;

int main() {
    tf::Variable w(tf::random::normal({3, 1}, 0, 0.1, tf::float32, 1), {.name = "w"});
    tf::train::AdamOptimizer opt(0.01);
    auto step = tf::function([&](const tf::Tensor& x, const tf::Tensor& y) {
        tf::GradientTape tape;
        tf::Tensor loss = tf::reduce_mean(tf::square(tf::matmul(x, w) - y));
        opt.apply_gradients({{tape.gradient(loss, w), w}});
        return loss;
    });
    const tf::Tensor x = tf::random::uniform({8, 3}), y = tf::random::uniform({8, 1});
    for (int i = 0; i < 100; ++i) step(x, y);   // traced on the first call, replayed after
    fmt::print("traces: {}\n", step.experimental_get_tracing_count());  // 1
    const float first = tf::reduce_mean(tf::square(tf::matmul(x, w) - y)).item<float>();
    return step.experimental_get_tracing_count() == 1 && first < 0.5f ? 0 : 1;
}
