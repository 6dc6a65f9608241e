// CPU kernels of the shape ops: concat/stack, split/unstack, tile/broadcast_to, transpose, shape.
// Every copy is dtype-agnostic: tensors are seen as bytes, shaped [outer, axis, inner], and whole
// contiguous runs are moved with memcpy. Views (reshape, squeeze, ...) never reach this file.
// Entry point: register_array_cpu().
#include <algorithm>
#include <cstring>
#include <numeric>
#include <utility>
#include <vector>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include <tapeflow/core/error.hpp>

#include "core/parallel.hpp"
#include "ops/op_families.hpp"

namespace tapeflow::cpu {
namespace {

constexpr int64_t kGrainBytes = int64_t{1} << 16;  // bytes per parallel chunk of a copy
constexpr int64_t kSmallRow = 256;  // output rows shorter than this: one task per row

int64_t product(const std::vector<int64_t>& dims, std::size_t begin, std::size_t end) {
    int64_t n = 1;
    for (std::size_t i = begin; i < end; ++i)
        n *= dims[i];
    return n;
}

char* bytes_of(const Tensor& t) {
    return static_cast<char*>(t.mutable_raw_data());
}

// rows x row_bytes: row r goes from src + r * src_stride to dst + r * dst_stride. The work is cut
// in the flattened byte range, so two huge rows spread over the threads as well as many small ones.
void copy_rows(char* dst,
               int64_t dst_stride,
               const char* src,
               int64_t src_stride,
               int64_t rows,
               int64_t row_bytes) {
    if (rows <= 0 || row_bytes <= 0) return;
    if (rows == 1 || (dst_stride == row_bytes && src_stride == row_bytes)) {
        parallel_for(rows * row_bytes, kGrainBytes, [&](int64_t begin, int64_t end) {
            std::memcpy(dst + begin, src + begin, static_cast<std::size_t>(end - begin));
        });
        return;
    }
    parallel_for(rows * row_bytes, kGrainBytes, [&](int64_t begin, int64_t end) {
        int64_t r = begin / row_bytes;
        int64_t off = begin % row_bytes;
        while (begin < end) {
            const int64_t n = std::min(row_bytes - off, end - begin);
            std::memcpy(dst + r * dst_stride + off,
                        src + r * src_stride + off,
                        static_cast<std::size_t>(n));
            begin += n;
            ++r;
            off = 0;
        }
    });
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

// ---- transpose ----

// A permutation with size-1 axes dropped and axes that stay neighbours merged: [2,3,4] with perm
// [0,2,1] stays, but [2,3,4] with [2,0,1] becomes [6,4] with [1,0].
struct Permutation {
    std::vector<int64_t> in_dims;
    std::vector<int64_t> perm;
};

Permutation simplify(const std::vector<int64_t>& dims, const std::vector<int64_t>& perm) {
    struct Group {
        int64_t first;
        int64_t count;
    };
    std::vector<Group> groups;  // in output order: runs of consecutive input axes
    for (int64_t p : perm) {
        if (dims[static_cast<std::size_t>(p)] == 1) continue;
        if (!groups.empty()) {
            Group& g = groups.back();
            // The next non-1 input axis after the group's last one, skipping size-1 axes.
            int64_t next = g.first + g.count;
            while (next < static_cast<int64_t>(dims.size()) &&
                   dims[static_cast<std::size_t>(next)] == 1)
                ++next;
            if (next == p) {
                g.count = p - g.first + 1;
                continue;
            }
        }
        groups.push_back({p, 1});
    }
    std::vector<std::size_t> order(groups.size());  // groups sorted by input position
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return groups[a].first < groups[b].first;
    });
    Permutation s;
    s.perm.resize(groups.size());
    for (std::size_t i = 0; i < order.size(); ++i) {
        const Group& g = groups[order[i]];
        int64_t n = 1;
        for (int64_t a = g.first; a < g.first + g.count; ++a)
            n *= dims[static_cast<std::size_t>(a)];
        s.in_dims.push_back(n);
        s.perm[order[i]] = static_cast<int64_t>(i);
    }
    return s;
}

// Row-major element strides of dims.
std::vector<int64_t> strides_of(const std::vector<int64_t>& dims) {
    std::vector<int64_t> strides(dims.size());
    int64_t s = 1;
    for (std::size_t i = dims.size(); i-- > 0;) {
        strides[i] = s;
        s *= dims[i];
    }
    return strides;
}

// An odometer over some output axes: their extents, and per axis the element step in the input
// and the output. Used to walk the batch (or outer) index of a transpose.
struct Walk {
    std::vector<int64_t> extent, in_step, out_step;

