// CPU kernel of add_n, and the registration of the whole element-wise family: the binary ops live
// in binary_cpu.cpp, the unary ops in unary_cpu.cpp, comparisons, logic and where in
// compare_cpu.cpp (split so that each file compiles in reasonable time; the binary and unary ops
// are rows of the kernel tables in kernels/shared/). The math is in
// kernels/shared/elementwise_functors.hpp, the loops in elementwise_loops.hpp.
#include <vector>

#include "kernels/cpu/elementwise_loops.hpp"
#include "kernels/shared/elementwise_functors.hpp"
#include "ops/op_families.hpp"

namespace tapeflow::ew {

// Declared in kernels/shared/elementwise_host.hpp (the CUDA glue raises it too).
void throw_too_many_dims(const KernelContext& ctx) {
    std::string shapes;
    for (const Tensor& t : ctx.inputs)
        shapes += (shapes.empty() ? "" : " and ") + t.shape().debug_string();
    throw errors::UnimplementedError(
        fmt::format("Broadcast between {} is not supported: more than {} dimensions remain after "
                    "merging the ones that broadcast alike",
                    shapes,
                    kMaxDims),
        std::string(op_type(ctx.op)));
}

}  // namespace tapeflow::ew

namespace tapeflow::cpu::ew {

void throw_bad_dtype(const KernelContext& ctx, DType dtype) {
    throw errors::InternalError(
        fmt::format("the CPU kernel of '{}' was called with dtype {}; this is a tapeflow bug",
                    op_name(ctx.op),
                    dtype_name(dtype)),
        std::string(op_type(ctx.op)));
}

namespace {

template <class S>
void accumulate(S* __restrict acc, const S* __restrict x, int64_t n) {
    for (int64_t i = 0; i < n; ++i)
        acc[i] = tapeflow::ew::Add{}(acc[i], x[i]);
}

// AddN sums left to right, ((x0 + x1) + x2) + ..., like TensorFlow's kernel. Each chunk is summed
// in blocks that stay in L1 while every input is added in.
void add_n_kernel(const KernelContext& ctx) {
    const Tensor& y = ctx.outputs[0];
    const int64_t n = y.num_elements();
    const std::size_t k = ctx.inputs.size();
    const DType dtype = y.dtype();
    visit_dtype(dtype, [&](auto tag) {
        using S = typename decltype(tag)::type;
        if constexpr (!in_set<TypeSet::numbers, S>()) {
            throw_bad_dtype(ctx, dtype);
        } else {
            using C = compute_t<S>;
            std::vector<const S*> in(k);
            for (std::size_t j = 0; j < k; ++j)
                in[j] = static_cast<const S*>(ctx.inputs[j].raw_data());
            auto* out = static_cast<S*>(y.mutable_raw_data());
            constexpr int64_t kBlock = 2048;
            parallel_for(n, kGrain, [&](int64_t begin, int64_t end) {
                alignas(64) C acc[kBlock];
                for (int64_t b = begin; b < end; b += kBlock) {
                    const int64_t len = std::min(kBlock, end - b);
                    if (k == 1) {
                        std::copy(in[0] + b, in[0] + b + len, out + b);
                        continue;
                    }
                    if constexpr (is_half_v<S>) {
                        for (int64_t i = 0; i < len; ++i)
                            acc[i] = load(in[0][b + i]) + load(in[1][b + i]);
                        for (std::size_t j = 2; j < k; ++j) {
                            for (int64_t i = 0; i < len; ++i)
                                acc[i] += load(in[j][b + i]);
                        }
                        for (int64_t i = 0; i < len; ++i)
                            out[b + i] = store<S>(acc[i]);
                    } else {
                        binary_run<true, true>(
                            tapeflow::ew::Add{}, in[0] + b, in[1] + b, out + b, len);
                        for (std::size_t j = 2; j < k; ++j)
                            accumulate(out + b, in[j] + b, len);
                    }
                }
            });
        }
    });
}

}  // namespace
}  // namespace tapeflow::cpu::ew

namespace tapeflow {

void register_elementwise_cpu(KernelRegistry& r) {
    using namespace cpu::ew;
    r.add(Op::add_n, DeviceType::cpu, add_n_kernel, dtypes_of(TypeSet::numbers));
    register_binary_cpu(r);
    register_unary_cpu(r);
    register_compare_cpu(r);
}

}  // namespace tapeflow
