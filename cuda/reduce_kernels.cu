// CUDA kernels of the reduction table (lib/kernels/shared/reduce_ops.def): the reductions (sum,
// mean, prod, max, min, any, all), argmax/argmin and the scans, with the switches over Op generated
// from the table's rows, so each op is instantiated for the dtypes the CPU registers. Reductions
// take the input as kept dimensions x reduced dimensions (any axes, merged by ops_cuda_reduce.cpp):
// when the reduced elements of an output are contiguous, blocks reduce them (split into chunks
// whose partials a second pass combines, so that a full reduction uses every SM; no atomics, so
// results are deterministic); otherwise each thread reduces one output, with neighbouring threads
// reading neighbouring elements. Same accumulator rules as the CPU: integers wrap (unsigned),
// 16-bit floats accumulate in float, max/min propagate NaN; float32 sums accumulate in double.
#include <limits>

#include "device_common.cuh"
#include "kernels/shared/reduce_combine.hpp"

namespace tapeflow::cuda_launch {
namespace {

using ew::TypeSet;
using reduction::Combine;

template <Combine K, class T>
struct Reducer {
    static constexpr bool kSum = K == Combine::sum || K == Combine::mean;
    static constexpr bool kInt = std::is_integral_v<T> && !std::is_same_v<T, bool>;
    using L = std::conditional_t<
        K == Combine::any || K == Combine::all,
        bool,
        std::conditional_t<
            kInt && K != Combine::max && K != Combine::min,
            std::make_unsigned_t<std::conditional_t<kInt, T, int>>,
            std::conditional_t<kSum && std::is_same_v<T, float>, double, compute_t<T>>>>;

