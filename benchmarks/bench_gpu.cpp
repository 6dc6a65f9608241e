// GPU benchmarks against the goals (docs/gpu.md): element-wise ops on 256M floats against
// the device-to-device copy bandwidth measured in the same run, matmul 4096^3 (float32, bfloat16)
// against cuBLAS called directly with the same settings, the host cost of one small op, and one
// training step of the medium MLP on the GPU against the same step on the CPU, and one fused
// Adam update of 10M floats on both, the fused attention at T=1024 and layer_norm.
// Plain main (no Google Benchmark: the GPU machine has none); prints one line per measurement.
// Usage: bench_gpu [--quick]   (--quick: smaller sizes, for a smoke run)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <string>
#include <vector>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <tapeflow/tapeflow.hpp>

#include "cuda_context.hpp"
#include "launch.hpp"

namespace tapeflow {
void cuda_synchronize(int device);  // cuda/backend.cpp
}

namespace tf = tapeflow;

namespace {

double now_s() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// Best of `reps` timings of `iters` calls of f, synchronizing tapeflow's stream around each timing.
double time_op(const std::function<void()>& f, int iters, int reps = 3) {
    f();
    tf::cuda_synchronize(0);
    double best = 1e30;
    for (int r = 0; r < reps; ++r) {
        const double t0 = now_s();
        for (int i = 0; i < iters; ++i)
            f();
        tf::cuda_synchronize(0);
        best = std::min(best, (now_s() - t0) / iters);
    }
    return best;
}

void check(cudaError_t e, const char* what) {
    if (e != cudaSuccess) {
        std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
        std::exit(1);
    }
}

double copy_bandwidth(std::size_t bytes) {
    void* a = nullptr;
    void* b = nullptr;
    check(cudaMalloc(&a, bytes), "cudaMalloc");
    check(cudaMalloc(&b, bytes), "cudaMalloc");
    check(cudaMemset(a, 0, bytes), "cudaMemset");
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    float best_ms = 1e30f;
    for (int r = 0; r < 5; ++r) {
        cudaEventRecord(e0);
        check(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice), "cudaMemcpy");
        cudaEventRecord(e1);
        cudaEventSynchronize(e1);
        float ms = 0;
        cudaEventElapsedTime(&ms, e0, e1);
        best_ms = std::min(best_ms, ms);
    }
    cudaFree(a);
    cudaFree(b);
    return 2.0 * static_cast<double>(bytes) / (best_ms * 1e-3) / 1e9;  // read + write
}

// cuBLAS called directly on the same inputs (random data: zeros multiply faster), with the same
// settings: row-major C = A B as column-major C^T = B^T A^T, float32 accumulation.
double cublas_direct(int n, cudaDataType_t type, const void* a, const void* b, int reps) {
    const std::size_t esize = type == CUDA_R_32F ? 4 : 2;
    void* c = nullptr;
    check(cudaMalloc(&c, static_cast<std::size_t>(n) * n * esize), "cudaMalloc");
    cublasHandle_t h;
    cublasCreate(&h);
    const float one = 1, zero = 0;
    auto run = [&] {
        cublasGemmEx(h,
                     CUBLAS_OP_N,
                     CUBLAS_OP_N,
                     n,
                     n,
                     n,
                     &one,
                     b,
                     type,
                     n,
                     a,
                     type,
                     n,
                     &zero,
                     c,
                     type,
                     n,
                     CUBLAS_COMPUTE_32F,
                     CUBLAS_GEMM_DEFAULT);
    };
    run();
    check(cudaDeviceSynchronize(), "cublasGemmEx");
    double best = 1e30;
    for (int r = 0; r < 3; ++r) {
        const double t0 = now_s();
        for (int i = 0; i < reps; ++i)
            run();
        cudaDeviceSynchronize();
        best = std::min(best, (now_s() - t0) / reps);
    }
    cublasDestroy(h);
    cudaFree(c);
    return best;
}

// The medium MLP (784 -> 512 relu -> 512 relu -> 10, sparse softmax cross-entropy, batch 128) on
// `device`. The update is plain gradient descent through Variable::assign_sub: the optimizers'
// fused update ops are not in this branch yet (the Adam step is to be measured with them).
struct MlpStep {
    std::vector<tf::Variable> vars;
    tf::Tensor x, labels;

