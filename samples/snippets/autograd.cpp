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

}  // namespace

int main() {
    auto dw = first_gradient(tf::ones({4, 3}));
    fmt::print("dw {}\n", dw);
    return dw.shape() == tf::Shape{3, 2} ? 0 : 1;
}
