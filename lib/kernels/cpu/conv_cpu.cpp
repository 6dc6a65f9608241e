// CPU kernels of Conv2D, Conv2DBackpropInput and Conv2DBackpropFilter in NHWC with HWIO filters:
// im2col + OpenBLAS gemm. The patch matrix of a chunk of images is [rows = n*oh*ow, K = kh*kw*c]
// (each row the window of one output pixel, channels contiguous), so
//   forward:        y[rows, O]  = patches @ w[K, O]
//   filter grad:    dw[K, O]   += patches^T @ dy[rows, O]
//   input grad:     dpatches   = dy @ w^T, then col2im adds each row back into its window.
// A 1x1 filter with stride 1 and no padding needs no patch matrix at all. float32 and float64.
#include <cblas.h>

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "core/dtype_dispatch.hpp"
#include "core/parallel.hpp"
#include "ops/nn_common.hpp"
#include "ops/op_families.hpp"

namespace tapeflow::cpu {
namespace {

using nn_detail::Window2d;

constexpr DTypeSet kConvTypes{DType::float32, DType::float64};
constexpr int64_t kPatchBudget = int64_t{1} << 25;  // bytes of patch matrix per chunk (32 MiB)

template <class T>
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b,
          int64_t ldb, T beta, T* c, int64_t ldc) {
    const auto opa = ta ? CblasTrans : CblasNoTrans;
    const auto opb = tb ? CblasTrans : CblasNoTrans;
    if constexpr (std::is_same_v<T, float>) {
        cblas_sgemm(CblasRowMajor, opa, opb, static_cast<blasint>(m), static_cast<blasint>(n),
                    static_cast<blasint>(k), 1.0F, a, static_cast<blasint>(lda), b,
                    static_cast<blasint>(ldb), beta, c, static_cast<blasint>(ldc));
    } else {
        cblas_dgemm(CblasRowMajor, opa, opb, static_cast<blasint>(m), static_cast<blasint>(n),
                    static_cast<blasint>(k), 1.0, a, static_cast<blasint>(lda), b,
                    static_cast<blasint>(ldb), beta, c, static_cast<blasint>(ldc));
    }
}

// Scratch memory for a patch matrix, from the CPU allocator's cache of large blocks: a fresh
// std::vector would zero-fill it and page-fault on every call (about 4 us per 4 KiB page here).
template <class T>
T* scratch(Tensor& holder, int64_t elements, DType dtype) {
    holder = Tensor::empty(Shape{elements}, dtype);
    return static_cast<T*>(holder.mutable_raw_data());
}

bool is_pointwise(const Window2d& w) {
    return w.kh == 1 && w.kw == 1 && w.sh == 1 && w.sw == 1 && w.pad_top == 0 &&
           w.pad_bottom == 0 && w.pad_left == 0 && w.pad_right == 0;
}

int64_t patch_k(const Window2d& w) {
    return w.kh * w.kw * w.c;
}

// Images per chunk so that the chunk's patch matrix stays within kPatchBudget.
int64_t images_per_chunk(const Window2d& w, std::size_t elem) {
    const int64_t per_image = w.oh * w.ow * patch_k(w) * static_cast<int64_t>(elem);
    return std::clamp<int64_t>(kPatchBudget / std::max<int64_t>(per_image, 1), 1, w.n);
}

// Calls cell(row, kh, kw, ih, iw) for the window cells of output pixel `row` of image-chunk-local
// numbering (image, oh, ow); ih/iw may be outside the input (padding).
template <class Cell>
void for_each_cell(const Window2d& w, int64_t oh, int64_t ow, const Cell& cell) {
    for (int64_t i = 0; i < w.kh; ++i) {
        const int64_t ih = oh * w.sh - w.pad_top + i * w.dh;
        for (int64_t j = 0; j < w.kw; ++j) {
            const int64_t iw = ow * w.sw - w.pad_left + j * w.dw;
            cell(i * w.kw + j, ih, iw);
        }
    }
}

// patches[(img, oh, ow), (kh, kw, c)] for `count` images starting at x (image 0 of the chunk).
template <class T>
void im2col(const Window2d& w, const T* x, int64_t count, T* patches) {
    const int64_t k = patch_k(w);
    const int64_t rows = count * w.oh * w.ow;
    const auto c_bytes = static_cast<std::size_t>(w.c) * sizeof(T);
    parallel_for(rows, std::max<int64_t>(1, 4096 / k), [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
            const int64_t img = r / (w.oh * w.ow);
            const int64_t oh = (r / w.ow) % w.oh;
            const int64_t ow = r % w.ow;
            const T* xi = x + img * w.h * w.w * w.c;
            T* row = patches + r * k;
            for_each_cell(w, oh, ow, [&](int64_t cell, int64_t ih, int64_t iw) {
                T* dst = row + cell * w.c;
                if (ih < 0 || ih >= w.h || iw < 0 || iw >= w.w) {
                    std::memset(dst, 0, c_bytes);
                } else {
                    std::memcpy(dst, xi + (ih * w.w + iw) * w.c, c_bytes);
                }
            });
        }
    });
}

