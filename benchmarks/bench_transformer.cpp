// Transformer benchmarks, tapeflow and (when built with it) LibTorch in the same run, one thread:
// the fused attention forward + backward (B=8, T=S=256, N=4, H=32, float32) against LibTorch's
// composite matmul-softmax-matmul, with each one's peak memory (a forked child per framework
// measures its RSS growth over one step); layer_norm forward + backward of [4096, 1024] against
// torch::layer_norm and the STREAM triad (bytes it must move: x and y forward, dy, x and dx
// backward); the training step of samples/transformer_model.hpp against the same model in
// torch::nn (tokens/s).
//   build/benchmarks/bench_transformer --benchmark_format=json > t.json && benchmarks/compare.py
//   t.json
#include <cstdio>
#include <cstdlib>
#include <functional>

#include <benchmark/benchmark.h>
#include <sys/wait.h>
#include <unistd.h>

#include <tapeflow/tapeflow.hpp>

#include "bench_start.hpp"
#include "limits.hpp"
#include "rss_report.hpp"
#include "torch_transformer_cases.hpp"
#include "transformer_model.hpp"

namespace tf = tapeflow;

namespace {

constexpr int64_t kB = 8, kT = 256, kN = 4, kH = 32;
constexpr double kAttentionFlops = 6 * 2.0 * kB * kN * kT * kT * kH;  // 2 gemms forward, 4 backward
constexpr int64_t kRows = 4096, kCols = 1024;
constexpr double kLayerNormBytes = 5.0 * kRows * kCols * 4;
constexpr int64_t kVocab = 96, kBatch = 32;

struct AttentionInputs {
    tf::Tensor q, k, v, w;
};

AttentionInputs attention_inputs() {
    return {tf::random::normal({kB, kT, kN, kH}, 0, 1, tf::float32, 1),
            tf::random::normal({kB, kT, kN, kH}, 0, 1, tf::float32, 2),
            tf::random::normal({kB, kT, kN, kH}, 0, 1, tf::float32, 3),
            tf::random::normal({kB, kT, kN, kH}, 0, 1, tf::float32, 4)};
}

std::vector<tf::Gradient> attention_step(const AttentionInputs& in) {
    tf::GradientTape tape;
    tape.watch(std::vector<tf::Tensor>{in.q, in.k, in.v});
    const tf::Tensor y = tf::nn::dot_product_attention(in.q, in.k, in.v);
    return tape.gradient(
        y, std::vector<tf::Tensor>{in.q, in.k, in.v}, {.output_gradients = {in.w}});
}

void BM_attention(benchmark::State& state) {
    const AttentionInputs in = attention_inputs();
    for (auto _ : state)
        benchmark::DoNotOptimize(attention_step(in));
    state.counters["GFLOPS"] = benchmark::Counter(kAttentionFlops,
                                                  benchmark::Counter::kIsIterationInvariantRate,
                                                  benchmark::Counter::kIs1000);
}

void BM_layer_norm(benchmark::State& state) {
    const tf::Tensor x = tf::random::normal({kRows, kCols}, 0, 1, tf::float32, 5);
    const tf::Tensor gamma = tf::ones({kCols});
    const tf::Tensor beta = tf::zeros({kCols});
    const tf::Tensor dy = tf::random::normal({kRows, kCols}, 0, 1, tf::float32, 6);
    const std::vector<tf::Tensor> sources{x, gamma, beta};
    for (auto _ : state) {
        tf::GradientTape tape;
        tape.watch(sources);
        const tf::Tensor y = tf::nn::layer_norm(x, gamma, beta);
        benchmark::DoNotOptimize(tape.gradient(y, sources, {.output_gradients = {dy}}));
    }
    state.SetBytesProcessed(static_cast<int64_t>(kLayerNormBytes) * state.iterations());
}

void BM_lm_train_step(benchmark::State& state) {
    namespace tm = transformer_model;
    tf::random::set_seed(7);
    const tm::Model model = tm::make_model(kVocab);
    tf::train::AdamOptimizer optimizer(3e-3);
    const std::pair<tf::Tensor, tf::Tensor> batch = tm::random_batch(kVocab, kBatch);
    const tf::Tensor& xs = batch.first;
    const tf::Tensor& ys = batch.second;
    for (auto _ : state) {
        benchmark::DoNotOptimize(
            optimizer.minimize([&] { return tm::loss_of(model, xs, ys); }).item<float>());
    }
    state.counters["tokens_per_s"] = benchmark::Counter(
        static_cast<double>(kBatch * tm::kContext), benchmark::Counter::kIsIterationInvariantRate);
}

// The RSS growth (MiB) of a forked child over one run of `work` (warm: run once before measuring
// would hide the first step's allocations, which are what peak memory is).
double child_peak_growth(const std::function<bool()>& work) {
    int fds[2];
    if (pipe(fds) != 0) return -1;
    const pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        const double start = rss_report::status_mib("VmRSS:");
        const bool ran = work();
        const double growth = rss_report::status_mib("VmHWM:") - start;
        const double out = ran ? growth : -1;
        if (write(fds[1], &out, sizeof out) != sizeof out) _exit(1);
        _exit(0);
    }
    close(fds[1]);
    double growth = -1;
    if (read(fds[0], &growth, sizeof growth) != sizeof growth) growth = -1;
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    return growth;
}

void measure_attention_memory() {
    const double ours = child_peak_growth([] {
        benchmark::DoNotOptimize(attention_step(attention_inputs()));
        return true;
    });
    const double torch =
        child_peak_growth([] { return torch_transformer_cases::attention_step(kB, kT, kN, kH); });
    benchmark::AddCustomContext("attention_peak_growth_MiB_tapeflow", fmt::format("{:.1f}", ours));
    std::fprintf(stderr, "attention fwd+bwd peak RSS growth: tapeflow %.1f MiB", ours);
    if (torch >= 0) {
        benchmark::AddCustomContext("attention_peak_growth_MiB_libtorch",
                                    fmt::format("{:.1f}", torch));
        std::fprintf(stderr, ", libtorch %.1f MiB (ratio %.2f)", torch, ours / torch);
    }
    std::fprintf(stderr, "\n");
}

}  // namespace

int main(int argc, char** argv) {
    tf::set_num_threads(1);
    omp_set_num_threads(1);  // also what start_side_by_side reports and gives LibTorch
    start_side_by_side(&argc, argv, torch_cases::available());
    if (std::getenv("TAPEFLOW_BENCH_SKIP_RSS") == nullptr) measure_attention_memory();
    benchmark::RegisterBenchmark("transformer/attention_fwd_bwd/tapeflow", BM_attention)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
    torch_transformer_cases::register_attention(kB, kT, kN, kH, kAttentionFlops);
    benchmark::RegisterBenchmark("transformer/layer_norm_fwd_bwd/tapeflow", BM_layer_norm)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark("transformer/layer_norm_fwd_bwd/limit_triad", limits::BM_triad)
        ->Arg(kRows * kCols)
        ->UseRealTime();
    torch_transformer_cases::register_layer_norm(kRows, kCols, kLayerNormBytes);
    benchmark::RegisterBenchmark("transformer/lm_train_step/tapeflow", BM_lm_train_step)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
    namespace tm = transformer_model;
    torch_transformer_cases::register_transformer_step(
        kVocab, kBatch, tm::kLayers, tm::kHeads, tm::kWidth, tm::kContext);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
