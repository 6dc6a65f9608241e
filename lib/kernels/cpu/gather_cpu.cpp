// CPU kernels of the gathers and scatters: gather, gather_nd, scatter_nd, unsorted_segment_sum.
// Gathers move raw bytes, so one instantiation serves every dtype; the kernels that add
// (scatter_nd, segment sums) are typed. Index checks run serially before any parallel loop: an
// exception must never leave an OpenMP region. Slicing and padding: slicing_cpu.cpp.
#include <cstring>
#include <string>
#include <vector>

#include <fmt/ranges.h>

#include "core/dtype_dispatch.hpp"
#include "core/parallel.hpp"
#include "kernels/cpu/index_copy.hpp"
#include "kernels/cpu/kernels_cpu.hpp"
#include "ops/apply.hpp"
#include "ops/op_families.hpp"

namespace tapeflow::cpu {
namespace {

using namespace index_copy;

template <class I>
std::string index_tuple(const I* tuple, int64_t k) {
    std::vector<int64_t> values(tuple, tuple + k);
    return fmt::format("[{}]", fmt::join(values, ", "));
}

template <class F>
void visit_index(DType dtype, F&& f) {
    if (dtype == DType::int32) {
        f(TypeTag<int32_t>{});
    } else {
        f(TypeTag<int64_t>{});
    }
}

// ---- gather, gather_nd ----

// params viewed as [B, outer, N, inner] and indices as [B, M]: out[b, o, m] = params[b, o, idx[b,
// m]], one memcpy of `inner` elements each.
void gather_kernel(const KernelContext& ctx) {
    const Tensor& params = ctx.inputs[0];
    const Tensor& indices = ctx.inputs[1];
    const Tensor& out = ctx.outputs[0];
    const auto axis = static_cast<std::size_t>(ctx.attrs.get<int64_t>("axis"));
    const auto batch_dims = static_cast<std::size_t>(ctx.attrs.get<int64_t>("batch_dims"));
    const Dims& p = params.shape().dims();
    const int64_t batch = product(p, 0, batch_dims);
    const int64_t outer = product(p, batch_dims, axis);
    const int64_t n = p[axis];
    const int64_t inner = product(p, axis + 1, p.size());
    const int64_t count = indices.num_elements();
    const int64_t m = batch == 0 ? 0 : count / batch;
    const std::size_t esize = dtype_size(params.dtype());
    visit_index(indices.dtype(), [&](auto index_tag) {
        using I = typename decltype(index_tag)::type;
        const I* idx = static_cast<const I*>(indices.raw_data());
        for (int64_t i = 0; i < count; ++i) {
            if (idx[i] < 0 || idx[i] >= n) {
                op_fail(ctx.op,
                        "indices{} = {} is not in [0, {})",
                        position(indices.shape().dims(), i),
                        static_cast<int64_t>(idx[i]),
                        n);
            }
        }
        if (out.num_elements() == 0) return;
        const auto row_bytes = static_cast<std::size_t>(inner) * esize;
        const auto* src = static_cast<const char*>(params.raw_data());
        auto* dst = static_cast<char*>(out.mutable_raw_data());
        parallel_for(batch * outer * m,
                     grain_for(static_cast<int64_t>(row_bytes)),
                     [&](int64_t lo, int64_t hi) {
                         for (int64_t r = lo; r < hi; ++r) {
                             const int64_t j = r % m;
                             const int64_t bo = r / m;
                             const int64_t b = bo / outer;
                             const int64_t row = bo * n + static_cast<int64_t>(idx[b * m + j]);
                             copy_bytes(dst + r * static_cast<int64_t>(row_bytes),
                                        src + row * static_cast<int64_t>(row_bytes),
                                        row_bytes);
                         }
                     });
    });
}

// params viewed as [B, P1..PK, S] and indices as [B*M, K]: out[t] = the S-element slice at the
// index tuple t (within its batch).
void gather_nd_kernel(const KernelContext& ctx) {
    const Tensor& params = ctx.inputs[0];
    const Tensor& indices = ctx.inputs[1];
    const Tensor& out = ctx.outputs[0];
    const auto batch_dims = static_cast<std::size_t>(ctx.attrs.get<int64_t>("batch_dims"));
    const Dims& p = params.shape().dims();
    const Dims& idims = indices.shape().dims();
    const auto k = static_cast<std::size_t>(idims.back());
    const int64_t batch = product(p, 0, batch_dims);
    const int64_t per_batch = product(p, batch_dims, batch_dims + k);  // slices in one batch
    const int64_t slice = product(p, batch_dims + k, p.size());
    const int64_t tuples = product(idims, 0, idims.size() - 1);
    const int64_t m = batch == 0 ? 0 : tuples / batch;
    const std::size_t esize = dtype_size(params.dtype());
    Dims stride(k);
    int64_t acc = 1;
    for (std::size_t d = k; d-- > 0;) {
        stride[d] = acc;
        acc *= p[batch_dims + d];
    }
    visit_index(indices.dtype(), [&](auto index_tag) {
        using I = typename decltype(index_tag)::type;
        const I* idx = static_cast<const I*>(indices.raw_data());
        for (int64_t t = 0; t < tuples; ++t) {
            for (std::size_t d = 0; d < k; ++d) {
                const auto v = static_cast<int64_t>(
                    idx[t * static_cast<int64_t>(k) + static_cast<int64_t>(d)]);
                if (v < 0 || v >= p[batch_dims + d]) {
                    const Dims outer_dims(idims.begin(), idims.end() - 1);
                    op_fail(ctx.op,
                            "indices{} = {} does not index into param shape {}",
                            position(outer_dims, t),
                            index_tuple(idx + t * static_cast<int64_t>(k), static_cast<int64_t>(k)),
                            params.shape().debug_string());
                }
            }
        }
        if (out.num_elements() == 0) return;
        const auto slice_bytes = static_cast<std::size_t>(slice) * esize;
        const auto* src = static_cast<const char*>(params.raw_data());
        auto* dst = static_cast<char*>(out.mutable_raw_data());
        parallel_for(
            tuples, grain_for(static_cast<int64_t>(slice_bytes)), [&](int64_t lo, int64_t hi) {
                for (int64_t t = lo; t < hi; ++t) {
                    int64_t row = (t / m) * per_batch;
                    for (std::size_t d = 0; d < k; ++d) {
                        row += static_cast<int64_t>(
                                   idx[t * static_cast<int64_t>(k) + static_cast<int64_t>(d)]) *
                               stride[d];
                    }
                    copy_bytes(dst + t * static_cast<int64_t>(slice_bytes),
                               src + row * static_cast<int64_t>(slice_bytes),
                               slice_bytes);
                }
            });
    });
}

// ---- sums by index: unsorted_segment_sum, scatter_nd ----

// out[ids[i]] += data[i] for the rows of `width` elements of data; rows whose id is outside
// [0, rows) are dropped. Every output element sums its rows in increasing i whatever the split, so
// results do not depend on the thread count: wide rows split the columns, narrow ones split the
// output rows (each chunk scans all ids and keeps its own).
template <class T, class I>
void segment_sum_rows(const T* data, const I* ids, int64_t n, int64_t width, int64_t rows, T* out) {
    using Acc = compute_t<T>;
    std::vector<Acc> buffer;
    Acc* acc = nullptr;
    if constexpr (std::is_same_v<Acc, T>) {
        acc = out;
    } else {
        buffer.resize(static_cast<std::size_t>(rows * width));
        acc = buffer.data();
    }
    std::fill(acc, acc + rows * width, Acc(0));
    const auto add_rows = [&](int64_t row_lo, int64_t row_hi, int64_t col_lo, int64_t col_hi) {
        for (int64_t i = 0; i < n; ++i) {
            const auto id = static_cast<int64_t>(ids[i]);
            if (id < row_lo || id >= row_hi) continue;
            const T* s = data + i * width;
            Acc* d = acc + id * width;
            for (int64_t c = col_lo; c < col_hi; ++c)
                d[c] += static_cast<Acc>(s[c]);
        }
    };
    if (n * width < kGrain) {
        add_rows(0, rows, 0, width);
    } else if (width >= 256) {
        parallel_for(width,
                     std::max<int64_t>(64, kGrain / std::max<int64_t>(n, 1)),
                     [&](int64_t lo, int64_t hi) { add_rows(0, rows, lo, hi); });
    } else {
        parallel_for(rows, 1, [&](int64_t lo, int64_t hi) { add_rows(lo, hi, 0, width); });
    }
    if constexpr (!std::is_same_v<Acc, T>) {
        for (int64_t e = 0; e < rows * width; ++e)
            out[e] = convert_element<T>(acc[e]);
    }
}

void unsorted_segment_sum_kernel(const KernelContext& ctx) {
    const Tensor& data = ctx.inputs[0];
    const Tensor& ids = ctx.inputs[1];
    const Tensor& out = ctx.outputs[0];
    const auto num_segments = ctx.attrs.get<int64_t>("num_segments");
    const int64_t n = ids.num_elements();
    const int64_t width = n == 0 ? product(out.shape().dims(), 1, out.shape().dims().size())
                                 : data.num_elements() / n;
    visit_dtype(data.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (!std::is_same_v<T, bool>) {
            visit_index(ids.dtype(), [&](auto index_tag) {
                using I = typename decltype(index_tag)::type;
                segment_sum_rows(static_cast<const T*>(data.raw_data()),
                                 static_cast<const I*>(ids.raw_data()),
                                 n,
                                 width,
                                 num_segments,
                                 static_cast<T*>(out.mutable_raw_data()));
            });
        }
    });
}

// ScatterNd: each index tuple names one row (of the trailing `width` elements) of the output; the
// rows are then summed like a segment sum, so duplicates add up in order.
void scatter_nd_kernel(const KernelContext& ctx) {
    const Tensor& indices = ctx.inputs[0];
    const Tensor& updates = ctx.inputs[1];
    const Tensor& out = ctx.outputs[0];
    const Dims& s = out.shape().dims();
    const Dims& idims = indices.shape().dims();
    const auto k = static_cast<std::size_t>(idims.back());
    const int64_t tuples = product(idims, 0, idims.size() - 1);
    const int64_t rows = product(s, 0, k);
    const int64_t width = product(s, k, s.size());
    Dims row_ids(static_cast<std::size_t>(tuples));
    visit_index(indices.dtype(), [&](auto index_tag) {
        using I = typename decltype(index_tag)::type;
        const I* idx = static_cast<const I*>(indices.raw_data());
        for (int64_t t = 0; t < tuples; ++t) {
            int64_t row = 0;
            for (std::size_t d = 0; d < k; ++d) {
                const auto v = static_cast<int64_t>(
                    idx[t * static_cast<int64_t>(k) + static_cast<int64_t>(d)]);
                if (v < 0 || v >= s[d]) {
                    const Dims outer_dims(idims.begin(), idims.end() - 1);
                    op_fail(ctx.op,
                            "indices{} = {} does not index into shape {}",
                            position(outer_dims, t),
                            index_tuple(idx + t * static_cast<int64_t>(k), static_cast<int64_t>(k)),
                            out.shape().debug_string());
                }
                row = row * s[d] + v;
            }
            row_ids[t] = row;
        }
    });
    visit_dtype(out.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (!std::is_same_v<T, bool>) {
            segment_sum_rows(static_cast<const T*>(updates.raw_data()),
                             row_ids.data(),
                             tuples,
                             width,
                             rows,
                             static_cast<T*>(out.mutable_raw_data()));
        }
    });
}
}  // namespace
}  // namespace tapeflow::cpu

namespace tapeflow {

void register_gather_cpu(KernelRegistry& r) {
    using namespace cpu;
    constexpr auto kCpu = DeviceType::cpu;
    constexpr DTypeSet kSumTypes = kFloatTypes | DTypeSet{DType::int32, DType::int64, DType::uint8};
    r.add(Op::gather, kCpu, gather_kernel, kAllTypes);
    r.add(Op::gather_nd, kCpu, gather_nd_kernel, kAllTypes);
    r.add(Op::scatter_nd, kCpu, scatter_nd_kernel, kSumTypes);
    r.add(Op::unsorted_segment_sum, kCpu, unsorted_segment_sum_kernel, kSumTypes);
}

}  // namespace tapeflow
