// CUDA kernels of the nn activations (the math of kernels/shared/activation_functors.hpp, shared
// with the CPU), softmax/log_softmax and the fused softmax cross-entropy losses (one block per row:
// block reductions of the row's maximum and of its sum of exponentials, as the CPU's row loop), and
// bias_add (one thread per element, the bias index from the element's position).
#include <cmath>

#include "device_common.cuh"
#include "kernels/shared/activation_functors.hpp"
#include "kernels/shared/elementwise_functors.hpp"

namespace tapeflow::cuda_launch {
namespace {

template <class T>
constexpr bool kIsFloat = std::is_floating_point_v<T> || kIsHalf<T>;

// ---- activations ----

template <class F, class S>
__global__ void activation_kernel(F f, const S* in, S* out, int64_t n) {
    TAPEFLOW_FOR_EACH(i, n) {
        out[i] = store<S>(f(load(in[i])));
    }
}

template <class F, class S>
__global__ void activation_grad_kernel(F f, const S* g, const S* x, S* out, int64_t n) {
    TAPEFLOW_FOR_EACH(i, n) {
        out[i] = store<S>(f(load(g[i]), load(x[i])));
    }
}

// relu and relu6 (and their grads) run on floats and int32/int64 (the CPU's signed numbers), the
// others on floats.
template <class F, class S>
constexpr bool accepts() {
    if (kIsFloat<S>) return true;
    const bool int_ok = std::is_same_v<S, int32_t> || std::is_same_v<S, int64_t>;
    return int_ok && (std::is_same_v<F, act::Relu> || std::is_same_v<F, act::Relu6> ||
                      std::is_same_v<F, act::ReluGrad> || std::is_same_v<F, act::Relu6Grad>);
}

// f(functor) for the forward (kGrad false) or gradient functor of `op`.
template <bool kGrad, class Body>
cudaError_t with_functor(Activation op, double alpha, Body&& body) {
    if constexpr (kGrad) {
        switch (op) {
            case Activation::relu:
                return body(act::ReluGrad{});
            case Activation::relu6:
                return body(act::Relu6Grad{});
            case Activation::elu:
                return body(act::EluGrad{});
            case Activation::selu:
                return body(act::SeluGrad{});
            case Activation::leaky_relu:
                return body(act::LeakyReluGrad{alpha});
        }
    } else {
        switch (op) {
            case Activation::relu:
                return body(act::Relu{});
            case Activation::relu6:
                return body(act::Relu6{});
            case Activation::elu:
                return body(act::Elu{});
            case Activation::selu:
                return body(act::Selu{});
            case Activation::leaky_relu:
                return body(act::LeakyRelu{alpha});
        }
    }
    return cudaErrorInvalidValue;
}

// ---- row reductions ----

template <class T>
__device__ __forceinline__ T max_nan(T a, T b) {
    return (b > a || isnan(b)) ? b : a;  // a NaN anywhere in the row wins, as on the CPU
}

/// The block's combination of v (every thread of the block calls it, uniformly).
template <class T, class Op>
__device__ T block_reduce(T v, Op op) {
    __shared__ double raw[kThreads];
    T* buf = reinterpret_cast<T*>(raw);
    buf[threadIdx.x] = v;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) buf[threadIdx.x] = op(buf[threadIdx.x], buf[threadIdx.x + s]);
        __syncthreads();
    }
    const T r = buf[0];
    __syncthreads();  // buf is reused by the next call
    return r;
}

struct MaxOp {
    template <class T>
    __device__ T operator()(T a, T b) const {
        return max_nan(a, b);
    }
};
struct SumOp {
    template <class T>
    __device__ T operator()(T a, T b) const {
        return a + b;
    }
};

/// Maximum and sum of exp(x - max) of the row x[0], x[stride], ..., x[(n-1) * stride].
template <class T>
__device__ void row_stats(const T* x, int64_t n, int64_t stride, T& m, T& sum) {
    T local = -INFINITY;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
        local = max_nan(local, x[i * stride]);
    m = block_reduce(local, MaxOp{});
    T s = 0;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
        s += exp(x[i * stride] - m);
    sum = block_reduce(s, SumOp{});
}

template <class T, bool kLog>
__global__ void softmax_kernel(const T* in, T* out, int64_t outer, int64_t n, int64_t inner) {
    for (int64_t r = blockIdx.x; r < outer * inner; r += gridDim.x) {
        const int64_t base = (r / inner) * n * inner + r % inner;
        const T* x = in + base;
        T* y = out + base;
        T m, sum;
        row_stats(x, n, inner, m, sum);
        const T lse = m + log(sum);
        for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
            const T v = x[i * inner];
            y[i * inner] = kLog ? v - lse : exp(v - m) / sum;
        }
    }
}

template <class T, class L>
__global__ void xent_kernel(Xent kind,
                            const T* logits,
                            const T* dense_labels,
                            const L* labels,
                            T* out,
                            int64_t rows,
                            int64_t n) {
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const T* x = logits + r * n;
        T m, sum;
        row_stats(x, n, 1, m, sum);
        const T lse = m + log(sum);
        if (kind == Xent::dense) {
            const T* z = dense_labels + r * n;
            T acc = 0;
            for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
                acc += z[i] * (lse - x[i]);
            acc = block_reduce(acc, SumOp{});
            if (threadIdx.x == 0) out[r] = acc;
        } else if (kind == Xent::sparse) {
            if (threadIdx.x == 0) out[r] = lse - x[static_cast<int64_t>(labels[r])];
        } else {
            const int64_t label = static_cast<int64_t>(labels[r]);
            const T inv = T(1) / sum;
            for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
                out[r * n + i] = exp(x[i] - m) * inv - (i == label ? T(1) : T(0));
            }
        }
    }
}

