// Jacobian benchmarks, tapeflow and (when built with it) LibTorch in the same run: the jacobian of
// y = tanh(x W + b) for x [1, 256] (y [1, 256]) and the batch_jacobian of the same layer on a batch
// x [64, 32]; each vectorized (one backward walk, docs/autograd.md "How jacobians are computed")
// and looped (one walk per target element / column: the "*_loop" workloads). Forward included.
//   build/benchmarks/bench_jacobian --benchmark_format=json > jac.json && benchmarks/compare.py
//   jac.json
#include <cmath>
#include <string>

#include <benchmark/benchmark.h>

#include <tapeflow/tapeflow.hpp>

#include "bench_start.hpp"
#include "torch_cases.hpp"
#include "torch_jacobian_cases.hpp"

namespace tf = tapeflow;

namespace {

void tanh_layer(
    benchmark::State& state, int64_t batch, int64_t n, bool per_example, bool vectorized) {
    const tf::Tensor x = tf::random::normal({batch, n}, 0, 1, tf::float32, 1);
    const tf::Tensor w =
        tf::random::normal({n, n}, 0, 1 / std::sqrt(static_cast<double>(n)), tf::float32, 2);
    const tf::Tensor b = tf::random::normal({n}, 0, 0.1, tf::float32, 3);
    const tf::JacobianOptions options{.experimental_use_pfor = vectorized};
    for (auto _ : state) {
        tf::GradientTape tape(/*persistent=*/!vectorized);  // the loop needs a persistent tape
        tape.watch(x);
        const tf::Tensor y = tf::tanh(tf::matmul(x, w) + b);
        // As TensorFlow code calls jacobian after its `with` block: the persistent tape must not
        // record the loop's own gradient ops (each walk would then scan a growing tape).
        const tf::StopRecording pause = tape.stop_recording();
        benchmark::DoNotOptimize(per_example ? tape.batch_jacobian(y, x, options)
                                             : tape.jacobian(y, x, options));
    }
}

void register_case(
    const std::string& group, const std::string& name, int64_t batch, int64_t n, bool per_example) {
    for (const bool vectorized : {true, false}) {
        const std::string full = group + (vectorized ? "" : "_loop") + "/" + name + "/tapeflow";
        benchmark::RegisterBenchmark(full.c_str(), tanh_layer, batch, n, per_example, vectorized)
            ->UseRealTime()
            ->Unit(benchmark::kMicrosecond);
    }
}

}  // namespace

int main(int argc, char** argv) {
    start_side_by_side(&argc, argv, torch_cases::available());
    register_case("jacobian", "tanh_layer_1x256", 1, 256, false);
    torch_jacobian_cases::register_tanh_layer(256);
    register_case("batch_jacobian", "tanh_layer_64x32", 64, 32, true);
    torch_jacobian_cases::register_batch_tanh_layer(64, 32);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
