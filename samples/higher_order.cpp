// Higher-order gradients with nested tapes: the second derivative of x^3, and the Hessian of
// f(x) = sum(x^2 * x_shifted) computed as the jacobian of the gradient. Exits 1 unless both match
// the closed forms.
#include <cmath>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;

int main() {
    // d²/dx² x³ = 6x
    auto x = tf::constant(2.f);
    tf::GradientTape outer;
    outer.watch(x);
    tf::Tensor dy_dx;
    {
        tf::GradientTape inner;
        inner.watch(x);
        auto y = x * x * x;
        dy_dx = inner.gradient(y, x);  // 3x² = 12, recorded by the outer tape
    }
    auto d2y_dx2 = outer.gradient(dy_dx, x).dense();  // 6x = 12
    fmt::print(
        "y = x^3 at x = 2: dy/dx = {}, d2y/dx2 = {}\n", dy_dx.item<float>(), d2y_dx2.item<float>());

    // Hessian of f(v) = v0² v1 + v1³: [[2 v1, 2 v0], [2 v0, 6 v1]]
    auto v = tf::constant({1.f, 2.f});
    tf::GradientTape hessian_tape;
    hessian_tape.watch(v);
    tf::Tensor grad;
    {
        tf::GradientTape tape;
        tape.watch(v);
        auto v0 = tf::gather(v, tf::constant(0)), v1 = tf::gather(v, tf::constant(1));
        auto f = v0 * v0 * v1 + v1 * v1 * v1;
        grad = tape.gradient(f, v);  // [2 v0 v1, v0² + 3 v1²] = [4, 13]
    }
    auto hessian = hessian_tape.jacobian(grad, v);  // shape (2, 2)
    fmt::print("gradient {}\nHessian {}\n", grad, hessian);

    auto h = hessian.to_vector<float>();
    bool ok = std::abs(dy_dx.item<float>() - 12.f) < 1e-5f &&
              std::abs(d2y_dx2.item<float>() - 12.f) < 1e-5f &&
              h == std::vector<float>{4.f, 2.f, 2.f, 12.f};
    return ok ? 0 : 1;
}