    __device__ static L identity() { return reduction::identity<K, L>(); }
    __device__ static L lane(T v) {
        if constexpr (std::is_same_v<L, bool>)
            return static_cast<float>(load(v)) != 0.0f;
        else
            return static_cast<L>(load(v));
    }
    __device__ static bool is_nan(L v) {
        if constexpr (std::is_floating_point_v<L>)
            return v != v;
        else
            return false;
    }
    // max and min propagate NaN whichever side it is on, so the combine order does not matter.
    __device__ static L combine(L a, L v) {
        if constexpr (kSum) return static_cast<L>(a + v);
        if constexpr (K == Combine::prod) return static_cast<L>(a * v);
        if constexpr (K == Combine::any) return a || v;
        if constexpr (K == Combine::all) return a && v;
        if constexpr (K == Combine::max) return (v > a || is_nan(v)) ? v : a;
        if constexpr (K == Combine::min) return (v < a || is_nan(v)) ? v : a;
    }
    __device__ static T finalize(L a, int64_t count) {
        if constexpr (K == Combine::mean) {
            if constexpr (kInt) {
                return count == 0 ? T(0) : static_cast<T>(static_cast<T>(a) / count);
            } else {
                return store<T>(a / static_cast<L>(count));
            }
        } else {
            return store<T>(a);
        }
    }
};

// Offset of flat index i over dims [d0, d1) of the plan.
__device__ __forceinline__ int64_t sub_offset(const IndexPlan<1>& p, int d0, int d1, int64_t i) {
    if (d1 - d0 == 1) return i * p.strides[0][d0];  // the common case: no division
    int64_t off = 0;
    for (int d = d1 - 1; d >= d0; --d) {
        const int64_t q = i / p.dims[d];
        off += (i - q * p.dims[d]) * p.strides[0][d];
        i = q;
    }
    return off;
}

template <class L, class R>
__device__ L block_combine(L v) {
    __shared__ L buf[kThreads];
    buf[threadIdx.x] = v;
    __syncthreads();
    for (int s = kThreads / 2; s > 0; s /= 2) {
        if (static_cast<int>(threadIdx.x) < s)
            buf[threadIdx.x] = R::combine(buf[threadIdx.x], buf[threadIdx.x + s]);
        __syncthreads();
    }
    return buf[0];
}

// Block b = o * chunks + c reduces chunk c of output o's contiguous reduced run; with one chunk it
// writes the output, else a partial into scratch[b].
template <Combine K, class T>
__global__ void reduce_rows_kernel(const T* in,
                                   T* out,
                                   typename Reducer<K, T>::L* scratch,
                                   IndexPlan<1> plan,
                                   int kept_rank,
                                   int64_t n_red,
                                   int64_t chunks,
                                   int64_t chunk) {
    using R = Reducer<K, T>;
    const int64_t o = blockIdx.x / chunks;
    const int64_t c = blockIdx.x % chunks;
    const T* row = in + sub_offset(plan, 0, kept_rank, o);
    const int64_t r0 = c * chunk;
    const int64_t r1 = r0 + chunk < n_red ? r0 + chunk : n_red;
    typename R::L acc = R::identity();
#pragma unroll 4
    for (int64_t r = r0 + threadIdx.x; r < r1; r += kThreads) {
        acc = R::combine(acc, R::lane(row[sub_offset(plan, kept_rank, plan.rank, r)]));
    }
    acc = block_combine<typename R::L, R>(acc);
    if (threadIdx.x != 0) return;
    if (chunks == 1) {
        out[o] = R::finalize(acc, n_red);
    } else {
        scratch[blockIdx.x] = acc;
    }
}

template <Combine K, class T>
__global__ void combine_partials_kernel(const typename Reducer<K, T>::L* scratch,
                                        T* out,
                                        int64_t chunks,
                                        int64_t n_red) {
    using R = Reducer<K, T>;
    typename R::L acc = R::identity();
    for (int64_t c = threadIdx.x; c < chunks; c += kThreads) {
        acc = R::combine(acc, scratch[blockIdx.x * chunks + c]);
    }
    acc = block_combine<typename R::L, R>(acc);
    if (threadIdx.x == 0) out[blockIdx.x] = R::finalize(acc, n_red);
}

template <Combine K, class T>
__global__ void reduce_columns_kernel(
    const T* in, T* out, IndexPlan<1> plan, int kept_rank, int64_t n_out, int64_t n_red) {
    using R = Reducer<K, T>;
    const int64_t o = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (o >= n_out) return;
    const T* base = in + sub_offset(plan, 0, kept_rank, o);
    typename R::L acc = R::identity();
    for (int64_t r = 0; r < n_red; ++r) {
        acc = R::combine(acc, R::lane(base[sub_offset(plan, kept_rank, plan.rank, r)]));
    }
    out[o] = R::finalize(acc, n_red);
}

struct Shape2 {
    int64_t n_out, n_red;
    bool rows;  // reduced elements contiguous: block reduction
};

Shape2 shape_of(const IndexPlan<1>& plan, int kept_rank) {
    Shape2 s{1, 1, false};
    for (int d = 0; d < plan.rank; ++d)
        (d < kept_rank ? s.n_out : s.n_red) *= plan.dims[d];
    s.rows = kept_rank < plan.rank && plan.strides[0][plan.rank - 1] == 1 && s.n_red >= 32;
    return s;
}

int64_t chunks_for(const Shape2& s, int sm_count) {
    if (!s.rows) return 1;
    // About 8 blocks per SM: enough loads in flight to approach the memory bandwidth.
    const int64_t want = (8 * static_cast<int64_t>(sm_count) + s.n_out - 1) / s.n_out;
    const int64_t most = (s.n_red + kThreads * 16 - 1) / (kThreads * 16);  // >= 16 per thread
    int64_t chunks = want < most ? want : most;
    if (chunks > 1024) chunks = 1024;
    return chunks < 1 ? 1 : chunks;
}

template <Combine K, class T>
cudaError_t reduce_typed(const void* in_v,
                         void* out_v,
                         const IndexPlan<1>& plan,
                         int kept_rank,
                         void* scratch,
                         int sm_count,
                         cudaStream_t stream) {
    using L = typename Reducer<K, T>::L;
    const auto* in = static_cast<const T*>(in_v);
    auto* out = static_cast<T*>(out_v);
    const Shape2 s = shape_of(plan, kept_rank);
    if (s.n_out == 0) return cudaSuccess;
    if (!s.rows) {
        reduce_columns_kernel<K, T><<<blocks_for(s.n_out, 1), kThreads, 0, stream>>>(
            in, out, plan, kept_rank, s.n_out, s.n_red);
        return cudaGetLastError();
    }
    const int64_t chunks = chunks_for(s, sm_count);
    const int64_t chunk = (s.n_red + chunks - 1) / chunks;
    reduce_rows_kernel<K, T><<<static_cast<unsigned>(s.n_out * chunks), kThreads, 0, stream>>>(
        in, out, static_cast<L*>(scratch), plan, kept_rank, s.n_red, chunks, chunk);
    if (chunks > 1) {
        combine_partials_kernel<K, T><<<static_cast<unsigned>(s.n_out), kThreads, 0, stream>>>(
            static_cast<const L*>(scratch), out, chunks, s.n_red);
    }
    return cudaGetLastError();
}

// f(tag) for the C++ type of `elem` when it is in the row's dtype set K, else
// cudaErrorInvalidValue.
template <TypeSet K, class F>
cudaError_t visit_in_set(Elem elem, F&& f) {
    return visit_elem(elem, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (!in_type_set<K, T>()) {
            return cudaErrorInvalidValue;
        } else {
            return f(tag);
        }
    });
}

// ---- argmax / argmin: the first index of the extremum; NaN counts as the extremum ----

template <bool kMax, class T, class I>
__global__ void arg_kernel(const T* in, I* out, int64_t outer, int64_t n, int64_t inner) {
    const int64_t o = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (o >= outer * inner) return;
    const int64_t a = o / inner;
    const int64_t j = o - a * inner;
    const T* base = in + a * n * inner + j;
    auto best = load(base[0]);
    I index = 0;
    for (int64_t r = 1; r < n; ++r) {
        const auto v = load(base[r * inner]);
        const bool v_nan = v != v;
        const bool best_nan = best != best;
        const bool better =
            kMax ? (v > best || (v_nan && !best_nan)) : (v < best || (v_nan && !best_nan));
        if (better) {
            best = v;
            index = static_cast<I>(r);
        }
    }
    out[o] = index;
}

// ---- cumsum / cumprod ----

template <Combine K, class T>
__global__ void scan_kernel(
    const T* in, T* out, int64_t outer, int64_t n, int64_t inner, bool exclusive, bool reverse) {
    static_assert(K == Combine::sum || K == Combine::prod, "scans add or multiply");
    constexpr bool kProd = K == Combine::prod;
    using R = Reducer<K, T>;
    // The CPU scans in the compute type (float for float32), not in double.
    using L = std::conditional_t<std::is_same_v<T, float>, float, typename R::L>;
    const int64_t o = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (o >= outer * inner) return;
    const int64_t a = o / inner;
    const int64_t j = o - a * inner;
    L acc = kProd ? L(1) : L(0);
    for (int64_t s = 0; s < n; ++s) {
        const int64_t r = reverse ? n - 1 - s : s;
        const int64_t off = (a * n + r) * inner + j;
        if (exclusive) out[off] = store<T>(acc);
        const L v = static_cast<L>(load(in[off]));
        acc = kProd ? static_cast<L>(acc * v) : static_cast<L>(acc + v);
        if (!exclusive) out[off] = store<T>(acc);
    }
}

}  // namespace