    // Calls body(in_offset, out_offset) for flattened indices [begin, end).
    template <class Body>
    void run(int64_t begin, int64_t end, Body&& body) const {
        const std::size_t n = extent.size();
        std::vector<int64_t> idx(n, 0);
        int64_t in_off = 0;
        int64_t out_off = 0;
        int64_t rest = begin;
        for (std::size_t t = n; t-- > 0;) {
            idx[t] = rest % extent[t];
            rest /= extent[t];
            in_off += idx[t] * in_step[t];
            out_off += idx[t] * out_step[t];
        }
        for (int64_t i = begin; i < end; ++i) {
            body(in_off, out_off);
            for (std::size_t t = n; t-- > 0;) {
                in_off += in_step[t];
                out_off += out_step[t];
                if (++idx[t] < extent[t]) break;
                in_off -= idx[t] * in_step[t];
                out_off -= idx[t] * out_step[t];
                idx[t] = 0;
            }
        }
    }
    // The offsets of flattened index i.
    std::pair<int64_t, int64_t> offsets(int64_t i) const {
        int64_t in_off = 0;
        int64_t out_off = 0;
        for (std::size_t t = extent.size(); t-- > 0;) {
            const int64_t k = i % extent[t];
            i /= extent[t];
            in_off += k * in_step[t];
            out_off += k * out_step[t];
        }
        return {in_off, out_off};
    }
    int64_t count() const {
        int64_t n = 1;
        for (int64_t e : extent)
            n *= e;
        return n;
    }
};

constexpr int64_t kTile = 32;       // output rows per task: 32 write streams, each contiguous
constexpr int64_t kRowChunk = 512;  // source rows per task, so that tall thin matrices split too

// A B x B micro-tile, dst[j * ds + i] = src[i * ss + j]: B rows are read, B rows written, so a
// power-of-two row stride cannot thrash one cache set as a column-at-a-time loop does.
template <class U>
struct MicroTile {
    static constexpr int64_t kSize = 8;
    static void run(const U* src, int64_t ss, U* dst, int64_t ds) {
        U tile[kSize][kSize];
        for (int64_t i = 0; i < kSize; ++i) {
            for (int64_t j = 0; j < kSize; ++j)
                tile[j][i] = src[i * ss + j];
        }
        for (int64_t j = 0; j < kSize; ++j) {
            for (int64_t i = 0; i < kSize; ++i)
                dst[j * ds + i] = tile[j][i];
        }
    }
};

#if defined(__AVX2__)
// 4-byte elements: the 8x8 transpose in AVX registers (shuffles move bits, any dtype is safe).
template <>
struct MicroTile<uint32_t> {
    static constexpr int64_t kSize = 8;
    static void run(const uint32_t* src, int64_t ss, uint32_t* dst, int64_t ds) {
        const auto* s = reinterpret_cast<const float*>(src);
        auto* d = reinterpret_cast<float*>(dst);
        __m256 r[8];
        for (int i = 0; i < 8; ++i)
            r[i] = _mm256_loadu_ps(s + i * ss);
        __m256 t[8];
        for (int i = 0; i < 4; ++i) {
            t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
            t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
        }
        __m256 u[8];
        for (int i = 0; i < 2; ++i) {
            u[4 * i + 0] = _mm256_shuffle_ps(t[4 * i + 0], t[4 * i + 2], 0x44);
            u[4 * i + 1] = _mm256_shuffle_ps(t[4 * i + 0], t[4 * i + 2], 0xEE);
            u[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
            u[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
        }
        for (int i = 0; i < 4; ++i) {
            _mm256_storeu_ps(d + i * ds, _mm256_permute2f128_ps(u[i], u[i + 4], 0x20));
            _mm256_storeu_ps(d + (i + 4) * ds, _mm256_permute2f128_ps(u[i], u[i + 4], 0x31));
        }
    }
};

// 8-byte elements: the 4x4 transpose in AVX registers.
template <>
struct MicroTile<uint64_t> {
    static constexpr int64_t kSize = 4;
    static void run(const uint64_t* src, int64_t ss, uint64_t* dst, int64_t ds) {
        const auto* s = reinterpret_cast<const double*>(src);
        auto* d = reinterpret_cast<double*>(dst);
        const __m256d r0 = _mm256_loadu_pd(s);
        const __m256d r1 = _mm256_loadu_pd(s + ss);
        const __m256d r2 = _mm256_loadu_pd(s + 2 * ss);
        const __m256d r3 = _mm256_loadu_pd(s + 3 * ss);
        const __m256d t0 = _mm256_unpacklo_pd(r0, r1);
        const __m256d t1 = _mm256_unpackhi_pd(r0, r1);
        const __m256d t2 = _mm256_unpacklo_pd(r2, r3);
        const __m256d t3 = _mm256_unpackhi_pd(r2, r3);
        _mm256_storeu_pd(d, _mm256_permute2f128_pd(t0, t2, 0x20));
        _mm256_storeu_pd(d + ds, _mm256_permute2f128_pd(t1, t3, 0x20));
        _mm256_storeu_pd(d + 2 * ds, _mm256_permute2f128_pd(t0, t2, 0x31));
        _mm256_storeu_pd(d + 3 * ds, _mm256_permute2f128_pd(t1, t3, 0x31));
    }
};
#endif

// dst[c * dst_stride + r] = src[r * src_stride + c] for r in [r_begin, r_end), c in [c0, c1), by
// micro-tiles; the ragged edges element by element.
template <class U>
void transpose_block(U* dst,
                     int64_t dst_stride,
                     const U* src,
                     int64_t src_stride,
                     int64_t r_begin,
                     int64_t r_end,
                     int64_t c0,
                     int64_t c1) {
    constexpr int64_t kB = MicroTile<U>::kSize;
    for (int64_t rb = r_begin; rb < r_end; rb += kB) {
        const int64_t re = std::min(r_end, rb + kB);
        int64_t c = c0;
        if (re - rb == kB) {
            for (; c + kB <= c1; c += kB) {
                MicroTile<U>::run(
                    src + rb * src_stride + c, src_stride, dst + c * dst_stride + rb, dst_stride);
            }
        }
        for (; c < c1; ++c) {
            for (int64_t r = rb; r < re; ++r)
                dst[c * dst_stride + r] = src[r * src_stride + c];
        }
    }
}

// Output axes 0..n-2 walk the input, the last output axis is the input's last (contiguous) one:
// every output row is one memcpy.
void transpose_runs(char* dst, const char* src, const Permutation& s, int64_t elem) {
    const std::size_t n = s.perm.size();
    const std::vector<int64_t> in_stride = strides_of(s.in_dims);
    const int64_t run = s.in_dims[n - 1];
    Walk walk;
    for (std::size_t k = 0; k + 1 < n; ++k) {
        walk.extent.push_back(s.in_dims[static_cast<std::size_t>(s.perm[k])]);
        walk.in_step.push_back(in_stride[static_cast<std::size_t>(s.perm[k])] * elem);
    }
    walk.out_step = strides_of(walk.extent);
    for (int64_t& step : walk.out_step)
        step *= run * elem;
    const int64_t run_bytes = run * elem;
    parallel_for(
        walk.count(), std::max<int64_t>(1, kGrainBytes / run_bytes), [&](int64_t b, int64_t e) {
            walk.run(b, e, [&](int64_t in_off, int64_t out_off) {
                std::memcpy(dst + out_off, src + in_off, static_cast<std::size_t>(run_bytes));
            });
        });
}

// The last output axis comes from input axis p, not the input's last axis L = n-1: for every index
// of the other axes (the batch), a blocked 2-D transpose of the [d_p, d_L] matrix.
template <class U>
void transpose_2d(U* dst, const U* src, const Permutation& s) {
    const std::size_t n = s.perm.size();
    std::vector<int64_t> out_dims(n);
    for (std::size_t k = 0; k < n; ++k)
        out_dims[k] = s.in_dims[static_cast<std::size_t>(s.perm[k])];
    const std::vector<int64_t> in_stride = strides_of(s.in_dims);
    const std::vector<int64_t> out_stride = strides_of(out_dims);
    const auto p = static_cast<std::size_t>(s.perm[n - 1]);
    std::size_t q = 0;  // output position of the input's last axis
    while (s.perm[q] != static_cast<int64_t>(n - 1))
        ++q;
    const int64_t rows = s.in_dims[p];
    const int64_t cols = s.in_dims[n - 1];
    Walk batch;
    for (std::size_t k = 0; k + 1 < n; ++k) {
        if (k == q) continue;
        batch.extent.push_back(out_dims[k]);
        batch.in_step.push_back(in_stride[static_cast<std::size_t>(s.perm[k])]);
        batch.out_step.push_back(out_stride[k]);
    }
    // Task = (batch index, strip of kTile output rows, chunk of kRowChunk source rows).
    const int64_t strips = (cols + kTile - 1) / kTile;
    const int64_t chunks = (rows + kRowChunk - 1) / kRowChunk;
    const int64_t per_batch = strips * chunks;
    const int64_t task_bytes =
        std::min(cols, kTile) * std::min(rows, kRowChunk) * static_cast<int64_t>(sizeof(U));
    const int64_t src_stride = in_stride[p];
    const int64_t dst_stride = out_stride[q];
    parallel_for(batch.count() * per_batch,
                 std::max<int64_t>(1, kGrainBytes / task_bytes),
                 [&](int64_t b, int64_t e) {
                     for (int64_t t = b; t < e; ++t) {
                         const auto [in_off, out_off] = batch.offsets(t / per_batch);
                         const int64_t strip = t % per_batch / chunks;
                         const int64_t chunk = t % chunks;
                         transpose_block(dst + out_off,
                                         dst_stride,
                                         src + in_off,
                                         src_stride,
                                         chunk * kRowChunk,
                                         std::min(rows, (chunk + 1) * kRowChunk),
                                         strip * kTile,
                                         std::min(cols, (strip + 1) * kTile));
                     }
                 });
}

void transpose_kernel(const KernelContext& ctx) {
    const Tensor& x = ctx.inputs[0];
    const Tensor& y = ctx.outputs[0];
    if (y.nbytes() == 0) return;
    const auto elem = static_cast<int64_t>(dtype_size(x.dtype()));
    const Permutation s = simplify(x.shape().dims(), ctx.attrs.get<std::vector<int64_t>>("perm"));
    const std::size_t n = s.perm.size();
    char* dst = bytes_of(y);
    const char* src = bytes_of(x);
    if (n <= 1) {
        copy_rows(dst, 0, src, 0, 1, static_cast<int64_t>(x.nbytes()));
    } else if (s.perm[n - 1] == static_cast<int64_t>(n - 1)) {
        transpose_runs(dst, src, s, elem);
    } else {
        switch (elem) {
            case 1:
                transpose_2d(
                    reinterpret_cast<uint8_t*>(dst), reinterpret_cast<const uint8_t*>(src), s);
                break;
            case 2:
                transpose_2d(
                    reinterpret_cast<uint16_t*>(dst), reinterpret_cast<const uint16_t*>(src), s);
                break;
            case 4:
                transpose_2d(
                    reinterpret_cast<uint32_t*>(dst), reinterpret_cast<const uint32_t*>(src), s);
                break;
            case 8:
                transpose_2d(
                    reinterpret_cast<uint64_t*>(dst), reinterpret_cast<const uint64_t*>(src), s);
                break;
            default:
                throw errors::InternalError(
                    fmt::format("transpose of {}-byte elements; this is a tapeflow bug", elem),
                    "Transpose");
        }
    }
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
