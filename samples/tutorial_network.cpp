// TensorFlow 1's classic first network, line by line: w1 and w2 from
// tf.random_normal(..., stddev=1, seed=1), x -> relu(x w1) -> relu(. w2) without biases, the
// clipped cross-entropy -mean(y * log(clip(yhat, 1e-10, 1))), AdamOptimizer(0.001), 128 points from
// numpy's RandomState(1) labelled x1 + x2 < 1, batches of 10 in order, 11000 steps, and the loss on
// all the data every 1000 steps.
//
// tapeflow's random numbers are TensorFlow's, so the weights are the ones the tutorial prints and
// the losses follow TensorFlow's (other numbers leave all three relu units dead here, and the loss
// never moves). Exits 1 unless the weights are TensorFlow's and the loss falls a hundredfold.
#include <algorithm>
#include <random>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;

namespace {

// numpy.random.RandomState(seed).rand(rows, cols): MT19937 seeded with init_genrand (which is what
// std::mt19937's seeding is), two 32-bit outputs per 53-bit double.
std::vector<double> numpy_rand(uint32_t seed, int64_t count) {
    std::mt19937 mt(seed);
    std::vector<double> out(static_cast<std::size_t>(count));
    for (double& x : out) {
        const double a = mt() >> 5, b = mt() >> 6;
        x = (a * 67108864.0 + b) / 9007199254740992.0;
    }
    return out;
}

}  // namespace

int main() {
    constexpr int64_t kDatasetSize = 128, kBatchSize = 10;
    // TF1 graph mode: each tf.random_normal(seed=1) is its own kernel, starting the stream
    // (DEFAULT_GRAPH_SEED, 1) anew; in tapeflow, set_seed(kDefaultGraphSeed) restarts it.
    tf::random::set_seed(tf::random::kDefaultGraphSeed);
    tf::Variable w1(tf::random::normal({2, 3}, 0, 1, tf::float32, 1), {.name = "w1"});
    tf::random::set_seed(tf::random::kDefaultGraphSeed);
    tf::Variable w2(tf::random::normal({3, 1}, 0, 1, tf::float32, 1), {.name = "w2"});
    fmt::print("w1 = {}\nw2 = {}\n", w1.value(), w2.value());
    const bool tensorflow_weights =
        w1.value().to_vector<float>() ==
        std::vector<float>{
            -0.8113182f, 1.4845988f, 0.06532937f, -2.4427042f, 0.0992484f, 0.5912243f};

    // rdm = RandomState(1); X = rdm.rand(128, 2); Y = [[int(x1 + x2 < 1)] for (x1, x2) in X]
    const std::vector<double> points = numpy_rand(1, kDatasetSize * 2);
    std::vector<float> x_values(points.begin(), points.end()), y_values;
    for (int64_t i = 0; i < kDatasetSize; ++i) {
        y_values.push_back(points[static_cast<std::size_t>(2 * i)] +
                               points[static_cast<std::size_t>(2 * i + 1)] <
                           1);
    }
    const tf::Tensor X = tf::constant(x_values, {kDatasetSize, 2});
    const tf::Tensor Y = tf::constant(y_values, {kDatasetSize, 1});

    auto cross_entropy = [&](const tf::Tensor& x, const tf::Tensor& y) {
        const tf::Tensor a = tf::nn::relu(tf::matmul(x, w1));
        const tf::Tensor yhat = tf::nn::relu(tf::matmul(a, w2));
        return -tf::reduce_mean(y * tf::log(tf::clip_by_value(yhat, 1e-10, 1.0)));
    };
    tf::train::AdamOptimizer optimizer(0.001);
    float first = 0, loss = 0;
    for (int64_t i = 0; i < 11000; ++i) {
        const int64_t start = (i * kBatchSize) % kDatasetSize;
        const int64_t end = std::min(start + kBatchSize, kDatasetSize);
        const tf::Tensor x = tf::slice(X, {start, 0}, {end - start, 2});
        const tf::Tensor y = tf::slice(Y, {start, 0}, {end - start, 1});
        optimizer.minimize([&] { return cross_entropy(x, y); });
        if (i % 1000 == 0) {
            loss = cross_entropy(X, Y).item<float>();
            if (i == 0) first = loss;
            fmt::print("After {} training step(s), cross entropy on all data is {:g}\n", i, loss);
        }
    }
    fmt::print("w1 = {}\nw2 = {}\n", w1.value(), w2.value());
    return tensorflow_weights && loss < first / 100 ? 0 : 1;
}