template <class S>
__global__ void bias_add_kernel(
    const S* x, const S* bias, S* out, int64_t n, int64_t c, int64_t inner) {
    const ew::Add add{};
    TAPEFLOW_FOR_EACH(i, n) {
        out[i] = store<S>(add(load(x[i]), load(bias[(i / inner) % c])));
    }
}

unsigned row_blocks(int64_t rows) {
    return static_cast<unsigned>(rows < kMaxGridBlocks ? rows : kMaxGridBlocks);
}

}  // namespace

cudaError_t activation(Activation op,
                       double alpha,
                       Elem elem,
                       const void* in,
                       void* out,
                       int64_t n,
                       cudaStream_t stream) {
    if (n == 0) return cudaSuccess;
    return visit_elem(elem, [&](auto tag) {
        using S = typename decltype(tag)::type;
        return with_functor<false>(op, alpha, [&](auto f) {
            if constexpr (!accepts<decltype(f), S>()) {
                return cudaErrorInvalidValue;
            } else {
                activation_kernel<<<grid_for(n), kThreads, 0, stream>>>(
                    f, static_cast<const S*>(in), static_cast<S*>(out), n);
                return cudaGetLastError();
            }
        });
    });
}

cudaError_t activation_grad(Activation op,
                            double alpha,
                            Elem elem,
                            const void* g,
                            const void* x,
                            void* out,
                            int64_t n,
                            cudaStream_t stream) {
    if (n == 0) return cudaSuccess;
    return visit_elem(elem, [&](auto tag) {
        using S = typename decltype(tag)::type;
        return with_functor<true>(op, alpha, [&](auto f) {
            if constexpr (!accepts<decltype(f), S>()) {
                return cudaErrorInvalidValue;
            } else {
                activation_grad_kernel<<<grid_for(n), kThreads, 0, stream>>>(
                    f, static_cast<const S*>(g), static_cast<const S*>(x), static_cast<S*>(out), n);
                return cudaGetLastError();
            }
        });
    });
}

cudaError_t softmax(bool log,
                    Elem elem,
                    const void* in,
                    void* out,
                    int64_t outer,
                    int64_t n,
                    int64_t inner,
                    cudaStream_t stream) {
    if (outer * n * inner == 0) return cudaSuccess;
    return visit_real(elem, [&](auto tag) {
        using T = typename decltype(tag)::type;
        const auto* x = static_cast<const T*>(in);
        auto* y = static_cast<T*>(out);
        if (log) {
            softmax_kernel<T, true>
                <<<row_blocks(outer * inner), kThreads, 0, stream>>>(x, y, outer, n, inner);
        } else {
            softmax_kernel<T, false>
                <<<row_blocks(outer * inner), kThreads, 0, stream>>>(x, y, outer, n, inner);
        }
        return cudaGetLastError();
    });
}

cudaError_t xent(Xent kind,
                 Elem elem,
                 const void* logits,
                 const void* labels,
                 bool label_is_64,
                 void* out,
                 int64_t rows,
                 int64_t n,
                 cudaStream_t stream) {
    if (rows == 0 || n == 0) return cudaSuccess;  // the caller zero-fills the losses of empty rows
    return visit_real(elem, [&](auto tag) {
        using T = typename decltype(tag)::type;
        const auto* x = static_cast<const T*>(logits);
        const auto* dense = kind == Xent::dense ? static_cast<const T*>(labels) : nullptr;
        if (label_is_64) {
            const auto* l = kind == Xent::dense ? nullptr : static_cast<const int64_t*>(labels);
            xent_kernel<<<row_blocks(rows), kThreads, 0, stream>>>(
                kind, x, dense, l, static_cast<T*>(out), rows, n);
        } else {
            const auto* l = kind == Xent::dense ? nullptr : static_cast<const int32_t*>(labels);
            xent_kernel<<<row_blocks(rows), kThreads, 0, stream>>>(
                kind, x, dense, l, static_cast<T*>(out), rows, n);
        }
        return cudaGetLastError();
    });
}

cudaError_t bias_add(Elem elem,
                     const void* x,
                     const void* bias,
                     void* out,
                     int64_t n,
                     int64_t c,
                     int64_t inner,
                     cudaStream_t stream) {
    if (n == 0) return cudaSuccess;
    return visit_elem(elem, [&](auto tag) {
        using S = typename decltype(tag)::type;
        if constexpr (std::is_same_v<S, bool>) {
            return cudaErrorInvalidValue;
        } else {
            bias_add_kernel<<<grid_for(n), kThreads, 0, stream>>>(static_cast<const S*>(x),
                                                                  static_cast<const S*>(bias),
                                                                  static_cast<S*>(out),
                                                                  n,
                                                                  c,
                                                                  inner);
            return cudaGetLastError();
        }
    });
}

}  // namespace tapeflow::cuda_launch
