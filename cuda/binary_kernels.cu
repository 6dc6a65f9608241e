// CUDA kernels of the binary element-wise ops (arithmetic, comparisons, logic), where and add_n.
// Broadcasting as on the CPU: a linear kernel when each operand is the output's layout or one
// value, else an index-plan walk over the merged dimensions (ops_cuda_elementwise.cpp builds the
// plan with the CPU's make_plan). The math is lib/kernels/shared/elementwise_functors.hpp; the ops
// and their dtypes are the rows of lib/kernels/shared/binary_ops.def.
#include "device_common.cuh"
#include "kernels/shared/elementwise_functors.hpp"

namespace tapeflow::cuda_launch {
namespace {

template <class F, class S, class O>
__global__ void binary_linear(const S* a, const S* b, O* out, int64_t n, int a_step, int b_step) {
    const F f{};
    const int64_t base = static_cast<int64_t>(blockIdx.x) * blockDim.x * kUnroll + threadIdx.x;
    S va[kUnroll], vb[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
        const int64_t i = base + static_cast<int64_t>(u) * blockDim.x;
        if (i < n) {
            va[u] = a[i * a_step];
            vb[u] = b[i * b_step];
        }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
        const int64_t i = base + static_cast<int64_t>(u) * blockDim.x;
        if (i < n) out[i] = store<O>(f(load(va[u]), load(vb[u])));
    }
}

template <class F, class S, class O>
__global__ void binary_plan(const S* a, const S* b, O* out, int64_t n, IndexPlan<2> plan) {
    const F f{};
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int64_t off[2];
    plan_offsets(plan, i, off);
    out[i] = store<O>(f(load(a[off[0]]), load(b[off[1]])));
}

// The plan walk by rows (device_common.cuh): a column broadcast [R, C] + [R, 1] reads b's value
// once per row and everything else along rows, without per-element index arithmetic.
template <class F, class S, class O>
__global__ void binary_rows(const S* a, const S* b, O* out, int64_t rows, IndexPlan<2> plan) {
    const F f{};
    const int inner = plan.rank - 1;
    const int64_t cols = plan.dims[inner];
    const int64_t sa = plan.strides[0][inner], sb = plan.strides[1][inner];
    const int64_t base = static_cast<int64_t>(blockIdx.x) * blockDim.x * kUnroll + threadIdx.x;
    for (int64_t row = blockIdx.y; row < rows; row += gridDim.y) {
        int64_t off[2];
        row_offsets(plan, row, off);
        S va[kUnroll], vb[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
            const int64_t c = base + static_cast<int64_t>(u) * blockDim.x;
            if (c < cols) {
                va[u] = a[off[0] + c * sa];
                vb[u] = b[off[1] + c * sb];
            }
        }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
            const int64_t c = base + static_cast<int64_t>(u) * blockDim.x;
            if (c < cols) out[row * cols + c] = store<O>(f(load(va[u]), load(vb[u])));
        }
    }
}

using ew::TypeSet;

// O: the output type (bool for comparisons and logic).
template <class F, TypeSet K, bool kBoolOut>
cudaError_t run(Elem elem,
                const void* a,
                const void* b,
                void* out,
                int64_t n,
                int a_step,
                int b_step,
                const IndexPlan<2>* plan,
                cudaStream_t stream) {
    return visit_elem(elem, [&](auto tag) {
        using S = typename decltype(tag)::type;
        using O = std::conditional_t<kBoolOut, bool, S>;
        if constexpr (!in_type_set<K, S>()) {
            return cudaErrorInvalidValue;
        } else {
            const auto* pa = static_cast<const S*>(a);
            const auto* pb = static_cast<const S*>(b);
            auto* po = static_cast<O*>(out);
            if (plan == nullptr) {
                binary_linear<F, S, O>
                    <<<blocks_for(n), kThreads, 0, stream>>>(pa, pb, po, n, a_step, b_step);
            } else if (use_rows(*plan)) {
                const int64_t rows = n / plan->dims[plan->rank - 1];
                binary_rows<F, S, O>
                    <<<row_grid(rows, plan->dims[plan->rank - 1]), kThreads, 0, stream>>>(
                        pa, pb, po, rows, *plan);
            } else {
                binary_plan<F, S, O>
                    <<<blocks_for(n, 1), kThreads, 0, stream>>>(pa, pb, po, n, *plan);
            }
            return cudaGetLastError();
        }
    });
}

template <class E>
__global__ void where_kernel(
    const uint8_t* c, const E* x, const E* y, E* out, int64_t n, IndexPlan<3> plan) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int64_t off[3];
    plan_offsets(plan, i, off);
    out[i] = c[off[0]] != 0 ? x[off[1]] : y[off[2]];
}

