// CPU kernels of DepthwiseConv2dNative and its two backprops in NHWC, filter [KH, KW, C, M],
// output channel c * M + m. Direct loops whose innermost runs over the C * M contiguous channels
// of one pixel and one filter tap (vectorizable; no patch matrix: each output channel reads one
// input channel, so a GEMM would have inner size KH * KW only). Each output element is summed by
// one thread in a fixed order (the input gradient gathers the windows that cover each cell, the
// filter gradient sums fixed pixel ranges into partials added in order), so results do not
// depend on the thread count. float32 and float64.
#include <algorithm>
#include <type_traits>

#include "core/dtype_dispatch.hpp"
#include "core/parallel.hpp"
#include "ops/nn_common.hpp"
#include "ops/op_families.hpp"

namespace tapeflow::cpu {
namespace {

using nn_detail::Window2d;

constexpr DTypeSet kDepthwiseTypes{DType::float32, DType::float64};
constexpr int64_t kParallelWork = 16384;     // multiply-adds per parallel_for grain
constexpr int64_t kMaxPartials = 8;          // partial sums of the filter gradient, at most
constexpr int64_t kPixelsPerPartial = 1024;  // and at least this many pixels each

template <class Body>
void visit_real(DType dtype, Body&& body) {
    visit_dtype(dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) body(tag);
    });
}

// Adds x[c] * f[c * M + m] into y[c * M + m] for the channels [0, count).
template <class T>
void add_products(T* y, const T* x, const T* f, int64_t count, int64_t mult) {
    if (mult == 1) {
        for (int64_t c = 0; c < count; ++c)
            y[c] += x[c] * f[c];
        return;
    }
    for (int64_t c = 0; c < count; ++c) {
        const T xv = x[c];
        for (int64_t m = 0; m < mult; ++m)
            y[c * mult + m] += xv * f[c * mult + m];
    }
}

int64_t grain_for(int64_t work_per_item) {
    return std::max<int64_t>(1, kParallelWork / std::max<int64_t>(work_per_item, 1));
}

// The input row and column of filter tap (i, j) for output pixel (oh, ow); outside = padding.
struct Tap {
    int64_t ih, iw;
    bool inside;
};

Tap tap_of(const Window2d& w, int64_t oh, int64_t ow, int64_t i, int64_t j) {
    const int64_t ih = oh * w.sh - w.pad_top + i * w.dh;
    const int64_t iw = ow * w.sw - w.pad_left + j * w.dw;
    return {ih, iw, ih >= 0 && ih < w.h && iw >= 0 && iw < w.w};
}

void depthwise_kernel(const KernelContext& ctx) {
    const Tensor& x = ctx.inputs[0];
    const Tensor& filt = ctx.inputs[1];
    Tensor& y = ctx.outputs[0];
    const Window2d w = nn_detail::window_from(x.shape(), ctx.attrs);
    const int64_t mult = filt.shape()[3];
    const int64_t cm = w.c * mult;
    if (y.num_elements() == 0) return;
    visit_real(x.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        const auto* xp = static_cast<const T*>(x.raw_data());
        const auto* fp = static_cast<const T*>(filt.raw_data());
        auto* yp = static_cast<T*>(y.mutable_raw_data());
        parallel_for(
            w.n * w.oh * w.ow, grain_for(w.kh * w.kw * cm), [&](int64_t begin, int64_t end) {
                for (int64_t p = begin; p < end; ++p) {
                    const int64_t n = p / (w.oh * w.ow);
                    const int64_t oh = (p / w.ow) % w.oh;
                    const int64_t ow = p % w.ow;
                    T* out = yp + p * cm;
                    std::fill(out, out + cm, T(0));
                    for (int64_t i = 0; i < w.kh; ++i) {
                        for (int64_t j = 0; j < w.kw; ++j) {
                            const Tap t = tap_of(w, oh, ow, i, j);
                            if (!t.inside) continue;
                            add_products(out,
                                         xp + ((n * w.h + t.ih) * w.w + t.iw) * w.c,
                                         fp + (i * w.kw + j) * cm,
                                         w.c,
                                         mult);
                        }
                    }
                }
            });
    });
}