int64_t reduce_scratch_bytes(Elem elem, int64_t n_out, int64_t n_reduced, int sm_count) {
    const Shape2 s{n_out, n_reduced, n_reduced >= 32};
    if (n_out == 0 || chunks_for(s, sm_count) == 1) return 0;
    // Room for the widest accumulator (8 bytes) whatever the op.
    (void)elem;
    return n_out * chunks_for(s, sm_count) * 8;
}

template <Combine K, TypeSet Types>
cudaError_t reduce_in_set(Elem elem,
                          const void* in,
                          void* out,
                          const IndexPlan<1>& plan,
                          int kept_rank,
                          void* scratch,
                          int sm_count,
                          cudaStream_t stream) {
    return visit_in_set<Types>(elem, [&](auto tag) {
        using T = typename decltype(tag)::type;
        return reduce_typed<K, T>(in, out, plan, kept_rank, scratch, sm_count, stream);
    });
}

cudaError_t reduce(Op op,
                   Elem elem,
                   const void* in,
                   void* out,
                   const IndexPlan<1>& plan,
                   int kept_rank,
                   void* scratch,
                   int sm_count,
                   cudaStream_t stream) {
    switch (op) {  // the TFL_REDUCE rows of kernels/shared/reduce_ops.def
#define TFL_REDUCE(name, combine, dtypes)                        \
    case Op::name:                                               \
        return reduce_in_set<Combine::combine, TypeSet::dtypes>( \
            elem, in, out, plan, kept_rank, scratch, sm_count, stream);
#define TFL_ARG_REDUCE(name, extremum, dtypes)
#define TFL_SCAN(name, combine, dtypes)
#include "kernels/shared/reduce_ops.def"
#undef TFL_SCAN
#undef TFL_ARG_REDUCE
#undef TFL_REDUCE
        default:
            return cudaErrorInvalidValue;
    }
}

