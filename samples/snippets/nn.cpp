// The code blocks of docs/nn.md, compiled and run as a test (tests/docs checks that the page's
// blocks occur here). Exits 1 if a shape is not what the page says.
// Laid out as in the page, not by clang-format (tests/docs/check_code_blocks.py compares them).
// clang-format off
#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;

int main() {
    auto x = tf::random::normal({1, 8, 8, 3});
    auto w = tf::random::normal({3, 3, 3, 4});
    auto y = tf::nn::conv2d(x, w, /*strides=*/2, "SAME");             // x [N,H,W,C], w [KH,KW,C,O]
    auto z = tf::nn::conv2d(x, w, {1, 2, 2, 1}, "VALID", "NHWC", /*dilations=*/1);
    auto e = tf::nn::conv2d(x, w, 1, tf::Paddings{{0, 0}, {1, 0}, {2, 1}, {0, 0}});   // explicit pads
    auto p = tf::nn::max_pool2d(x, /*ksize=*/2, /*strides=*/2, "SAME");
    fmt::print("{} {} {} {}\n", y.shape(), z.shape(), e.shape(), p.shape());
    bool ok = y.shape() == tf::Shape{1, 4, 4, 4} && z.shape() == tf::Shape{1, 3, 3, 4} &&
              e.shape() == tf::Shape{1, 7, 9, 4} && p.shape() == tf::Shape{1, 4, 4, 3};
    return ok ? 0 : 1;
}
