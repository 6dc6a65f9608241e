// CPU kernels of Conv2D, Conv2DBackpropInput and Conv2DBackpropFilter in NHWC with HWIO filters:
// im2col + gemm (gemm_route.hpp: the packed sgemm or OpenBLAS). The patch matrix of a block of
// output pixels is [rows, K = kh*kw*c] (each row the window of one output pixel, channels
// contiguous), so
//   forward:        y[rows, O]  = patches @ w[K, O]
//   filter grad:    dw[K, O]   += patches^T @ dy[rows, O]
//   input grad:     dpatches   = dy @ w^T, then col2im adds each row back into its window.
// Work is cut into blocks of about kBlockRows output pixels, spread over tapeflow's threads, each
// block's gemm on its own thread (see blas.hpp for why not OpenBLAS's threads). Blocks, the
// filter gradient's partial sums and the kernel each gemm runs depend on the shapes only, so
// results never depend on the thread count. A 1x1 filter with stride 1 and no padding needs no
// patch matrix. float32 and float64.
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "core/dtype_dispatch.hpp"
#include "core/parallel.hpp"
#include "kernels/cpu/gemm_route.hpp"
#include "ops/nn_common.hpp"
#include "ops/op_families.hpp"

namespace tapeflow::cpu {
namespace {

using nn_detail::Window2d;

constexpr DTypeSet kConvTypes{DType::float32, DType::float64};
// Output pixels per block: the block's patch matrix (rows x K) stays near L2 for typical K while
// its gemm is still large enough to run near OpenBLAS's peak.
constexpr int64_t kBlockRows = 1024;
// The filter gradient sums blocks into at most this many partial results (fixed, so the sum
// order is too), within kPartialBudget bytes.
constexpr int64_t kMaxPartials = 8;
constexpr int64_t kPartialBudget = int64_t{1} << 25;

// Scratch memory from the CPU allocator's cache of large blocks: a fresh std::vector would
// zero-fill it and page-fault on every call (about 4 us per 4 KiB page here).
template <class T>
T* scratch(Tensor& holder, int64_t elements, DType dtype) {
    holder = Tensor::empty(Shape{std::max<int64_t>(elements, 1)}, dtype);
    return static_cast<T*>(holder.mutable_raw_data());
}

bool is_pointwise(const Window2d& w) {
    return w.kh == 1 && w.kw == 1 && w.sh == 1 && w.sw == 1 && w.pad_top == 0 &&
           w.pad_bottom == 0 && w.pad_left == 0 && w.pad_right == 0;
}

int64_t patch_k(const Window2d& w) {
    return w.kh * w.kw * w.c;
}

// Visits the window row i of output pixel (oh, ow): row(dst_offset, ih, iw0) where the row's kw
// cells start at input column iw0; `contiguous` is true when all kw cells are inside the input
// and adjacent (no dilation), so kw*c elements can be handled at once.
template <class Row>
void for_each_window_row(const Window2d& w, int64_t oh, int64_t ow, const Row& row) {
    const int64_t iw0 = ow * w.sw - w.pad_left;
    const bool cols_inside = iw0 >= 0 && iw0 + (w.kw - 1) * w.dw < w.w;
    for (int64_t i = 0; i < w.kh; ++i) {
        const int64_t ih = oh * w.sh - w.pad_top + i * w.dh;
        row(i * w.kw * w.c, ih, iw0, cols_inside && w.dw == 1);
    }
}

// patches[r - r0, (kh, kw, c)] for output pixels r in [r0, r1) (numbered (image, oh, ow)).
template <class T>
void im2col(const Window2d& w, const T* x, int64_t r0, int64_t r1, T* patches) {
    const int64_t k = patch_k(w);
    const auto cell_bytes = static_cast<std::size_t>(w.c) * sizeof(T);
    for (int64_t r = r0; r < r1; ++r) {
        const int64_t img = r / (w.oh * w.ow);
        const T* xi = x + img * w.h * w.w * w.c;
        T* prow = patches + (r - r0) * k;
        for_each_window_row(
            w,
            (r / w.ow) % w.oh,
            r % w.ow,
            [&](int64_t at, int64_t ih, int64_t iw0, bool contiguous) {
                T* dst = prow + at;
                if (ih < 0 || ih >= w.h) {
                    std::memset(dst, 0, cell_bytes * static_cast<std::size_t>(w.kw));
                } else if (contiguous) {
                    std::memcpy(dst,
                                xi + (ih * w.w + iw0) * w.c,
                                cell_bytes * static_cast<std::size_t>(w.kw));
                } else {
                    for (int64_t j = 0; j < w.kw; ++j, dst += w.c) {
                        const int64_t iw = iw0 + j * w.dw;
                        if (iw < 0 || iw >= w.w) {
                            std::memset(dst, 0, cell_bytes);
                        } else {
                            std::memcpy(dst, xi + (ih * w.w + iw) * w.c, cell_bytes);
                        }
                    }
                }
            });
    }
}

// dx += the rows of dpatches (the output pixels of `count` images from image 0 of dx), each
// added back into its window. dx's images are zero on entry.
template <class T>
void col2im(const Window2d& w, const T* dpatches, int64_t count, T* dx) {
    const int64_t k = patch_k(w);
    const int64_t per_image = w.oh * w.ow;
    const auto add = [](T* dst, const T* src, int64_t n) {
        for (int64_t e = 0; e < n; ++e)
            dst[e] += src[e];
    };
    for (int64_t img = 0; img < count; ++img) {
        T* xi = dx + img * w.h * w.w * w.c;
        for (int64_t p = 0; p < per_image; ++p) {
            const T* prow = dpatches + (img * per_image + p) * k;
            for_each_window_row(
                w, p / w.ow, p % w.ow, [&](int64_t at, int64_t ih, int64_t iw0, bool contiguous) {
                    if (ih < 0 || ih >= w.h) return;
                    const T* src = prow + at;
                    if (contiguous) {
                        add(xi + (ih * w.w + iw0) * w.c, src, w.kw * w.c);
                        return;
                    }
                    for (int64_t j = 0; j < w.kw; ++j, src += w.c) {
                        const int64_t iw = iw0 + j * w.dw;
                        if (iw >= 0 && iw < w.w) add(xi + (ih * w.w + iw) * w.c, src, w.c);
                    }
                });
        }
    }
}

int64_t ceil_div(int64_t a, int64_t b) {
    return (a + b - 1) / b;
}

template <class Body>
void visit_conv_dtype(DType dtype, Body&& body) {
    visit_dtype(dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) body(tag);
    });
}

