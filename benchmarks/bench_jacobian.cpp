// Jacobian benchmarks, tapeflow and (when built with it) LibTorch in the same run: the jacobian of
// y = tanh(x W + b) for x [1, 256] (y [1, 256]) and the batch_jacobian of the same layer on a batch
// x [64, 32]; each vectorized (one backward walk, docs/autograd.md "How jacobians are computed")
// and looped (one walk per target element / column: the "*_loop" workloads). Forward included.
// Forward mode (issue 30) on the MLP 784-512-512-10, batch 64, one thread: the forward pass, its
// JVP (forward under a ForwardAccumulator with a tangent on the input), one gradient of the loss
// and one Hessian-vector product of the loss (forward over reverse); the "mlp/*" workloads.
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

// The MLP 784-512-512-10 of docs/performance.md, batch 64, with its data.
struct Mlp {
    std::vector<tf::Variable> vars;
    tf::Tensor x = tf::random::normal({64, 784}, 0, 1, tf::float32, 11);
    tf::Tensor labels =
        tf::cast(tf::floor(tf::random::uniform({64}, 0, 10, tf::float32, 12)), tf::int32);
    Mlp() {
        const int64_t sizes[] = {784, 512, 512, 10};
        for (int l = 0; l < 3; ++l) {
            const double scale = 1 / std::sqrt(static_cast<double>(sizes[l]));
            vars.emplace_back(tf::random::normal(
                {sizes[l], sizes[l + 1]}, 0, scale, tf::float32, static_cast<uint64_t>(20 + l)));
            vars.emplace_back(tf::zeros({sizes[l + 1]}, tf::float32));
        }
    }
    tf::Tensor logits(const tf::Tensor& in) const {
        tf::Tensor h = in;
        for (std::size_t l = 0; l < 3; ++l) {
            h = tf::matmul(h, vars[2 * l].read_value()) + vars[2 * l + 1].read_value();
            if (l < 2) h = tf::nn::relu(h);
        }
        return h;
    }
    tf::Tensor loss() const {
        return tf::reduce_mean(tf::nn::sparse_softmax_cross_entropy_with_logits(labels, logits(x)));
    }
};

void mlp_forward(benchmark::State& state) {
    const Mlp mlp;
    for (auto _ : state)
        benchmark::DoNotOptimize(mlp.logits(mlp.x).to_vector<float>());
}

void mlp_jvp(benchmark::State& state) {
    const Mlp mlp;
    const tf::Tensor tangent = tf::random::normal({64, 784}, 0, 1, tf::float32, 13);
    for (auto _ : state) {
        const tf::autodiff::ForwardAccumulator acc({mlp.x}, {tangent});
        benchmark::DoNotOptimize(acc.jvp(mlp.logits(mlp.x)).to_vector<float>());
    }
}

void mlp_gradient(benchmark::State& state) {
    const Mlp mlp;
    for (auto _ : state) {
        tf::GradientTape tape;
        const std::vector<tf::Gradient> g = tape.gradient(mlp.loss(), mlp.vars);
        benchmark::DoNotOptimize(g.back().dense().to_vector<float>());
    }
}

void mlp_hvp(benchmark::State& state) {
    const Mlp mlp;
    std::vector<tf::Tensor> v;
    uint64_t seed = 30;
    for (const tf::Variable& var : mlp.vars)
        v.push_back(tf::random::normal(var.shape(), 0, 1, tf::float32, seed++));
    for (auto _ : state) {
        const std::vector<tf::Tensor> hv =
            tf::autodiff::hessian_vector_product([&] { return mlp.loss(); }, mlp.vars, v);
        benchmark::DoNotOptimize(hv.back().to_vector<float>());
    }
}

}  // namespace

int main(int argc, char** argv) {
    start_side_by_side(&argc, argv, torch_cases::available());
    register_case("jacobian", "tanh_layer_1x256", 1, 256, false);
    torch_jacobian_cases::register_tanh_layer(256);
    register_case("batch_jacobian", "tanh_layer_64x32", 64, 32, true);
    torch_jacobian_cases::register_batch_tanh_layer(64, 32);
    using MlpCase = std::pair<const char*, void (*)(benchmark::State&)>;
    for (const auto& [name, fn] : {MlpCase{"mlp/forward_784_512_512_10/tapeflow", mlp_forward},
                                   MlpCase{"mlp/jvp_784_512_512_10/tapeflow", mlp_jvp},
                                   MlpCase{"mlp/gradient_784_512_512_10/tapeflow", mlp_gradient},
                                   MlpCase{"mlp/hvp_784_512_512_10/tapeflow", mlp_hvp}}) {
        benchmark::RegisterBenchmark(name, fn)->UseRealTime()->Unit(benchmark::kMicrosecond);
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
