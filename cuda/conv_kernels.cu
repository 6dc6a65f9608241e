// CUDA kernels of conv2d's window walks in NHWC: im2col / col2im for conv2d and its backprops (the
// GEMMs are cuBLAS calls in ops_cuda_nn.cpp; the pools, over the same Window, are in
// pool_kernels.cu). One thread per output element; col2im gathers (each input cell sums the
// patches that cover it, in the CPU's window order) instead of scattering with atomics, so it is
// deterministic.
#include "device_common.cuh"

namespace tapeflow::cuda_launch {
namespace {

template <class T>
__global__ void im2col_kernel(Window w, const T* x, int64_t count, T* patches) {
    const int64_t k = w.kh * w.kw * w.c;
    TAPEFLOW_FOR_EACH(idx, count * w.oh * w.ow * k) {
        const int64_t row = idx / k;
        const int64_t col = idx - row * k;
        const int64_t cell = col / w.c;
        const int64_t ch = col - cell * w.c;
        const int64_t i = cell / w.kw;
        const int64_t j = cell - i * w.kw;
        const int64_t img = row / (w.oh * w.ow);
        const int64_t p = row - img * (w.oh * w.ow);
        const int64_t ih = (p / w.ow) * w.sh - w.pad_top + i * w.dh;
        const int64_t iw = (p % w.ow) * w.sw - w.pad_left + j * w.dw;
        const bool inside = ih >= 0 && ih < w.h && iw >= 0 && iw < w.w;
        patches[idx] = inside ? x[((img * w.h + ih) * w.w + iw) * w.c + ch] : T(0);
    }
}

// Output pixel (oh, ow) reaches input row ih through filter row i when ih + pad - i*dh = oh*sh.
// Walking i (and j) downwards visits the pixels in increasing (oh, ow): the CPU's order.
template <class T>
__global__ void col2im_kernel(Window w, const T* dpatches, int64_t count, T* dx) {
    const int64_t k = w.kh * w.kw * w.c;
    TAPEFLOW_FOR_EACH(idx, count * w.h * w.w * w.c) {
        const auto [img, ih, iw, ch] = nhwc_of(idx, w.h, w.w, w.c);
        T sum = 0;
        for (int64_t i = w.kh - 1; i >= 0; --i) {
            const int64_t t = ih + w.pad_top - i * w.dh;
            if (t < 0 || t % w.sh != 0 || t / w.sh >= w.oh) continue;
            const int64_t oh = t / w.sh;
            for (int64_t j = w.kw - 1; j >= 0; --j) {
                const int64_t u = iw + w.pad_left - j * w.dw;
                if (u < 0 || u % w.sw != 0 || u / w.sw >= w.ow) continue;
                const int64_t row = (img * w.oh + oh) * w.ow + u / w.sw;
                sum += dpatches[row * k + (i * w.kw + j) * w.c + ch];
            }
        }
        dx[idx] = sum;
    }
}

}  // namespace

cudaError_t im2col(
    Elem elem, const Window& w, const void* x, int64_t count, void* patches, cudaStream_t stream) {
    const int64_t n = count * w.oh * w.ow * w.kh * w.kw * w.c;
    if (n == 0) return cudaSuccess;
    return visit_real(elem, [&](auto tag) {
        using T = typename decltype(tag)::type;
        im2col_kernel<<<grid_for(n), kThreads, 0, stream>>>(
            w, static_cast<const T*>(x), count, static_cast<T*>(patches));
        return cudaGetLastError();
    });
}

cudaError_t col2im(Elem elem,
                   const Window& w,
                   const void* dpatches,
                   int64_t count,
                   void* dx,
                   cudaStream_t stream) {
    const int64_t n = count * w.h * w.w * w.c;
    if (n == 0) return cudaSuccess;
    return visit_real(elem, [&](auto tag) {
        using T = typename decltype(tag)::type;
        col2im_kernel<<<grid_for(n), kThreads, 0, stream>>>(
            w, static_cast<const T*>(dpatches), count, static_cast<T*>(dx));
        return cudaGetLastError();
    });
}

}  // namespace tapeflow::cuda_launch
