// CPU kernels of the reductions (Sum, Mean, Max, Min, Prod, Any, All): the TFL_REDUCE rows of the
// reduction table (kernels/shared/reduce_ops.def; ArgMax/ArgMin and the scans are in
// arg_scan_cpu.cpp, the combine rules in reduce_cpu.hpp). A reduction first merges adjacent axes
// into alternating kept/reduced groups; then every case is a reduction of contiguous rows (the last
// group reduced), an accumulation of contiguous rows into an output row (the last group kept), or
// the first followed by the second. NOTE [Deterministic reductions]: work is cut into blocks whose
// bounds depend only on the shape, and block results are combined in a fixed order, so a result
// never depends on the thread count.
#include "kernels/cpu/reduce_cpu.hpp"

#include <algorithm>
#include <vector>

#include "core/parallel.hpp"
#include "kernels/shared/elementwise_host.hpp"
#include "ops/op_families.hpp"

namespace tapeflow::cpu {
namespace {

using namespace reduce_detail;

constexpr int64_t kBlock = 1 << 15;         // elements of a row reduced as one block
constexpr int64_t kLeaf = 1 << 10;          // elements a vector sum adds before going to double
constexpr int64_t kMinBlockRows = 16;       // fewest rows in a block of a split row accumulation
constexpr int64_t kMaxBlockRows = 1 << 10;  // most rows accumulated before partials combine
constexpr int64_t kTargetItems = 64;        // work items a split row accumulation aims for

// ---- Contiguous building blocks ----

// Reduces p[0..n) to one lane value.
template <class R, class In>
typename R::L reduce_row(const In* p, int64_t n) {
    using L = typename R::L;
    L result = R::identity();
    int64_t i = 0;
    if constexpr (R::kSimd && std::is_same_v<In, L> && R::kSum) {
        // Sums of kLeaf elements in four vector accumulators, added up in double: the rounding
        // error grows with kLeaf / 32, not with n.
        using B = xsimd::batch<L>;
        constexpr auto W = static_cast<int64_t>(B::size);
        double wide = 0;
        while (i + 4 * W <= n) {
            const int64_t leaf_end = std::min(n, i + kLeaf);
            B a0(L(0));
            B a1 = a0;
            B a2 = a0;
            B a3 = a0;
            for (; i + 4 * W <= leaf_end; i += 4 * W) {
                a0 += B::load_unaligned(p + i);
                a1 += B::load_unaligned(p + i + W);
                a2 += B::load_unaligned(p + i + 2 * W);
                a3 += B::load_unaligned(p + i + 3 * W);
            }
            wide += static_cast<double>(xsimd::hadd((a0 + a1) + (a2 + a3)));
        }
        for (; i < n; ++i)
            wide += static_cast<double>(p[i]);
        return static_cast<L>(wide);
    } else if constexpr (R::kSimd && std::is_same_v<In, L>) {
        using B = xsimd::batch<L>;
        constexpr auto W = static_cast<int64_t>(B::size);
        if (n >= 4 * W) {  // four accumulators hide the latency
            B a0(R::identity());
            B a1 = a0;
            B a2 = a0;
            B a3 = a0;
            for (; i + 4 * W <= n; i += 4 * W) {
                a0 = R::vcombine(a0, B::load_unaligned(p + i));
                a1 = R::vcombine(a1, B::load_unaligned(p + i + W));
                a2 = R::vcombine(a2, B::load_unaligned(p + i + 2 * W));
                a3 = R::vcombine(a3, B::load_unaligned(p + i + 3 * W));
            }
            B a = R::vcombine(R::vcombine(a0, a1), R::vcombine(a2, a3));
            for (; i + W <= n; i += W)
                a = R::vcombine(a, B::load_unaligned(p + i));
            alignas(64) L lanes[B::size];
            a.store_aligned(lanes);
            for (const L v : lanes)
                result = R::combine(result, v);
        }
    }
    if constexpr (R::kSimd || !std::is_same_v<L, bool>) {
        for (; i < n; ++i)
            result = R::combine(result, to_lane<L>(p[i]));
    } else {  // any/all stop at the first element that decides
        for (; i < n; ++i) {
            if (to_lane<L>(p[i]) != R::identity()) return !R::identity();
        }
    }
    return result;
}

// acc[j] = combine(acc[j], combine of rows[0..rows)[j]) for j in [0, n); rows are `stride` apart.
template <class R, class In>
void accumulate_rows(typename R::L* acc, const In* p, int64_t rows, int64_t stride, int64_t n) {
    using L = typename R::L;
    int64_t r = 0;
    for (; r + 4 <= rows; r += 4) {  // four rows per pass: a quarter of the accumulator traffic
        const In* p0 = p + r * stride;
        const In* p1 = p0 + stride;
        const In* p2 = p1 + stride;
        const In* p3 = p2 + stride;
        int64_t j = 0;
        if constexpr (R::kSimd && std::is_same_v<In, L>) {
            using B = xsimd::batch<L>;
            constexpr auto W = static_cast<int64_t>(B::size);
            for (; j + W <= n; j += W) {
                const B v01 = R::vcombine(B::load_unaligned(p0 + j), B::load_unaligned(p1 + j));
                const B v23 = R::vcombine(B::load_unaligned(p2 + j), B::load_unaligned(p3 + j));
                const B merged = R::vcombine(B::load_unaligned(acc + j), R::vcombine(v01, v23));
                merged.store_unaligned(acc + j);
            }
        }
        for (; j < n; ++j) {
            const L v = R::combine(R::combine(to_lane<L>(p0[j]), to_lane<L>(p1[j])),
                                   R::combine(to_lane<L>(p2[j]), to_lane<L>(p3[j])));
            acc[j] = R::combine(acc[j], v);
        }
    }
    for (; r < rows; ++r) {
        const In* row = p + r * stride;
        for (int64_t j = 0; j < n; ++j)
            acc[j] = R::combine(acc[j], to_lane<L>(row[j]));
    }
}

// ---- The plan ----

// Adjacent axes merged into groups, outermost first; size-1 axes dropped (they change no offset).
struct Groups {
    std::vector<int64_t> dims;
    std::vector<char> reduced;
};

Groups make_groups(const Shape& shape, const std::vector<int64_t>& axes) {
    Groups g;
    for (int64_t d = 0; d < shape.rank(); ++d) {
        const int64_t size = shape.dims()[static_cast<std::size_t>(d)];
        if (size == 1) continue;
        const char reduced = std::binary_search(axes.begin(), axes.end(), d) ? 1 : 0;
        if (!g.dims.empty() && g.reduced.back() == reduced) {
            g.dims.back() *= size;
        } else {
            g.dims.push_back(size);
            g.reduced.push_back(reduced);
        }
    }
    return g;
}

// Maps the flat index over a subset of groups (outermost first) to an element offset of the input.
struct IndexMap {
    std::vector<int64_t> sizes;
    std::vector<int64_t> strides;
    int64_t count = 1;

