// The CPU/GPU parity suite: every row of the op-case table (tests/ops/op_cases.cpp) runs on both
// devices and the results (and, for rows with `grad`, the tape gradients) must agree within a
// per-dtype tolerance. A dispatched op without a CUDA kernel or a row fails the coverage test by
// name. Ops that the GPU still runs through the host fallback are listed (not failed).
// TAPEFLOW_PARITY_FILTER=<substr>,<substr> runs only the cases whose name contains one (sanitizer).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <tuple>

#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

#include "ops/apply.hpp"
#include "ops/dispatch.hpp"
#include "ops/op.hpp"
#include "ops/op_cases.hpp"
#include "ops/training_ops.hpp"

namespace tf = tapeflow;
using tf::Op;
using tf::Tensor;

namespace tapeflow {
void cuda_synchronize(int device);  // cuda/backend.cpp
namespace cuda_ops {
bool uses_host_fallback(Op op, DType dtype);  // cuda/ops_cuda.cpp
}
}  // namespace tapeflow

namespace {

using namespace tf::op_cases;

// TAPEFLOW_GPU_TESTS_ON_CPU=1 runs the suite against the CPU itself (gpu_gate.cpp lets it through):
// a check of the cases on machines without a GPU.
const bool kOnCpu = std::getenv("TAPEFLOW_GPU_TESTS_ON_CPU") != nullptr;
const tf::Device kGpu = kOnCpu ? tf::Device::cpu() : tf::Device::cuda(0);
const std::vector<tf::DType> kAll{tf::float32,
                                  tf::float64,
                                  tf::float16,
                                  tf::bfloat16,
                                  tf::int32,
                                  tf::int64,
                                  tf::uint8,
                                  tf::bool_};

// "" when the GPU's result equals the CPU's within the dtype's tolerance, else the difference.
std::string compare(const Tensor& cpu, const Tensor& gpu, double tol_scale = 1) {
    if (gpu.device() != kGpu) return "result is on " + gpu.device().str() + ", not the GPU";
    return first_difference(cpu, gpu, tolerance(cpu.dtype()) * tol_scale);
}

// TAPEFLOW_PARITY_FILTER: comma-separated substrings; a case runs when its name contains one.
bool selected(const std::string& name) {
    const char* filter = std::getenv("TAPEFLOW_PARITY_FILTER");
    if (filter == nullptr) return true;
    const std::string list = filter;
    for (std::size_t begin = 0; begin <= list.size();) {
        std::size_t end = list.find(',', begin);
        if (end == std::string::npos) end = list.size();
        if (end > begin && name.find(list.substr(begin, end - begin)) != std::string::npos)
            return true;
        begin = end + 1;
    }
    return false;
}

// Runs the case on `device` (inputs copied there), returning outputs and input gradients.
std::pair<std::vector<Tensor>, std::vector<Tensor>> run_case(const Case& k,
                                                             const std::vector<Tensor>& host_inputs,
                                                             tf::Device device,
                                                             bool grad) {
    auto scope = tf::device(device);
    std::vector<Tensor> x;
    for (const Tensor& t : host_inputs)
        x.push_back(t.to(device));
    if (!grad) return {k.f(x), {}};
    tf::GradientTape tape;
    std::vector<Tensor> sources;
    for (const Tensor& t : x) {
        if (is_float(t.dtype())) sources.push_back(t);
    }
    tape.watch(sources);
    std::vector<Tensor> y = k.f(x);
    Tensor target;
    for (std::size_t i = 0; i < y.size(); ++i) {
        if (!is_float(y[i].dtype())) continue;
        // Fixed weights (a ramp) so that every output element gets its own upstream value.
        Tensor w =
            tf::cast(tf::range(1, 1 + static_cast<double>(y[i].num_elements()), 1, tf::float64),
                     y[i].dtype());
        w = tf::reshape(tf::cos(w), y[i].shape());
        Tensor term = tf::reduce_sum(y[i] * w);
        target = target.defined() ? target + term : term;
    }
    std::vector<Tensor> grads;
    if (!target.defined()) return {y, grads};
    for (const tf::Gradient& g : tape.gradient(target, sources))
        grads.push_back(g.dense());
    return {y, grads};
}

}  // namespace

// Ops that have no CUDA kernel yet, listed (printed on every run) instead of failed. None now: the
// training ops (fused optimizer updates) were the last (cuda/optimizer_kernels.cu).
bool known_cpu_only(Op) {
    return false;
}