template <class E>
cudaError_t where_typed(const void* c,
                        const void* x,
                        const void* y,
                        void* out,
                        int64_t n,
                        const IndexPlan<3>& plan,
                        cudaStream_t stream) {
    where_kernel<E><<<blocks_for(n, 1), kThreads, 0, stream>>>(static_cast<const uint8_t*>(c),
                                                               static_cast<const E*>(x),
                                                               static_cast<const E*>(y),
                                                               static_cast<E*>(out),
                                                               n,
                                                               plan);
    return cudaGetLastError();
}

template <class S>
struct Inputs {
    const S* p[kAddNMax];
};

template <class S>
__global__ void add_n_kernel(Inputs<S> in, int count, bool accumulate, S* out, int64_t n) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const tapeflow::ew::Add add{};
    compute_t<S> acc = accumulate ? load(out[i]) : load(in.p[0][i]);
    for (int j = accumulate ? 0 : 1; j < count; ++j)
        acc = add(acc, load(in.p[j][i]));
    out[i] = store<S>(acc);
}

}  // namespace

cudaError_t binary(Op op,
                   Elem elem,
                   const void* a,
                   const void* b,
                   void* out,
                   int64_t n,
                   int a_step,
                   int b_step,
                   const IndexPlan<2>* plan,
                   cudaStream_t stream) {
    if (n == 0) return cudaSuccess;
#define TAPEFLOW_RUN(F, K, B) \
    run<ew::F, TypeSet::K, B>(elem, a, b, out, n, a_step, b_step, plan, stream)
#define TFL_BINARY(name, functor, dtypes, check, cost) \
    case Op::name:                                     \
        return TAPEFLOW_RUN(functor, dtypes, false);
#define TFL_COMPARE(name, functor, dtypes) \
    case Op::name:                         \
        return TAPEFLOW_RUN(functor, dtypes, true);
    switch (op) {  // the rows of kernels/shared/binary_ops.def
#include "kernels/shared/binary_ops.def"
#undef TFL_COMPARE
#undef TFL_BINARY
#undef TAPEFLOW_RUN
        default:
            return cudaErrorInvalidValue;
    }
}

cudaError_t where(const void* cond,
                  const void* x,
                  const void* y,
                  void* out,
                  int64_t n,
                  int element_size,
                  const IndexPlan<3>& plan,
                  cudaStream_t stream) {
    if (n == 0) return cudaSuccess;
    switch (element_size) {
        case 1:
            return where_typed<uint8_t>(cond, x, y, out, n, plan, stream);
        case 2:
            return where_typed<uint16_t>(cond, x, y, out, n, plan, stream);
        case 4:
            return where_typed<uint32_t>(cond, x, y, out, n, plan, stream);
        default:
            return where_typed<uint64_t>(cond, x, y, out, n, plan, stream);
    }
}

cudaError_t add_n(Elem elem,
                  const void* const* in,
                  int count,
                  bool accumulate,
                  void* out,
                  int64_t n,
                  cudaStream_t stream) {
    if (n == 0) return cudaSuccess;
    return visit_elem(elem, [&](auto tag) {
        using S = typename decltype(tag)::type;
        if constexpr (std::is_same_v<S, bool>) {
            return cudaErrorInvalidValue;
        } else {
            Inputs<S> ptrs{};
            for (int j = 0; j < count; ++j)
                ptrs.p[j] = static_cast<const S*>(in[j]);
            add_n_kernel<S><<<blocks_for(n, 1), kThreads, 0, stream>>>(
                ptrs, count, accumulate, static_cast<S*>(out), n);
            return cudaGetLastError();
        }
    });
}

}  // namespace tapeflow::cuda_launch
