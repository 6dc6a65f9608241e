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

// "How jacobians are computed": the vectorized jacobian equals the looped one.
bool jacobians_agree() {
    auto x = tf::random::normal({1, 256}, 0, 1, tf::float32, 1);
    auto w = tf::random::normal({256, 256}, 0, 0.06, tf::float32, 2);
    auto b = tf::zeros({256});
    tf::GradientTape tape;
    tape.watch(x);                                   // x: [1, 256]
    auto y = tf::tanh(tf::matmul(x, w) + b);         // y: [1, 256]
    tf::Tensor j = tape.jacobian(y, x);              // [1, 256, 1, 256], one backward walk

    tf::GradientTape looped(/*persistent=*/true);    // the loop needs a persistent tape
    looped.watch(x);
    auto y2 = tf::tanh(tf::matmul(x, w) + b);
    auto pause = looped.stop_recording();            // TF: call it after the `with` block
    tf::Tensor same = looped.jacobian(y2, x, {.experimental_use_pfor = false});  // 256 walks
    const double diff = tf::reduce_max(tf::abs(j - same)).item<float>();
    fmt::print("jacobian {} (vectorized - looped: max {})\n", j.shape(), diff);
    return j.shape() == tf::Shape{1, 256, 1, 256} && diff < 1e-5;
}

// "Forward mode": the heat-equation residual of u(t, x) = exp(-t) sin(x), an exact solution.
bool heat_residual_vanishes() {
    auto net = [](const tf::Tensor& p) {
        auto tx = tf::unstack(p, 1);
        return tf::expand_dims(tf::exp(tf::negative(tx[0])) * tf::sin(tx[1]), 1);
    };
    auto points = tf::constant({{0.1, 0.4}, {0.7, -1.2}, {1.5, 2.0}});
    auto e_t = tf::constant({{1., 0.}, {1., 0.}, {1., 0.}});
    auto e_x = tf::constant({{0., 1.}, {0., 1.}, {0., 1.}});
    // points [n, 2]: columns t and x. e_t, e_x: [n, 2] with ones in one column.
    tf::autodiff::ForwardAccumulator outer({points}, {e_x});
    tf::autodiff::ForwardAccumulator inner({points}, {e_x});
    const tf::Tensor u = net(points);                 // [n, 1]
    const tf::Tensor u_x = inner.jvp(u);              // du/dx
    const tf::Tensor u_xx = outer.jvp(u_x);           // d2u/dx2: the outer one saw inner's JVPs
    tf::Tensor u_t;
    {
        tf::autodiff::ForwardAccumulator time({points}, {e_t});
        u_t = time.jvp(net(points));
    }
    const tf::Tensor residual = tf::reduce_mean(tf::square(u_t - u_xx));
    fmt::print("heat residual {}\n", residual.item<double>());
    return residual.item<double>() < 1e-20;
}

}  // namespace

int main() {
    auto dw = first_gradient(tf::ones({4, 3}));
    fmt::print("dw {}\n", dw);
    return dw.shape() == tf::Shape{3, 2} && jacobians_agree() && heat_residual_vanishes() ? 0 : 1;
}
