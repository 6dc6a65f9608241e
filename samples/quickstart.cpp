// The README's quick start: create tensors, inspect them, move them, read them back.
#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;

int main() {
    auto x = tf::constant({{1.f, 2.f}, {3.f, 4.f}});  // float32, shape (2, 2)
    fmt::print("{}\n", x);
    fmt::print("shape={} dtype={} device={}\n", x.shape(), x.dtype(), x.device());

    tf::random::set_seed(1);
    auto w = tf::random::truncated_normal({2, 2}, 0.0, 0.1);  // reproducible initial weights
    std::vector<float> values = w.to_vector<float>();
    fmt::print("first weight: {:.6f}\n", values[0]);

    auto ids = tf::one_hot(tf::constant({2, 0}), 3);  // [[0 0 1] [1 0 0]]
    fmt::print("{}\n", ids.cast(tf::int32));
    return 0;
}
