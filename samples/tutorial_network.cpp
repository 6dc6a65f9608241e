// The network of TensorFlow's original tutorial: 2 inputs -> 3 relu units -> 1 output, trained
// with Adam to tell whether x1 + x2 < 1, printing the loss every 1000 of 11000 steps. Exits 1
// unless the loss fell and the classifier is right on at least 95% of fresh points.
#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;

namespace {

// n random points in the unit square and their labels: 1 where x1 + x2 < 1, else 0.
std::pair<tf::Tensor, tf::Tensor> make_data(int64_t n) {
    auto x = tf::random::uniform({n, 2});
    auto below = tf::less(tf::reduce_sum(x, 1, /*keepdims=*/true), tf::constant(1.f));
    return {x, tf::cast(below, tf::float32)};
}

}  // namespace

int main() {
    tf::random::set_seed(2016);
    auto [x, y] = make_data(100);

    tf::Variable w1(tf::random::truncated_normal({2, 3}, 0, 0.5), {.name = "hidden/weights"});
    tf::Variable b1(tf::zeros({3}), {.name = "hidden/biases"});
    tf::Variable w2(tf::random::truncated_normal({3, 1}, 0, 0.5), {.name = "output/weights"});
    tf::Variable b2(tf::zeros({1}), {.name = "output/biases"});
    auto model = [&](const tf::Tensor& input) {
        auto hidden = tf::nn::relu(tf::matmul(input, w1) + b1);
        return tf::matmul(hidden, w2) + b2;
    };

    tf::train::AdamOptimizer optimizer(0.01);
    float first = 0, last = 0;
    for (int step = 0; step <= 11000; ++step) {
        auto loss = optimizer.minimize([&] { return tf::reduce_mean(tf::square(model(x) - y)); });
        last = loss.item<float>();
        if (step == 0) first = last;
        if (step % 1000 == 0) fmt::print("step {:5}: loss {:.5f}\n", step, last);
    }

    auto [test_x, test_y] = make_data(1000);
    auto predicted = tf::cast(tf::greater(model(test_x), tf::constant(0.5f)), tf::float32);
    float accuracy =
        tf::reduce_mean(tf::cast(tf::equal(predicted, test_y), tf::float32)).item<float>();
    fmt::print("accuracy on 1000 new points: {:.1f}%\n", 100 * accuracy);
    return last < 0.5f * first && accuracy >= 0.95f ? 0 : 1;
}
