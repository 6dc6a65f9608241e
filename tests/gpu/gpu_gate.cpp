// Catch2 listener for the GPU suite: without a usable GPU the whole executable exits 77, which
// meson reports as SKIP, after printing why (Catch2 v2 has no SKIP()).
#define CATCH_CONFIG_EXTERNAL_INTERFACES
#include <cstdio>
#include <cstdlib>

#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

namespace {

struct GpuGate : Catch::TestEventListenerBase {
    using TestEventListenerBase::TestEventListenerBase;
    void testRunStarting(Catch::TestRunInfo const& /*info*/) override {
        // TAPEFLOW_GPU_TESTS_ON_CPU: the parity cases run against the CPU (a self-check of the
        // suite).
        if (!tapeflow::cuda::is_available() &&
            std::getenv("TAPEFLOW_GPU_TESTS_ON_CPU") == nullptr) {
            std::printf("SKIP: no usable CUDA GPU on this machine; the GPU tests did not run\n");
            std::fflush(stdout);
            std::_Exit(77);
        }
    }
};

}  // namespace

CATCH_REGISTER_LISTENER(GpuGate)
