// CPU kernels of the reductions along one axis of the reduction table (kernels/shared/
// reduce_ops.def): ArgMax/ArgMin and the scans (Cumsum, Cumprod), each over the input seen as
// [outer, n, inner] around the axis. The scans use the combine rules of reduce_cpu.hpp; like the
// reductions (NOTE [Deterministic reductions] in reduce_cpu.cpp), results do not depend on the
// thread count.
#include <algorithm>
#include <vector>

#include "core/parallel.hpp"
#include "kernels/cpu/reduce_cpu.hpp"
#include "kernels/shared/elementwise_host.hpp"

namespace tapeflow::cpu {
namespace {

using namespace reduce_detail;

// ---- ArgMax / ArgMin ----

// The input as [outer, n, inner] around `axis`.
struct Around {
    int64_t outer = 1;
    int64_t n = 1;
    int64_t inner = 1;
};

Around around_axis(const Shape& shape, int64_t axis) {
    Around a;
    for (int64_t d = 0; d < shape.rank(); ++d) {
        const int64_t size = shape.dims()[static_cast<std::size_t>(d)];
        if (d < axis)
            a.outer *= size;
        else if (d == axis)
            a.n = size;
        else
            a.inner *= size;
    }
    return a;
}

// The first index of the extremum; NaN counts as the extremum (its first occurrence wins).
template <bool kMax, class T, class I>
void arg_typed(const T* x, I* y, Around a) {
    using V = compute_t<T>;
    auto better = [](V v, V best) {
        if constexpr (kMax)
            return v > best || (is_nan(v) && !is_nan(best));
        else
            return v < best || (is_nan(v) && !is_nan(best));
    };
    const int64_t chunk = std::min(a.inner, kColumns);
    const int64_t chunks = ceil_div(a.inner, chunk);
    const int64_t grain = std::max<int64_t>(1, kParallelElems / std::max<int64_t>(1, a.n * chunk));
    parallel_for(a.outer * chunks, grain, [&](int64_t begin, int64_t end) {
        std::vector<V> best(static_cast<std::size_t>(chunk));
        std::vector<I> index(static_cast<std::size_t>(chunk));
        for (int64_t item = begin; item < end; ++item) {
            const int64_t o = item / chunks;
            const int64_t c0 = (item % chunks) * chunk;
            const int64_t m = std::min(chunk, a.inner - c0);
            const T* base = x + o * a.n * a.inner + c0;
            for (int64_t j = 0; j < m; ++j) {
                best[static_cast<std::size_t>(j)] = static_cast<V>(base[j]);
                index[static_cast<std::size_t>(j)] = 0;
            }
            for (int64_t r = 1; r < a.n; ++r) {
                const T* row = base + r * a.inner;
                for (int64_t j = 0; j < m; ++j) {
                    const auto v = static_cast<V>(row[j]);
                    if (better(v, best[static_cast<std::size_t>(j)])) {
                        best[static_cast<std::size_t>(j)] = v;
                        index[static_cast<std::size_t>(j)] = static_cast<I>(r);
                    }
                }
            }
            std::copy(index.begin(), index.begin() + m, y + o * a.inner + c0);
        }
    });
}

template <bool kMax, ew::TypeSet Types>
void arg_kernel(const KernelContext& ctx) {
    const Tensor& x = ctx.inputs[0];
    const Tensor& y = ctx.outputs[0];
    const Around a = around_axis(x.shape(), ctx.attrs.get<int64_t>("axis"));
    if (y.num_elements() == 0) return;
    visit_dtype(x.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (in_set<Types, T>()) {
            const T* in = static_cast<const T*>(x.raw_data());
            if (y.dtype() == DType::int32) {
                arg_typed<kMax>(in, static_cast<int32_t*>(y.mutable_raw_data()), a);
            } else {
                arg_typed<kMax>(in, static_cast<int64_t*>(y.mutable_raw_data()), a);
            }
        }
    });
}

// ---- Cumsum / Cumprod ----

// Scans [outer, n, inner] along n, a whole output row at a time (contiguous when inner > 1).
template <Combine K, class T>
void scan_typed(const T* x, T* y, Around a, bool exclusive, bool reverse) {
    using R = Reducer<K, T>;
    using L = typename R::L;
    const int64_t chunk = std::min(a.inner, kColumns);
    const int64_t chunks = ceil_div(a.inner, chunk);
    const int64_t grain = std::max<int64_t>(1, kParallelElems / std::max<int64_t>(1, a.n * chunk));
    parallel_for(a.outer * chunks, grain, [&](int64_t begin, int64_t end) {
        const auto acc = scratch<L>(chunk);
        for (int64_t item = begin; item < end; ++item) {
            const int64_t o = item / chunks;
            const int64_t c0 = (item % chunks) * chunk;
            const int64_t m = std::min(chunk, a.inner - c0);
            std::fill(acc.get(), acc.get() + m, R::identity());
            for (int64_t s = 0; s < a.n; ++s) {
                const int64_t r = reverse ? a.n - 1 - s : s;
                const int64_t offset = (o * a.n + r) * a.inner + c0;
                const T* in = x + offset;
                T* out = y + offset;
                for (int64_t j = 0; j < m; ++j) {
                    L& v = acc[j];
                    if (exclusive) out[j] = R::finalize(v, 1);
                    v = R::combine(v, to_lane<L>(in[j]));
                    if (!exclusive) out[j] = R::finalize(v, 1);
                }
            }
        }
    });
}

template <Combine K, ew::TypeSet Types>
void scan_kernel(const KernelContext& ctx) {
    const Tensor& x = ctx.inputs[0];
    const Tensor& y = ctx.outputs[0];
    if (x.num_elements() == 0) return;
    const Around a = around_axis(x.shape(), ctx.attrs.get<int64_t>("axis"));
    const bool exclusive = ctx.attrs.get<bool>("exclusive");
    const bool reverse = ctx.attrs.get<bool>("reverse");
    visit_dtype(x.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (in_set<Types, T>()) {
            scan_typed<K, T>(static_cast<const T*>(x.raw_data()),
                             static_cast<T*>(y.mutable_raw_data()),
                             a,
                             exclusive,
                             reverse);
        }
    });
}

}  // namespace

void register_arg_scan_cpu(KernelRegistry& r) {
    using ew::TypeSet;
    using reduction::Combine;
#define TFL_REDUCE(op, combine, dtypes)  // reduce_cpu.cpp
#define TFL_ARG_REDUCE(op, extremum, dtypes)                              \
    r.add(Op::op,                                                         \
          DeviceType::cpu,                                                \
          arg_kernel<Combine::extremum == Combine::max, TypeSet::dtypes>, \
          ew::dtypes_of(TypeSet::dtypes));
#define TFL_SCAN(op, combine, dtypes)                     \
    r.add(Op::op,                                         \
          DeviceType::cpu,                                \
          scan_kernel<Combine::combine, TypeSet::dtypes>, \
          ew::dtypes_of(TypeSet::dtypes));
#include "kernels/shared/reduce_ops.def"
#undef TFL_SCAN
#undef TFL_ARG_REDUCE
#undef TFL_REDUCE
}

}  // namespace tapeflow::cpu