    explicit MlpStep(tf::Device device) {
        auto scope = tf::device(device);
        tf::random::set_seed(7);
        const int64_t sizes[] = {784, 512, 512, 10};
        for (int l = 0; l < 3; ++l) {
            vars.emplace_back(tf::random::normal({sizes[l], sizes[l + 1]}, 0, 0.05));
            vars.emplace_back(tf::zeros({sizes[l + 1]}));
        }
        x = tf::random::uniform({128, 784});
        labels = tf::random::uniform({128}, 0, 10, tf::int32);
    }

    void operator()() {
        tf::GradientTape tape;
        tf::Tensor h = x;
        for (std::size_t l = 0; l < 3; ++l) {
            h = tf::nn::bias_add(tf::matmul(h, vars[2 * l]), vars[2 * l + 1]);
            if (l < 2) h = tf::nn::relu(h);
        }
        const tf::Tensor loss =
            tf::reduce_mean(tf::nn::sparse_softmax_cross_entropy_with_logits(labels, h));
        const std::vector<tf::Gradient> grads = tape.gradient(loss, vars);
        for (std::size_t i = 0; i < vars.size(); ++i)
            vars[i].assign_sub(grads[i].dense() * 0.01f);
    }
};

void mlp_benchmark(bool quick) {
    MlpStep gpu(tf::Device::cuda(0));
    const double t_gpu = time_op([&] { gpu(); }, quick ? 20 : 200);
    MlpStep cpu(tf::Device::cpu());
    cpu();
    double t_cpu = 1e30;
    for (int r = 0; r < 3; ++r) {
        const int iters = quick ? 2 : 10;
        const double t0 = now_s();
        for (int i = 0; i < iters; ++i)
            cpu();
        t_cpu = std::min(t_cpu, (now_s() - t0) / iters);
    }
    std::printf(
        "train_step mlp_784_512_512_10 batch128 (gradient descent via assign_sub, not Adam): "
        "GPU %.3f ms | CPU %.3f ms | speedup %.1fx (goal >= 10x)\n",
        t_gpu * 1e3,
        t_cpu * 1e3,
        t_cpu / t_gpu);
}

// One fused Adam update (ResourceApplyAdam) of a 10M-float variable on the GPU and on the CPU:
// 28 bytes per element (reads var, m, v, g; writes var, m, v), against the copy bandwidth.
void adam_benchmark(bool quick, double copy_gbs) {
    const int64_t n = 10'000'000;
    auto step_time = [&](tf::Device device, int iters) {
        const auto scope = tf::device(device);
        tf::Variable p(tf::random::uniform({n}), {.name = "p"});
        const tf::Tensor g = tf::random::uniform({n});
        tf::train::AdamOptimizer opt(0.001);
        if (device.is_cpu()) {
            opt.apply_gradients({{g, p}});
            double best = 1e30;
            for (int r = 0; r < 3; ++r) {
                const double t0 = now_s();
                for (int i = 0; i < iters; ++i)
                    opt.apply_gradients({{g, p}});
                best = std::min(best, (now_s() - t0) / iters);
            }
            return best;
        }
        return time_op([&] { opt.apply_gradients({{g, p}}); }, iters);
    };
    const double t_gpu = step_time(tf::Device::cuda(0), quick ? 10 : 100);
    const double t_cpu = step_time(tf::Device::cpu(), quick ? 2 : 5);
    const double gbs = 28.0 * static_cast<double>(n) / t_gpu / 1e9;
    std::printf(
        "train_step adam_update_10M float32: GPU %.3f ms (%.0f GB/s, %.1f%% of copy) | "
        "CPU %.3f ms | speedup %.1fx\n",
        t_gpu * 1e3,
        gbs,
        100 * gbs / copy_gbs,
        t_cpu * 1e3,
        t_cpu / t_gpu);
}

