// CPU kernels of the creation ops: identity, cast, fill, one_hot.
#include <cstring>

#include "core/dtype_dispatch.hpp"
#include "core/parallel.hpp"
#include "kernels/cpu/kernels_cpu.hpp"
#include "ops/op_families.hpp"

namespace tapeflow::cpu {
namespace {
constexpr int64_t kGrain = 1 << 15;  // elements per chunk before a loop goes parallel
}  // namespace

void identity_kernel(const KernelContext& ctx) {
    const Tensor& x = ctx.inputs[0];
    if (x.nbytes() != 0) std::memcpy(ctx.outputs[0].mutable_raw_data(), x.raw_data(), x.nbytes());
}

void cast_kernel(const KernelContext& ctx) {
    const Tensor& x = ctx.inputs[0];
    const Tensor& y = ctx.outputs[0];
    visit_dtype(x.dtype(), [&](auto from_tag) {
        using From = typename decltype(from_tag)::type;
        visit_dtype(y.dtype(), [&](auto to_tag) {
            using To = typename decltype(to_tag)::type;
            const auto* in = static_cast<const From*>(x.raw_data());
            auto* out = static_cast<To*>(y.mutable_raw_data());
            parallel_for(x.num_elements(), kGrain, [&](int64_t begin, int64_t end) {
                for (int64_t i = begin; i < end; ++i)
                    out[i] = convert_element<To>(in[i]);
            });
        });
    });
}

void fill_kernel(const KernelContext& ctx) {
    const Tensor& y = ctx.outputs[0];
    const double value = ctx.attrs.get<double>("value");
    visit_dtype(y.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T v = convert_element<T>(value);
        auto* out = static_cast<T*>(y.mutable_raw_data());
        parallel_for(y.num_elements(), kGrain, [&](int64_t begin, int64_t end) {
            std::fill(out + begin, out + end, v);
        });
    });
}

// Output viewed as [outer, depth, inner] where outer/inner are the index dims before/after `axis`.
void one_hot_kernel(const KernelContext& ctx) {
    const Tensor& indices = ctx.inputs[0];
    const Tensor& y = ctx.outputs[0];
    const auto depth = ctx.attrs.get<int64_t>("depth");
    const auto axis = ctx.attrs.get<int64_t>("axis");
    int64_t inner = 1;
    for (int64_t d = axis; d < indices.rank(); ++d)
        inner *= indices.shape().dims()[d];
    const int64_t outer = inner == 0 ? 0 : indices.num_elements() / inner;
    visit_dtype(indices.dtype(), [&](auto index_tag) {
        using I = typename decltype(index_tag)::type;
        if constexpr (std::is_integral_v<I> && !std::is_same_v<I, bool>) {
            visit_dtype(y.dtype(), [&](auto tag) {
                using T = typename decltype(tag)::type;
                const T on = convert_element<T>(ctx.attrs.get<double>("on_value"));
                const T off = convert_element<T>(ctx.attrs.get<double>("off_value"));
                const auto* idx = static_cast<const I*>(indices.raw_data());
                auto* out = static_cast<T*>(y.mutable_raw_data());
                std::fill(out, out + y.num_elements(), off);
                for (int64_t o = 0; o < outer; ++o) {
                    for (int64_t i = 0; i < inner; ++i) {
                        const auto k = static_cast<int64_t>(idx[o * inner + i]);
                        if (k >= 0 && k < depth) out[(o * depth + k) * inner + i] = on;
                    }
                }
            });
        }
    });
}

}  // namespace tapeflow::cpu

namespace tapeflow {

void register_creation_cpu(KernelRegistry& r) {
    using namespace cpu;
    constexpr auto kCpu = DeviceType::cpu;
    r.add(Op::identity, kCpu, identity_kernel, kAllTypes);
    r.add(Op::cast, kCpu, cast_kernel, kAllTypes);
    r.add(Op::fill, kCpu, fill_kernel, kAllTypes);
    r.add(Op::one_hot, kCpu, one_hot_kernel, kAllTypes);
    r.add(Op::random_uniform,
          kCpu,
          random_uniform_kernel,
          kFloatTypes | DTypeSet{DType::int32, DType::int64});
    r.add(Op::random_normal, kCpu, random_normal_kernel, kFloatTypes);
    r.add(Op::truncated_normal, kCpu, truncated_normal_kernel, kFloatTypes);
    r.add(Op::random_shuffle, kCpu, random_shuffle_kernel, kAllTypes);
}

}  // namespace tapeflow
