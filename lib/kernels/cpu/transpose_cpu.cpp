// The CPU transpose kernel (Op::transpose): the permutation is simplified (size-1 axes dropped,
// neighbours merged), then contiguous runs are copied, or 2-D tiles are transposed in registers
// (AVX2 micro-tiles for 4- and 8-byte elements). Dtype-agnostic: elements are moved as bytes.
// Registered by register_array_cpu() (array_ops_cpu.cpp).
#include "kernels/cpu/transpose_cpu.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <utility>
#include <vector>

#include <fmt/format.h>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include <tapeflow/core/error.hpp>

#include "core/parallel.hpp"
#include "kernels/cpu/array_copy.hpp"

namespace tapeflow::cpu {
namespace {

using namespace array_copy;

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

}  // namespace

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

}  // namespace tapeflow::cpu