// y[n, oh, ow, o] = sum over the window and c of x * w.
void conv2d_kernel(const KernelContext& ctx) {
    const Tensor& x = ctx.inputs[0];
    const Tensor& filt = ctx.inputs[1];
    Tensor& y = ctx.outputs[0];
    const Window2d w = nn_detail::window_from(x.shape(), ctx.attrs);
    const int64_t o = filt.shape()[3];
    if (y.num_elements() == 0) return;
    visit_conv_dtype(x.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        const auto* xp = static_cast<const T*>(x.raw_data());
        const auto* wp = static_cast<const T*>(filt.raw_data());
        auto* yp = static_cast<T*>(y.mutable_raw_data());
        const int64_t k = patch_k(w);
        if (k == 0) {
            std::fill(yp, yp + y.num_elements(), T(0));
            return;
        }
        if (is_pointwise(w)) {
            routed_parallel_gemm<T>(false, false, w.n * w.h * w.w, o, k, xp, k, wp, o, yp, o);
            return;
        }
        const int64_t rows = w.n * w.oh * w.ow;
        const int64_t block = std::min(rows, kBlockRows);
        parallel_routed_gemms<T>(
            ceil_div(rows, kBlockRows), block, o, k, [&](int64_t begin, int64_t end) {
                Tensor holder;
                T* patches = scratch<T>(holder, kBlockRows * k, x.dtype());
                for (int64_t b = begin; b < end; ++b) {
                    const int64_t r0 = b * kBlockRows;
                    const int64_t r1 = std::min(rows, r0 + kBlockRows);
                    im2col(w, xp, r0, r1, patches);
                    routed_gemm<T>(
                        false, false, r1 - r0, o, k, patches, k, wp, o, T(0), yp + r0 * o, o);
                }
            });
    });
}

