// Training benchmarks (issue 5), tapeflow and LibTorch in one run: one step of the tutorial network
// (2 -> 3 relu -> 1, batch 10, Adam), one step of a medium MLP (784 -> 512 -> 512 -> 10, softmax
// cross-entropy, batch 128, Adam) and its peak RSS over 100 steps (each framework in a forked child,
// so neither sees the other's memory), one Adam update of 10M float32 parameters against the STREAM
// triad, and gate_none's peak gradient memory against gate_op.
//   build/benchmarks/bench_train --benchmark_format=json > train.json && benchmarks/compare.py train.json
#include <benchmark/benchmark.h>

#include <omp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>

#include <tapeflow/tapeflow.hpp>

#include "limits.hpp"
#include "torch_cases.hpp"
#include "torch_train_cases.hpp"

namespace tf = tapeflow;

namespace {

constexpr int64_t k10M = 10'000'000;

// ---- the models ----

struct Dense {
    tf::Variable w, b;
    Dense(int64_t in, int64_t out)
        : w(tf::random::normal({in, out}, 0, 1.0 / std::sqrt(static_cast<double>(in)))), b(tf::zeros({out})) {}
    tf::Tensor operator()(const tf::Tensor& x) const { return tf::nn::bias_add(tf::matmul(x, w), b); }
};

tf::Tensor relu(const tf::Tensor& x) { return tf::nn::relu(x); }

struct Tutorial {
    Dense l1{2, 3}, l2{3, 1};
    tf::Tensor x = tf::random::uniform({10, 2}), y = tf::random::uniform({10, 1});
    tf::train::AdamOptimizer opt{0.01};
    void step() {
        opt.minimize([&] { return tf::reduce_mean(tf::square(l2(relu(l1(x))) - y)); });
    }
};

struct Mlp {
    Dense l1{784, 512}, l2{512, 512}, l3{512, 10};
    tf::Tensor x = tf::random::uniform({128, 784});
    tf::Tensor labels = tf::cast(tf::random::uniform({128}, 0, 10), tf::int32);
    tf::train::AdamOptimizer opt{0.001};
    tf::train::GateGradients gate = tf::train::GateGradients::gate_op;
    tf::Tensor loss() const {
        const tf::Tensor logits = l3(relu(l2(relu(l1(x)))));
        return tf::reduce_mean(tf::nn::sparse_softmax_cross_entropy_with_logits(labels, logits));
    }
    void step() { opt.minimize([&] { return loss(); }, {}, {}, gate); }
};

void BM_tapeflow_tutorial_step(benchmark::State& state) {
    tf::random::set_seed(1);
    Tutorial t;
    for (auto _ : state) t.step();
}

void BM_tapeflow_mlp_step(benchmark::State& state) {
    tf::random::set_seed(1);
    Mlp m;
    for (auto _ : state) m.step();
}

void BM_tapeflow_adam_10m(benchmark::State& state) {
    const int64_t n = state.range(0);
    tf::Variable p(tf::random::uniform({n}), {.name = "p"});
    const tf::Tensor g = tf::random::uniform({n});
    tf::train::AdamOptimizer opt(0.001);
    for (auto _ : state) opt.apply_gradients({{g, p}});
    state.SetBytesProcessed(state.iterations() * n * 28);  // reads var, m, v, g; writes var, m, v
}

// gate_none vs gate_op: peak tensor memory during minimize for 8 layers of 1024x1024 at batch 16,
// where the weight gradients (4 MiB each) dominate what the step allocates.
void BM_tapeflow_gate(benchmark::State& state) {
    tf::random::set_seed(3);
    std::vector<Dense> layers;
    for (int i = 0; i < 8; ++i) layers.emplace_back(1024, 1024);
    const tf::Tensor x = tf::random::uniform({16, 1024});
    tf::train::GradientDescentOptimizer opt(1e-4);
    const auto gate = static_cast<tf::train::GateGradients>(state.range(0));
    int64_t peak = 0;
    for (auto _ : state) {
        tf::reset_peak_memory_stats();
        const int64_t base = tf::memory_stats().bytes_in_use;
        opt.minimize(
            [&] {
                tf::Tensor h = x;
                for (const Dense& d : layers) h = relu(d(h));
                return tf::reduce_mean(tf::square(h));
            },
            {}, {}, gate);
        peak = std::max(peak, tf::memory_stats().peak_bytes_in_use - base);
    }
    state.counters["peak_step_MiB"] = static_cast<double>(peak) / (1 << 20);
}

// ---- peak RSS over 100 steps, each framework in a forked child ----

double status_mib(const char* key) {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line)) {
        if (line.rfind(key, 0) == 0) return std::stod(line.substr(std::string(key).size())) / 1024.0;
    }
    return 0;
}

