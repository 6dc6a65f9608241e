// CUDA kernels of the 2-D window ops in NHWC: im2col / col2im for conv2d and its backprops (the
// GEMMs are cuBLAS calls in ops_cuda_nn.cpp), max_pool, avg_pool and avg_pool_grad. One thread per
// output element; col2im and avg_pool_grad gather (each input cell sums the windows that cover it,
// in the CPU's window order) instead of scattering with atomics, so they are deterministic.
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
        const int64_t ch = idx % w.c;
        const int64_t pix = idx / w.c;
        const int64_t iw = pix % w.w;
        const int64_t ih = (pix / w.w) % w.h;
        const int64_t img = pix / (w.w * w.h);
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
        const int64_t ch = idx % w.c;
        const int64_t pix = idx / w.c;
        const int64_t ow = pix % w.ow;
        const int64_t oh = (pix / w.ow) % w.oh;
        const int64_t n = pix / (w.ow * w.oh);
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
        const int64_t ch = idx % w.c;
        const int64_t pix = idx / w.c;
        const int64_t ow = pix % w.ow;
        const int64_t oh = (pix / w.ow) % w.oh;
        const int64_t n = pix / (w.ow * w.oh);
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
        const int64_t ch = idx % w.c;
        const int64_t pix = idx / w.c;
        const int64_t iw = pix % w.w;
        const int64_t ih = (pix / w.w) % w.h;
        const int64_t n = pix / (w.w * w.h);
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
