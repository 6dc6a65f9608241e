// CPU kernels of MaxPool (values and the flat index of each maximum), AvgPool and AvgPoolGrad in
// NHWC. Each output pixel walks its window once, with the channels as the contiguous inner loop
// (vectorized). Padding cells never enter: max ignores them, avg divides by the number of
// non-padding cells (TensorFlow's SAME rule). float32 and float64.
#include <algorithm>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/dtype_dispatch.hpp"
#include "core/parallel.hpp"
#include "ops/nn_common.hpp"
#include "ops/op_families.hpp"

namespace tapeflow::cpu {
namespace {

using nn_detail::Window2d;

constexpr DTypeSet kPoolTypes{DType::float32, DType::float64};

// The window of output (oh, ow) clipped to the input: rows [h0, h1), columns [w0, w1).
struct Span2d {
    int64_t h0, h1, w0, w1;
    int64_t count() const { return std::max<int64_t>(h1 - h0, 0) * std::max<int64_t>(w1 - w0, 0); }
};

Span2d clipped(const Window2d& w, int64_t oh, int64_t ow) {
    const int64_t hs = oh * w.sh - w.pad_top;
    const int64_t ws = ow * w.sw - w.pad_left;
    return {std::max<int64_t>(hs, 0),
            std::min(hs + w.kh, w.h),
            std::max<int64_t>(ws, 0),
            std::min(ws + w.kw, w.w)};
}

template <class Body>
void visit_pool_dtype(DType dtype, Body&& body) {
    visit_dtype(dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) body(tag);
    });
}

int64_t row_grain(const Window2d& w) {
    return std::max<int64_t>(1, 8192 / std::max<int64_t>(w.ow * w.c * w.kh * w.kw, 1));
}

void max_pool_kernel(const KernelContext& ctx) {
    const Tensor& x = ctx.inputs[0];
    const Window2d w = nn_detail::window_from(x.shape(), ctx.attrs);
    if (ctx.outputs[0].num_elements() == 0) return;
    visit_pool_dtype(x.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        const auto* xp = static_cast<const T*>(x.raw_data());
        auto* yp = static_cast<T*>(ctx.outputs[0].mutable_raw_data());
        auto* ap = static_cast<int64_t*>(ctx.outputs[1].mutable_raw_data());
        // One task per output row (n, oh).
        parallel_for(w.n * w.oh, row_grain(w), [&](int64_t begin, int64_t end) {
            for (int64_t r = begin; r < end; ++r) {
                const int64_t n = r / w.oh;
                const int64_t oh = r % w.oh;
                for (int64_t ow = 0; ow < w.ow; ++ow) {
                    T* y = yp + (r * w.ow + ow) * w.c;
                    int64_t* arg = ap + (r * w.ow + ow) * w.c;
                    std::fill(y, y + w.c, -std::numeric_limits<T>::infinity());
                    std::fill(arg, arg + w.c, int64_t{-1});
                    const Span2d s = clipped(w, oh, ow);
                    for (int64_t ih = s.h0; ih < s.h1; ++ih) {
                        for (int64_t iw = s.w0; iw < s.w1; ++iw) {
                            const int64_t base = ((n * w.h + ih) * w.w + iw) * w.c;
                            const T* xc = xp + base;
                            for (int64_t c = 0; c < w.c; ++c) {
                                // Strictly greater: the first maximum wins; a NaN wins once.
                                const bool take = xc[c] > y[c] || (arg[c] < 0);
                                y[c] = take ? xc[c] : y[c];
                                arg[c] = take ? base + c : arg[c];
                            }
                        }
                    }
                }
            }
        });
    });
}

void avg_pool_kernel(const KernelContext& ctx) {
    const Tensor& x = ctx.inputs[0];
    const Window2d w = nn_detail::window_from(x.shape(), ctx.attrs);
    if (ctx.outputs[0].num_elements() == 0) return;
    visit_pool_dtype(x.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        const auto* xp = static_cast<const T*>(x.raw_data());
        auto* yp = static_cast<T*>(ctx.outputs[0].mutable_raw_data());
        parallel_for(w.n * w.oh, row_grain(w), [&](int64_t begin, int64_t end) {
            for (int64_t r = begin; r < end; ++r) {
                const int64_t n = r / w.oh;
                const int64_t oh = r % w.oh;
                for (int64_t ow = 0; ow < w.ow; ++ow) {
                    T* y = yp + (r * w.ow + ow) * w.c;
                    std::fill(y, y + w.c, T(0));
                    const Span2d s = clipped(w, oh, ow);
                    for (int64_t ih = s.h0; ih < s.h1; ++ih) {
                        for (int64_t iw = s.w0; iw < s.w1; ++iw) {
                            const T* xc = xp + ((n * w.h + ih) * w.w + iw) * w.c;
                            for (int64_t c = 0; c < w.c; ++c)
                                y[c] += xc[c];
                        }
                    }
                    const T inv = T(1) / static_cast<T>(std::max<int64_t>(s.count(), 1));
                    for (int64_t c = 0; c < w.c; ++c)
                        y[c] *= inv;
                }
            }
        });
    });
}

// inputs (g) -> dx: each output cell's g / count added to its window's non-padding cells.
// Parallel over images, so no two threads write the same cell.
void avg_pool_grad_kernel(const KernelContext& ctx) {
    const Tensor& g = ctx.inputs[0];
    Tensor& dx = ctx.outputs[0];
    const Window2d w = nn_detail::window_from(dx.shape(), ctx.attrs);
    if (dx.num_elements() == 0) return;
    visit_pool_dtype(g.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        const auto* gp = static_cast<const T*>(g.raw_data());
        auto* dp = static_cast<T*>(dx.mutable_raw_data());
        std::fill(dp, dp + dx.num_elements(), T(0));
        parallel_for(w.n, 1, [&](int64_t begin, int64_t end) {
            std::vector<T> share(static_cast<std::size_t>(w.c));
            for (int64_t n = begin; n < end; ++n) {
                for (int64_t oh = 0; oh < w.oh; ++oh) {
                    for (int64_t ow = 0; ow < w.ow; ++ow) {
                        const T* gc = gp + ((n * w.oh + oh) * w.ow + ow) * w.c;
                        const Span2d s = clipped(w, oh, ow);
                        const T inv = T(1) / static_cast<T>(std::max<int64_t>(s.count(), 1));
                        for (int64_t c = 0; c < w.c; ++c)
                            share[static_cast<std::size_t>(c)] = gc[c] * inv;
                        for (int64_t ih = s.h0; ih < s.h1; ++ih) {
                            for (int64_t iw = s.w0; iw < s.w1; ++iw) {
                                T* d = dp + ((n * w.h + ih) * w.w + iw) * w.c;
                                for (int64_t c = 0; c < w.c; ++c)
                                    d[c] += share[static_cast<std::size_t>(c)];
                            }
                        }
                    }
                }
            }
        });
    });
}

}  // namespace
}  // namespace tapeflow::cpu

namespace tapeflow {

void register_pool_cpu(KernelRegistry& r) {
    using namespace cpu;
    constexpr auto kCpu = DeviceType::cpu;
    r.add(Op::max_pool, kCpu, max_pool_kernel, kPoolTypes);
    r.add(Op::avg_pool, kCpu, avg_pool_kernel, kPoolTypes);
    r.add(Op::avg_pool_grad, kCpu, avg_pool_grad_kernel, kPoolTypes);
}

}  // namespace tapeflow
