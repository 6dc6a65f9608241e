// CUDA kernels of the fused optimizer updates: one thread per element (grid-stride) loads the
// variable, its slots and the gradient, runs the CPU's update functor
// (lib/kernels/shared/optimizer_functors.hpp) and stores them back. Sparse updates walk the listed
// rows (unique, so no two threads touch one element: no atomics, results independent of
// scheduling). float32 and float64 only, the CPU kernels' dtypes.
#include <utility>

#include "device_common.cuh"
#include "kernels/shared/optimizer_functors.hpp"

namespace tapeflow::cuda_launch {
namespace {

template <class T>
struct Slots {
    T* p[kMaxSlots];
};

// Updates element vi of var and the slots with gradient element gi.
template <class F, class T>
__device__ __forceinline__ void update_at(
    const F& f, T* var, const Slots<T>& slots, const T* grad, int64_t vi, int64_t gi) {
    [&]<std::size_t... K>(std::index_sequence<K...>) {
        T v = var[vi];
        T s[] = {slots.p[K][vi]..., T(0)};  // the last one pads kSlots = 0
        f(v, s[K]..., grad[gi]);
        var[vi] = v;
        ((slots.p[K][vi] = s[K]), ...);
    }
    (std::make_index_sequence<F::kSlots>{});
}

template <class F, class T>
__global__ void dense_kernel(F f, T* var, Slots<T> slots, const T* grad, int64_t n) {
    TAPEFLOW_FOR_EACH(i, n) {
        update_at(f, var, slots, grad, i, i);
    }
}

// Element e of values is column e % row_len of row indices[e / row_len].
template <class F, class T, class I>
__global__ void sparse_kernel(F f,
                              T* var,
                              Slots<T> slots,
                              const T* values,
                              const I* indices,
                              int64_t total,
                              int64_t row_len) {
    TAPEFLOW_FOR_EACH(e, total) {
        const int64_t r = e / row_len;
        const int64_t vi = static_cast<int64_t>(indices[r]) * row_len + (e - r * row_len);
        update_at(f, var, slots, values, vi, e);
    }
}

template <class T>
Slots<T> slots_of(void* const* slots, std::size_t n) {
    Slots<T> s{};
    for (std::size_t k = 0; k < n; ++k)
        s.p[k] = static_cast<T*>(slots[k]);
    return s;
}

template <template <class> class F>
cudaError_t run_dense(Elem elem,
                      const opt::Hyper& h,
                      void* var,
                      void* const* slots,
                      const void* grad,
                      int64_t n,
                      cudaStream_t stream) {
    return visit_real(elem, [&](auto tag) {
        using T = typename decltype(tag)::type;
        const F<T> f(h);
        dense_kernel<<<grid_for(n), kThreads, 0, stream>>>(f,
                                                           static_cast<T*>(var),
                                                           slots_of<T>(slots, F<T>::kSlots),
                                                           static_cast<const T*>(grad),
                                                           n);
        return cudaGetLastError();
    });
}

template <template <class> class F>
cudaError_t run_sparse(Elem elem,
                       const opt::Hyper& h,
                       void* var,
                       void* const* slots,
                       const void* values,
                       const void* indices,
                       bool index_is_64,
                       int64_t rows,
                       int64_t row_len,
                       cudaStream_t stream) {
    return visit_real(elem, [&](auto tag) {
        using T = typename decltype(tag)::type;
        const F<T> f(h);
        const int64_t total = rows * row_len;
        const Slots<T> s = slots_of<T>(slots, F<T>::kSlots);
        if (index_is_64) {
            sparse_kernel<<<grid_for(total), kThreads, 0, stream>>>(
                f,
                static_cast<T*>(var),
                s,
                static_cast<const T*>(values),
                static_cast<const int64_t*>(indices),
                total,
                row_len);
        } else {
            sparse_kernel<<<grid_for(total), kThreads, 0, stream>>>(
                f,
                static_cast<T*>(var),
                s,
                static_cast<const T*>(values),
                static_cast<const int32_t*>(indices),
                total,
                row_len);
        }
        return cudaGetLastError();
    });
}

}  // namespace

// The switches are generated from the update table: the dense rows here, the sparse rows below.
#define TFL_UPDATE_sparse(op, F)
#define TFL_UPDATE_dense(op, F) \
    case Op::op:                \
        return run_dense<opt::F>(elem, h, var, slots, grad, n, stream);
#define TFL_UPDATE(op, F, form, attrs) TFL_UPDATE_##form(op, F)

cudaError_t optimizer_update(Op op,
                             Elem elem,
                             const opt::Hyper& h,
                             void* var,
                             void* const* slots,
                             const void* grad,
                             int64_t n,
                             cudaStream_t stream) {
    if (n == 0) return cudaSuccess;
    switch (op) {
#include "kernels/shared/optimizer_ops.def"
        default:
            return cudaErrorInvalidValue;
    }
}

#undef TFL_UPDATE_dense
#undef TFL_UPDATE_sparse
#define TFL_UPDATE_dense(op, F)
#define TFL_UPDATE_sparse(op, F)   \
    case Op::op:                   \
        return run_sparse<opt::F>( \
            elem, h, var, slots, values, indices, index_is_64, rows, row_len, stream);

cudaError_t sparse_optimizer_update(Op op,
                                    Elem elem,
                                    const opt::Hyper& h,
                                    void* var,
                                    void* const* slots,
                                    const void* values,
                                    const void* indices,
                                    bool index_is_64,
                                    int64_t rows,
                                    int64_t row_len,
                                    cudaStream_t stream) {
    if (rows == 0 || row_len == 0) return cudaSuccess;
    switch (op) {
#include "kernels/shared/optimizer_ops.def"
        default:
            return cudaErrorInvalidValue;
    }
}

#undef TFL_UPDATE
#undef TFL_UPDATE_dense
#undef TFL_UPDATE_sparse

}  // namespace tapeflow::cuda_launch
