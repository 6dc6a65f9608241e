// Registry glue of the shape and indexing ops that only move elements: most are one or a few
// strided_copy walks (copy_kernels.cu), planned here on the host; gather and one_hot have their own
// kernels (index_kernels.cu), gather_nd runs as a gather of rows, scatter_nd and
// unsorted_segment_sum as atomic segment sums. Elements move as words of the dtype's size.
#include <algorithm>
#include <cstring>
#include <optional>

#include <fmt/format.h>

#include "ops_cuda.hpp"

namespace tapeflow::cuda_ops {
namespace {

using cuda_launch::IndexPlan;
using Dims = std::vector<int64_t>;

// Builds a walk dimension by dimension; out/in are element offsets of the origin.
struct Walk {
    IndexPlan<2> plan;
    int64_t out = 0, in = 0;
    void add(int64_t size, int64_t out_stride, int64_t in_stride) {
        if (plan.rank == cuda_launch::kMaxDims) {
            throw errors::UnimplementedError(fmt::format(
                "the CUDA copy kernels handle at most {} dimensions", cuda_launch::kMaxDims));
        }
        plan.dims[plan.rank] = size;
        plan.strides[0][plan.rank] = out_stride;
        plan.strides[1][plan.rank] = in_stride;
        ++plan.rank;
    }
    void run(const KernelContext& ctx, void* out_base, const void* in_base, DType dtype) const {
        const auto esize = static_cast<int64_t>(dtype_size(dtype));
        if (plan.rank == 0) {  // a scalar: one element
            Walk one = *this;
            one.add(1, 0, 0);
            return one.run(ctx, out_base, in_base, dtype);
        }
        TAPEFLOW_CUDA_CHECK(
            cuda_launch::strided_copy(static_cast<char*>(out_base) + out * esize,
                                      static_cast<const char*>(in_base) + in * esize,
                                      static_cast<int>(esize),
                                      plan,
                                      stream_of(ctx)));
    }
};

int64_t product(const Dims& d, std::size_t from, std::size_t to) {
    int64_t p = 1;
    for (std::size_t i = from; i < to && i < d.size(); ++i)
        p *= d[i];
    return p;
}

// concat/stack (axis of the output) and split/split_v/unstack (axis of the input): the whole is
// [outer, total, inner] element-wise, each piece [outer, piece, inner] at a running offset.
void pieces_kernel(const KernelContext& ctx, bool join) {
    const Tensor& whole = join ? ctx.outputs[0] : ctx.inputs[0];
    const auto axis = static_cast<std::size_t>(ctx.attrs.get<int64_t>("axis"));
    const Dims& dims = whole.shape().dims();
    const int64_t outer = product(dims, 0, axis);
    const int64_t total_row = outer == 0 ? 0 : whole.num_elements() / outer;  // total * inner
    if (whole.num_elements() == 0) return;
    int64_t offset = 0;
    const std::size_t count = join ? ctx.inputs.size() : ctx.outputs.size();
    for (std::size_t i = 0; i < count; ++i) {
        const Tensor& piece = join ? ctx.inputs[i] : ctx.outputs[i];
        const int64_t row = piece.num_elements() / outer;
        if (row == 0) continue;
        Walk w;
        w.add(outer, join ? total_row : row, join ? row : total_row);
        w.add(row, 1, 1);
        if (join) {
            w.out = offset;
            w.run(ctx, ctx.outputs[0].mutable_raw_data(), piece.raw_data(), piece.dtype());
        } else {
            w.in = offset;
            w.run(ctx, piece.mutable_raw_data(), whole.raw_data(), piece.dtype());
        }
        offset += row;
    }
}

void join_kernel(const KernelContext& ctx) {
    pieces_kernel(ctx, true);
}
void split_kernel(const KernelContext& ctx) {
    pieces_kernel(ctx, false);
}

// The permutation with size-1 axes dropped and runs of consecutive axes merged: in_dims are the
// merged input dims, perm maps output axes to them. [2,3,4] perm (0,2,1) stays; (1,2,0) becomes
// [2,12] perm (1,0).
struct MergedPerm {
    Dims in_dims, perm;
};

MergedPerm merge_perm(const Dims& dims, const Dims& perm) {
    Dims kept;  // output order, input axes of size > 1
    for (int64_t p : perm) {
        if (dims[static_cast<std::size_t>(p)] != 1) kept.push_back(p);
    }
    std::vector<Dims> groups;  // input axes of each merged output axis
    for (int64_t p : kept) {
        if (!groups.empty() && groups.back().back() + 1 == p) {
            groups.back().push_back(p);
        } else {
            groups.push_back({p});
        }
    }
    // Number the groups in input order.
    Dims order(groups.size());
    for (std::size_t g = 0; g < groups.size(); ++g)
        order[g] = static_cast<int64_t>(g);
    std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        return groups[static_cast<std::size_t>(a)][0] < groups[static_cast<std::size_t>(b)][0];
    });
    MergedPerm m;
    m.perm.assign(groups.size(), 0);
    for (std::size_t rank = 0; rank < order.size(); ++rank) {
        const Dims& g = groups[static_cast<std::size_t>(order[rank])];
        int64_t size = 1;
        for (int64_t p : g)
            size *= dims[static_cast<std::size_t>(p)];
        m.in_dims.push_back(size);
        m.perm[static_cast<std::size_t>(order[rank])] = static_cast<int64_t>(rank);
    }
    return m;
}