// Fused attention (B=8, T=S=1024, N=16, H=64; causal off) forward and forward + backward in
// float32 and bfloat16, against the H200's dense peaks (FMA 67 TFLOP/s fp32, tensor cores 989
// TFLOP/s bf16), and layer_norm forward + backward of [16384, 1024] against the copy bandwidth.
void transformer_benchmark(bool quick, double copy_gbs) {
    const int64_t b = quick ? 2 : 8, t = 1024, n = 16, h = 64;
    const double fwd_flops = 2 * 2.0 * b * n * t * t * h;
    for (const auto dtype : {tf::float32, tf::bfloat16}) {
        const tf::Tensor q = tf::cast(tf::random::normal({b, t, n, h}), dtype);
        const tf::Tensor k = tf::cast(tf::random::normal({b, t, n, h}), dtype);
        const tf::Tensor v = tf::cast(tf::random::normal({b, t, n, h}), dtype);
        const double fwd =
            time_op([&] { (void)tf::nn::dot_product_attention(q, k, v); }, quick ? 2 : 10);
        const double step = time_op(
            [&] {
                tf::GradientTape tape;
                tape.watch(std::vector<tf::Tensor>{q, k, v});
                const tf::Tensor y = tf::nn::dot_product_attention(q, k, v);
                (void)tape.gradient(tf::reduce_sum(y), std::vector<tf::Tensor>{q, k, v});
            },
            quick ? 2 : 10);
        const double peak = dtype == tf::float32 ? 67e12 : 989e12;
        std::printf(
            "attention B%lld T%lld N%lld H%lld %-8s forward %7.3f ms %6.1f TFLOP/s (%.1f%% of "
            "peak) | "
            "fwd+bwd %7.3f ms %6.1f TFLOP/s (%.1f%% of peak; goal >= 50%%)\n",
            static_cast<long long>(b),
            static_cast<long long>(t),
            static_cast<long long>(n),
            static_cast<long long>(h),
            std::string(tf::dtype_name(dtype)).c_str(),
            fwd * 1e3,
            fwd_flops / fwd / 1e12,
            100 * fwd_flops / fwd / peak,
            step * 1e3,
            3.5 * fwd_flops / step / 1e12,
            100 * 3.5 * fwd_flops / step / peak);
    }
    const int64_t rows = quick ? 2048 : 16384, cols = 1024;
    const tf::Tensor x = tf::random::normal({rows, cols});
    const tf::Tensor gamma = tf::ones({cols});
    const tf::Tensor beta = tf::zeros({cols});
    const double t_ln = time_op(
        [&] {
            tf::GradientTape tape;
            tape.watch(std::vector<tf::Tensor>{x, gamma, beta});
            const tf::Tensor y = tf::nn::layer_norm(x, gamma, beta);
            (void)tape.gradient(y, std::vector<tf::Tensor>{x, gamma, beta});
        },
        quick ? 3 : 20);
    const double gbs = 5.0 * static_cast<double>(rows * cols) * 4 / t_ln / 1e9;
    std::printf("layer_norm fwd+bwd [%lld, %lld] float32: %.3f ms (%.0f GB/s, %.1f%% of copy)\n",
                static_cast<long long>(rows),
                static_cast<long long>(cols),
                t_ln * 1e3,
                gbs,
                100 * gbs / copy_gbs);
}

}  // namespace

