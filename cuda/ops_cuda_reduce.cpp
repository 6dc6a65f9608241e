// Registry glue of the reduction table (kernels/shared/reduce_ops.def) on CUDA: the registration is
// generated from its rows and the launchers take the Op (cuda/reduce_kernels.cu switches over the
// same rows). Reductions merge the input's dimensions into kept and reduced groups (any axes).
#include <fmt/format.h>

#include "kernels/shared/elementwise_host.hpp"
#include "ops_cuda.hpp"

namespace tapeflow::cuda_ops {

namespace {

using cuda_launch::IndexPlan;

// kept dims (in order), then reduced dims, merging neighbours of the same kind and dropping 1s.
IndexPlan<1> reduce_plan(const Shape& shape, const std::vector<int64_t>& axes, int& kept_rank) {
    const auto& dims = shape.dims();
    const auto rank = static_cast<int64_t>(dims.size());
    std::vector<bool> reduced(dims.size(), false);
    for (int64_t a : axes)
        reduced[static_cast<std::size_t>(((a % rank) + rank) % rank)] = true;
    const std::vector<int64_t> strides = row_major_strides(dims);
    std::vector<int64_t> kd, ks, rd, rs;
    int last = -1;  // kind of the previous kept-or-reduced dim: 0 kept, 1 reduced
    for (std::size_t d = 0; d < dims.size(); ++d) {
        if (dims[d] == 1) continue;
        const int kind = reduced[d] ? 1 : 0;
        auto& vd = kind ? rd : kd;
        auto& vs = kind ? rs : ks;
        if (kind == last) {  // contiguous with the previous dim of its group: merge
            vd.back() *= dims[d];
            vs.back() = strides[d];
        } else {
            vd.push_back(dims[d]);
            vs.push_back(strides[d]);
        }
        last = kind;
    }
    if (kd.size() + rd.size() > static_cast<std::size_t>(cuda_launch::kMaxDims)) {
        throw errors::UnimplementedError(
            fmt::format("reduction over {}: too many dimensions", shape.str()));
    }
    IndexPlan<1> plan;
    kept_rank = static_cast<int>(kd.size());
    for (std::size_t i = 0; i < kd.size(); ++i) {
        plan.dims[plan.rank] = kd[i];
        plan.strides[0][plan.rank++] = ks[i];
    }
    for (std::size_t i = 0; i < rd.size(); ++i) {
        plan.dims[plan.rank] = rd[i];
        plan.strides[0][plan.rank++] = rs[i];
    }
    return plan;
}

void reduce_kernel(const KernelContext& ctx) {
    const Tensor& x = ctx.inputs[0];
    const Tensor& y = ctx.outputs[0];
    if (y.num_elements() == 0) return;
    int kept_rank = 0;
    const IndexPlan<1> plan =
        reduce_plan(x.shape(), ctx.attrs.get<std::vector<int64_t>>("axes"), kept_rank);
    const int64_t n_out = y.num_elements();
    const int64_t n_red = n_out == 0 ? 0 : x.num_elements() / n_out;
    const int sms = sm_count(ctx.device);
    const int64_t scratch_bytes =
        cuda_launch::reduce_scratch_bytes(elem_of(x.dtype()), n_out, n_red, sms);
    // Freed when this returns: the block is reused only by work queued after this reduction.
    const Tensor scratch =
        Tensor::empty(Shape{std::max<int64_t>(scratch_bytes, 0)}, DType::uint8, ctx.device);
    TAPEFLOW_CUDA_CHECK(
        cuda_launch::reduce(ctx.op,
                            elem_of(x.dtype()),
                            x.raw_data(),
                            y.mutable_raw_data(),
                            plan,
                            kept_rank,
                            scratch_bytes > 0 ? scratch.mutable_raw_data() : nullptr,
                            sms,
                            stream_of(ctx)));
}

struct Around {
    int64_t outer = 1, n = 1, inner = 1;
};

Around around_axis(const Shape& shape, int64_t axis) {
    Around a;
    for (int64_t d = 0; d < shape.rank(); ++d) {
        const int64_t size = shape.dims()[static_cast<std::size_t>(d)];
        (d < axis ? a.outer : d == axis ? a.n : a.inner) *= size;
    }
    return a;
}

void arg_kernel(const KernelContext& ctx) {
    const Tensor& x = ctx.inputs[0];
    const Tensor& y = ctx.outputs[0];
    const Around a = around_axis(x.shape(), ctx.attrs.get<int64_t>("axis"));
    TAPEFLOW_CUDA_CHECK(cuda_launch::arg_reduce(ctx.op,
                                                elem_of(x.dtype()),
                                                x.raw_data(),
                                                y.mutable_raw_data(),
                                                y.dtype() == DType::int64,
                                                a.outer,
                                                a.n,
                                                a.inner,
                                                stream_of(ctx)));
}

void scan_kernel(const KernelContext& ctx) {
    const Tensor& x = ctx.inputs[0];
    const Around a = around_axis(x.shape(), ctx.attrs.get<int64_t>("axis"));
    TAPEFLOW_CUDA_CHECK(cuda_launch::scan(ctx.op,
                                          elem_of(x.dtype()),
                                          x.raw_data(),
                                          ctx.outputs[0].mutable_raw_data(),
                                          a.outer,
                                          a.n,
                                          a.inner,
                                          ctx.attrs.get<bool>("exclusive"),
                                          ctx.attrs.get<bool>("reverse"),
                                          stream_of(ctx)));
}

}  // namespace

void register_reduce_cuda(KernelRegistry& r) {
    using ew::dtypes_of;
    using ew::TypeSet;
    constexpr auto kCuda = DeviceType::cuda;
#define TFL_REDUCE(op, combine, dtypes) \
    r.add(Op::op, kCuda, reduce_kernel, dtypes_of(TypeSet::dtypes));
#define TFL_ARG_REDUCE(op, extremum, dtypes) \
    r.add(Op::op, kCuda, arg_kernel, dtypes_of(TypeSet::dtypes));
#define TFL_SCAN(op, combine, dtypes) r.add(Op::op, kCuda, scan_kernel, dtypes_of(TypeSet::dtypes));
#include "kernels/shared/reduce_ops.def"
#undef TFL_SCAN
#undef TFL_ARG_REDUCE
#undef TFL_REDUCE
}

}  // namespace tapeflow::cuda_ops