    void add(int64_t size, int64_t stride) {
        sizes.push_back(size);
        strides.push_back(stride);
        count *= size;
    }
    int64_t operator()(int64_t flat) const {
        if (sizes.size() == 1) return flat * strides[0];
        int64_t offset = 0;
        for (std::size_t i = sizes.size(); i-- > 0;) {
            offset += (flat % sizes[i]) * strides[i];
            flat /= sizes[i];
        }
        return offset;
    }
};

// Reduces each of `rows` contiguous rows of length n and hands (row, value) to `sink`. A long row
// is cut into kBlock blocks whose results combine in order.
template <class R, class In, class Sink>
void reduce_rows(const In* x, int64_t rows, int64_t n, Sink&& sink) {
    using L = typename R::L;
    const int64_t blocks = ceil_div(n, kBlock);
    if (blocks == 1) {
        const int64_t grain = std::max<int64_t>(1, kParallelElems / n);
        parallel_for(rows, grain, [&](int64_t begin, int64_t end) {
            for (int64_t row = begin; row < end; ++row)
                sink(row, reduce_row<R>(x + row * n, n));
        });
        return;
    }
    const auto parts = scratch<L>(rows * blocks);
    parallel_for(rows * blocks, kParallelElems / kBlock, [&](int64_t begin, int64_t end) {
        for (int64_t item = begin; item < end; ++item) {
            const int64_t row = item / blocks;
            const int64_t lo = (item % blocks) * kBlock;
            parts[item] = reduce_row<R>(x + row * n + lo, std::min(kBlock, n - lo));
        }
    });
    for (int64_t row = 0; row < rows; ++row) {
        sink(row, R::combine_partials(parts.get() + row * blocks, blocks, 1));
    }
}

// The groups end with a kept group of `cols` columns: each output row combines the input rows
// that differ only in the reduced groups. Work items are (output row, column chunk, row block).
template <class R, class T, class In>
void accumulate_groups(const In* x, T* y, const Groups& g, int64_t count) {
    using L = typename R::L;
    const int64_t cols = g.dims.back();
    IndexMap kept;
    IndexMap reduced;
    int64_t stride = cols;
    for (std::size_t i = g.dims.size() - 1; i-- > 0;) {
        (g.reduced[i] ? reduced : kept).add(g.dims[i], stride);
        stride *= g.dims[i];
    }
    // add() went innermost first; IndexMap wants outermost first.
    for (IndexMap* m : {&kept, &reduced}) {
        std::reverse(m->sizes.begin(), m->sizes.end());
        std::reverse(m->strides.begin(), m->strides.end());
    }
    if (kept.sizes.empty()) kept.add(1, 0);
    const int64_t out_rows = kept.count;
    const int64_t in_rows = reduced.count;
    const bool one_stride = reduced.sizes.size() == 1;
    const int64_t chunk = std::min(cols, kColumns);
    const int64_t chunks = ceil_div(cols, chunk);
    const int64_t base_items = out_rows * chunks;
    // Row blocks: enough items to share among threads, and few enough rows per block that float
    // sums stay accurate (the partials combine in double).
    int64_t blocks = ceil_div(in_rows, kMaxBlockRows);
    if (base_items < kTargetItems && in_rows >= 2 * kMinBlockRows) {
        const int64_t wanted = ceil_div(kTargetItems, base_items);
        blocks = std::max(blocks, std::min(in_rows / kMinBlockRows, wanted));
    }
    const int64_t block_rows = ceil_div(in_rows, blocks);
    blocks = ceil_div(in_rows, block_rows);
    const int64_t items = base_items * blocks;
    const int64_t grain = std::max<int64_t>(1, kParallelElems / (block_rows * chunk));

    // Accumulates input rows [r0, r1) of output row o, columns [c0, c0 + n), into acc.
    auto run = [&](L* acc, int64_t o, int64_t c0, int64_t n, int64_t r0, int64_t r1) {
        std::fill(acc, acc + n, R::identity());
        const int64_t base = kept(o) + c0;
        if (one_stride) {
            const int64_t stride = reduced.strides[0];
            accumulate_rows<R>(acc, x + base + r0 * stride, r1 - r0, stride, n);
        } else {
            for (int64_t r = r0; r < r1; ++r) {
                accumulate_rows<R>(acc, x + base + reduced(r), 1, 0, n);
            }
        }
    };

    if (blocks == 1) {
        parallel_for(items, grain, [&](int64_t begin, int64_t end) {
            const auto acc = scratch<L>(chunk);
            for (int64_t item = begin; item < end; ++item) {
                const int64_t o = item / chunks;
                const int64_t c0 = (item % chunks) * chunk;
                const int64_t n = std::min(chunk, cols - c0);
                run(acc.get(), o, c0, n, 0, in_rows);
                T* out = y + o * cols + c0;
                for (int64_t j = 0; j < n; ++j)
                    out[j] = R::finalize(acc[j], count);
            }
        });
        return;
    }
    // Split rows: each block accumulates into its own partial row; partials combine in order.
    const auto parts = scratch<L>(items * chunk);
    parallel_for(items, grain, [&](int64_t begin, int64_t end) {
        for (int64_t item = begin; item < end; ++item) {
            const int64_t b = item % blocks;
            const int64_t oc = item / blocks;
            const int64_t c0 = (oc % chunks) * chunk;
            const int64_t r0 = b * block_rows;
            run(parts.get() + item * chunk,
                oc / chunks,
                c0,
                std::min(chunk, cols - c0),
                r0,
                std::min(in_rows, r0 + block_rows));
        }
    });
    const int64_t combine_grain = std::max<int64_t>(1, kParallelElems / (chunk * blocks));
    parallel_for(base_items, combine_grain, [&](int64_t begin, int64_t end) {
        for (int64_t oc = begin; oc < end; ++oc) {
            const int64_t c0 = (oc % chunks) * chunk;
            const int64_t n = std::min(chunk, cols - c0);
            const L* part = parts.get() + oc * blocks * chunk;
            T* out = y + (oc / chunks) * cols + c0;
            for (int64_t j = 0; j < n; ++j) {
                out[j] = R::finalize(R::combine_partials(part + j, blocks, chunk), count);
            }
        }
    });
}

template <Combine K, class T>
void reduce_typed(const Tensor& input, const Tensor& output, const std::vector<int64_t>& axes) {
    using R = Reducer<K, T>;
    using L = typename R::L;
    const T* x = static_cast<const T*>(input.raw_data());
    T* y = static_cast<T*>(output.mutable_raw_data());
    const int64_t n_in = input.num_elements();
    const int64_t n_out = output.num_elements();
    if (n_out == 0) return;
    const int64_t count = n_in / n_out;  // reduced elements per output element
    if (n_in == 0) {  // reducing empty axes: the identity (sum 0, prod 1, max -inf, mean nan)
        std::fill(y, y + n_out, R::finalize(R::identity(), 0));
        return;
    }
    Groups g = make_groups(input.shape(), axes);
    const bool any_reduced = std::find(g.reduced.begin(), g.reduced.end(), 1) != g.reduced.end();
    if (!any_reduced) {  // only size-1 axes reduced: a conversion
        for (int64_t i = 0; i < n_in; ++i)
            y[i] = R::finalize(to_lane<L>(x[i]), 1);
        return;
    }
    if (!g.reduced.back()) {
        accumulate_groups<R>(x, y, g, count);
        return;
    }
    const int64_t n = g.dims.back();
    const int64_t rows = n_in / n;
    if (g.dims.size() <= 2) {  // [n] or [rows, n]: straight into the output
        reduce_rows<R>(x, rows, n, [&](int64_t row, L v) { y[row] = R::finalize(v, count); });
        return;
    }
    // [..., kept, reduced]: reduce the last group into partial values, then accumulate those.
    const auto partial = scratch<L>(rows);
    reduce_rows<R>(x, rows, n, [&](int64_t row, L v) { partial[row] = v; });
    g.dims.pop_back();
    g.reduced.pop_back();
    accumulate_groups<R>(partial.get(), y, g, count);
}

template <Combine K, ew::TypeSet Types>
void reduce_kernel(const KernelContext& ctx) {
    const Tensor& x = ctx.inputs[0];
    const auto& axes = ctx.attrs.get<std::vector<int64_t>>("axes");
    visit_dtype(x.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (in_set<Types, T>()) {
            reduce_typed<K, T>(x, ctx.outputs[0], axes);
        }
    });
}

}  // namespace
}  // namespace tapeflow::cpu

namespace tapeflow {

void register_reduce_cpu(KernelRegistry& r) {
    using cpu::reduce_kernel;
    using ew::TypeSet;
    using reduction::Combine;
#define TFL_REDUCE(op, combine, dtypes)                     \
    r.add(Op::op,                                           \
          DeviceType::cpu,                                  \
          reduce_kernel<Combine::combine, TypeSet::dtypes>, \
          ew::dtypes_of(TypeSet::dtypes));
#define TFL_ARG_REDUCE(op, extremum, dtypes)  // arg_scan_cpu.cpp
#define TFL_SCAN(op, combine, dtypes)         // arg_scan_cpu.cpp
#include "kernels/shared/reduce_ops.def"
#undef TFL_SCAN
#undef TFL_ARG_REDUCE
#undef TFL_REDUCE
    cpu::register_arg_scan_cpu(r);
}

}  // namespace tapeflow
