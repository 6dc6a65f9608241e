// Registry glue of the training ops (fused optimizer updates) on CUDA: the variable and slot
// buffers (inputs 0..kSlots, written in place) and the attrs, read into opt::Hyper on the host as
// the CPU kernels read them, go to the launchers of optimizer_kernels.cu. The sparse ops get unique
// indices (lib/ops/training_ops.cpp sums duplicates and checks the range first).
#include "kernels/shared/optimizer_attrs.hpp"
#include "ops_cuda.hpp"

namespace tapeflow::cuda_ops {
namespace {

using cuda_launch::Optimizer;

// Inputs: var, slots..., then `rest` more (grad; or values, indices).
std::array<void*, cuda_launch::kMaxSlots> slot_buffers(const KernelContext& ctx, std::size_t rest) {
    std::array<void*, cuda_launch::kMaxSlots> slots{};
    for (std::size_t k = 1; k + rest < ctx.inputs.size(); ++k) {
        slots[k - 1] = ctx.inputs[k].mutable_raw_data();
    }
    return slots;
}

template <Optimizer O>
void dense_kernel(const KernelContext& ctx) {
    const Tensor& var = ctx.inputs[0];
    const auto slots = slot_buffers(ctx, 1);
    TAPEFLOW_CUDA_CHECK(cuda_launch::optimizer_update(
        O, elem_of(var.dtype()), opt::hyper_of(ctx.attrs), var.mutable_raw_data(), slots.data(),
        ctx.inputs.back().raw_data(), var.num_elements(), stream_of(ctx)));
}

template <Optimizer O>
void sparse_kernel(const KernelContext& ctx) {
    const Tensor& var = ctx.inputs[0];
    const Tensor& values = ctx.inputs[ctx.inputs.size() - 2];
    const Tensor& indices = ctx.inputs.back();
    const int64_t rows = indices.num_elements();
    const int64_t var_rows = var.shape()[0];
    const int64_t row_len = var_rows == 0 ? 0 : var.num_elements() / var_rows;
    const auto slots = slot_buffers(ctx, 2);
    TAPEFLOW_CUDA_CHECK(cuda_launch::sparse_optimizer_update(
        O, elem_of(var.dtype()), opt::hyper_of(ctx.attrs), var.mutable_raw_data(), slots.data(),
        values.raw_data(), indices.raw_data(), indices.dtype() == DType::int64, rows, row_len,
        stream_of(ctx)));
}

}  // namespace

void register_training_cuda(KernelRegistry& r) {
    constexpr auto kCuda = DeviceType::cuda;
    const DTypeSet kTypes{DType::float32, DType::float64};  // the CPU kernels' dtypes
    using O = Optimizer;
    constexpr auto kProximalGd = O::proximal_gradient_descent;
    r.add(Op::apply_gradient_descent, kCuda, dense_kernel<O::gradient_descent>, kTypes);
    r.add(Op::apply_proximal_gradient_descent, kCuda, dense_kernel<kProximalGd>, kTypes);
    r.add(Op::apply_momentum, kCuda, dense_kernel<O::momentum>, kTypes);
    r.add(Op::apply_keras_momentum, kCuda, dense_kernel<O::keras_momentum>, kTypes);
    r.add(Op::apply_adagrad, kCuda, dense_kernel<O::adagrad>, kTypes);
    r.add(Op::apply_proximal_adagrad, kCuda, dense_kernel<O::proximal_adagrad>, kTypes);
    r.add(Op::apply_adadelta, kCuda, dense_kernel<O::adadelta>, kTypes);
    r.add(Op::apply_adam, kCuda, dense_kernel<O::adam>, kTypes);
    r.add(Op::apply_adam_with_amsgrad, kCuda, dense_kernel<O::adam_with_amsgrad>, kTypes);
    r.add(Op::apply_ada_max, kCuda, dense_kernel<O::ada_max>, kTypes);
    r.add(Op::apply_nadam, kCuda, dense_kernel<O::nadam>, kTypes);
    r.add(Op::apply_ftrl, kCuda, dense_kernel<O::ftrl>, kTypes);
    r.add(Op::apply_rms_prop, kCuda, dense_kernel<O::rms_prop>, kTypes);
    r.add(Op::apply_centered_rms_prop, kCuda, dense_kernel<O::centered_rms_prop>, kTypes);
    r.add(Op::apply_keras_rms_prop, kCuda, dense_kernel<O::keras_rms_prop>, kTypes);
    r.add(Op::apply_keras_centered_rms_prop, kCuda, dense_kernel<O::keras_centered_rms_prop>,
          kTypes);
    r.add(Op::sparse_apply_gradient_descent, kCuda, sparse_kernel<O::gradient_descent>, kTypes);
    r.add(Op::sparse_apply_proximal_gradient_descent, kCuda, sparse_kernel<kProximalGd>, kTypes);
    r.add(Op::sparse_apply_momentum, kCuda, sparse_kernel<O::momentum>, kTypes);
    r.add(Op::sparse_apply_adagrad, kCuda, sparse_kernel<O::adagrad>, kTypes);
    r.add(Op::sparse_apply_proximal_adagrad, kCuda, sparse_kernel<O::proximal_adagrad>, kTypes);
    r.add(Op::sparse_apply_adadelta, kCuda, sparse_kernel<O::adadelta>, kTypes);
    r.add(Op::sparse_apply_ftrl, kCuda, sparse_kernel<O::ftrl>, kTypes);
    r.add(Op::sparse_apply_rms_prop, kCuda, sparse_kernel<O::rms_prop>, kTypes);
    r.add(Op::sparse_apply_centered_rms_prop, kCuda, sparse_kernel<O::centered_rms_prop>, kTypes);
}

}  // namespace tapeflow::cuda_ops
