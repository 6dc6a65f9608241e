// CUDA kernels of DepthwiseConv2dNative and its backprops in NHWC, filter [KH, KW, C, M], output
// channel c * M + m. Forward and input gradient: one thread per output element, the latter
// gathering the windows that cover its cell (no atomics, deterministic). Filter gradient: one
// block per filter element, its threads striding over the output pixels, then a fixed-shape
// shared-memory tree sum (deterministic too). float32 and float64.
#include "device_common.cuh"
#include "launch_models.hpp"

namespace tapeflow::cuda_launch {
namespace {

template <class T>
__global__ void depthwise_kernel(Window w, int64_t mult, const T* x, const T* f, T* y) {
    const int64_t cm = w.c * mult;
    TAPEFLOW_FOR_EACH(idx, w.n * w.oh * w.ow * cm) {
        const auto [n, oh, ow, ch] = nhwc_of(idx, w.oh, w.ow, cm);
        const int64_t c = ch / mult;
        T sum = 0;
        for (int64_t i = 0; i < w.kh; ++i) {
            const int64_t ih = oh * w.sh - w.pad_top + i * w.dh;
            if (ih < 0 || ih >= w.h) continue;
            for (int64_t j = 0; j < w.kw; ++j) {
                const int64_t iw = ow * w.sw - w.pad_left + j * w.dw;
                if (iw < 0 || iw >= w.w) continue;
                sum += x[((n * w.h + ih) * w.w + iw) * w.c + c] * f[(i * w.kw + j) * cm + ch];
            }
        }
        y[idx] = sum;
    }
}

template <class T>
__global__ void depthwise_input_kernel(Window w, int64_t mult, const T* f, const T* dy, T* dx) {
    const int64_t cm = w.c * mult;
    TAPEFLOW_FOR_EACH(idx, w.n * w.h * w.w * w.c) {
        const auto [n, ih, iw, c] = nhwc_of(idx, w.h, w.w, w.c);
        T sum = 0;
        for (int64_t i = 0; i < w.kh; ++i) {
            const int64_t th = ih + w.pad_top - i * w.dh;
            if (th < 0 || th % w.sh != 0 || th / w.sh >= w.oh) continue;
            for (int64_t j = 0; j < w.kw; ++j) {
                const int64_t tw = iw + w.pad_left - j * w.dw;
                if (tw < 0 || tw % w.sw != 0 || tw / w.sw >= w.ow) continue;
                const T* g = dy + ((n * w.oh + th / w.sh) * w.ow + tw / w.sw) * cm + c * mult;
                const T* ff = f + (i * w.kw + j) * cm + c * mult;
                for (int64_t m = 0; m < mult; ++m)
                    sum += g[m] * ff[m];
            }
        }
        dx[idx] = sum;
    }
}

template <class T>
__global__ void depthwise_filter_kernel(Window w, int64_t mult, const T* x, const T* dy, T* df) {
    __shared__ T partial[kThreads];
    const int64_t cm = w.c * mult;
    const int64_t pixels = w.n * w.oh * w.ow;
    for (int64_t e = blockIdx.x; e < w.kh * w.kw * cm; e += gridDim.x) {
        const int64_t ch = e % cm;
        const int64_t tap = e / cm;
        const int64_t i = tap / w.kw;
        const int64_t j = tap % w.kw;
        const int64_t c = ch / mult;
        T sum = 0;
        for (int64_t p = threadIdx.x; p < pixels; p += kThreads) {
            const int64_t ow = p % w.ow;
            const int64_t oh = (p / w.ow) % w.oh;
            const int64_t n = p / (w.ow * w.oh);
            const int64_t ih = oh * w.sh - w.pad_top + i * w.dh;
            const int64_t iw = ow * w.sw - w.pad_left + j * w.dw;
            if (ih < 0 || ih >= w.h || iw < 0 || iw >= w.w) continue;
            sum += x[((n * w.h + ih) * w.w + iw) * w.c + c] * dy[p * cm + ch];
        }
        partial[threadIdx.x] = sum;
        __syncthreads();
        for (int s = kThreads / 2; s > 0; s /= 2) {
            if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
            __syncthreads();
        }
        if (threadIdx.x == 0) df[e] = partial[0];
        __syncthreads();
    }
}

}  // namespace

cudaError_t depthwise_conv2d(Elem elem,
                             const Window& w,
                             int64_t mult,
                             const void* x,
                             const void* f,
                             void* y,
                             cudaStream_t stream) {
    const int64_t n = w.n * w.oh * w.ow * w.c * mult;
    if (n == 0) return cudaSuccess;
    return visit_real(elem, [&](auto tag) {
        using T = typename decltype(tag)::type;
        depthwise_kernel<<<grid_for(n), kThreads, 0, stream>>>(
            w, mult, static_cast<const T*>(x), static_cast<const T*>(f), static_cast<T*>(y));
        return cudaGetLastError();
    });
}

cudaError_t depthwise_backprop_input(Elem elem,
                                     const Window& w,
                                     int64_t mult,
                                     const void* f,
                                     const void* dy,
                                     void* dx,
                                     cudaStream_t stream) {
    const int64_t n = w.n * w.h * w.w * w.c;
    if (n == 0) return cudaSuccess;
    return visit_real(elem, [&](auto tag) {
        using T = typename decltype(tag)::type;
        depthwise_input_kernel<<<grid_for(n), kThreads, 0, stream>>>(
            w, mult, static_cast<const T*>(f), static_cast<const T*>(dy), static_cast<T*>(dx));
        return cudaGetLastError();
    });
}

cudaError_t depthwise_backprop_filter(Elem elem,
                                      const Window& w,
                                      int64_t mult,
                                      const void* x,
                                      const void* dy,
                                      void* df,
                                      cudaStream_t stream) {
    const int64_t n = w.kh * w.kw * w.c * mult;
    if (n == 0) return cudaSuccess;
    const auto grid = static_cast<unsigned>(n < kMaxGridBlocks ? n : kMaxGridBlocks);
    return visit_real(elem, [&](auto tag) {
        using T = typename decltype(tag)::type;
        depthwise_filter_kernel<<<grid, kThreads, 0, stream>>>(
            w, mult, static_cast<const T*>(x), static_cast<const T*>(dy), static_cast<T*>(df));
        return cudaGetLastError();
    });
}

}  // namespace tapeflow::cuda_launch
