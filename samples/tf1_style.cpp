// TF1-style training code, construct for construct: get_variable inside variable_scope (and reuse),
// name_scope for op names, compute_gradients -> clip_by_global_norm -> apply_gradients with a
// global step, and an ExponentialMovingAverage of the weights evaluated at the end.
#include <cmath>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;

namespace {

// A Variable lives while a handle to it does. TF1's graph held every variable in its
// GLOBAL_VARIABLES collection; in C++ the program holds them, here in a list of its own.
std::vector<tf::Variable> model_variables;

// A dense layer whose variables live in a variable scope, as tf.compat.v1 layers did.
tf::Tensor dense(const tf::Tensor& x, int64_t units, std::string_view scope, bool reuse) {
    auto vs = tf::variable_scope(scope, reuse);
    auto w = tf::get_variable("weights", {.shape = tf::Shape{x.shape()[1], units}});
    auto b =
        tf::get_variable("biases", {.shape = tf::Shape{units}, .initializer = tf::zeros({units})});
    if (!reuse) model_variables.insert(model_variables.end(), {w, b});
    return tf::matmul(x, w) + b;
}

}  // namespace

int main() {
    tf::random::set_seed(1);
    auto x = tf::random::uniform({256, 4}, -1, 1);
    auto y = tf::reduce_sum(x * tf::constant({1.f, -2.f, 0.5f, 3.f}), 1, true);

    auto model = [&](bool reuse) {
        auto ns = tf::name_scope("model");
        auto h = tf::tanh(dense(x, 8, "layer1", reuse));
        return dense(h, 1, "layer2", reuse);
    };
    model(false);  // creates the weights and biases of layer1 and layer2
    for (const auto& v : tf::trainable_variables())
        fmt::print("variable {} {}\n", v.name(), v.shape());

    tf::Variable global_step = tf::train::get_or_create_global_step();
    tf::train::MomentumOptimizer optimizer(0.05, 0.9);
    tf::train::ExponentialMovingAverage ema(0.99, {.num_updates = global_step});
    const std::vector<tf::Variable> weights = tf::trainable_variables();

    float first = 0, loss_value = 0, norm = 0;
    for (int step = 0; step < 400; ++step) {
        tf::Tensor loss;
        auto grads_and_vars = optimizer.compute_gradients([&] {
            loss = tf::losses::mean_squared_error(y, model(/*reuse=*/true));
            return loss;
        });
        std::vector<tf::Gradient> grads;
        for (const auto& gv : grads_and_vars)
            grads.push_back(gv.gradient);
        auto [clipped, global_norm] = tf::clip_by_global_norm(grads, 1.0);
        for (std::size_t i = 0; i < grads_and_vars.size(); ++i)
            grads_and_vars[i].gradient = clipped[i];
        optimizer.apply_gradients(grads_and_vars, global_step);
        ema.apply(weights);

        loss_value = loss.item<float>();
        norm = global_norm.item<float>();
        if (step == 0) first = loss_value;
        if (step % 100 == 0)
            fmt::print("step {:3}: loss {:.5f}, gradient norm {:.4f}\n", step, loss_value, norm);
    }

    // Evaluate with the averaged weights, as tf.train.Saver(ema.variables_to_restore()) would.
    for (const auto& v : weights)
        tf::Variable(v).assign(ema.average(v)->value());
    float averaged = tf::losses::mean_squared_error(y, model(true)).item<float>();
    fmt::print("final loss {:.5f}; with the moving averages {:.5f}; global step {}\n",
               loss_value,
               averaged,
               tf::train::global_step(global_step));
    fmt::print("shadow of layer1/weights: {}\n", ema.average_name(weights[0]));
    bool ok = loss_value < 0.05f * first && averaged < 0.1f * first &&
              tf::train::global_step(global_step) == 400;
    return ok ? 0 : 1;
}