void transpose_kernel(const KernelContext& ctx) {
    const Tensor& x = ctx.inputs[0];
    const Tensor& y = ctx.outputs[0];
    if (y.num_elements() == 0) return;
    const auto& perm = ctx.attrs.get<Dims>("perm");
    const MergedPerm m = merge_perm(x.shape().dims(), perm);
    const bool swap2 = m.perm == Dims{1, 0};
    if (m.perm.size() <= 1) {  // the identity on the data
        TAPEFLOW_CUDA_CHECK(cudaMemcpyAsync(y.mutable_raw_data(),
                                            x.raw_data(),
                                            x.nbytes(),
                                            cudaMemcpyDeviceToDevice,
                                            stream_of(ctx)));
        return;
    }
    if (swap2 || m.perm == Dims{0, 2, 1}) {  // [batch,] rows, cols -> [batch,] cols, rows
        const int64_t batch = swap2 ? 1 : m.in_dims[0];
        TAPEFLOW_CUDA_CHECK(cuda_launch::transpose_last2(y.mutable_raw_data(),
                                                         x.raw_data(),
                                                         static_cast<int>(dtype_size(x.dtype())),
                                                         batch,
                                                         m.in_dims[m.in_dims.size() - 2],
                                                         m.in_dims.back(),
                                                         stream_of(ctx)));
        return;
    }
    const Dims in_strides = row_major_strides(x.shape().dims());
    const Dims out_strides = row_major_strides(y.shape().dims());
    Walk w;
    for (std::size_t i = 0; i < perm.size(); ++i) {
        w.add(y.shape().dims()[i], out_strides[i], in_strides[static_cast<std::size_t>(perm[i])]);
    }
    w.run(ctx, y.mutable_raw_data(), x.raw_data(), x.dtype());
}

void broadcast_to_kernel(const KernelContext& ctx) {
    const Tensor& x = ctx.inputs[0];
    const Tensor& y = ctx.outputs[0];
    if (y.num_elements() == 0) return;
    const Dims& od = y.shape().dims();
    const Dims& id = x.shape().dims();
    const Dims in_strides = row_major_strides(id);
    const Dims out_strides = row_major_strides(od);
    const std::size_t lead = od.size() - id.size();
    Walk w;
    for (std::size_t d = 0; d < od.size(); ++d) {
        const bool broadcast = d < lead || id[d - lead] == 1;
        w.add(od[d], out_strides[d], broadcast ? 0 : in_strides[d - lead]);
    }
    w.run(ctx, y.mutable_raw_data(), x.raw_data(), x.dtype());
}

