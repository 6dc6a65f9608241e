// LibTorch checkpoint workloads for bench_checkpoint (see torch_checkpoint_cases.hpp). Compiled as
// C++17 in its own library: LibTorch 1.13's headers predate C++20.
#include "torch_checkpoint_cases.hpp"

#include <benchmark/benchmark.h>

#ifdef TAPEFLOW_BENCH_TORCH
#include <torch/torch.h>

namespace torch_checkpoint_cases {
namespace {

std::vector<torch::Tensor> make(int count, int64_t elements) {
    std::vector<torch::Tensor> tensors;
    for (int i = 0; i < count; ++i)
        tensors.push_back(torch::rand({elements}));
    return tensors;
}

}  // namespace

bool available() {
    return true;
}

void register_save_restore(const std::string& label,
                           int count,
                           int64_t elements,
                           const std::string& folder) {
    const int64_t bytes = count * elements * 4;
    const std::string path = folder + "/libtorch.pt";
    benchmark::RegisterBenchmark(("checkpoint/save_" + label + "/libtorch").c_str(),
                                 [=](benchmark::State& state) {
                                     auto tensors = make(count, elements);
                                     for (auto _ : state)
                                         torch::save(tensors, path);
                                     state.SetBytesProcessed(state.iterations() * bytes);
                                 })
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("checkpoint/restore_" + label + "/libtorch").c_str(),
                                 [=](benchmark::State& state) {
                                     auto tensors = make(count, elements);
                                     torch::save(tensors, path);
                                     for (auto _ : state) {
                                         std::vector<torch::Tensor> loaded;
                                         torch::load(loaded, path);
                                         benchmark::DoNotOptimize(loaded.data());
                                     }
                                     state.SetBytesProcessed(state.iterations() * bytes);
                                 })
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
}

}  // namespace torch_checkpoint_cases

#else  // built without LibTorch

namespace torch_checkpoint_cases {
bool available() {
    return false;
}
void register_save_restore(const std::string&, int, int64_t, const std::string&) {}
}  // namespace torch_checkpoint_cases

#endif
