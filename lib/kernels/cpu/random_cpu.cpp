// CPU kernels of the random ops: TensorFlow's CPU kernels' numbers
// (lib/kernels/shared/distributions.hpp). Group g of the output depends on the generator position
// and g alone, so the result does not depend on how parallel_for splits the groups.
#include <cstring>

#include "core/dtype_dispatch.hpp"
#include "core/parallel.hpp"
#include "kernels/cpu/kernels_cpu.hpp"
#include "kernels/shared/distributions.hpp"
#include "kernels/shared/random_attrs.hpp"

namespace tapeflow::cpu {
namespace {

constexpr int64_t kGrainGroups = 1 << 12;

// Writes the first n outputs of groups of `group` values made by make(g, values).
template <class T, class Make>
void fill_groups(const Tensor& y, int group, Make&& make) {
    auto* out = static_cast<T*>(y.mutable_raw_data());
    const int64_t n = y.num_elements();
    parallel_for((n + group - 1) / group, kGrainGroups, [&](int64_t begin, int64_t end) {
        for (int64_t g = begin; g < end; ++g) {
            T values[4] = {};
            make(static_cast<uint64_t>(g), values);
            const int64_t first = g * group;
            for (int64_t j = 0; j < group && first + j < n; ++j)
                out[first + j] = values[j];
        }
    });
}

template <philox::Dist D>
void float_kernel(const KernelContext& ctx) {
    const Tensor& y = ctx.outputs[0];
    const philox::Generator gen = random_attrs::generator(ctx.attrs);
    const philox::Format format = random_attrs::format(y.dtype());
    const philox::Affine affine = random_attrs::affine(ctx.attrs, D, format);
    visit_dtype(y.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_same_v<T, double>) {
            fill_groups<double>(y, 2, [&](uint64_t g, double* v) {
                philox::sample_group<double>(D, format, gen, g, affine.scale, affine.shift, v);
            });
        } else if constexpr (std::is_floating_point_v<T> || is_half_v<T>) {
            const auto scale = static_cast<float>(affine.scale);
            const auto shift = static_cast<float>(affine.shift);
            fill_groups<T>(y, 4, [&](uint64_t g, T* v) {
                float values[4];
                philox::sample_group<float>(D, format, gen, g, scale, shift, values);
                for (int j = 0; j < 4; ++j)
                    v[j] = convert_element<T>(values[j]);  // exact
            });
        }
    });
}

template <class I>
void int_kernel(const KernelContext& ctx) {
    const philox::Generator gen = random_attrs::generator(ctx.attrs);
    const auto [lo, range] = random_attrs::int_range(ctx.attrs);
    fill_groups<I>(ctx.outputs[0], sizeof(I) == 8 ? 2 : 4, [&](uint64_t g, I* v) {
        philox::uniform_int_group<I>(gen, g, static_cast<I>(lo), range, v);
    });
}

}  // namespace

void random_uniform_kernel(const KernelContext& ctx) {
    const DType dtype = ctx.outputs[0].dtype();
    if (dtype == DType::int32) return int_kernel<int32_t>(ctx);
    if (dtype == DType::int64) return int_kernel<int64_t>(ctx);
    float_kernel<philox::Dist::uniform>(ctx);
}

void random_normal_kernel(const KernelContext& ctx) {
    float_kernel<philox::Dist::normal>(ctx);
}

void truncated_normal_kernel(const KernelContext& ctx) {
    float_kernel<philox::Dist::truncated_normal>(ctx);
}

// Rows in philox::shuffle_permutation's order.
void random_shuffle_kernel(const KernelContext& ctx) {
    const Tensor& x = ctx.inputs[0];
    const Tensor& y = ctx.outputs[0];
    const int64_t rows = x.rank() == 0 ? 1 : x.shape()[0];
    const std::vector<int64_t> perm =
        philox::shuffle_permutation(random_attrs::generator(ctx.attrs), rows, x.num_elements());
    const std::size_t row_bytes = rows == 0 ? 0 : x.nbytes() / static_cast<std::size_t>(rows);
    const auto* in = static_cast<const char*>(x.raw_data());
    auto* out = static_cast<char*>(y.mutable_raw_data());
    for (int64_t i = 0; i < rows && row_bytes != 0; ++i) {
        std::memcpy(
            out + i * row_bytes, in + perm[static_cast<std::size_t>(i)] * row_bytes, row_bytes);
    }
}

}  // namespace tapeflow::cpu
