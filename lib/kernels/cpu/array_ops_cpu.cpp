// CPU kernels of the shape ops: concat/stack, split/unstack, tile/broadcast_to, shape; transpose is
// in transpose_cpu.cpp.
// Every copy is dtype-agnostic: tensors are seen as bytes, shaped [outer, axis, inner], and whole
// contiguous runs are moved with memcpy. Views (reshape, squeeze, ...) never reach this file.
// Entry point: register_array_cpu().
#include <algorithm>
#include <cstring>
#include <numeric>
#include <utility>
#include <vector>

#include "core/parallel.hpp"
#include "kernels/cpu/array_copy.hpp"
#include "kernels/cpu/transpose_cpu.hpp"
#include "ops/op_families.hpp"

namespace tapeflow::cpu {
namespace {

using namespace array_copy;

constexpr int64_t kSmallRow = 256;  // output rows shorter than this: one task per row

int64_t product(const std::vector<int64_t>& dims, std::size_t begin, std::size_t end) {
    int64_t n = 1;
    for (std::size_t i = begin; i < end; ++i)
        n *= dims[i];
    return n;
}

// The pieces of a join or split: piece i has `row[i]` bytes in each of the `outer` rows of the
// whole tensor, whose rows have sum(row) bytes.
struct Pieces {
    std::vector<char*> data;
    std::vector<int64_t> row;
};

// join = true: pieces -> whole (concat, stack); false: whole -> pieces (split, unstack).
void move_pieces(char* whole, const Pieces& pieces, int64_t outer, bool join) {
    int64_t whole_row = 0;
    for (int64_t r : pieces.row)
        whole_row += r;
    if (outer <= 0 || whole_row <= 0) return;
    const std::size_t n = pieces.data.size();
    if (whole_row < kSmallRow && outer > 1) {
        // Short rows (e.g. concat along the last axis): one task walks whole rows, piece by piece.
        parallel_for(
            outer, std::max<int64_t>(1, kGrainBytes / whole_row), [&](int64_t begin, int64_t end) {
                for (int64_t o = begin; o < end; ++o) {
                    char* w = whole + o * whole_row;
                    for (std::size_t i = 0; i < n; ++i) {
                        const auto bytes = static_cast<std::size_t>(pieces.row[i]);
                        char* p = pieces.data[i] + o * pieces.row[i];
                        if (join) {
                            std::memcpy(w, p, bytes);
                        } else {
                            std::memcpy(p, w, bytes);
                        }
                        w += bytes;
                    }
                }
            });
        return;
    }
    int64_t offset = 0;
    for (std::size_t i = 0; i < n; ++i) {
        if (join) {
            copy_rows(
                whole + offset, whole_row, pieces.data[i], pieces.row[i], outer, pieces.row[i]);
        } else {
            copy_rows(
                pieces.data[i], pieces.row[i], whole + offset, whole_row, outer, pieces.row[i]);
        }
        offset += pieces.row[i];
    }
}

// concat and stack: `axis` is an axis of the output (the new one for stack), so the output is
// [outer, sum of the inputs' pieces] and each input is [outer, its piece].
void join_kernel(const KernelContext& ctx) {
    const Tensor& y = ctx.outputs[0];
    const auto axis = static_cast<std::size_t>(ctx.attrs.get<int64_t>("axis"));
    const int64_t outer = product(y.shape().dims(), 0, axis);
    if (outer == 0 || y.nbytes() == 0) return;
    Pieces pieces;
    for (const Tensor& x : ctx.inputs) {
        if (x.nbytes() == 0) continue;  // nothing to copy, and its data pointer may be null
        pieces.data.push_back(bytes_of(x));
        pieces.row.push_back(static_cast<int64_t>(x.nbytes()) / outer);
    }
    move_pieces(bytes_of(y), pieces, outer, /*join=*/true);
}

// split, split_v and unstack: `axis` is an axis of the input.
void split_kernel(const KernelContext& ctx) {
    const Tensor& x = ctx.inputs[0];
    const auto axis = static_cast<std::size_t>(ctx.attrs.get<int64_t>("axis"));
    const int64_t outer = product(x.shape().dims(), 0, axis);
    if (outer == 0 || x.nbytes() == 0) return;
    Pieces pieces;
    for (const Tensor& y : ctx.outputs) {
        if (y.nbytes() == 0) continue;  // nothing to copy, and its data pointer may be null
        pieces.data.push_back(bytes_of(y));
        pieces.row.push_back(static_cast<int64_t>(y.nbytes()) / outer);
    }
    move_pieces(bytes_of(x), pieces, outer, /*join=*/false);
}

// ---- tile and broadcast_to ----

// Fills base[block, block * times) with copies of base[0, block). Doubling copies the small
// prefix quickly; once the filled part is large, it is the source of a parallel fill.
void replicate(char* base, int64_t block, int64_t times, bool parallel) {
    const int64_t total = block * times;
    int64_t filled = block;
    while (filled < total && (!parallel || filled < kGrainBytes)) {
        const int64_t n = std::min(filled, total - filled);
        std::memcpy(base + filled, base, static_cast<std::size_t>(n));
        filled += n;
    }
    if (filled >= total) return;
    const int64_t unit = filled;  // a multiple of block, so base[x % unit] is the value of byte x
    parallel_for(total - filled, kGrainBytes, [&](int64_t begin, int64_t end) {
        int64_t pos = filled + begin;
        const int64_t stop = filled + end;
        while (pos < stop) {
            const int64_t off = pos % unit;
            const int64_t n = std::min(unit - off, stop - pos);
            std::memcpy(base + pos, base + off, static_cast<std::size_t>(n));
            pos += n;
        }
    });
}

// One axis of a tile in bytes: `dim` input units, repeated `times` times.
struct TileAxis {
    int64_t dim;
    int64_t times;
};

// Calls body(p, dst_offset) for the prefixes p in [begin, end) of axes [0, k): row-major indices
// within the input extents, and the byte offset where that prefix starts in the output.
template <class Body>
void for_prefixes(const std::vector<TileAxis>& axes,
                  const std::vector<int64_t>& out_stride,
                  std::size_t k,
                  int64_t begin,
                  int64_t end,
                  Body&& body) {
    std::vector<int64_t> idx(k, 0);
    int64_t rest = begin;
    int64_t offset = 0;
    for (std::size_t t = k; t-- > 0;) {
        idx[t] = rest % axes[t].dim;
        rest /= axes[t].dim;
        offset += idx[t] * out_stride[t];
    }
    for (int64_t p = begin; p < end; ++p) {
        body(p, offset);
        for (std::size_t t = k; t-- > 0;) {
            offset += out_stride[t];
            if (++idx[t] < axes[t].dim) break;
            offset -= idx[t] * out_stride[t];
            idx[t] = 0;
        }
    }
}

// Tiles src (dims) by multiples into dst. Axes are merged first: an axis repeated once joins the
// axis before it, and the element size joins the last axis, so the innermost axis is a byte run.
// Then, from the innermost axis outwards, each block already written is replicated in place.
void tile_bytes(char* dst,
                const char* src,
                const std::vector<int64_t>& dims,
                const std::vector<int64_t>& multiples,
                int64_t elem) {
    std::vector<TileAxis> axes;
    auto push = [&](int64_t dim, int64_t times) {
        if (dim == 1 && times == 1) return;
        if (!axes.empty() && times == 1) {
            axes.back().dim *= dim;
        } else {
            axes.push_back({dim, times});
        }
    };
    for (std::size_t i = 0; i < dims.size(); ++i)
        push(dims[i], multiples[i]);
    push(elem, 1);
    if (axes.empty()) axes.push_back({1, 1});
    for (const TileAxis& a : axes) {
        if (a.dim == 0 || a.times == 0) return;
    }
    const std::size_t k = axes.size();
    std::vector<int64_t> out_stride(k);  // bytes per unit of output axis t
    int64_t stride = 1;
    for (std::size_t t = k; t-- > 0;) {
        out_stride[t] = stride;
        stride *= axes[t].dim * axes[t].times;
    }
    const int threads = cpu_threads();
    for (std::size_t j = k; j-- > 0;) {
        const int64_t prefixes = [&] {
            int64_t n = 1;
            for (std::size_t t = 0; t < j; ++t)
                n *= axes[t].dim;
            return n;
        }();
        const int64_t block = axes[j].dim * out_stride[j];
        const int64_t times = axes[j].times;
        const bool innermost = j + 1 == k;  // its block comes from src, the others are in dst
        auto one = [&](int64_t p, int64_t offset, bool parallel) {
            if (innermost && parallel) {
                copy_rows(dst + offset, 0, src + p * block, 0, 1, block);
            } else if (innermost) {
                std::memcpy(dst + offset, src + p * block, static_cast<std::size_t>(block));
            }
            if (times > 1) replicate(dst + offset, block, times, parallel);
        };
        const int64_t work = block * times;
        if (prefixes >= 4 * threads || work < kGrainBytes) {
            parallel_for(
                prefixes, std::max<int64_t>(1, kGrainBytes / work), [&](int64_t b, int64_t e) {
                    for_prefixes(axes, out_stride, j, b, e, [&](int64_t p, int64_t off) {
                        one(p, off, false);
                    });
                });
        } else {
            for_prefixes(axes, out_stride, j, 0, prefixes, [&](int64_t p, int64_t off) {
                one(p, off, true);
            });
        }
    }
}

void tile_kernel(const KernelContext& ctx) {
    const Tensor& x = ctx.inputs[0];
    const Tensor& y = ctx.outputs[0];
    if (y.nbytes() == 0) return;
    tile_bytes(bytes_of(y),
               bytes_of(x),
               x.shape().dims(),
               ctx.attrs.get<std::vector<int64_t>>("multiples"),
               static_cast<int64_t>(dtype_size(x.dtype())));
}

// broadcast_to is a tile of x (left-padded with 1s) whose size-1 axes repeat to the output's size.
void broadcast_to_kernel(const KernelContext& ctx) {
    const Tensor& x = ctx.inputs[0];
    const Tensor& y = ctx.outputs[0];
    if (y.nbytes() == 0) return;
    const auto& out = y.shape().dims();
    std::vector<int64_t> dims(out.size() - x.shape().dims().size(), 1);
    dims.insert(dims.end(), x.shape().dims().begin(), x.shape().dims().end());
    std::vector<int64_t> multiples(out.size());
    for (std::size_t i = 0; i < out.size(); ++i)
        multiples[i] = dims[i] == out[i] ? 1 : out[i];
    tile_bytes(
        bytes_of(y), bytes_of(x), dims, multiples, static_cast<int64_t>(dtype_size(x.dtype())));
}

void shape_kernel(const KernelContext& ctx) {
    const auto& dims = ctx.inputs[0].shape().dims();
    auto* out = static_cast<int32_t*>(ctx.outputs[0].mutable_raw_data());
    for (std::size_t i = 0; i < dims.size(); ++i)
        out[i] = static_cast<int32_t>(dims[i]);
}

}  // namespace
}  // namespace tapeflow::cpu

namespace tapeflow {

void register_array_cpu(KernelRegistry& r) {
    using namespace cpu;
    constexpr auto kCpu = DeviceType::cpu;
    r.add(Op::transpose, kCpu, transpose_kernel, kAllTypes);
    r.add(Op::concat, kCpu, join_kernel, kAllTypes);
    r.add(Op::stack, kCpu, join_kernel, kAllTypes);
    r.add(Op::unstack, kCpu, split_kernel, kAllTypes);
    r.add(Op::split, kCpu, split_kernel, kAllTypes);
    r.add(Op::split_v, kCpu, split_kernel, kAllTypes);
    r.add(Op::tile, kCpu, tile_kernel, kAllTypes);
    r.add(Op::broadcast_to, kCpu, broadcast_to_kernel, kAllTypes);
    r.add(Op::shape, kCpu, shape_kernel, kAllTypes);
}

}  // namespace tapeflow