// Output axis i of size m_i * d_i is walked as [m_i, d_i]; the input repeats along m_i.
void tile_kernel(const KernelContext& ctx) {
    const Tensor& x = ctx.inputs[0];
    const Tensor& y = ctx.outputs[0];
    if (y.num_elements() == 0) return;
    const auto& multiples = ctx.attrs.get<Dims>("multiples");
    const Dims& id = x.shape().dims();
    const Dims in_strides = row_major_strides(id);
    const Dims out_strides = row_major_strides(y.shape().dims());
    Walk w;
    for (std::size_t d = 0; d < id.size(); ++d) {
        if (multiples[d] != 1) w.add(multiples[d], id[d] * out_strides[d], 0);
        w.add(id[d], out_strides[d], in_strides[d]);
    }
    w.run(ctx, y.mutable_raw_data(), x.raw_data(), x.dtype());
}

// The elements of `full` at begin + stride * idx (idx < size), in row-major order of the box,
// against a contiguous `dense` tensor: slice and strided_slice read them, strided_slice_grad
// writes them.
Walk box_walk(
    const Dims& full, const Dims& begin, const Dims& stride, const Dims& size, bool into_full) {
    const Dims full_strides = row_major_strides(full);
    const Dims dense_strides = row_major_strides(size);
    Walk w;
    int64_t origin = 0;
    for (std::size_t d = 0; d < full.size(); ++d) {
        origin += begin[d] * full_strides[d];
        const int64_t fs = stride[d] * full_strides[d];
        w.add(size[d], into_full ? fs : dense_strides[d], into_full ? dense_strides[d] : fs);
    }
    (into_full ? w.out : w.in) = origin;
    return w;
}

void slice_kernel(const KernelContext& ctx) {
    const Tensor& x = ctx.inputs[0];
    const Tensor& y = ctx.outputs[0];
    if (y.num_elements() == 0) return;
    const Dims& full = x.shape().dims();
    box_walk(full,
             ctx.attrs.get<Dims>("begin"),
             Dims(full.size(), 1),
             ctx.attrs.get<Dims>("size"),
             false)
        .run(ctx, y.mutable_raw_data(), x.raw_data(), x.dtype());
}

void strided_slice_kernel(const KernelContext& ctx) {
    const Tensor& x = ctx.inputs[0];
    const Tensor& y = ctx.outputs[0];
    if (y.num_elements() == 0) return;
    box_walk(x.shape().dims(),
             ctx.attrs.get<Dims>("proc_begin"),
             ctx.attrs.get<Dims>("proc_strides"),
             ctx.attrs.get<Dims>("proc_sizes"),
             false)
        .run(ctx, y.mutable_raw_data(), x.raw_data(), x.dtype());
}

void strided_slice_grad_kernel(const KernelContext& ctx) {
    const Tensor& dy = ctx.inputs[0];
    const Tensor& out = ctx.outputs[0];
    if (out.nbytes() == 0) return;
    TAPEFLOW_CUDA_CHECK(cudaMemsetAsync(out.mutable_raw_data(), 0, out.nbytes(), stream_of(ctx)));
    if (dy.num_elements() == 0) return;
    box_walk(out.shape().dims(),
             ctx.attrs.get<Dims>("proc_begin"),
             ctx.attrs.get<Dims>("proc_strides"),
             ctx.attrs.get<Dims>("proc_sizes"),
             true)
        .run(ctx, out.mutable_raw_data(), dy.raw_data(), dy.dtype());
}

