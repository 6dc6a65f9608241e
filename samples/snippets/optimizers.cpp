// The code blocks of docs/optimizers.md, compiled and run as a test (tests/docs checks that the
// page's blocks occur here). Exits 1 if the slot is not what the page says.
// Laid out as in the page, not by clang-format (tests/docs/check_code_blocks.py compares them).
// clang-format off
#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;

int main() {
    auto x = tf::random::normal({32, 784});
    auto y = tf::random::normal({32, 10});
    tf::Variable w(tf::random::normal({784, 10}), {.name = "w"});
    tf::train::AdamOptimizer opt(0.001);
    auto loss = opt.minimize([&] { return tf::reduce_mean(tf::square(tf::matmul(x, w) - y)); });
    opt.get_slot(w, "m");          // the first-moment slot, named "w/Adam/m"
    auto slot = opt.get_slot(w, "m");
    fmt::print("loss {} slot {}\n", loss.item<float>(), slot ? slot->name() : "none");
    return slot && slot->name() == "w/Adam/m" ? 0 : 1;
}
