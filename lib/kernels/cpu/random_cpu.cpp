// CPU kernels of the random ops. Each element is computed from (stream, index) alone, so the result
// does not depend on how parallel_for splits the work. See lib/kernels/shared/philox.hpp.
#include <cstring>

#include "core/dtype_dispatch.hpp"
#include "core/parallel.hpp"
#include "kernels/cpu/kernels_cpu.hpp"
#include "kernels/shared/philox.hpp"

namespace tapeflow::cpu {
namespace {

constexpr int64_t kGrain = 1 << 14;

philox::Stream stream_of(const Attrs& attrs) {
    const auto key = static_cast<uint64_t>(attrs.get<int64_t>("key"));
    const auto call = static_cast<uint64_t>(attrs.get<int64_t>("call"));
    return philox::Stream{philox::Key{{static_cast<uint32_t>(key), static_cast<uint32_t>(key >> 32)}},
                          call};
}

// Fills the output with convert(sample(i)), sample returning a double.
template <class Sample>
void fill_floats(const Tensor& y, Sample&& sample) {
    visit_dtype(y.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_floating_point_v<T> || is_half_v<T>) {
            auto* out = static_cast<T*>(y.mutable_raw_data());
            parallel_for(y.num_elements(), kGrain, [&](int64_t begin, int64_t end) {
                for (int64_t i = begin; i < end; ++i) {
                    out[i] = convert_element<T>(sample(static_cast<uint64_t>(i)));
                }
            });
        }
    });
}

}  // namespace

void random_uniform_kernel(const KernelContext& ctx) {
    const Tensor& y = ctx.outputs[0];
    const philox::Stream s = stream_of(ctx.attrs);
    const double lo = ctx.attrs.get<double>("minval");
    const double hi = ctx.attrs.get<double>("maxval");
    if (y.dtype() == DType::int32 || y.dtype() == DType::int64) {
        const auto lo_int = static_cast<int64_t>(lo);
        const auto range = static_cast<uint64_t>(static_cast<int64_t>(hi) - lo_int);
        visit_dtype(y.dtype(), [&](auto tag) {
            using T = typename decltype(tag)::type;
            if constexpr (std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>) {
                auto* out = static_cast<T*>(y.mutable_raw_data());
                parallel_for(y.num_elements(), kGrain, [&](int64_t begin, int64_t end) {
                    for (int64_t i = begin; i < end; ++i) {
                        out[i] = static_cast<T>(
                            lo_int + static_cast<int64_t>(philox::uniform_int_at(s, static_cast<uint64_t>(i), range)));
                    }
                });
            }
        });
    } else if (y.dtype() == DType::float64) {
        fill_floats(y, [&](uint64_t i) { return philox::affine(lo, hi - lo, philox::uniform_double_at(s, i)); });
    } else {
        // float32 and the 16-bit floats draw 24-bit floats and compute in float, like TensorFlow.
        const auto lo_f = static_cast<float>(lo);
        const auto width = static_cast<float>(hi - lo);
        fill_floats(y, [&](uint64_t i) {
            return static_cast<double>(philox::affine(lo_f, width, philox::uniform_float_at(s, i)));
        });
    }
}

void random_normal_kernel(const KernelContext& ctx) {
    const philox::Stream s = stream_of(ctx.attrs);
    const double mean = ctx.attrs.get<double>("mean");
    const double stddev = ctx.attrs.get<double>("stddev");
    fill_floats(ctx.outputs[0],
                [&](uint64_t i) { return philox::affine(mean, stddev, philox::normal_at(s, i)); });
}

void truncated_normal_kernel(const KernelContext& ctx) {
    const philox::Stream s = stream_of(ctx.attrs);
    const double mean = ctx.attrs.get<double>("mean");
    const double stddev = ctx.attrs.get<double>("stddev");
    fill_floats(ctx.outputs[0],
                [&](uint64_t i) { return philox::affine(mean, stddev, philox::truncated_normal_at(s, i)); });
}

// Rows in philox::shuffle_permutation's order.
void random_shuffle_kernel(const KernelContext& ctx) {
    const Tensor& x = ctx.inputs[0];
    const Tensor& y = ctx.outputs[0];
    const philox::Stream s = stream_of(ctx.attrs);
    const int64_t rows = x.rank() == 0 ? 1 : x.shape()[0];
    std::vector<int64_t> perm(static_cast<std::size_t>(rows));
    philox::shuffle_permutation(s, rows, perm.data());
    const std::size_t row_bytes = rows == 0 ? 0 : x.nbytes() / static_cast<std::size_t>(rows);
    const auto* in = static_cast<const char*>(x.raw_data());
    auto* out = static_cast<char*>(y.mutable_raw_data());
    for (int64_t i = 0; i < rows && row_bytes != 0; ++i) {
        std::memcpy(out + i * row_bytes, in + perm[static_cast<std::size_t>(i)] * row_bytes, row_bytes);
    }
}

}  // namespace tapeflow::cpu
