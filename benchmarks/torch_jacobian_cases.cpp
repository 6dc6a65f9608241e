// LibTorch jacobians for bench_jacobian (see torch_jacobian_cases.hpp). LibTorch 1.13's C++ API has
// no functional jacobian and no is_grads_batched argument, so the vectorized case does what
// Python's torch.autograd.grad(is_grads_batched=True) does in 1.13: the grad_outputs get a vmap
// batch dim (at::_add_batch_dim inside VmapMode), one backward runs, and the batch dim is removed
// again. Compiled as C++17 in its own library: LibTorch 1.13's headers predate C++20.
#include "torch_jacobian_cases.hpp"

#include <string>

#include <benchmark/benchmark.h>

#include "libtorch_case.hpp"

#ifdef TAPEFLOW_BENCH_TORCH
#include <ATen/VmapMode.h>
#include <torch/torch.h>

namespace torch_jacobian_cases {
namespace {

// d y / d x for every row of `seeds` ([rows, *y.shape]): [rows, *x.shape].
torch::Tensor batched_vjp(const torch::Tensor& y,
                          const torch::Tensor& x,
                          const torch::Tensor& seeds) {
    const int64_t level = at::impl::VmapMode::increment_nesting();
    const torch::Tensor batched = at::_add_batch_dim(seeds, 0, level);
    const torch::Tensor g = torch::autograd::grad({y}, {x}, {batched})[0];
    torch::Tensor out = at::_remove_batch_dim(g, level, seeds.size(0), 0);
    at::impl::VmapMode::decrement_nesting();
    return out;
}

torch::Tensor looped_vjp(const torch::Tensor& y,
                         const torch::Tensor& x,
                         const torch::Tensor& seeds) {
    std::vector<torch::Tensor> rows;
    for (int64_t i = 0; i < seeds.size(0); ++i) {
        rows.push_back(torch::autograd::grad({y}, {x}, {seeds[i]}, /*retain_graph=*/true)[0]);
    }
    return torch::stack(rows);
}

void tanh_layer(
    benchmark::State& state, int64_t batch, int64_t n, bool per_example, bool vectorized) {
    torch::manual_seed(0);
    const torch::Tensor x0 = torch::randn({batch, n});
    const torch::Tensor w = torch::randn({n, n}) / std::sqrt(static_cast<double>(n));
    const torch::Tensor b = torch::randn({n}) * 0.1;
    // jacobian: the identity over all batch * n outputs; batch_jacobian: column j of every example.
    const torch::Tensor seeds = per_example
                                    ? torch::eye(n).unsqueeze(1).expand({n, batch, n}).contiguous()
                                    : torch::eye(batch * n).reshape({batch * n, batch, n});
    for (auto _ : state) {
        const torch::Tensor x = x0.clone().requires_grad_(true);
        const torch::Tensor y = torch::tanh(torch::matmul(x, w) + b);
        torch::Tensor j = vectorized ? batched_vjp(y, x, seeds) : looped_vjp(y, x, seeds);
        if (per_example) j = j.transpose(0, 1);  // [batch, n, n]
        benchmark::DoNotOptimize(j);
    }
}

}  // namespace

void register_tanh_layer(int64_t n) {
    const std::string name = "tanh_layer_1x" + std::to_string(n);
    benchmark::RegisterBenchmark(("jacobian/" + name + "/libtorch").c_str(),
                                 torch_cases::libtorch_case(tanh_layer),
                                 1,
                                 n,
                                 false,
                                 true)
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("jacobian_loop/" + name + "/libtorch").c_str(),
                                 torch_cases::libtorch_case(tanh_layer),
                                 1,
                                 n,
                                 false,
                                 false)
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
}

void register_batch_tanh_layer(int64_t batch, int64_t n) {
    const std::string name = "tanh_layer_" + std::to_string(batch) + "x" + std::to_string(n);
    benchmark::RegisterBenchmark(("batch_jacobian/" + name + "/libtorch").c_str(),
                                 torch_cases::libtorch_case(tanh_layer),
                                 batch,
                                 n,
                                 true,
                                 true)
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("batch_jacobian_loop/" + name + "/libtorch").c_str(),
                                 torch_cases::libtorch_case(tanh_layer),
                                 batch,
                                 n,
                                 true,
                                 false)
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
}

}  // namespace torch_jacobian_cases

#else  // built without LibTorch

namespace torch_jacobian_cases {
void register_tanh_layer(int64_t) {}
void register_batch_tanh_layer(int64_t, int64_t) {}
}  // namespace torch_jacobian_cases

#endif
