// The code blocks of docs/nn.md's einsum, sorting and conv1d / conv2d_transpose /
// depthwise_conv2d sections, compiled and run as a test. Exits 1 if a result is not what the
// page says. Laid out as in the page (tests/docs/check_code_blocks.py compares them).
// clang-format off
#include <tapeflow/ops/conv.hpp>
#include <tapeflow/ops/sort.hpp>
#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;

int main() {
    auto x = tf::random::normal({1, 8, 8, 3});
    auto seq = tf::random::normal({2, 10, 3});
    auto k1 = tf::random::normal({3, 3, 4});
    auto wt = tf::random::normal({3, 3, 2, 3});
    auto wd = tf::random::normal({3, 3, 3, 2});
    auto a = tf::nn::conv1d(seq, k1, /*stride=*/1, "SAME");           // seq [N,W,C], k1 [KW,C,O]
    auto b = tf::nn::conv2d_transpose(x, wt, {1, 16, 16, 2}, 2);      // wt [KH,KW,out,in], SAME
    auto c = tf::nn::depthwise_conv2d(x, wd, 1, "SAME");              // wd [KH,KW,C,M]: C*M channels
    fmt::print("{} {} {}\n", a.shape(), b.shape(), c.shape());
    bool ok = a.shape() == tf::Shape{2, 10, 4} && b.shape() == tf::Shape{1, 16, 16, 2} &&
              c.shape() == tf::Shape{1, 8, 8, 6};

    auto q = tf::random::normal({2, 5, 4, 8});
    auto k = tf::random::normal({2, 7, 4, 8});
    auto m = tf::constant({{1.0F, 2.0F}, {3.0F, 4.0F}});
    auto logits = tf::constant({{0.5F, 2.0F, -1.0F, 2.0F, 0.0F, 3.0F}});
    auto scores = tf::einsum("bqhd,bkhd->bhqk", {q, k});               // attention logits
    auto trace = tf::einsum("ii", {m});                                 // implicit output: a scalar
    auto [values, indices] = tf::math::top_k(logits, /*k=*/5);        // int32 indices
    auto ranked = tf::argsort(logits, -1, "DESCENDING");
    fmt::print("{} {} {} {}\n", scores.shape(), trace.item<float>(), indices, ranked);
    ok = ok && scores.shape() == tf::Shape{2, 4, 5, 7} && trace.item<float>() == 5.0F &&
         indices.to_vector<int32_t>() == std::vector<int32_t>{5, 1, 3, 0, 4} &&
         ranked.to_vector<int32_t>() == std::vector<int32_t>{5, 1, 3, 0, 4, 2} &&
         values.to_vector<float>()[0] == 3.0F;
    return ok ? 0 : 1;
}
