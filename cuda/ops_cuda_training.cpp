// Registry glue of the training ops (fused optimizer updates) on CUDA, for the rows of the update
// table (kernels/shared/optimizer_ops.def): the variable and slot buffers (inputs 0..kSlots,
// written in place) and the attrs, read into opt::Hyper on the host as the CPU kernels read them,
// go to the launchers of optimizer_kernels.cu. The sparse ops get unique indices
// (lib/ops/training_ops.cpp sums duplicates and checks the range first).
#include "kernels/shared/optimizer_attrs.hpp"
#include "ops_cuda.hpp"

namespace tapeflow::cuda_ops {
namespace {

// Inputs: var, slots..., then `rest` more (grad; or values, indices).
std::array<void*, cuda_launch::kMaxSlots> slot_buffers(const KernelContext& ctx, std::size_t rest) {
    std::array<void*, cuda_launch::kMaxSlots> slots{};
    for (std::size_t k = 1; k + rest < ctx.inputs.size(); ++k) {
        slots[k - 1] = ctx.inputs[k].mutable_raw_data();
    }
    return slots;
}

void dense_kernel(const KernelContext& ctx) {
    const Tensor& var = ctx.inputs[0];
    const auto slots = slot_buffers(ctx, 1);
    TAPEFLOW_CUDA_CHECK(cuda_launch::optimizer_update(ctx.op,
                                                      elem_of(var.dtype()),
                                                      opt::hyper_of(ctx.attrs),
                                                      var.mutable_raw_data(),
                                                      slots.data(),
                                                      ctx.inputs.back().raw_data(),
                                                      var.num_elements(),
                                                      stream_of(ctx)));
}

void sparse_kernel(const KernelContext& ctx) {
    const Tensor& var = ctx.inputs[0];
    const Tensor& values = ctx.inputs[ctx.inputs.size() - 2];
    const Tensor& indices = ctx.inputs.back();
    const int64_t rows = indices.num_elements();
    const int64_t var_rows = var.shape()[0];
    const int64_t row_len = var_rows == 0 ? 0 : var.num_elements() / var_rows;
    const auto slots = slot_buffers(ctx, 2);
    TAPEFLOW_CUDA_CHECK(cuda_launch::sparse_optimizer_update(ctx.op,
                                                             elem_of(var.dtype()),
                                                             opt::hyper_of(ctx.attrs),
                                                             var.mutable_raw_data(),
                                                             slots.data(),
                                                             values.raw_data(),
                                                             indices.raw_data(),
                                                             indices.dtype() == DType::int64,
                                                             rows,
                                                             row_len,
                                                             stream_of(ctx)));
}

}  // namespace

void register_training_cuda(KernelRegistry& r) {
    const DTypeSet kTypes{DType::float32, DType::float64};  // the CPU kernels' dtypes
#define TFL_UPDATE(op, functor, form, attrs) r.add(Op::op, DeviceType::cuda, form##_kernel, kTypes);
#include "kernels/shared/optimizer_ops.def"
#undef TFL_UPDATE
}

}  // namespace tapeflow::cuda_ops