// The constant everywhere, then the input into the interior.
void pad_kernel(const KernelContext& ctx) {
    const Tensor& x = ctx.inputs[0];
    const Tensor& y = ctx.outputs[0];
    if (y.num_elements() == 0) return;
    const uint64_t pattern = value_bits(y.dtype(), ctx.attrs.get<double>("constant_values"));
    TAPEFLOW_CUDA_CHECK(cuda_launch::fill_bits(y.mutable_raw_data(),
                                               y.num_elements(),
                                               pattern,
                                               static_cast<int>(dtype_size(y.dtype())),
                                               stream_of(ctx)));
    if (x.num_elements() == 0) return;
    const auto& paddings = ctx.attrs.get<Dims>("paddings");
    const Dims& id = x.shape().dims();
    const Dims& od = y.shape().dims();
    Dims begin(id.size());
    for (std::size_t d = 0; d < id.size(); ++d)
        begin[d] = paddings[2 * d];
    box_walk(od, begin, Dims(id.size(), 1), id, true)
        .run(ctx, y.mutable_raw_data(), x.raw_data(), x.dtype());
}

// Indices are checked on a host copy (a synchronization, as on TensorFlow's CPU path); a bad one
// sends the op through the host fallback, whose CPU kernel raises the CPU's error message.
template <class I>
bool indices_in_range(const Tensor& host_indices, int64_t n) {
    const I* p = static_cast<const I*>(host_indices.raw_data());
    for (int64_t i = 0; i < host_indices.num_elements(); ++i) {
        if (p[i] < 0 || static_cast<int64_t>(p[i]) >= n) return false;
    }
    return true;
}

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
    const int64_t m = batch == 0 ? 0 : indices.num_elements() / batch;
    const bool is64 = indices.dtype() == DType::int64;
    const Tensor host = indices.cpu();
    if (!(is64 ? indices_in_range<int64_t>(host, n) : indices_in_range<int32_t>(host, n))) {
        return host_fallback(ctx);
    }
    if (out.num_elements() == 0 || inner == 0 || m == 0) return;
    TAPEFLOW_CUDA_CHECK(cuda_launch::gather(params.raw_data(),
                                            indices.raw_data(),
                                            elem_of(indices.dtype()),
                                            out.mutable_raw_data(),
                                            static_cast<int>(dtype_size(params.dtype())),
                                            out.num_elements(),
                                            outer,
                                            n,
                                            inner,
                                            m,
                                            stream_of(ctx)));
}

void mirror_pad_kernel(const KernelContext& ctx) {
    const Tensor& x = ctx.inputs[0];
    const Tensor& y = ctx.outputs[0];
    if (y.num_elements() == 0) return;
    if (x.rank() == 0 || x.rank() > cuda_launch::kMaxDims) return host_fallback(ctx);
    const auto& paddings = ctx.attrs.get<Dims>("paddings");
    cuda_launch::MirrorPlan plan;
    plan.rank = static_cast<int>(x.rank());
    plan.offset = ctx.attrs.get<std::string>("mode") == "REFLECT" ? 1 : 0;
    for (std::size_t d = 0; d < static_cast<std::size_t>(plan.rank); ++d) {
        plan.in_dims[d] = x.shape().dims()[d];
        plan.out_dims[d] = y.shape().dims()[d];
        plan.before[d] = paddings[2 * d];
    }
    TAPEFLOW_CUDA_CHECK(cuda_launch::mirror_pad(y.mutable_raw_data(),
                                                x.raw_data(),
                                                static_cast<int>(dtype_size(x.dtype())),
                                                y.num_elements(),
                                                plan,
                                                stream_of(ctx)));
}