int run(int argc, char** argv) {
    const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
    if (!tf::cuda::is_available()) {
        std::printf("SKIP: no usable CUDA GPU\n");
        return 77;
    }
    cudaDeviceProp prop{};
    cudaGetDeviceProperties(&prop, 0);
    std::printf("device: %s, %d SMs, %.1f GiB\n",
                prop.name,
                prop.multiProcessorCount,
                static_cast<double>(prop.totalGlobalMem) / (1 << 30));

    const int64_t n = quick ? (int64_t{1} << 24) : (int64_t{1} << 28);  // 256M floats = 1 GiB
    const double bytes1 = static_cast<double>(n) * 4;
    const double copy_gbs = copy_bandwidth(static_cast<std::size_t>(bytes1));
    std::printf(
        "copy_d2d: %.0f GB/s (cudaMemcpy, %lld floats)\n", copy_gbs, static_cast<long long>(n));

    auto scope = tf::device(tf::Device::cuda(0));
    tf::random::set_seed(1);
    const tf::Tensor x = tf::random::uniform({n}, 0.5, 1.5);
    const tf::Tensor y = tf::random::uniform({n}, 0.5, 1.5);
    const tf::Tensor col = tf::random::uniform({n / 4096, 1}, 0.5, 1.5);
    struct Ew {
        const char* name;
        double bytes;
        std::function<void()> f;
    };
    const Ew cases[] = {
        {"add",
         3 * bytes1,
         [&] {
             (void)(x + y);
         }},
        {"multiply_scalar",
         2 * bytes1,
         [&] {
             (void)(x * 2.f);
         }},
        {"exp",
         2 * bytes1,
         [&] {
             (void)tf::exp(x);
         }},
        {"add_broadcast_column",
         2 * bytes1,
         [&] {
             (void)(tf::reshape(x, {n / 4096, 4096}) + col);
         }},
        {"cast_f32_bf16",
         1.5 * bytes1,
         [&] {
             (void)tf::cast(x, tf::bfloat16);
         }},
        {"reduce_sum",
         bytes1,
         [&] {
             (void)tf::reduce_sum(x);
         }},
        {"reduce_sum_rows",
         bytes1,
         [&] {
             (void)tf::reduce_sum(tf::reshape(x, {n / 4096, 4096}), 1);
         }},
        {"transpose_2d",
         2 * bytes1,
         [&] {
             (void)tf::transpose(tf::reshape(x, {n / 4096, 4096}));
         }},
        {"transpose_batched",
         2 * bytes1,
         [&] {
             (void)tf::transpose(tf::reshape(x, {n / (1024 * 512), 1024, 512}), {0, 2, 1});
         }},
    };
    for (const Ew& e : cases) {
        const double t = time_op(e.f, quick ? 5 : 10);
        const double gbs = e.bytes / t / 1e9;
        std::printf("elementwise %-22s %8.3f ms  %6.0f GB/s  %5.1f%% of copy\n",
                    e.name,
                    t * 1e3,
                    gbs,
                    100 * gbs / copy_gbs);
    }

    const int m = quick ? 1024 : 4096;
    for (const auto dtype : {tf::float32, tf::bfloat16}) {
        const tf::Tensor a = tf::cast(tf::random::uniform({m, m}), dtype);
        const tf::Tensor b = tf::cast(tf::random::uniform({m, m}), dtype);
        const int reps = quick ? 3 : 10;
        const double t = time_op([&] { (void)tf::matmul(a, b); }, reps);
        const double direct = cublas_direct(
            m, dtype == tf::float32 ? CUDA_R_32F : CUDA_R_16BF, a.raw_data(), b.raw_data(), reps);
        const double flops = 2.0 * m * m * m;
        std::printf(
            "matmul %d %-8s tapeflow %7.3f ms %6.1f TFLOP/s | cuBLAS direct %7.3f ms %6.1f TFLOP/s "
            "| ratio %.3f\n",
            m,
            std::string(tf::dtype_name(dtype)).c_str(),
            t * 1e3,
            flops / t / 1e12,
            direct * 1e3,
            flops / direct / 1e12,
            direct / t);
    }

    const tf::Tensor one = tf::ones({1});
    const int iters = quick ? 2000 : 20000;
    const double per_op = time_op([&] { (void)(one + one); }, iters);
    std::printf(
        "launch_overhead add_1_element: %.2f us per op (host-side, back to back, then one sync)\n",
        per_op * 1e6);
    {  // the floor: one launch of a 1-element kernel per op, no engine (cuda/launch.hpp directly)
        void* buf = nullptr;
        check(cudaMalloc(&buf, 16), "cudaMalloc");
        cudaStream_t stream = tf::cuda_detail::stream_for(tf::Device::cuda(0));
        const double per_launch = time_op(
            [&] { check(tf::cuda_launch::fill_bits(buf, 1, 0, 4, stream), "fill_bits"); }, iters);
        std::printf("launch_overhead raw_launch: %.2f us per op (one kernel launch, no engine)\n",
                    per_launch * 1e6);
        check(cudaFree(buf), "cudaFree");
    }
    {  // the same op on the CPU: the engine's share (apply, allocation, dispatch) without a launch
        const tf::Tensor one_cpu = tf::ones({1}).cpu();
        double best = 1e30;
        for (int r = 0; r < 3; ++r) {
            const double t0 = now_s();
            for (int i = 0; i < iters; ++i)
                (void)(one_cpu + one_cpu);
            best = std::min(best, (now_s() - t0) / iters);
        }
        std::printf(
            "launch_overhead add_1_element_cpu: %.2f us per op (the engine without a launch)\n",
            best * 1e6);
    }
    const double per_sync = time_op([&] { (void)(one + one).item<float>(); }, quick ? 200 : 2000);
    std::printf(
        "launch_overhead add_1_element_then_read: %.2f us per op (includes a device->host copy)\n",
        per_sync * 1e6);
    mlp_benchmark(quick);
    adam_benchmark(quick, copy_gbs);
    transformer_benchmark(quick, copy_gbs);
    return 0;
}

int main(int argc, char** argv) {
    try {
        return run(argc, argv);
    } catch (const std::exception& e) {
        std::printf("bench_gpu FAILED: %s\n", e.what());
        return 1;
    }
}
