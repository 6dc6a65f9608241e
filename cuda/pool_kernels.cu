// CUDA kernels of the 2-D pools in NHWC (the CPU's are in lib/kernels/cpu/pool_cpu.cpp): max_pool
// (with the flat index of each maximum, for its gradient), avg_pool and avg_pool_grad, over the
// launchers' Window (cuda/launch.hpp). One thread per output element; avg_pool_grad gathers (each
// input cell sums the windows that cover it, in the CPU's window order) instead of scattering with
// atomics, so it is deterministic.
#include "device_common.cuh"

namespace tapeflow::cuda_launch {
namespace {

// The window of output (oh, ow) clipped to the input: rows [h0, h1), columns [w0, w1).
struct Span {
    int64_t h0, h1, w0, w1;
};

__device__ __forceinline__ Span clipped(const Window& w, int64_t oh, int64_t ow) {
    const int64_t hs = oh * w.sh - w.pad_top;
    const int64_t ws = ow * w.sw - w.pad_left;
    return {hs > 0 ? hs : 0,
            hs + w.kh < w.h ? hs + w.kh : w.h,
            ws > 0 ? ws : 0,
            ws + w.kw < w.w ? ws + w.kw : w.w};
}

__device__ __forceinline__ int64_t span_count(const Span& s) {
    const int64_t hh = s.h1 - s.h0, ww = s.w1 - s.w0;
    const int64_t c = (hh > 0 ? hh : 0) * (ww > 0 ? ww : 0);
    return c > 1 ? c : 1;  // the CPU divides by max(count, 1)
}

template <class T>
__global__ void max_pool_kernel(Window w, const T* x, T* y, int64_t* argmax) {
    TAPEFLOW_FOR_EACH(idx, w.n * w.oh * w.ow * w.c) {
        const auto [n, oh, ow, ch] = nhwc_of(idx, w.oh, w.ow, w.c);
        const Span s = clipped(w, oh, ow);
        T best = -INFINITY;
        int64_t arg = -1;
        for (int64_t ih = s.h0; ih < s.h1; ++ih) {
            for (int64_t iw = s.w0; iw < s.w1; ++iw) {
                const int64_t at = ((n * w.h + ih) * w.w + iw) * w.c + ch;
                const T v = x[at];
                const bool take = v > best || arg < 0;  // the CPU's rule: first cell, then greater
                best = take ? v : best;
                arg = take ? at : arg;
            }
        }
        y[idx] = best;
        argmax[idx] = arg;
    }
}

template <class T>
__global__ void avg_pool_kernel(Window w, const T* x, T* y) {
    TAPEFLOW_FOR_EACH(idx, w.n * w.oh * w.ow * w.c) {
        const auto [n, oh, ow, ch] = nhwc_of(idx, w.oh, w.ow, w.c);
        const Span s = clipped(w, oh, ow);
        T sum = 0;
        for (int64_t ih = s.h0; ih < s.h1; ++ih) {
            for (int64_t iw = s.w0; iw < s.w1; ++iw)
                sum += x[((n * w.h + ih) * w.w + iw) * w.c + ch];
        }
        y[idx] = sum * (T(1) / static_cast<T>(span_count(s)));
    }
}

// Windows covering input row ih: oh*sh - pad <= ih < oh*sh - pad + kh.
__device__ __forceinline__ void covering(
    int64_t i, int64_t pad, int64_t k, int64_t stride, int64_t out, int64_t& first, int64_t& last) {
    const int64_t t = i + pad - k + 1;
    first = t <= 0 ? 0 : (t + stride - 1) / stride;
    last = (i + pad) / stride;
    if (last > out - 1) last = out - 1;
}

template <class T>
__global__ void avg_pool_grad_kernel(Window w, const T* g, T* dx) {
    TAPEFLOW_FOR_EACH(idx, w.n * w.h * w.w * w.c) {
        const auto [n, ih, iw, ch] = nhwc_of(idx, w.h, w.w, w.c);
        int64_t oh0, oh1, ow0, ow1;
        covering(ih, w.pad_top, w.kh, w.sh, w.oh, oh0, oh1);
        covering(iw, w.pad_left, w.kw, w.sw, w.ow, ow0, ow1);
        T sum = 0;
        for (int64_t oh = oh0; oh <= oh1; ++oh) {
            for (int64_t ow = ow0; ow <= ow1; ++ow) {
                const T inv = T(1) / static_cast<T>(span_count(clipped(w, oh, ow)));
                sum += g[((n * w.oh + oh) * w.ow + ow) * w.c + ch] * inv;
            }
        }
        dx[idx] = sum;
    }
}

}  // namespace

cudaError_t max_pool(
    Elem elem, const Window& w, const void* x, void* y, int64_t* argmax, cudaStream_t stream) {
    const int64_t n = w.n * w.oh * w.ow * w.c;
    if (n == 0) return cudaSuccess;
    return visit_real(elem, [&](auto tag) {
        using T = typename decltype(tag)::type;
        max_pool_kernel<<<grid_for(n), kThreads, 0, stream>>>(
            w, static_cast<const T*>(x), static_cast<T*>(y), argmax);
        return cudaGetLastError();
    });
}

cudaError_t avg_pool(Elem elem, const Window& w, const void* x, void* y, cudaStream_t stream) {
    const int64_t n = w.n * w.oh * w.ow * w.c;
    if (n == 0) return cudaSuccess;
    return visit_real(elem, [&](auto tag) {
        using T = typename decltype(tag)::type;
        avg_pool_kernel<<<grid_for(n), kThreads, 0, stream>>>(
            w, static_cast<const T*>(x), static_cast<T*>(y));
        return cudaGetLastError();
    });
}

cudaError_t avg_pool_grad(
    Elem elem, const Window& w, const void* g, void* dx, cudaStream_t stream) {
    const int64_t n = w.n * w.h * w.w * w.c;
    if (n == 0) return cudaSuccess;
    return visit_real(elem, [&](auto tag) {
        using T = typename decltype(tag)::type;
        avg_pool_grad_kernel<<<grid_for(n), kThreads, 0, stream>>>(
            w, static_cast<const T*>(g), static_cast<T*>(dx));
        return cudaGetLastError();
    });
}

}  // namespace tapeflow::cuda_launch
