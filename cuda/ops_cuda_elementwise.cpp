// Registry glue of the element-wise family on CUDA: unary, binary (with the CPU's broadcast plans,
// kernels/cpu/elementwise_loops.hpp), comparisons, logic, where, add_n and cast. The integer
// divisor/exponent checks run on a host copy of the second operand, as TensorFlow's GPU kernels
// cannot raise them either; that copy synchronizes, and only integer division and pow pay it.
#include "kernels/cpu/elementwise_loops.hpp"
#include "ops_cuda.hpp"

namespace tapeflow::cuda_ops {
namespace {

using cuda_launch::Binary;
using cuda_launch::IndexPlan;
using cuda_launch::Unary;
using cpu::ew::BroadcastPlan;
using cpu::ew::IntCheck;

template <int N>
IndexPlan<N> index_plan(const KernelContext& ctx, const std::array<const Shape*, N>& shapes) {
    BroadcastPlan<N> p;
    if (!cpu::ew::make_plan<N>(ctx.outputs[0].shape(), shapes, p)) cpu::ew::throw_too_many_dims(ctx);
    IndexPlan<N> plan;
    plan.rank = p.rank;
    for (int d = 0; d < p.rank; ++d) {
        plan.dims[d] = p.dims[static_cast<std::size_t>(d)];
        for (int k = 0; k < N; ++k) plan.strides[k][d] = p.strides[static_cast<std::size_t>(k)][static_cast<std::size_t>(d)];
    }
    return plan;
}

template <Unary U>
void unary_kernel(const KernelContext& ctx) {
    const Tensor& x = ctx.inputs[0];
    TAPEFLOW_CUDA_CHECK(cuda_launch::unary(U, elem_of(x.dtype()), x.raw_data(),
                                           ctx.outputs[0].mutable_raw_data(), x.num_elements(),
                                           stream_of(ctx)));
}

template <IntCheck C>
void check_integer_operand(const KernelContext& ctx) {
    if constexpr (C != IntCheck::none) {
        visit_dtype(ctx.inputs[1].dtype(), [&](auto tag) {
            using S = typename decltype(tag)::type;
            if constexpr (std::is_integral_v<S>) {
                const std::array<Tensor, 2> host{ctx.inputs[0], ctx.inputs[1].cpu()};
                cpu::ew::check_integer_operand<C, S>(
                    KernelContext{ctx.op, Device::cpu(), host, ctx.outputs, ctx.attrs});
            }
        });
    }
}

template <Binary B, IntCheck C = IntCheck::none>
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
        TAPEFLOW_CUDA_CHECK(cuda_launch::binary(B, elem, a.raw_data(), b.raw_data(),
                                                y.mutable_raw_data(), n, na == n ? 1 : 0,
                                                nb == n ? 1 : 0, nullptr, stream));
        return;
    }
    const IndexPlan<2> plan = index_plan<2>(ctx, {&a.shape(), &b.shape()});
    TAPEFLOW_CUDA_CHECK(cuda_launch::binary(B, elem, a.raw_data(), b.raw_data(),
                                            y.mutable_raw_data(), n, 1, 1, &plan, stream));
}

void where_kernel(const KernelContext& ctx) {
    const Tensor& y = ctx.outputs[0];
    if (y.num_elements() == 0) return;
    const IndexPlan<3> plan = index_plan<3>(
        ctx, {&ctx.inputs[0].shape(), &ctx.inputs[1].shape(), &ctx.inputs[2].shape()});
    TAPEFLOW_CUDA_CHECK(cuda_launch::where(ctx.inputs[0].raw_data(), ctx.inputs[1].raw_data(),
                                           ctx.inputs[2].raw_data(), y.mutable_raw_data(),
                                           y.num_elements(), static_cast<int>(dtype_size(y.dtype())),
                                           plan, stream_of(ctx)));
}

// ((x0 + x1) + x2) + ..., kAddNMax inputs per launch.
void add_n_kernel(const KernelContext& ctx) {
    const Tensor& y = ctx.outputs[0];
    std::vector<const void*> in;
    for (const Tensor& t : ctx.inputs) in.push_back(t.raw_data());
    cudaStream_t stream = stream_of(ctx);
    for (std::size_t first = 0; first < in.size(); first += cuda_launch::kAddNMax) {
        const auto count = static_cast<int>(std::min<std::size_t>(cuda_launch::kAddNMax, in.size() - first));
        TAPEFLOW_CUDA_CHECK(cuda_launch::add_n(elem_of(y.dtype()), in.data() + first, count, first > 0,
                                               y.mutable_raw_data(), y.num_elements(), stream));
    }
}

void cast_kernel(const KernelContext& ctx) {
    const Tensor& x = ctx.inputs[0];
    const Tensor& y = ctx.outputs[0];
    TAPEFLOW_CUDA_CHECK(cuda_launch::cast(elem_of(x.dtype()), elem_of(y.dtype()), x.raw_data(),
                                          y.mutable_raw_data(), x.num_elements(), stream_of(ctx)));
}

}  // namespace