// mirror_pad_grad folds one padded axis at a time, as the CPU kernel does (so float sums are
// identical): the input's dtype, then its compute type (float32 for 16-bit floats) between folds,
// then the output's.
void mirror_pad_grad_kernel(const KernelContext& ctx) {
    const Tensor& g = ctx.inputs[0];
    const Tensor& y = ctx.outputs[0];
    if (y.num_elements() == 0) return;
    const auto& paddings = ctx.attrs.get<Dims>("paddings");
    const int offset = ctx.attrs.get<std::string>("mode") == "REFLECT" ? 1 : 0;
    const Dims& out = y.shape().dims();
    std::vector<std::size_t> axes;
    for (std::size_t d = 0; d < out.size(); ++d) {
        if (g.shape().dims()[d] != out[d]) axes.push_back(d);
    }
    if (axes.empty()) {
        TAPEFLOW_CUDA_CHECK(cudaMemcpyAsync(y.mutable_raw_data(),
                                            g.raw_data(),
                                            g.nbytes(),
                                            cudaMemcpyDeviceToDevice,
                                            stream_of(ctx)));
        return;
    }
    const bool half = g.dtype() == DType::float16 || g.dtype() == DType::bfloat16;
    const DType acc_dtype = half ? DType::float32 : g.dtype();
    Dims shape = g.shape().dims();
    Tensor cur = g;
    for (std::size_t a = 0; a < axes.size(); ++a) {
        const std::size_t d = axes[a];
        const int64_t wide = shape[d];
        shape[d] = out[d];
        const bool last = a + 1 == axes.size();
        Tensor next = last ? y : Tensor::empty(Shape(shape), acc_dtype, ctx.device);
        TAPEFLOW_CUDA_CHECK(cuda_launch::mirror_fold(elem_of(cur.dtype()),
                                                     elem_of(next.dtype()),
                                                     cur.raw_data(),
                                                     next.mutable_raw_data(),
                                                     product(shape, 0, d),
                                                     out[d],
                                                     wide,
                                                     product(shape, d + 1, shape.size()),
                                                     paddings[2 * d],
                                                     offset,
                                                     stream_of(ctx)));
        cur = std::move(next);
    }
}

// Row id of each index tuple of `indices` ([tuples, k], on the host) into `extent` (k dims), or
// nullopt when one is out of range.
template <class I>
std::optional<std::vector<int64_t>> tuple_rows(const Tensor& host_indices, const Dims& extent) {
    const auto k = static_cast<int64_t>(extent.size());
    const int64_t tuples = k == 0 ? 0 : host_indices.num_elements() / k;
    const I* idx = static_cast<const I*>(host_indices.raw_data());
    std::vector<int64_t> rows(static_cast<std::size_t>(tuples));
    for (int64_t t = 0; t < tuples; ++t) {
        int64_t row = 0;
        for (int64_t d = 0; d < k; ++d) {
            const auto v = static_cast<int64_t>(idx[t * k + d]);
            if (v < 0 || v >= extent[static_cast<std::size_t>(d)]) return std::nullopt;
            row = row * extent[static_cast<std::size_t>(d)] + v;
        }
        rows[static_cast<std::size_t>(t)] = row;
    }
    return rows;
}

std::optional<std::vector<int64_t>> tuple_rows(const Tensor& indices, const Dims& extent) {
    const Tensor host = indices.cpu();
    return indices.dtype() == DType::int64 ? tuple_rows<int64_t>(host, extent)
                                           : tuple_rows<int32_t>(host, extent);
}

