// The plugins load into a program linked against libtapeflow.so: every symbol they take from
// libtapeflow is exported (TAPEFLOW_PLUGIN_API), and their versions match. Test programs that link
// tapeflow statically cannot show a missing export, so this one links the shared library.
// Usage: plugins_load <cuda built: 0/1> <mpi built: 0/1>
#include <cstdio>
#include <string>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;

int main(int argc, char** argv) {
    const bool cuda_built = argc > 1 && std::string(argv[1]) == "1";
    const bool mpi_built = argc > 2 && std::string(argv[2]) == "1";
    int failures = 0;
    if (cuda_built) {
        try {
            (void)tf::constant(1.f).to(tf::Device::cuda(0));
            std::printf("ok: libtapeflow_cuda.so loaded (a GPU is present)\n");
        } catch (const tf::errors::InvalidArgumentError& e) {
            std::printf("ok: libtapeflow_cuda.so loaded (no usable GPU: %s)\n", e.what());
        } catch (const tf::errors::OpError& e) {
            std::printf("FAIL: libtapeflow_cuda.so did not load: %s\n", e.what());
            ++failures;
        }
    }
    if (mpi_built != tf::distribute::mpi_built()) {
        std::printf("FAIL: mpi_built() is %d, expected %d (libtapeflow_mpi.so %s)\n",
                    tf::distribute::mpi_built(),
                    mpi_built,
                    mpi_built ? "did not load" : "loaded");
        ++failures;
    } else {
        std::printf("ok: MPI transport %s\n", mpi_built ? "loaded" : "not built");
    }
    return failures == 0 ? 0 : 1;
}