// dx += the rows of dpatches, each added back into its window; dx holds `count` images and is
// zero on entry. Parallel over images: no two threads write the same image.
template <class T>
void col2im(const Window2d& w, const T* dpatches, int64_t count, T* dx) {
    const int64_t k = patch_k(w);
    const int64_t per_image = w.oh * w.ow;
    parallel_for(count, 1, [&](int64_t begin, int64_t end) {
        for (int64_t img = begin; img < end; ++img) {
            T* xi = dx + img * w.h * w.w * w.c;
            for (int64_t p = 0; p < per_image; ++p) {
                const T* row = dpatches + (img * per_image + p) * k;
                for_each_cell(w, p / w.ow, p % w.ow, [&](int64_t cell, int64_t ih, int64_t iw) {
                    if (ih < 0 || ih >= w.h || iw < 0 || iw >= w.w) return;
                    T* dst = xi + (ih * w.w + iw) * w.c;
                    const T* src = row + cell * w.c;
                    for (int64_t c = 0; c < w.c; ++c) dst[c] += src[c];
                });
            }
        }
    });
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
            gemm<T>(false, false, w.n * w.h * w.w, o, k, xp, k, wp, o, T(0), yp, o);
            return;
        }
        const int64_t chunk = images_per_chunk(w, sizeof(T));
        Tensor holder;
        T* patches = scratch<T>(holder, chunk * w.oh * w.ow * k, x.dtype());
        for (int64_t n0 = 0; n0 < w.n; n0 += chunk) {
            const int64_t count = std::min(chunk, w.n - n0);
            const int64_t rows = count * w.oh * w.ow;
            im2col(w, xp + n0 * w.h * w.w * w.c, count, patches);
            gemm<T>(false, false, rows, o, k, patches, k, wp, o, T(0),
                    yp + n0 * w.oh * w.ow * o, o);
        }
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
            gemm<T>(false, true, w.n * w.h * w.w, k, o, dyp, o, wp, o, T(0), dxp, k);
            return;
        }
        std::fill(dxp, dxp + dx.num_elements(), T(0));
        if (o == 0 || w.oh * w.ow == 0) return;
        const int64_t chunk = images_per_chunk(w, sizeof(T));
        Tensor holder;
        T* dpatches = scratch<T>(holder, chunk * w.oh * w.ow * k, dy.dtype());
        for (int64_t n0 = 0; n0 < w.n; n0 += chunk) {
            const int64_t count = std::min(chunk, w.n - n0);
            const int64_t rows = count * w.oh * w.ow;
            gemm<T>(false, true, rows, k, o, dyp + n0 * w.oh * w.ow * o, o, wp, o, T(0),
                    dpatches, k);
            col2im(w, dpatches, count, dxp + n0 * w.h * w.w * w.c);
        }
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
            gemm<T>(true, false, k, o, pixels, xp, k, dyp, o, T(0), dwp, o);
            return;
        }
        const int64_t chunk = images_per_chunk(w, sizeof(T));
        Tensor holder;
        T* patches = scratch<T>(holder, chunk * w.oh * w.ow * k, x.dtype());
        for (int64_t n0 = 0; n0 < w.n; n0 += chunk) {
            const int64_t count = std::min(chunk, w.n - n0);
            const int64_t rows = count * w.oh * w.ow;
            im2col(w, xp + n0 * w.h * w.w * w.c, count, patches);
            gemm<T>(true, false, k, o, rows, patches, k, dyp + n0 * w.oh * w.ow * o, o,
                    n0 == 0 ? T(0) : T(1), dwp, o);
        }
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