// gather_nd as a gather of slices by row id: tuple t of batch b reads slice
// b * per_batch + (its row within the batch's [P1..PK] block).
void gather_nd_kernel(const KernelContext& ctx) {
    const Tensor& params = ctx.inputs[0];
    const Tensor& indices = ctx.inputs[1];
    const Tensor& out = ctx.outputs[0];
    const auto batch_dims = static_cast<std::size_t>(ctx.attrs.get<int64_t>("batch_dims"));
    const Dims& p = params.shape().dims();
    const auto k = static_cast<std::size_t>(indices.shape().dims().back());
    const int64_t batch = product(p, 0, batch_dims);
    const int64_t per_batch = product(p, batch_dims, batch_dims + k);
    const int64_t slice = product(p, batch_dims + k, p.size());
    std::optional<std::vector<int64_t>> rows =
        tuple_rows(indices,
                   Dims(p.begin() + static_cast<std::ptrdiff_t>(batch_dims),
                        p.begin() + static_cast<std::ptrdiff_t>(batch_dims + k)));
    if (!rows) return host_fallback(ctx);  // the CPU kernel raises the error
    const auto tuples = static_cast<int64_t>(rows->size());
    if (k == 0 || out.num_elements() == 0 || slice == 0 || tuples == 0) {
        if (k == 0 && out.num_elements() != 0) return host_fallback(ctx);  // whole-params copies
        return;
    }
    const int64_t m = batch == 0 ? 0 : tuples / batch;
    for (int64_t t = 0; t < tuples; ++t)
        (*rows)[static_cast<std::size_t>(t)] += (t / m) * per_batch;
    const Tensor ids = upload_ids(*rows, ctx.device);
    TAPEFLOW_CUDA_CHECK(cuda_launch::gather(params.raw_data(),
                                            ids.raw_data(),
                                            cuda_launch::Elem::i64,
                                            out.mutable_raw_data(),
                                            static_cast<int>(dtype_size(params.dtype())),
                                            out.num_elements(),
                                            1,
                                            batch * per_batch,
                                            slice,
                                            tuples,
                                            stream_of(ctx)));
}

// out = 0, then out[ids[r]] += data[r] (rows of `width`); 16-bit floats sum in a float32 buffer.
void segment_sum_into(const KernelContext& ctx,
                      const Tensor& data,
                      const void* ids,
                      cuda_launch::Elem id_elem,
                      int64_t n,
                      int64_t width,
                      int64_t rows,
                      const Tensor& out) {
    if (out.num_elements() == 0) return;
    cudaStream_t stream = stream_of(ctx);
    // 16-bit floats sum in float32, uint8 in int32 (no byte atomics); the cast back wraps mod 256
    const bool half = out.dtype() == DType::float16 || out.dtype() == DType::bfloat16;
    const bool byte = out.dtype() == DType::uint8;
    const Tensor acc =
        half || byte ? Tensor::empty(out.shape(), half ? DType::float32 : DType::int32, ctx.device)
                     : out;
    TAPEFLOW_CUDA_CHECK(cudaMemsetAsync(acc.mutable_raw_data(), 0, acc.nbytes(), stream));
    TAPEFLOW_CUDA_CHECK(cuda_launch::segment_sum(elem_of(data.dtype()),
                                                 data.raw_data(),
                                                 ids,
                                                 id_elem,
                                                 acc.mutable_raw_data(),
                                                 n * width,
                                                 width,
                                                 rows,
                                                 stream));
    if (half || byte) {
        TAPEFLOW_CUDA_CHECK(cuda_launch::cast(elem_of(acc.dtype()),
                                              elem_of(out.dtype()),
                                              acc.raw_data(),
                                              out.mutable_raw_data(),
                                              out.num_elements(),
                                              stream));
    }
}

void unsorted_segment_sum_kernel(const KernelContext& ctx) {
    const Tensor& data = ctx.inputs[0];
    const Tensor& ids = ctx.inputs[1];
    const Tensor& out = ctx.outputs[0];
    if (data.dtype() == DType::uint8) return host_fallback(ctx);  // no byte atomics
    const int64_t n = ids.num_elements();
    const Dims& od = out.shape().dims();
    const int64_t width = n == 0 ? product(od, 1, od.size()) : data.num_elements() / n;
    segment_sum_into(ctx,
                     data,
                     ids.raw_data(),
                     elem_of(ids.dtype()),
                     n,
                     width,
                     ctx.attrs.get<int64_t>("num_segments"),
                     out);
}

