// An outside program, built against the installed tapeflow with g++ and clang++ (pkg-config)
// and with CMake (find_package): formatting with fmt, an error caught across the library
// boundary, a gradient. Prints "consumer OK" when every check holds.
#include <cstring>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;

int main() {
    auto x = tf::constant({{1.f, 2.f}, {3.f, 4.f}});
    fmt::print("{}\n{} {} {} {}\n", x, x.shape(), x.dtype(), x.device(), tf::version());
    const std::string text = fmt::format("{}", tf::matmul(x, x));
    bool caught = false;
    try {
        tf::reshape(x, {3});
    } catch (const tf::errors::InvalidArgumentError& e) {
        caught = std::strstr(e.what(), "[Op:Reshape]") != nullptr;
    }
    tf::Variable w(tf::ones({2, 1}), {.name = "w"});
    tf::GradientTape tape;
    auto loss = tf::reduce_sum(tf::square(tf::matmul(x, w)));
    const auto dw = tape.gradient(loss, w).dense().to_vector<float>();
    const bool ok = x.num_elements() == 4 && text.find("[15. 22.]]") != std::string::npos &&
                    caught && dw.size() == 2 && dw[0] == 48.f && dw[1] == 68.f &&
                    std::strcmp(tf::version(), TAPEFLOW_VERSION_STRING) == 0;
    fmt::print("{}\n", ok ? "consumer OK" : "consumer FAILED");
    return ok ? 0 : 1;
}
