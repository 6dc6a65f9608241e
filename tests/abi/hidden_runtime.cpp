// Run by run_hidden.sh with the CUDA Toolkit folder, NCCL and MPI hidden: a program linked against
// a CUDA- and MPI-enabled libtapeflow starts, trains on the CPU, and the requests for a GPU or for
// MPI raise errors that name the missing library. Modes: `cpu` (the default) and `mpirun`
// (pretends mpirun started it: then the missing MPI library is an error, not a size-1 group). A
// second argument names the plugins the build has ("cuda", "mpi", "cuda,mpi" or "none"); a build
// without one raises UnimplementedError, naming the configure option, where a hidden library is a
// NotFoundError or UnavailableError.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;

namespace {

int failures = 0;
bool cuda_built = true;  // from the second argument
bool mpi_built = true;

void check(bool ok, std::string_view what) {
    std::printf("%s: %.*s\n", ok ? "ok" : "FAIL", static_cast<int>(what.size()), what.data());
    if (!ok) ++failures;
}

bool mentions(const std::string& message, std::initializer_list<std::string_view> words) {
    for (std::string_view w : words) {
        if (message.find(w) == std::string::npos) return false;
    }
    return true;
}

void cpu_mode() {
    // A tape and an optimizer step: d/dw sum((x w)^2) at w = 1 is 2 x^T (x w) = [[48], [68]].
    auto x = tf::constant({{1.f, 2.f}, {3.f, 4.f}});
    tf::Variable w(tf::ones({2, 1}), {.name = "w"});
    tf::GradientTape tape;
    auto loss = tf::reduce_sum(tf::square(tf::matmul(x, w)));
    auto dw = tape.gradient(loss, w).dense();
    tf::train::GradientDescentOptimizer opt(0.01);
    opt.apply_gradients({{dw, w}});
    const auto after = w.value().to_vector<float>();
    check(loss.item<float>() == 58.f && after.size() == 2 && std::abs(after[0] - 0.52f) < 1e-6f &&
              std::abs(after[1] - 0.32f) < 1e-6f,
          fmt::format("tape + optimizer step on the CPU (loss {}, w [{}, {}])",
                      loss.item<float>(),
                      after.at(0),
                      after.at(1)));
    check(!tf::cuda::is_available() && tf::cuda::device_count() == 0,
          "tf::cuda::is_available() is false");
    try {
        (void)x.to(tf::Device::cuda(0));
        check(false, "a GPU tensor raises an error");
    } catch (const tf::errors::NotFoundError& e) {
        std::printf("  %s\n", e.what());
        check(cuda_built && mentions(e.what(), {"libtapeflow_cuda.so", "libcudart.so", "install"}),
              "a GPU tensor raises NotFoundError naming the CUDA runtime and how to install it");
    } catch (const tf::errors::UnimplementedError& e) {
        std::printf("  %s\n", e.what());
        check(!cuda_built && mentions(e.what(), {"without CUDA", "-Dcuda=enabled"}),
              "a build without CUDA raises UnimplementedError naming -Dcuda=enabled");
    }
    check(tf::distribute::size() == 1 && !tf::distribute::mpi_built(),
          "tf::distribute runs as one process without MPI");
    check(tf::distribute::all_reduce(x).to_vector<float>() == x.to_vector<float>(),
          "all_reduce of one process is the identity");
}

void mpirun_mode() {
    setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
    try {
        tf::distribute::init();
        check(false, "init under mpirun raises an error");
    } catch (const tf::errors::UnavailableError& e) {
        std::printf("  %s\n", e.what());
        check(mpi_built && mentions(e.what(), {"libtapeflow_mpi.so", "libmpi", "install"}),
              "init under mpirun raises UnavailableError naming the MPI library");
    } catch (const tf::errors::UnimplementedError& e) {
        std::printf("  %s\n", e.what());
        check(!mpi_built && mentions(e.what(), {"MPI"}),
              "a build without MPI raises UnimplementedError under mpirun");
    }
}

}  // namespace

int main(int argc, char** argv) {
    const std::string mode = argc > 1 ? argv[1] : "cpu";
    const std::string built = argc > 2 ? argv[2] : "cuda,mpi";
    cuda_built = built.find("cuda") != std::string::npos;
    mpi_built = built.find("mpi") != std::string::npos;
    if (mode == "mpirun") {
        mpirun_mode();
    } else {
        cpu_mode();
    }
    return failures == 0 ? 0 : 1;
}
