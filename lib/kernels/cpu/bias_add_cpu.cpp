// CPU kernel of BiasAdd: out = x + bias along the channel dimension (last for NHWC, 1 for NCHW).
// Both layouts are runs of contiguous elements that share one bias value (NCHW) or restart the
// bias vector (NHWC), so the inner loops are plain and vectorize.
#include <algorithm>

#include "kernels/cpu/elementwise_loops.hpp"
#include "kernels/shared/elementwise_functors.hpp"
#include "ops/op_families.hpp"

namespace tapeflow::cpu {
namespace {

void bias_add_kernel(const KernelContext& ctx) {
    const Tensor& x = ctx.inputs[0];
    const Tensor& bias = ctx.inputs[1];
    const int64_t n = x.num_elements();
    if (n == 0) return;
    const int64_t c = bias.num_elements();
    const bool nchw = ctx.attrs.get<bool>("nchw");
    // NCHW: runs of `inner` elements per (n, c) with one bias value; NHWC: runs of c elements.
    const int64_t inner = nchw ? n / (x.shape()[0] * c) : c;
    ew::visit_in_set<ew::TypeSet::numbers>(ctx, x.dtype(), [&](auto tag) {
        using S = typename decltype(tag)::type;
        const auto* in = static_cast<const S*>(x.raw_data());
        const auto* b = static_cast<const S*>(bias.raw_data());
        auto* out = static_cast<S*>(ctx.outputs[0].mutable_raw_data());
        const int64_t runs = n / inner;
        const int64_t grain = std::max<int64_t>(1, ew::kGrain / std::max<int64_t>(inner, 1));
        parallel_for(runs, grain, [&](int64_t begin, int64_t end) {
            for (int64_t r = begin; r < end; ++r) {
                const S* xr = in + r * inner;
                S* yr = out + r * inner;
                if (nchw) {
                    ew::binary_run<true, false>(tapeflow::ew::Add{}, xr, b + r % c, yr, inner);
                } else {
                    ew::binary_run<true, true>(tapeflow::ew::Add{}, xr, b, yr, inner);
                }
            }
        });
    });
}

}  // namespace
}  // namespace tapeflow::cpu

namespace tapeflow {

void register_bias_add_cpu(KernelRegistry& r) {
    r.add(Op::bias_add,
          DeviceType::cpu,
          cpu::bias_add_kernel,
          cpu::ew::dtypes_of(cpu::ew::TypeSet::numbers));
}

}  // namespace tapeflow
