// Jacobian benchmarks, tapeflow and (when built with it) LibTorch in the same run: the jacobian of
// y = tanh(x W + b) for x [1, 256] (y [1, 256]) and the batch_jacobian of the same layer on a batch
// x [64, 32]; each vectorized (one backward walk, docs/autograd.md "How jacobians are computed")
// and looped (one walk per target element / column: the "*_loop" workloads). Forward included.
// Forward mode (issue 30) on the MLP 784-512-512-10, batch 64, one thread: the forward pass, its
// JVP (forward under a ForwardAccumulator with a tangent on the input), one gradient of the loss
// and one Hessian-vector product of the loss (forward over reverse); the "mlp/*" workloads. The
// forward pass at batch 2 x 64 is the JVP's floor (primal and tangent in one gemm per layer). And
// the per-example gradients of the same loss for the 64 examples: through tf::vectorized_map (a
// tape inside fn) and as a loop of 64 tapes, against the one batched gradient "mlp/gradient".
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

// The MLP 784-512-512-10 of docs/performance.md, batch 64, with its data (or the layers given:
// 64-64-10 is samples/per_example_gradients.cpp's).
struct Mlp {
    std::vector<tf::Variable> vars;
    tf::Tensor x;
    tf::Tensor labels =
        tf::cast(tf::floor(tf::random::uniform({64}, 0, 10, tf::float32, 12)), tf::int32);
    explicit Mlp(std::vector<int64_t> sizes = {784, 512, 512, 10})
        : x(tf::random::normal({64, sizes[0]}, 0, 1, tf::float32, 11)) {
        for (std::size_t l = 0; l + 1 < sizes.size(); ++l) {
            const double scale = 1 / std::sqrt(static_cast<double>(sizes[l]));
            vars.emplace_back(tf::random::normal(
                {sizes[l], sizes[l + 1]}, 0, scale, tf::float32, static_cast<uint64_t>(20 + l)));
            vars.emplace_back(tf::zeros({sizes[l + 1]}, tf::float32));
        }
    }
    tf::Tensor logits(const tf::Tensor& in) const {
        tf::Tensor h = in;
        const std::size_t layers = vars.size() / 2;
        for (std::size_t l = 0; l < layers; ++l) {
            h = tf::matmul(h, vars[2 * l].read_value()) + vars[2 * l + 1].read_value();
            if (l + 1 < layers) h = tf::nn::relu(h);
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

// The floor of a JVP whose primal and tangent share every gemm: one forward pass of 2 x 64 rows.
void mlp_forward_double_batch(benchmark::State& state) {
    const Mlp mlp;
    const tf::Tensor both =
        tf::concat({mlp.x, tf::random::normal({64, 784}, 0, 1, tf::float32, 13)}, 0);
    for (auto _ : state)
        benchmark::DoNotOptimize(mlp.logits(both).to_vector<float>());
}

void mlp_jvp(benchmark::State& state) {
    const Mlp mlp;
    const tf::Tensor tangent = tf::random::normal({64, 784}, 0, 1, tf::float32, 13);
    for (auto _ : state) {
        const tf::autodiff::ForwardAccumulator acc({mlp.x}, {tangent});
        benchmark::DoNotOptimize(acc.jvp(mlp.logits(mlp.x)).to_vector<float>());
    }
}

void mlp_gradient(benchmark::State& state, std::vector<int64_t> sizes) {
    const Mlp mlp(std::move(sizes));
    for (auto _ : state) {
        tf::GradientTape tape;
        const std::vector<tf::Gradient> g = tape.gradient(mlp.loss(), mlp.vars);
        benchmark::DoNotOptimize(g.back().dense().to_vector<float>());
    }
}

// One example's gradients (x [784], label []), as DP-SGD code writes them.
std::vector<tf::Tensor> example_gradient(const Mlp& mlp, const tf::Tensor& x, const tf::Tensor& y) {
    tf::GradientTape tape;
    const tf::Tensor loss = tf::reduce_sum(tf::nn::sparse_softmax_cross_entropy_with_logits(
        tf::expand_dims(y, 0), mlp.logits(tf::expand_dims(x, 0))));
    std::vector<tf::Tensor> out;
    for (const tf::Gradient& g : tape.gradient(loss, mlp.vars))
        out.push_back(g.dense());
    return out;
}

void mlp_per_example_vectorized(benchmark::State& state, std::vector<int64_t> sizes) {
    const Mlp mlp(std::move(sizes));
    for (auto _ : state) {
        const std::vector<tf::Tensor> g = tf::vectorized_map(
            [&](const std::vector<tf::Tensor>& e) { return example_gradient(mlp, e[0], e[1]); },
            {mlp.x, mlp.labels});
        benchmark::DoNotOptimize(g.back().to_vector<float>());
    }
}

void mlp_per_example_loop(benchmark::State& state, std::vector<int64_t> sizes) {
    const Mlp mlp(std::move(sizes));
    const std::vector<tf::Tensor> xs = tf::unstack(mlp.x);
    const std::vector<tf::Tensor> ys = tf::unstack(mlp.labels);
    for (auto _ : state) {
        std::vector<std::vector<tf::Tensor>> rows(mlp.vars.size());
        for (std::size_t i = 0; i < xs.size(); ++i) {
            std::vector<tf::Tensor> g = example_gradient(mlp, xs[i], ys[i]);
            for (std::size_t v = 0; v < g.size(); ++v)
                rows[v].push_back(std::move(g[v]));
        }
        benchmark::DoNotOptimize(tf::stack(rows.back()).to_vector<float>());
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
    for (const auto& [name, fn] :
         {MlpCase{"mlp/forward_784_512_512_10/tapeflow", mlp_forward},
          MlpCase{"mlp/forward_2x64_784_512_512_10/tapeflow", mlp_forward_double_batch},
          MlpCase{"mlp/jvp_784_512_512_10/tapeflow", mlp_jvp},
          MlpCase{"mlp/hvp_784_512_512_10/tapeflow", mlp_hvp}}) {
        benchmark::RegisterBenchmark(name, fn)->UseRealTime()->Unit(benchmark::kMicrosecond);
    }
    // One batched gradient and the per-example gradients of the 64 examples, two ways.
    using SizedCase = void (*)(benchmark::State&, std::vector<int64_t>);
    for (const auto& [suffix, sizes] :
         {std::pair{"784_512_512_10", std::vector<int64_t>{784, 512, 512, 10}},
          std::pair{"64_64_10", std::vector<int64_t>{64, 64, 10}}}) {
        for (const auto& [kind, fn] : {std::pair<const char*, SizedCase>{"gradient", mlp_gradient},
                                       {"per_example_vectorized", mlp_per_example_vectorized},
                                       {"per_example_loop", mlp_per_example_loop}}) {
            const std::string name = fmt::format("mlp/{}_{}/tapeflow", kind, suffix);
            benchmark::RegisterBenchmark(name.c_str(), fn, sizes)
                ->UseRealTime()
                ->Unit(benchmark::kMicrosecond);
        }
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
