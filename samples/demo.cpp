// The main demo (scripts/demo.sh): tensors, seeded random numbers and a typed error, printed the way
// TensorFlow prints them. Later milestones grow it into a full training run.
#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;

int main() {
    fmt::print("tapeflow {} — eager tensors with TensorFlow semantics\n\n", tf::version());

    auto m = tf::constant({{1.f, 2.f}, {3.f, 4.f}});
    fmt::print("A constant:\n{}\n\n", m);
    fmt::print("Integers, booleans, a range:\n{}\n{}\n{}\n\n", tf::constant({1, 2, 3}),
               tf::constant({true, false}), tf::range(0, 1, 0.25));
    fmt::print("one_hot of [0, 2, 1] with depth 3:\n{}\n\n", tf::one_hot(tf::constant({0, 2, 1}), 3));

    tf::random::set_seed(42);
    auto w = tf::random::normal({2, 3}, 0.0, 1.0, tf::float32);
    fmt::print("Seeded normal weights (set_seed(42)): the same on every run, thread count and device:\n{}\n\n", w);
    fmt::print("Uniform integers in [0, 10):\n{}\n\n", tf::random::uniform({8}, 0, 10, tf::int32));
    fmt::print("A large tensor is elided like NumPy:\n{}\n\n", tf::range(0, 2000, 1, tf::int32));

    fmt::print("CUDA available: {} ({} device(s))\n\n", tf::cuda::is_available(), tf::cuda::device_count());

    try {
        (void)m.item<float>();
    } catch (const tf::errors::InvalidArgumentError& e) {
        fmt::print("Errors are typed exceptions, never aborts:\n  {}: {}\n", tf::errors::code_name(e.code()), e.what());
    }
    try {
        (void)tf::range(0, 5, 0);
    } catch (const tf::errors::OpError& e) {
        fmt::print("  {}: {}\n", tf::errors::code_name(e.code()), e.what());
    }
    return 0;
}
