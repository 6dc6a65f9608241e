// LibTorch's side of bench_ops: the same workloads, registered next to tapeflow's so one run
// measures both. Without LibTorch (Debian's libtorch-dev) these register nothing.
#pragma once

#include <cstdint>

namespace torch_cases {

bool available();
void set_threads(
    int threads);  // torch::set_num_threads, and OpenBLAS's for its cases (libtorch_case.hpp)
void register_overhead();
void register_overhead_tape();
void register_mul_add(int64_t n);
void register_exp(int64_t n);
void register_sum_all();
void register_sum_axis1();
void register_matmul(int64_t n);
void register_conv_step(double flops);  // bench_nn: the anchors' conv step, NCHW
void register_max_pool();  // bench_nn: 2x2 stride 2 max pooling, forward and forward + backward

}  // namespace torch_cases