TEST_CASE("every dispatched op has a CUDA kernel and a parity case", "[gpu][parity]") {
    std::set<Op> covered;
    for (const Case& k : all_cases())
        covered.insert(k.covers.begin(), k.covers.end());
    std::string missing_kernel, missing_case, fallback, cpu_only;
    // append, not " " + name: GCC 12's -Wrestrict misfires on the inlined operator+ (PR 105329)
    auto add = [](std::string& list, std::string_view name) {
        list.append(" ").append(name);
    };
    for (int i = 0; i < tf::kNumOps; ++i) {
        const auto op = static_cast<Op>(i);
        if (tf::op_dispatch(op) == tf::DispatchOn::none) continue;
        if (known_cpu_only(op)) {
            add(cpu_only, tf::op_name(op));
            continue;
        }
        if (!tf::kernel_registry().has(op, tf::DeviceType::cuda))
            add(missing_kernel, tf::op_name(op));
        if (covered.count(op) == 0) add(missing_case, tf::op_name(op));
        for (tf::DType d : kAll) {
            if (tf::cuda_ops::uses_host_fallback(op, d)) {
                add(fallback,
                    std::string(tf::op_name(op)) + "(" + std::string(tf::dtype_name(d)) + ")");
            }
        }
    }
    std::printf("ops on the GPU through the host fallback (CPU kernel on copies):%s\n",
                fallback.empty() ? " none" : fallback.c_str());
    std::printf("ops not yet on the GPU (CPU only):%s\n",
                cpu_only.empty() ? " none" : cpu_only.c_str());
    INFO("ops without a CUDA kernel:" << missing_kernel);
    CHECK(missing_kernel.empty());
    INFO("ops without a parity case:" << missing_case);
    CHECK(missing_case.empty());
}

TEST_CASE("every op gives the CPU's results on the GPU", "[gpu][parity]") {
    int ran = 0;
    std::string failures;
    for (const Case& k : all_cases()) {
        for (tf::DType dtype : k.dtypes) {
            const std::string name = k.name + "/" + std::string(tf::dtype_name(dtype));
            if (!selected(name)) continue;
            ++ran;
            std::printf("case %s\n", name.c_str());  // the last line names the culprit of a crash
            std::fflush(stdout);
            try {
                const std::vector<Tensor> inputs = make_inputs(k, dtype);
                const bool grad = k.grad && (dtype == tf::float32 || dtype == tf::float64);
                auto [cpu_y, cpu_g] = run_case(k, inputs, tf::Device::cpu(), grad);
                auto [gpu_y, gpu_g] = run_case(k, inputs, kGpu, grad);
                std::string diff = cpu_y.size() == gpu_y.size() ? "" : "output count differs";
                for (std::size_t i = 0; diff.empty() && i < cpu_y.size(); ++i) {
                    diff = compare(cpu_y[i], gpu_y[i], k.covers[0] == Op::reduce_prod ? 20 : 1);
                    if (!diff.empty()) diff = "output " + std::to_string(i) + ": " + diff;
                }
                for (std::size_t i = 0; diff.empty() && i < cpu_g.size(); ++i) {
                    diff = compare(cpu_g[i], gpu_g[i], 10);
                    if (!diff.empty()) diff = "gradient " + std::to_string(i) + ": " + diff;
                }
                if (!diff.empty()) failures += "\n  " + name + ": " + diff;
            } catch (const std::exception& e) {
                failures += "\n  " + name + ": threw " + e.what();
            }
        }
    }
    if (!kOnCpu) tf::cuda_synchronize(0);
    std::printf("parity: %d op/dtype cases ran\n", ran);
    INFO("cases that differ:" << failures);
    CHECK(failures.empty());
}

// The sparse training ops sum duplicate rows first (training::deduplicate). On the GPU that is a
// gather-and-add chain in the CPU's order instead of the atomic segment sum: the sums must equal
// the CPU's bit for bit, also where the order of float additions matters (1e8 + 1 - 1e8 + 1).
TEST_CASE("duplicate rows of sparse updates sum in the CPU's order", "[gpu][parity]") {
    const std::vector<int64_t> segment{0, 1, 0, 0, 2, 0, 1, 2};
    const std::vector<double> rows{1e8, 3, 1, -1e8, 5, 1, -3, 0.1};
    std::vector<double> v;
    for (double r : rows) {
        for (double k : {1.0, -0.5, 1e-3})
            v.push_back(r * k);
    }
    for (tf::DType dtype : {tf::float32, tf::float64}) {
        const Tensor values = tf::constant(v, tf::Shape{8, 3}, tf::float64).cast(dtype);
        const Tensor ids = tf::constant(segment, tf::Shape{8}, tf::int64);
        const auto expected =
            tf::unsorted_segment_sum(values, ids, 3).cast(tf::float64).to_vector<double>();
        const auto chain = tf::training::sum_segments_in_order(values.to(kGpu), segment, 3);
        CHECK(chain.device() == kGpu);
        CHECK(chain.cpu().cast(tf::float64).to_vector<double>() == expected);
        const Tensor indices =
            tf::constant(std::vector<int64_t>{4, 0, 4, 4, 2, 4, 0, 2}, tf::Shape{8}, tf::int64);
        const tf::IndexedSlices unique =
            tf::training::deduplicate({values.to(kGpu), indices.to(kGpu), {5, 3}});
        CHECK(unique.indices.cpu().to_vector<int64_t>() == std::vector<int64_t>{4, 0, 2});
        CHECK(unique.values.cpu().cast(tf::float64).to_vector<double>() == expected);
    }
}