// inputs (filter, dy) -> dx of the output's shape.
void conv2d_backprop_input_kernel(const KernelContext& ctx) {
    const Tensor& filt = ctx.inputs[0];
    const Tensor& dy = ctx.inputs[1];
    Tensor& dx = ctx.outputs[0];
    const Window2d w = nn_detail::window_from(dx.shape(), ctx.attrs);
    const int64_t o = filt.shape()[3];
    if (dx.num_elements() == 0) return;
    visit_conv_dtype(dy.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        const auto* wp = static_cast<const T*>(filt.raw_data());
        const auto* dyp = static_cast<const T*>(dy.raw_data());
        auto* dxp = static_cast<T*>(dx.mutable_raw_data());
        const int64_t k = patch_k(w);
        if (is_pointwise(w)) {
            if (o == 0) {
                std::fill(dxp, dxp + dx.num_elements(), T(0));
                return;
            }
            routed_parallel_gemm<T>(false, true, w.n * w.h * w.w, k, o, dyp, o, wp, o, dxp, k);
            return;
        }
        std::fill(dxp, dxp + dx.num_elements(), T(0));
        if (o == 0 || w.oh * w.ow == 0) return;
        // Blocks of whole images: col2im of different blocks then writes different images.
        const int64_t per_image = w.oh * w.ow;
        const int64_t images = std::max<int64_t>(1, kBlockRows / per_image);
        const int64_t block = std::min(images, w.n) * per_image;
        parallel_routed_gemms<T>(
            ceil_div(w.n, images), block, k, o, [&](int64_t begin, int64_t end) {
                Tensor holder;
                T* dpatches = scratch<T>(holder, images * per_image * k, dy.dtype());
                for (int64_t b = begin; b < end; ++b) {
                    const int64_t n0 = b * images;
                    const int64_t count = std::min(images, w.n - n0);
                    routed_gemm<T>(false,
                                   true,
                                   count * per_image,
                                   k,
                                   o,
                                   dyp + n0 * per_image * o,
                                   o,
                                   wp,
                                   o,
                                   T(0),
                                   dpatches,
                                   k);
                    col2im(w, dpatches, count, dxp + n0 * w.h * w.w * w.c);
                }
            });
    });
}

// inputs (x, dy) -> dw of the output's shape [kh, kw, c, o].
void conv2d_backprop_filter_kernel(const KernelContext& ctx) {
    const Tensor& x = ctx.inputs[0];
    const Tensor& dy = ctx.inputs[1];
    Tensor& dw = ctx.outputs[0];
    const Window2d w = nn_detail::window_from(x.shape(), ctx.attrs);
    const int64_t o = dw.shape()[3];
    if (dw.num_elements() == 0) return;
    visit_conv_dtype(x.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        const auto* xp = static_cast<const T*>(x.raw_data());
        const auto* dyp = static_cast<const T*>(dy.raw_data());
        auto* dwp = static_cast<T*>(dw.mutable_raw_data());
        const int64_t k = patch_k(w);
        const int64_t pixels = w.n * w.oh * w.ow;
        if (pixels == 0) {
            std::fill(dwp, dwp + dw.num_elements(), T(0));
            return;
        }
        if (is_pointwise(w)) {
            routed_parallel_gemm<T>(true, false, k, o, pixels, xp, k, dyp, o, dwp, o);
            return;
        }
        // Partial p sums blocks [p*blocks/P, (p+1)*blocks/P) in order; dw = partial 0 + 1 + ...
        const int64_t blocks = ceil_div(pixels, kBlockRows);
        const int64_t ko = k * o;
        const int64_t budget = std::max<int64_t>(1, kPartialBudget / (ko * int64_t{sizeof(T)}));
        const int64_t parts = std::min({blocks, kMaxPartials, budget});
        Tensor partial_holder;
        T* partials = scratch<T>(partial_holder, (parts - 1) * ko, dw.dtype());
        const int64_t block = std::min(pixels, kBlockRows);
        parallel_routed_gemms<T>(parts, k, o, block, [&](int64_t begin, int64_t end) {
            Tensor holder;
            T* patches = scratch<T>(holder, kBlockRows * k, x.dtype());
            for (int64_t p = begin; p < end; ++p) {
                T* out = p == 0 ? dwp : partials + (p - 1) * ko;
                for (int64_t b = p * blocks / parts; b < (p + 1) * blocks / parts; ++b) {
                    const int64_t r0 = b * kBlockRows;
                    const int64_t r1 = std::min(pixels, r0 + kBlockRows);
                    im2col(w, xp, r0, r1, patches);
                    routed_gemm<T>(true,
                                   false,
                                   k,
                                   o,
                                   r1 - r0,
                                   patches,
                                   k,
                                   dyp + r0 * o,
                                   o,
                                   b == p * blocks / parts ? T(0) : T(1),
                                   out,
                                   o);
                }
            }
        });
        parallel_for(ko, 4096, [&](int64_t begin, int64_t end) {
            for (int64_t p = 1; p < parts; ++p) {
                const T* src = partials + (p - 1) * ko;
                for (int64_t e = begin; e < end; ++e)
                    dwp[e] += src[e];
            }
        });
    });
}

}  // namespace
}  // namespace tapeflow::cpu

namespace tapeflow {

void register_conv_cpu(KernelRegistry& r) {
    using namespace cpu;
    constexpr auto kCpu = DeviceType::cpu;
    r.add(Op::conv2d, kCpu, conv2d_kernel, kConvTypes);
    r.add(Op::conv2d_backprop_input, kCpu, conv2d_backprop_input_kernel, kConvTypes);
    r.add(Op::conv2d_backprop_filter, kCpu, conv2d_backprop_filter_kernel, kConvTypes);
}

}  // namespace tapeflow
