// Jacobians: tape.jacobian of a vector function, and tape.batch_jacobian of a layer applied to a
// batch (one jacobian per example). Exits 1 unless they match the closed forms.
#include <cmath>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;

int main() {
    // y = sin(x) element-wise: the jacobian is diag(cos(x)).
    auto x = tf::constant({0.f, 1.f, 2.f});
    tf::GradientTape tape;
    tape.watch(x);
    auto y = tf::sin(x);
    auto jacobian = tape.jacobian(y, x);  // shape (3, 3)
    fmt::print("jacobian of sin at [0, 1, 2]:\n{}\n", jacobian);

    // A linear layer on a batch of 4: each example's jacobian is W^T, shape (4, 2, 3).
    tf::random::set_seed(3);
    auto w = tf::random::normal({3, 2});
    auto batch = tf::random::normal({4, 3});
    tf::GradientTape batch_tape;
    batch_tape.watch(batch);
    auto out = tf::matmul(batch, w);
    auto per_example = batch_tape.batch_jacobian(out, batch);
    fmt::print("batch_jacobian shape {}\n", per_example.shape());

    bool ok = per_example.shape() == tf::Shape{4, 2, 3};
    auto j = jacobian.to_vector<float>();
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c)
            ok = ok && std::abs(j[r * 3 + c] - (r == c ? std::cos(float(r)) : 0.f)) < 1e-6f;
    auto wt = tf::transpose(w).to_vector<float>();
    auto pe = per_example.to_vector<float>();
    for (int b = 0; b < 4; ++b)
        for (int k = 0; k < 6; ++k)
            ok = ok && pe[b * 6 + k] == wt[k];
    return ok ? 0 : 1;
}
