// CPU kernels of the training ops: each optimizer's update functor
// (kernels/shared/optimizer_functors.hpp, shared with the CUDA kernels) run as one fused pass over
// the variable, its slots and the gradient (xsimd batches, then a scalar tail; threads for large
// variables). Sparse ops run the same functor over the listed rows only (indices are unique:
// lib/ops/training_ops.cpp sums duplicates).
#include <array>
#include <utility>

#include <xsimd/xsimd.hpp>

#include "core/parallel.hpp"
#include "kernels/shared/optimizer_attrs.hpp"
#include "ops/op_families.hpp"

namespace tapeflow {
namespace {

using namespace opt;  // the update functors

// ---- the loops ----

// Elements per thread chunk: an update moves 12-24 bytes per element and slot, so below ~64K
// elements threads cost more than they save.
constexpr int64_t kGrain = int64_t{1} << 16;

// Runs f over elements [begin, end) of the var, slots and grad pointers: xsimd batches, then a
// scalar tail. Everything is loaded, updated and stored in one pass.
template <class F, class T, std::size_t N>
void update_range(
    const F& f, T* var, const std::array<T*, N>& slots, const T* grad, int64_t begin, int64_t end) {
    using B = xsimd::batch<T>;
    constexpr int64_t kWidth = static_cast<int64_t>(B::size);
    auto step = [&]<class V>(int64_t i, auto load, auto store) {
        V v = load(var + i);
        std::array<V, N> s;
        for (std::size_t k = 0; k < N; ++k)
            s[k] = load(slots[k] + i);
        const V g = load(grad + i);
        [&]<std::size_t... K>(std::index_sequence<K...>) {
            f(v, s[K]..., g);
        }
        (std::make_index_sequence<N>{});
        store(var + i, v);
        for (std::size_t k = 0; k < N; ++k)
            store(slots[k] + i, s[k]);
    };
    int64_t i = begin;
    for (; i + kWidth <= end; i += kWidth) {
        step.template operator()<B>(
            i,
            [](const T* p) { return B::load_unaligned(p); },
            [](T* p, const B& b) { b.store_unaligned(p); });
    }
    for (; i < end; ++i) {
        step.template operator()<T>(
            i, [](const T* p) { return *p; }, [](T* p, T x) { *p = x; });
    }
}

template <class T>
T* buffer(const Tensor& t) {
    return static_cast<T*>(t.mutable_raw_data());
}

template <template <class> class F, class T>
void dense_update(const KernelContext& ctx) {
    using Fn = F<T>;
    constexpr std::size_t N = Fn::kSlots;
    const Fn f(hyper_of(ctx.attrs));
    T* var = buffer<T>(ctx.inputs[0]);
    std::array<T*, N> slots{};
    for (std::size_t k = 0; k < N; ++k)
        slots[k] = buffer<T>(ctx.inputs[1 + k]);
    const T* grad = static_cast<const T*>(ctx.inputs[1 + N].raw_data());
    parallel_for(ctx.inputs[0].num_elements(), kGrain, [&](int64_t begin, int64_t end) {
        update_range(f, var, slots, grad, begin, end);
    });
}

template <template <class> class F, class T>
void sparse_update(const KernelContext& ctx) {
    using Fn = F<T>;
    constexpr std::size_t N = Fn::kSlots;
    const Fn f(hyper_of(ctx.attrs));
    const Tensor& indices = ctx.inputs[2 + N];
    const int64_t rows = indices.num_elements();
    const int64_t var_rows = ctx.inputs[0].shape()[0];
    const int64_t row = var_rows == 0 ? 0 : ctx.inputs[0].num_elements() / var_rows;
    T* var = buffer<T>(ctx.inputs[0]);
    std::array<T*, N> slots{};
    for (std::size_t k = 0; k < N; ++k)
        slots[k] = buffer<T>(ctx.inputs[1 + k]);
    const T* values = static_cast<const T*>(ctx.inputs[1 + N].raw_data());
    auto run = [&]<class I>(const I* index) {
        // Indices are unique, so rows never overlap between threads.
        parallel_for(rows,
                     std::max<int64_t>(1, kGrain / std::max<int64_t>(row, 1)),
                     [&](int64_t begin, int64_t end) {
                         for (int64_t r = begin; r < end; ++r) {
                             const int64_t offset = static_cast<int64_t>(index[r]) * row;
                             std::array<T*, N> s{};
                             for (std::size_t k = 0; k < N; ++k)
                                 s[k] = slots[k] + offset;
                             update_range(f, var + offset, s, values + r * row, 0, row);
                         }
                     });
    };
    if (indices.dtype() == DType::int32) {
        run(static_cast<const int32_t*>(indices.raw_data()));
    } else {
        run(static_cast<const int64_t*>(indices.raw_data()));
    }
}

template <template <class> class F>
void dense_kernel(const KernelContext& ctx) {
    if (ctx.inputs[0].dtype() == DType::float64) {
        dense_update<F, double>(ctx);
    } else {
        dense_update<F, float>(ctx);
    }
}

template <template <class> class F>
void sparse_kernel(const KernelContext& ctx) {
    if (ctx.inputs[0].dtype() == DType::float64) {
        sparse_update<F, double>(ctx);
    } else {
        sparse_update<F, float>(ctx);
    }
}

}  // namespace

void register_training_cpu(KernelRegistry& r) {
    const DTypeSet kTypes{DType::float32, DType::float64};
#define TFL_UPDATE(op, functor, form, attrs) \
    r.add(Op::op, DeviceType::cpu, form##_kernel<opt::functor>, kTypes);
#include "kernels/shared/optimizer_ops.def"
#undef TFL_UPDATE
}

}  // namespace tapeflow