void scatter_nd_kernel(const KernelContext& ctx) {
    const Tensor& indices = ctx.inputs[0];
    const Tensor& updates = ctx.inputs[1];
    const Tensor& out = ctx.outputs[0];
    if (out.dtype() == DType::uint8) return host_fallback(ctx);
    const Dims& s = out.shape().dims();
    const auto k = static_cast<std::size_t>(indices.shape().dims().back());
    if (k == 0) return host_fallback(ctx);
    std::optional<std::vector<int64_t>> rows =
        tuple_rows(indices, Dims(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(k)));
    if (!rows) return host_fallback(ctx);  // the CPU kernel raises the error
    const Tensor ids = upload_ids(*rows, ctx.device);
    segment_sum_into(ctx,
                     updates,
                     ids.raw_data(),
                     cuda_launch::Elem::i64,
                     static_cast<int64_t>(rows->size()),
                     product(s, k, s.size()),
                     product(s, 0, k),
                     out);
}

void one_hot_kernel(const KernelContext& ctx) {
    const Tensor& indices = ctx.inputs[0];
    const Tensor& y = ctx.outputs[0];
    const DType idt = indices.dtype();
    if (idt != DType::int32 && idt != DType::int64 && idt != DType::uint8)
        return host_fallback(ctx);
    if (y.num_elements() == 0) return;
    const auto depth = ctx.attrs.get<int64_t>("depth");
    const auto axis = ctx.attrs.get<int64_t>("axis");
    int64_t inner = 1;
    for (int64_t d = axis; d < indices.rank(); ++d)
        inner *= indices.shape().dims()[static_cast<std::size_t>(d)];
    const uint64_t on = value_bits(y.dtype(), ctx.attrs.get<double>("on_value"));
    const uint64_t off = value_bits(y.dtype(), ctx.attrs.get<double>("off_value"));
    TAPEFLOW_CUDA_CHECK(cuda_launch::one_hot(indices.raw_data(),
                                             elem_of(idt),
                                             y.mutable_raw_data(),
                                             static_cast<int>(dtype_size(y.dtype())),
                                             y.num_elements(),
                                             depth,
                                             inner,
                                             on,
                                             off,
                                             stream_of(ctx)));
}

}  // namespace

void register_array_cuda(KernelRegistry& r) {
    constexpr auto kCuda = DeviceType::cuda;
    r.add(Op::transpose, kCuda, transpose_kernel, kAllTypes);
    r.add(Op::concat, kCuda, join_kernel, kAllTypes);
    r.add(Op::stack, kCuda, join_kernel, kAllTypes);
    r.add(Op::unstack, kCuda, split_kernel, kAllTypes);
    r.add(Op::split, kCuda, split_kernel, kAllTypes);
    r.add(Op::split_v, kCuda, split_kernel, kAllTypes);
    r.add(Op::tile, kCuda, tile_kernel, kAllTypes);
    r.add(Op::broadcast_to, kCuda, broadcast_to_kernel, kAllTypes);
    r.add(Op::slice, kCuda, slice_kernel, kAllTypes);
    r.add(Op::strided_slice, kCuda, strided_slice_kernel, kAllTypes);
    r.add(Op::strided_slice_grad, kCuda, strided_slice_grad_kernel, kAllTypes);
    r.add(Op::pad, kCuda, pad_kernel, kAllTypes);
    r.add(Op::gather, kCuda, gather_kernel, kAllTypes);
    r.add(Op::one_hot, kCuda, one_hot_kernel, kAllTypes);
    r.add(Op::gather_nd, kCuda, gather_nd_kernel, kAllTypes);
    r.add(Op::mirror_pad, kCuda, mirror_pad_kernel, kAllTypes);
    r.add(Op::mirror_pad_grad, kCuda, mirror_pad_grad_kernel, kFloatTypes | kIntTypes);
    constexpr DTypeSet kSumTypes = kFloatTypes | kIntTypes;
    r.add(Op::unsorted_segment_sum, kCuda, unsorted_segment_sum_kernel, kSumTypes);
    r.add(Op::scatter_nd, kCuda, scatter_nd_kernel, kSumTypes);
}

}  // namespace tapeflow::cuda_ops