// {peak RSS of the child, peak minus its RSS at the start} in MiB.
std::pair<double, double> child_peak_rss(const std::function<void()>& work) {
    int fds[2];
    if (pipe(fds) != 0) return {0, 0};
    const pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        { std::ofstream("/proc/self/clear_refs") << "5"; }  // resets VmHWM to the current RSS
        const double start = status_mib("VmRSS:");
        work();
        const double result[2] = {status_mib("VmHWM:"), status_mib("VmHWM:") - start};
        (void)!write(fds[1], result, sizeof(result));
        _exit(0);
    }
    close(fds[1]);
    double result[2] = {0, 0};
    (void)!read(fds[0], result, sizeof(result));
    close(fds[0]);
    waitpid(pid, nullptr, 0);
    return {result[0], result[1]};
}

// Peak RSS of 100 medium-MLP steps, tapeflow's and LibTorch's, each in its own child process.
void measure_rss() {
    const auto tapeflow_rss = child_peak_rss([] {
        tf::random::set_seed(1);
        Mlp m;
        for (int i = 0; i < 100; ++i) m.step();
    });
    benchmark::AddCustomContext("mlp_100_steps_peak_rss_MiB_tapeflow", fmt::format("{:.1f}", tapeflow_rss.first));
    benchmark::AddCustomContext("mlp_100_steps_rss_growth_MiB_tapeflow", fmt::format("{:.1f}", tapeflow_rss.second));
    std::fprintf(stderr, "mlp 100 steps: tapeflow peak RSS %.1f MiB (+%.1f MiB over the child's start)\n",
                 tapeflow_rss.first, tapeflow_rss.second);
    if (torch_train_cases::available()) {
        const auto torch_rss = child_peak_rss([] { torch_train_cases::run_mlp_steps(100); });
        benchmark::AddCustomContext("mlp_100_steps_peak_rss_MiB_libtorch", fmt::format("{:.1f}", torch_rss.first));
        benchmark::AddCustomContext("mlp_100_steps_rss_growth_MiB_libtorch", fmt::format("{:.1f}", torch_rss.second));
        std::fprintf(stderr, "mlp 100 steps: libtorch peak RSS %.1f MiB (+%.1f MiB over the child's start)\n",
                     torch_rss.first, torch_rss.second);
    }
}

}  // namespace

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    const int threads = omp_get_max_threads();
    benchmark::AddCustomContext("threads", std::to_string(threads));
    benchmark::AddCustomContext("libtorch", torch_train_cases::available() ? "yes" : "no");
    torch_cases::set_threads(threads);

    // Peak RSS first, before either framework has run anything in this process (skipped with
    // TAPEFLOW_BENCH_SKIP_RSS=1, e.g. under a profiler).
    if (std::getenv("TAPEFLOW_BENCH_SKIP_RSS") == nullptr) measure_rss();

    benchmark::RegisterBenchmark("train/tutorial_step/tapeflow", BM_tapeflow_tutorial_step);
    torch_train_cases::register_tutorial_step();
    benchmark::RegisterBenchmark("train/mlp_step/tapeflow", BM_tapeflow_mlp_step)->UseRealTime();
    torch_train_cases::register_mlp_step();
    benchmark::RegisterBenchmark("train/adam_10M/tapeflow", BM_tapeflow_adam_10m)->Arg(k10M)->UseRealTime();
    benchmark::RegisterBenchmark("train/adam_10M/limit_triad", limits::BM_triad)->Arg(k10M)->UseRealTime();
    torch_train_cases::register_adam_10m(k10M);
    benchmark::RegisterBenchmark("gate/gate_op/tapeflow", BM_tapeflow_gate)
        ->Arg(static_cast<int>(tf::train::GateGradients::gate_op))->UseRealTime();
    benchmark::RegisterBenchmark("gate/gate_none/tapeflow", BM_tapeflow_gate)
        ->Arg(static_cast<int>(tf::train::GateGradients::gate_none))->UseRealTime();
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