template <bool kMax, TypeSet Types>
cudaError_t arg_in_set(Elem elem,
                       const void* in,
                       void* out,
                       bool out_is_64,
                       int64_t outer,
                       int64_t n,
                       int64_t inner,
                       cudaStream_t stream) {
    return visit_in_set<Types>(elem, [&](auto tag) {
        using T = typename decltype(tag)::type;
        const auto* x = static_cast<const T*>(in);
        const unsigned blocks = blocks_for(outer * inner, 1);
        if (out_is_64) {
            arg_kernel<kMax, T, int64_t>
                <<<blocks, kThreads, 0, stream>>>(x, static_cast<int64_t*>(out), outer, n, inner);
        } else {
            arg_kernel<kMax, T, int32_t>
                <<<blocks, kThreads, 0, stream>>>(x, static_cast<int32_t*>(out), outer, n, inner);
        }
        return cudaGetLastError();
    });
}

cudaError_t arg_reduce(Op op,
                       Elem elem,
                       const void* in,
                       void* out,
                       bool out_is_64,
                       int64_t outer,
                       int64_t n,
                       int64_t inner,
                       cudaStream_t stream) {
    if (outer * inner == 0) return cudaSuccess;
    switch (op) {  // the TFL_ARG_REDUCE rows of kernels/shared/reduce_ops.def
#define TFL_REDUCE(name, combine, dtypes)
#define TFL_ARG_REDUCE(name, extremum, dtypes)                                 \
    case Op::name:                                                             \
        return arg_in_set<Combine::extremum == Combine::max, TypeSet::dtypes>( \
            elem, in, out, out_is_64, outer, n, inner, stream);
#define TFL_SCAN(name, combine, dtypes)
#include "kernels/shared/reduce_ops.def"
#undef TFL_SCAN
#undef TFL_ARG_REDUCE
#undef TFL_REDUCE
        default:
            return cudaErrorInvalidValue;
    }
}

template <Combine K, TypeSet Types>
cudaError_t scan_in_set(Elem elem,
                        const void* in,
                        void* out,
                        int64_t outer,
                        int64_t n,
                        int64_t inner,
                        bool exclusive,
                        bool reverse,
                        cudaStream_t stream) {
    return visit_in_set<Types>(elem, [&](auto tag) {
        using T = typename decltype(tag)::type;
        scan_kernel<K, T><<<blocks_for(outer * inner, 1), kThreads, 0, stream>>>(
            static_cast<const T*>(in), static_cast<T*>(out), outer, n, inner, exclusive, reverse);
        return cudaGetLastError();
    });
}

cudaError_t scan(Op op,
                 Elem elem,
                 const void* in,
                 void* out,
                 int64_t outer,
                 int64_t n,
                 int64_t inner,
                 bool exclusive,
                 bool reverse,
                 cudaStream_t stream) {
    if (outer * inner == 0 || n == 0) return cudaSuccess;
    switch (op) {  // the TFL_SCAN rows of kernels/shared/reduce_ops.def
#define TFL_REDUCE(name, combine, dtypes)
#define TFL_ARG_REDUCE(name, extremum, dtypes)
#define TFL_SCAN(name, combine, dtypes)                        \
    case Op::name:                                             \
        return scan_in_set<Combine::combine, TypeSet::dtypes>( \
            elem, in, out, outer, n, inner, exclusive, reverse, stream);
#include "kernels/shared/reduce_ops.def"
#undef TFL_SCAN
#undef TFL_ARG_REDUCE
#undef TFL_REDUCE
        default:
            return cudaErrorInvalidValue;
    }
}

}  // namespace tapeflow::cuda_launch