void register_elementwise_cuda(KernelRegistry& r) {
    using cpu::ew::dtypes_of;
    using cpu::ew::TypeSet;
    constexpr auto kCuda = DeviceType::cuda;
    const DTypeSet num = dtypes_of(TypeSet::numbers);
    const DTypeSet sig = dtypes_of(TypeSet::signed_numbers);
    const DTypeSet flt = dtypes_of(TypeSet::floats);
    const DTypeSet all = dtypes_of(TypeSet::all);
    const DTypeSet bools = dtypes_of(TypeSet::bools);
    constexpr auto kDivisor = IntCheck::nonzero_divisor;
    r.add(Op::cast, kCuda, cast_kernel, kAllTypes);
    r.add(Op::add, kCuda, binary_kernel<Binary::add>, num);
    r.add(Op::subtract, kCuda, binary_kernel<Binary::sub>, num);
    r.add(Op::multiply, kCuda, binary_kernel<Binary::mul>, num);
    r.add(Op::divide, kCuda, binary_kernel<Binary::div, kDivisor>, num);
    r.add(Op::floordiv, kCuda, binary_kernel<Binary::floordiv, kDivisor>, num);
    r.add(Op::floormod, kCuda, binary_kernel<Binary::floormod, kDivisor>, num);
    r.add(Op::pow, kCuda, binary_kernel<Binary::pow, IntCheck::nonnegative_exponent>, sig);
    r.add(Op::maximum, kCuda, binary_kernel<Binary::maximum>, num);
    r.add(Op::minimum, kCuda, binary_kernel<Binary::minimum>, num);
    r.add(Op::squared_difference, kCuda, binary_kernel<Binary::squared_difference>, sig);
    r.add(Op::divide_no_nan, kCuda, binary_kernel<Binary::divide_no_nan>, flt);
    r.add(Op::add_n, kCuda, add_n_kernel, num);
    r.add(Op::equal, kCuda, binary_kernel<Binary::equal>, all);
    r.add(Op::not_equal, kCuda, binary_kernel<Binary::not_equal>, all);
    r.add(Op::less, kCuda, binary_kernel<Binary::less>, num);
    r.add(Op::less_equal, kCuda, binary_kernel<Binary::less_equal>, num);
    r.add(Op::greater, kCuda, binary_kernel<Binary::greater>, num);
    r.add(Op::greater_equal, kCuda, binary_kernel<Binary::greater_equal>, num);
    r.add(Op::logical_and, kCuda, binary_kernel<Binary::logical_and>, bools);
    r.add(Op::logical_or, kCuda, binary_kernel<Binary::logical_or>, bools);
    r.add(Op::logical_not, kCuda, unary_kernel<Unary::logical_not>, bools);
    r.add(Op::where, kCuda, where_kernel, all);
    r.add(Op::negative, kCuda, unary_kernel<Unary::negative>, sig);
    r.add(Op::abs, kCuda, unary_kernel<Unary::abs>, sig);
    r.add(Op::sign, kCuda, unary_kernel<Unary::sign>, sig);
    r.add(Op::square, kCuda, unary_kernel<Unary::square>, sig);
    r.add(Op::round, kCuda, unary_kernel<Unary::round>, sig);
    r.add(Op::reciprocal, kCuda, unary_kernel<Unary::reciprocal>, flt);
    r.add(Op::exp, kCuda, unary_kernel<Unary::exp>, flt);
    r.add(Op::expm1, kCuda, unary_kernel<Unary::expm1>, flt);
    r.add(Op::log, kCuda, unary_kernel<Unary::log>, flt);
    r.add(Op::log1p, kCuda, unary_kernel<Unary::log1p>, flt);
    r.add(Op::sqrt, kCuda, unary_kernel<Unary::sqrt>, flt);
    r.add(Op::rsqrt, kCuda, unary_kernel<Unary::rsqrt>, flt);
    r.add(Op::sin, kCuda, unary_kernel<Unary::sin>, flt);
    r.add(Op::cos, kCuda, unary_kernel<Unary::cos>, flt);
    r.add(Op::tanh, kCuda, unary_kernel<Unary::tanh>, flt);
    r.add(Op::sigmoid, kCuda, unary_kernel<Unary::sigmoid>, flt);
    r.add(Op::erf, kCuda, unary_kernel<Unary::erf>, flt);
    r.add(Op::floor, kCuda, unary_kernel<Unary::floor>, flt);
    r.add(Op::ceil, kCuda, unary_kernel<Unary::ceil>, flt);
    r.add(Op::softplus, kCuda, unary_kernel<Unary::softplus>, flt);
}

}  // namespace tapeflow::cuda_ops
