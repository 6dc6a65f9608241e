// Registry glue of the element-wise family on CUDA: unary (the rows of the unary kernel table,
// kernels/shared/unary_ops.def), binary (with the CPU's broadcast plans,
// kernels/shared/elementwise_host.hpp), comparisons, logic, where, add_n and cast. The integer
// divisor/exponent checks run on a host copy of the second operand, as TensorFlow's GPU kernels
// cannot raise them either; that copy synchronizes, and only integer division and pow pay it.
#include <algorithm>
#include <array>
#include <vector>

#include "core/dtype_dispatch.hpp"
#include "kernels/shared/elementwise_host.hpp"
#include "ops_cuda.hpp"

namespace tapeflow::cuda_ops {
namespace {

using cuda_launch::IndexPlan;
using ew::BroadcastPlan;
using ew::IntCheck;

static_assert(cuda_launch::kMaxDims == ew::kMaxDims, "index plans hold the CPU's broadcast plans");

template <int N>
IndexPlan<N> index_plan(const KernelContext& ctx, const std::array<const Shape*, N>& shapes) {
    BroadcastPlan<N> p;
    if (!ew::make_plan<N>(ctx.outputs[0].shape(), shapes, p)) ew::throw_too_many_dims(ctx);
    IndexPlan<N> plan;
    plan.rank = p.rank;
    for (int d = 0; d < p.rank; ++d) {
        plan.dims[d] = p.dims[static_cast<std::size_t>(d)];
        for (int k = 0; k < N; ++k)
            plan.strides[k][d] =
                p.strides[static_cast<std::size_t>(k)][static_cast<std::size_t>(d)];
    }
    return plan;
}

void unary_kernel(const KernelContext& ctx) {
    const Tensor& x = ctx.inputs[0];
    TAPEFLOW_CUDA_CHECK(cuda_launch::unary(ctx.op,
                                           elem_of(x.dtype()),
                                           x.raw_data(),
                                           ctx.outputs[0].mutable_raw_data(),
                                           x.num_elements(),
                                           stream_of(ctx)));
}

template <IntCheck C>
void check_integer_operand(const KernelContext& ctx) {
    if constexpr (C != IntCheck::none) {
        visit_dtype(ctx.inputs[1].dtype(), [&](auto tag) {
            using S = typename decltype(tag)::type;
            if constexpr (std::is_integral_v<S>) {
                const std::array<Tensor, 2> host{ctx.inputs[0], ctx.inputs[1].cpu()};
                ew::check_integer_operand<C, S>(
                    KernelContext{ctx.op, Device::cpu(), host, ctx.outputs, ctx.attrs});
            }
        });
    }
}

template <IntCheck C>
void binary_kernel(const KernelContext& ctx) {
    const Tensor& a = ctx.inputs[0];
    const Tensor& b = ctx.inputs[1];
    const Tensor& y = ctx.outputs[0];
    const int64_t n = y.num_elements();
    if (n == 0) return;
    check_integer_operand<C>(ctx);
    const int64_t na = a.num_elements();
    const int64_t nb = b.num_elements();
    const cuda_launch::Elem elem = elem_of(a.dtype());
    cudaStream_t stream = stream_of(ctx);
    if ((na == n || na == 1) && (nb == n || nb == 1)) {
        TAPEFLOW_CUDA_CHECK(cuda_launch::binary(ctx.op,
                                                elem,
                                                a.raw_data(),
                                                b.raw_data(),
                                                y.mutable_raw_data(),
                                                n,
                                                na == n ? 1 : 0,
                                                nb == n ? 1 : 0,
                                                nullptr,
                                                stream));
        return;
    }
    const IndexPlan<2> plan = index_plan<2>(ctx, {&a.shape(), &b.shape()});
    TAPEFLOW_CUDA_CHECK(cuda_launch::binary(
        ctx.op, elem, a.raw_data(), b.raw_data(), y.mutable_raw_data(), n, 1, 1, &plan, stream));
}

void where_kernel(const KernelContext& ctx) {
    const Tensor& y = ctx.outputs[0];
    if (y.num_elements() == 0) return;
    const IndexPlan<3> plan = index_plan<3>(
        ctx, {&ctx.inputs[0].shape(), &ctx.inputs[1].shape(), &ctx.inputs[2].shape()});
    TAPEFLOW_CUDA_CHECK(cuda_launch::where(ctx.inputs[0].raw_data(),
                                           ctx.inputs[1].raw_data(),
                                           ctx.inputs[2].raw_data(),
                                           y.mutable_raw_data(),
                                           y.num_elements(),
                                           static_cast<int>(dtype_size(y.dtype())),
                                           plan,
                                           stream_of(ctx)));
}

// ((x0 + x1) + x2) + ..., kAddNMax inputs per launch.
void add_n_kernel(const KernelContext& ctx) {
    const Tensor& y = ctx.outputs[0];
    std::vector<const void*> in;
    for (const Tensor& t : ctx.inputs)
        in.push_back(t.raw_data());
    cudaStream_t stream = stream_of(ctx);
    for (std::size_t first = 0; first < in.size(); first += cuda_launch::kAddNMax) {
        const auto count =
            static_cast<int>(std::min<std::size_t>(cuda_launch::kAddNMax, in.size() - first));
        TAPEFLOW_CUDA_CHECK(cuda_launch::add_n(elem_of(y.dtype()),
                                               in.data() + first,
                                               count,
                                               first > 0,
                                               y.mutable_raw_data(),
                                               y.num_elements(),
                                               stream));
    }
}

void cast_kernel(const KernelContext& ctx) {
    const Tensor& x = ctx.inputs[0];
    const Tensor& y = ctx.outputs[0];
    TAPEFLOW_CUDA_CHECK(cuda_launch::cast(elem_of(x.dtype()),
                                          elem_of(y.dtype()),
                                          x.raw_data(),
                                          y.mutable_raw_data(),
                                          x.num_elements(),
                                          stream_of(ctx)));
}

}  // namespace

void register_elementwise_cuda(KernelRegistry& r) {
    using ew::dtypes_of;
    using ew::TypeSet;
    constexpr auto kCuda = DeviceType::cuda;
    const DTypeSet num = dtypes_of(TypeSet::numbers);
    const DTypeSet all = dtypes_of(TypeSet::all);
    const DTypeSet bools = dtypes_of(TypeSet::bools);
    r.add(Op::cast, kCuda, cast_kernel, kAllTypes);
    r.add(Op::add_n, kCuda, add_n_kernel, num);
#define TFL_BINARY(op, functor, dtypes, check, cost) \
    r.add(Op::op, kCuda, binary_kernel<IntCheck::check>, dtypes_of(TypeSet::dtypes));
#define TFL_COMPARE(op, functor, dtypes) \
    r.add(Op::op, kCuda, binary_kernel<IntCheck::none>, dtypes_of(TypeSet::dtypes));
#include "kernels/shared/binary_ops.def"
#undef TFL_COMPARE
#undef TFL_BINARY
    r.add(Op::logical_not, kCuda, unary_kernel, bools);
    r.add(Op::where, kCuda, where_kernel, all);
#define TFL_UNARY(op, functor, dtypes, cost) \
    r.add(Op::op, kCuda, unary_kernel, dtypes_of(TypeSet::dtypes));
#include "kernels/shared/unary_ops.def"
#undef TFL_UNARY
}

}  // namespace tapeflow::cuda_ops