// inputs (filter, dy) -> dx: each input cell gathers the output pixels whose window covers it.
void depthwise_backprop_input_kernel(const KernelContext& ctx) {
    const Tensor& filt = ctx.inputs[0];
    const Tensor& dy = ctx.inputs[1];
    Tensor& dx = ctx.outputs[0];
    const Window2d w = nn_detail::window_from(dx.shape(), ctx.attrs);
    const int64_t mult = filt.shape()[3];
    const int64_t cm = w.c * mult;
    if (dx.num_elements() == 0) return;
    visit_real(dy.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        const auto* fp = static_cast<const T*>(filt.raw_data());
        const auto* dyp = static_cast<const T*>(dy.raw_data());
        auto* dxp = static_cast<T*>(dx.mutable_raw_data());
        parallel_for(w.n * w.h * w.w, grain_for(w.kh * w.kw * cm), [&](int64_t begin, int64_t end) {
            for (int64_t p = begin; p < end; ++p) {
                const int64_t n = p / (w.h * w.w);
                const int64_t ih = (p / w.w) % w.h;
                const int64_t iw = p % w.w;
                T* out = dxp + p * w.c;
                std::fill(out, out + w.c, T(0));
                for (int64_t i = 0; i < w.kh; ++i) {
                    const int64_t th = ih + w.pad_top - i * w.dh;
                    if (th < 0 || th % w.sh != 0 || th / w.sh >= w.oh) continue;
                    for (int64_t j = 0; j < w.kw; ++j) {
                        const int64_t tw = iw + w.pad_left - j * w.dw;
                        if (tw < 0 || tw % w.sw != 0 || tw / w.sw >= w.ow) continue;
                        const T* g = dyp + ((n * w.oh + th / w.sh) * w.ow + tw / w.sw) * cm;
                        const T* f = fp + (i * w.kw + j) * cm;
                        if (mult == 1) {  // the common case, as one vectorizable loop
                            for (int64_t c = 0; c < w.c; ++c)
                                out[c] += g[c] * f[c];
                            continue;
                        }
                        for (int64_t c = 0; c < w.c; ++c) {
                            T acc = 0;
                            for (int64_t m = 0; m < mult; ++m)
                                acc += g[c * mult + m] * f[c * mult + m];
                            out[c] += acc;
                        }
                    }
                }
            }
        });
    });
}

// inputs (x, dy) -> dw [kh, kw, c, m]. One pass over the pixels: each pixel adds x * dy of every
// tap (its dy row stays in cache). The pixels are cut into at most kMaxPartials ranges fixed by
// the shapes; each range sums into its own partial, and the partials are added in order.
void depthwise_backprop_filter_kernel(const KernelContext& ctx) {
    const Tensor& x = ctx.inputs[0];
    const Tensor& dy = ctx.inputs[1];
    Tensor& dw = ctx.outputs[0];
    const Window2d w = nn_detail::window_from(x.shape(), ctx.attrs);
    const int64_t mult = dw.shape()[3];
    const int64_t cm = w.c * mult;
    const int64_t size = dw.num_elements();
    if (size == 0) return;
    const int64_t pixels = w.n * w.oh * w.ow;
    const int64_t parts = std::clamp<int64_t>(pixels / kPixelsPerPartial, 1, kMaxPartials);
    visit_real(x.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        const auto* xp = static_cast<const T*>(x.raw_data());
        const auto* dyp = static_cast<const T*>(dy.raw_data());
        auto* dwp = static_cast<T*>(dw.mutable_raw_data());
        // From the CPU allocator's cache (a std::vector would zero-fill and page-fault it).
        Tensor holder = Tensor::empty(Shape{std::max<int64_t>((parts - 1) * size, 1)}, x.dtype());
        T* partials = static_cast<T*>(holder.mutable_raw_data());
        parallel_for(parts, 1, [&](int64_t begin, int64_t end) {
            for (int64_t part = begin; part < end; ++part) {
                T* out = part == 0 ? dwp : partials + (part - 1) * size;
                std::fill(out, out + size, T(0));
                for (int64_t p = part * pixels / parts; p < (part + 1) * pixels / parts; ++p) {
                    const int64_t n = p / (w.oh * w.ow);
                    const int64_t oh = (p / w.ow) % w.oh;
                    const int64_t ow = p % w.ow;
                    for (int64_t i = 0; i < w.kh; ++i) {
                        for (int64_t j = 0; j < w.kw; ++j) {
                            const Tap t = tap_of(w, oh, ow, i, j);
                            if (!t.inside) continue;
                            add_products(out + (i * w.kw + j) * cm,
                                         xp + ((n * w.h + t.ih) * w.w + t.iw) * w.c,
                                         dyp + p * cm,
                                         w.c,
                                         mult);
                        }
                    }
                }
            }
        });
        parallel_for(size, 4096, [&](int64_t begin, int64_t end) {
            for (int64_t part = 1; part < parts; ++part) {
                const T* src = partials + (part - 1) * size;
                for (int64_t e = begin; e < end; ++e)
                    dwp[e] += src[e];
            }
        });
    });
}

}  // namespace
}  // namespace tapeflow::cpu

namespace tapeflow {

void register_depthwise_cpu(KernelRegistry& r) {
    using namespace cpu;
    constexpr auto kCpu = DeviceType::cpu;
    r.add(Op::depthwise_conv2d, kCpu, depthwise_kernel, kDepthwiseTypes);
    r.add(Op::depthwise_conv2d_backprop_input,
          kCpu,
          depthwise_backprop_input_kernel,
          kDepthwiseTypes);
    r.add(Op::depthwise_conv2d_backprop_filter,
          kCpu,
          depthwise_backprop_filter_kernel,
          kDepthwiseTypes);
}

}  // namespace tapeflow
