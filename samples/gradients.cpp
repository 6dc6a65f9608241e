// tf.gradients' options on a GradientTape: output_gradients (TF1's grad_ys), the aggregation
// methods, stop_gradient, several targets, unconnected gradients as zeros, and a persistent tape.
// Exits 1 unless every gradient has its closed-form value.
#include <cmath>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;

int main() {
    auto x = tf::constant({1.f, 2.f, 3.f});
    bool ok = true;

    // grad_ys: weight each output element's gradient (the vector of a vector-Jacobian product).
    {
        tf::GradientTape tape;
        tape.watch(x);
        auto y = x * x;
        auto g = tape.gradient(y, x, {.output_gradients = {tf::constant({1.f, 0.f, -1.f})}});
        fmt::print("grad_ys [1, 0, -1]: {}\n", g.dense());  // 2x * grad_ys = [2, 0, -6]
        ok = ok && g.dense().to_vector<float>() == std::vector<float>{2.f, 0.f, -6.f};
    }
    // Aggregation methods: x feeds three ops; each method sums the three contributions.
    for (auto method : {tf::AggregationMethod::add_n,
                        tf::AggregationMethod::experimental_tree,
                        tf::AggregationMethod::experimental_accumulate_n}) {
        tf::GradientTape tape;
        tape.watch(x);
        auto y = tf::reduce_sum(x * 2.f + tf::square(x) + tf::sin(x));
        auto g = tape.gradient(y, x, {.aggregation_method = method}).dense();  // 2 + 2x + cos(x)
        ok = ok && std::abs(g.to_vector<float>()[0] - (4.f + std::cos(1.f))) < 1e-5f;
    }
    // stop_gradient: the second factor is a constant for the backward pass.
    {
        tf::GradientTape tape;
        tape.watch(x);
        auto y = tf::reduce_sum(x * tf::stop_gradient(x));
        auto g = tape.gradient(y, x).dense();  // x, not 2x
        fmt::print("d/dx sum(x * stop_gradient(x)): {}\n", g);
        ok = ok && g.to_vector<float>() == std::vector<float>{1.f, 2.f, 3.f};
    }
    // Several targets are summed; a source that no target uses gets zeros when asked for.
    {
        tf::GradientTape tape(/*persistent=*/true);
        auto unused = tf::constant(5.f);
        tape.watch(x);
        tape.watch(unused);
        auto a = tf::reduce_sum(x);
        auto b = tf::reduce_sum(3.f * x);
        auto paused = tape.stop_recording();  // like leaving TensorFlow's `with` block
        auto grads = tape.gradient({a, b},
                                   std::vector<tf::Tensor>{x, unused},
                                   {.unconnected_gradients = tf::UnconnectedGradients::zero});
        fmt::print("d(a + b)/dx: {}, d(a + b)/d unused: {}\n", grads[0].dense(), grads[1].dense());
        ok = ok && grads[0].dense().to_vector<float>() == std::vector<float>{4.f, 4.f, 4.f} &&
             grads[1].dense().item<float>() == 0.f;
        auto again = tape.gradient(a, x);  // a persistent tape answers more than once
        ok = ok && again.dense().to_vector<float>() == std::vector<float>{1.f, 1.f, 1.f};
    }
    return ok ? 0 : 1;
}
