// Linear regression as the TF1 tutorials wrote it: y = w x + b fitted by
// tf.train.GradientDescentOptimizer with an exponentially decaying learning rate driven by the
// global step. Exits 1 unless w and b are recovered.
#include <cmath>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;

int main() {
    tf::random::set_seed(0);
    auto x = tf::random::uniform({200, 1}, -1, 1);
    auto y = 2.0f * x + 0.5f + tf::random::normal({200, 1}, 0, 0.05);

    tf::Variable w(tf::zeros({1, 1}), {.name = "w"});
    tf::Variable b(tf::zeros({1}), {.name = "b"});
    tf::Variable global_step = tf::train::get_or_create_global_step();

    // learning_rate = 0.5 * 0.9^(global_step / 50), as tf.train.exponential_decay(0.5, global_step,
    // 50, 0.9, staircase=True): given the Variable, it reads the step at every apply
    tf::train::GradientDescentOptimizer optimizer(
        tf::train::exponential_decay(0.5, global_step, 50, 0.9, true));

    for (int i = 0; i < 300; ++i) {
        auto loss = optimizer.minimize(
            [&] { return tf::losses::mean_squared_error(y, tf::matmul(x, w) + b); },
            {},
            global_step);
        if (i % 50 == 0)
            fmt::print("step {:3}: loss {:.5f}, learning rate {:.4f}\n",
                       tf::train::global_step(global_step),
                       loss.item<float>(),
                       optimizer.current_learning_rate());
    }
    float wv = w.value().to_vector<float>()[0], bv = b.value().to_vector<float>()[0];
    fmt::print("w = {:.3f} (true 2), b = {:.3f} (true 0.5), global step {}\n",
               wv,
               bv,
               tf::train::global_step(global_step));
    bool ok = std::abs(wv - 2.f) < 0.05f && std::abs(bv - 0.5f) < 0.05f &&
              tf::train::global_step(global_step) == 300;
    return ok ? 0 : 1;
}
