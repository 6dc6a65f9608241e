// CPU kernels of DotProductAttention and DotProductAttentionGrad: FlashAttention's blocked
// algorithm on the CPU. The forward takes a block of query rows against one block of keys at a
// time (two gemms per block pair) with an online softmax (running max, running sum, rescaled
// accumulator), and keeps only each row's log-sum-exp; the [T, S] scores never exist beyond one
// block. The backward recomputes each block's probabilities from the log-sum-exp. Heads are packed
// into contiguous compute-type blocks (float32 for the 16-bit types and float32, float64 for
// float64). A masked logit contributes exactly nothing (Keras' replacement value underflows exp)
// unless every key of its row is masked; such a row averages the values and passes no gradient to
// the logits, as in Keras. Units (a head's query block forward, a head backward) go to threads
// whole, so results do not depend on the thread count.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include <xsimd/xsimd.hpp>

#include "core/dtype_dispatch.hpp"
#include "kernels/cpu/exp_shifted.hpp"
#include "kernels/cpu/gemm_route.hpp"
#include "ops/attention_operands.hpp"
#include "ops/op_families.hpp"

namespace tapeflow::cpu {
namespace {

constexpr int64_t kBlockQ = 128;  // query rows per block
constexpr int64_t kBlockK = 256;  // keys per block (a block's scores: 128 KiB of float32)

struct Geometry {
    int64_t b = 0, t = 0, s = 0, n = 0, h = 0;
    double scale = 1;
    bool causal = false;
    const void* bias = nullptr;
    std::array<int64_t, 4> bias_st{};
    const bool* mask = nullptr;
    std::array<int64_t, 4> mask_st{};
    // Causal without a mask: no row is fully masked, so key blocks right of the band are skipped.
    bool skip_band() const { return causal && mask == nullptr; }
    // Keys [0, end) can be unmasked for query rows [t0, t0 + rows).
    int64_t key_end(int64_t t0, int64_t rows) const {
        return skip_band() ? std::min(s, t0 + rows) : s;
    }
};

Geometry geometry(const KernelContext& ctx, const Tensor& q, const Tensor& k, std::size_t first) {
    Geometry g;
    g.b = q.shape()[0], g.t = q.shape()[1], g.n = q.shape()[2], g.h = q.shape()[3];
    g.s = k.shape()[1];
    g.scale = ctx.attrs.get<double>("scale");
    g.causal = ctx.attrs.get<bool>("causal");
    std::size_t next = first;
    if (ctx.attrs.get<bool>("has_bias")) {
        const Tensor& bias = ctx.inputs[next++];
        g.bias = bias.raw_data();
        g.bias_st = broadcast_strides4(bias.shape());
    }
    if (ctx.attrs.get<bool>("has_mask")) {
        const Tensor& mask = ctx.inputs[next];
        g.mask = static_cast<const bool*>(mask.raw_data());
        g.mask_st = broadcast_strides4(mask.shape());
    }
    return g;
}

// Copies rows [r0, r0 + rows) of head (b, n) of a [B, L, N, H] tensor into dst [rows, H], times
// `factor` (the queries are packed scaled, so the gemm gives the scaled logits).
template <class T, class C>
void pack(const T* src,
          const Geometry& g,
          int64_t len,
          int64_t bi,
          int64_t ni,
          int64_t r0,
          int64_t rows,
          C* dst,
          C factor = C(1)) {
    for (int64_t r = 0; r < rows; ++r) {
        const T* p = src + ((bi * len + r0 + r) * g.n + ni) * g.h;
        for (int64_t j = 0; j < g.h; ++j)
            dst[r * g.h + j] = static_cast<C>(p[j]) * factor;
    }
}

template <class T, class C>
void unpack(const C* src,
            const Geometry& g,
            int64_t len,
            int64_t bi,
            int64_t ni,
            int64_t r0,
            int64_t rows,
            T* dst) {
    for (int64_t r = 0; r < rows; ++r) {
        T* p = dst + ((bi * len + r0 + r) * g.n + ni) * g.h;
        for (int64_t j = 0; j < g.h; ++j)
            p[j] = T(src[r * g.h + j]);
    }
}

// Rows [r0, r0 + rows) of head (b, n) transposed into dst [H, ld] (columns [0, rows)): the
// right-hand operand of the own block gemm for products with a transposed key or value block.
template <class T, class C>
void pack_transposed(const T* src,
                     const Geometry& g,
                     int64_t len,
                     int64_t bi,
                     int64_t ni,
                     int64_t r0,
                     int64_t rows,
                     C* dst,
                     int64_t ld) {
    for (int64_t r = 0; r < rows; ++r) {
        const T* p = src + ((bi * len + r0 + r) * g.n + ni) * g.h;
        for (int64_t j = 0; j < g.h; ++j)
            dst[j * ld + r] = static_cast<C>(p[j]);
    }
}

// The block products, routed by gemm_route.hpp (float: the register tile, reading op(B) row-major;
// float64: OpenBLAS).
// c = a b^T, a [m, k] (lda), b [n, k] (ldb); the tile reads b transposed, bt [k, n] (ldbt).
template <class C>
void gemm_nt(int64_t m,
             int64_t n,
             int64_t k,
             const C* a,
             int64_t lda,
             const C* b,
             int64_t ldb,
             const C* bt,
             int64_t ldbt,
             C* c,
             int64_t ldc) {
    routed_block_gemm<C>(false, true, m, n, k, a, lda, b, ldb, bt, ldbt, C(0), c, ldc);
}

// c += a b, a [m, k] (lda), b [k, n] (ldb).
template <class C>
void gemm_nn_acc(int64_t m,
                 int64_t n,
                 int64_t k,
                 const C* a,
                 int64_t lda,
                 const C* b,
                 int64_t ldb,
                 C* c,
                 int64_t ldc) {
    routed_block_gemm<C>(false, false, m, n, k, a, lda, b, ldb, b, ldb, C(1), c, ldc);
}

// c += a^T b, a [k, m] (lda), b [k, n] (ldb).
template <class C>
void gemm_tn_acc(int64_t m,
                 int64_t n,
                 int64_t k,
                 const C* a,
                 int64_t lda,
                 const C* b,
                 int64_t ldb,
                 C* c,
                 int64_t ldc) {
    routed_block_gemm<C>(true, false, m, n, k, a, lda, b, ldb, b, ldb, C(1), c, ldc);
}

// The logits of block rows [t0, t0 + rows) x keys [s0, s0 + cols) of head (b, n), computed in
// place from the scaled products (scale q).k in `sc` (row stride ld): bias, then -inf where masked.
template <class T, class C>
void finish_logits(const Geometry& g,
                   int64_t bi,
                   int64_t ni,
                   int64_t t0,
                   int64_t rows,
                   int64_t s0,
                   int64_t cols,
                   C* sc,
                   int64_t ld) {
    constexpr C kMasked = -std::numeric_limits<C>::infinity();
    const auto* bias = static_cast<const T*>(g.bias);
    for (int64_t i = 0; i < rows; ++i) {
        C* row = sc + i * ld;
        const int64_t t = t0 + i;
        if (bias != nullptr) {
            const T* br = bias + bi * g.bias_st[0] + ni * g.bias_st[1] + t * g.bias_st[2];
            for (int64_t j = 0; j < cols; ++j)
                row[j] += static_cast<C>(br[(s0 + j) * g.bias_st[3]]);
        }
        if (g.mask != nullptr) {
            const bool* mr = g.mask + bi * g.mask_st[0] + ni * g.mask_st[1] + t * g.mask_st[2];
            for (int64_t j = 0; j < cols; ++j) {
                if (!mr[(s0 + j) * g.mask_st[3]]) row[j] = kMasked;
            }
        }
        if (g.causal) {
            for (int64_t j = std::max<int64_t>(0, t + 1 - s0); j < cols; ++j)
                row[j] = kMasked;
        }
    }
}

// max(init, row[0..n)) through xsimd batches (std::max_element's scalar loop was half of the
// forward's own time).
template <class C>
C row_max(const C* row, int64_t n, C init) {
    using B = xsimd::batch<C>;
    constexpr auto W = static_cast<int64_t>(B::size);
    B acc(init);
    int64_t j = 0;
    for (; j + W <= n; j += W)
        acc = xsimd::max(acc, B::load_unaligned(row + j));
    alignas(64) C lanes[W];
    acc.store_aligned(lanes);
    C m = lanes[0];
    for (int64_t l = 1; l < W; ++l)
        m = std::max(m, lanes[l]);
    for (; j < n; ++j)
        m = std::max(m, row[j]);
    return m;
}

// Mean of the values of head (b, n) (a row whose keys are all masked); zeros when S = 0.
template <class T, class C>
void mean_values(const T* v, const Geometry& g, int64_t bi, int64_t ni, C* out) {
    std::fill(out, out + g.h, C(0));
    for (int64_t s = 0; s < g.s; ++s) {
        const T* p = v + ((bi * g.s + s) * g.n + ni) * g.h;
        for (int64_t j = 0; j < g.h; ++j)
            out[j] += static_cast<C>(p[j]);
    }
    if (g.s > 0) {
        for (int64_t j = 0; j < g.h; ++j)
            out[j] /= static_cast<C>(g.s);
    }
}

template <class T>
void attention_forward(const KernelContext& ctx) {
    using C = compute_t<T>;
    const Tensor& q = ctx.inputs[0];
    const Geometry g = geometry(ctx, q, ctx.inputs[1], 3);
    const auto* qp = static_cast<const T*>(q.raw_data());
    const auto* kp = static_cast<const T*>(ctx.inputs[1].raw_data());
    const auto* vp = static_cast<const T*>(ctx.inputs[2].raw_data());
    auto* out = static_cast<T*>(ctx.outputs[0].mutable_raw_data());
    auto* lse = static_cast<C*>(ctx.outputs[1].mutable_raw_data());
    const int64_t q_blocks = (g.t + kBlockQ - 1) / kBlockQ;
    const int64_t h = g.h;
    parallel_block_gemms<C>(g.b * g.n * q_blocks, [&](int64_t begin, int64_t end) {
        std::vector<C> qb(kBlockQ * h), kb(kBlockK * h), vb(kBlockK * h), acc(kBlockQ * h);
        std::vector<C> kt(kBlockTile<C> ? kBlockK * h : 0);
        std::vector<C> sc(kBlockQ * kBlockK), m(kBlockQ), l(kBlockQ);
        for (int64_t unit = begin; unit < end; ++unit) {
            const int64_t head = unit / q_blocks;
            const int64_t bi = head / g.n, ni = head % g.n;
            const int64_t t0 = unit % q_blocks * kBlockQ;
            const int64_t rows = std::min(kBlockQ, g.t - t0);
            pack(qp, g, g.t, bi, ni, t0, rows, qb.data(), static_cast<C>(g.scale));
            std::fill(m.begin(), m.end(), -std::numeric_limits<C>::infinity());
            std::fill(l.begin(), l.end(), C(0));
            std::fill(acc.begin(), acc.end(), C(0));
            const int64_t s_end = g.key_end(t0, rows);
            for (int64_t s0 = 0; s0 < s_end; s0 += kBlockK) {
                const int64_t cols = std::min(kBlockK, s_end - s0);
                if constexpr (kBlockTile<C>) {
                    pack_transposed(kp, g, g.s, bi, ni, s0, cols, kt.data(), kBlockK);
                } else {
                    pack(kp, g, g.s, bi, ni, s0, cols, kb.data());
                }
                pack(vp, g, g.s, bi, ni, s0, cols, vb.data());
                gemm_nt<C>(rows,
                           cols,
                           h,
                           qb.data(),
                           h,
                           kb.data(),
                           h,
                           kt.data(),
                           kBlockK,
                           sc.data(),
                           kBlockK);
                finish_logits<T>(g, bi, ni, t0, rows, s0, cols, sc.data(), kBlockK);
                for (int64_t i = 0; i < rows; ++i) {
                    C* row = sc.data() + i * kBlockK;
                    const C m_new = row_max(row, cols, m[i]);
                    if (m_new == -std::numeric_limits<C>::infinity()) {  // all masked so far
                        std::fill(row, row + cols, C(0));
                        continue;
                    }
                    const C alpha = std::exp(m[i] - m_new);
                    l[i] = l[i] * alpha + exp_shifted(row, m_new, row, cols);
                    m[i] = m_new;
                    if (alpha != C(1)) {
                        for (int64_t j = 0; j < h; ++j)
                            acc[i * h + j] *= alpha;
                    }
                }
                gemm_nn_acc<C>(rows, h, cols, sc.data(), kBlockK, vb.data(), h, acc.data(), h);
            }
            for (int64_t i = 0; i < rows; ++i) {
                C* a = acc.data() + i * h;
                C& row_lse = lse[(bi * g.n + ni) * g.t + t0 + i];
                if (m[i] == -std::numeric_limits<C>::infinity()) {
                    mean_values(vp, g, bi, ni, a);
                    row_lse = m[i];  // the marker of a fully masked row, read by the backward
                    continue;
                }
                const C inv = C(1) / l[i];
                for (int64_t j = 0; j < h; ++j)
                    a[j] *= inv;
                row_lse = m[i] + std::log(l[i]);
            }
            unpack(acc.data(), g, g.t, bi, ni, t0, rows, out);
        }
    });
}

// inputs: dout, q, k, v, out, lse[, bias][, mask]; outputs: dq, dk, dv[, dbias [B, N, T, S]].
template <class T>
void attention_backward(const KernelContext& ctx) {
    using C = compute_t<T>;
    const Tensor& q = ctx.inputs[1];
    const Geometry g = geometry(ctx, q, ctx.inputs[2], 6);
    const auto* dop = static_cast<const T*>(ctx.inputs[0].raw_data());
    const auto* qp = static_cast<const T*>(q.raw_data());
    const auto* kp = static_cast<const T*>(ctx.inputs[2].raw_data());
    const auto* vp = static_cast<const T*>(ctx.inputs[3].raw_data());
    const auto* op = static_cast<const T*>(ctx.inputs[4].raw_data());
    const auto* lsep = static_cast<const C*>(ctx.inputs[5].raw_data());
    const bool want_dbias = ctx.attrs.get<bool>("want_dbias");
    T* dbias = want_dbias ? static_cast<T*>(ctx.outputs[3].mutable_raw_data()) : nullptr;
    const int64_t h = g.h;
    const C scale = static_cast<C>(g.scale);
    parallel_block_gemms<C>(g.b * g.n, [&](int64_t begin, int64_t end) {
        std::vector<C> qh(g.t * h), doh(g.t * h), oh(g.t * h), dq(g.t * h), d(g.t);
        std::vector<C> kh(g.s * h), vh(g.s * h), dk(g.s * h), dv(g.s * h);
        std::vector<C> p(kBlockQ * kBlockK), dp(kBlockQ * kBlockK);
        std::vector<C> kt(kBlockTile<C> ? g.s * h : 0), vt(kBlockTile<C> ? g.s * h : 0);
        for (int64_t head = begin; head < end; ++head) {
            const int64_t bi = head / g.n, ni = head % g.n;
            pack(qp, g, g.t, bi, ni, 0, g.t, qh.data(), scale);  // scaled: dk = ds^T (scale q)
            pack(dop, g, g.t, bi, ni, 0, g.t, doh.data());
            pack(op, g, g.t, bi, ni, 0, g.t, oh.data());
            pack(kp, g, g.s, bi, ni, 0, g.s, kh.data());
            pack(vp, g, g.s, bi, ni, 0, g.s, vh.data());
            if constexpr (kBlockTile<C>) {
                pack_transposed(kp, g, g.s, bi, ni, 0, g.s, kt.data(), g.s);
                pack_transposed(vp, g, g.s, bi, ni, 0, g.s, vt.data(), g.s);
            }
            const C* lse = lsep + head * g.t;
            for (int64_t t = 0; t < g.t; ++t) {  // rowsum(do * out) = rowsum(p * dp)
                C sum = 0;
                for (int64_t j = 0; j < h; ++j)
                    sum += doh[t * h + j] * oh[t * h + j];
                d[t] = sum;
            }
            std::fill(dq.begin(), dq.end(), C(0));
            std::fill(dk.begin(), dk.end(), C(0));
            std::fill(dv.begin(), dv.end(), C(0));
            T* db = want_dbias ? dbias + head * g.t * g.s : nullptr;
            if (db != nullptr) std::fill(db, db + g.t * g.s, T(0.0F));
            for (int64_t s0 = 0; s0 < g.s; s0 += kBlockK) {
                const int64_t cols = std::min(kBlockK, g.s - s0);
                for (int64_t t0 = 0; t0 < g.t; t0 += kBlockQ) {
                    const int64_t rows = std::min(kBlockQ, g.t - t0);
                    if (g.key_end(t0, rows) <= s0) continue;  // the whole block is masked
                    gemm_nt<C>(rows,
                               cols,
                               h,
                               qh.data() + t0 * h,
                               h,
                               kh.data() + s0 * h,
                               h,
                               kt.data() + s0,
                               g.s,
                               p.data(),
                               kBlockK);
                    finish_logits<T>(g, bi, ni, t0, rows, s0, cols, p.data(), kBlockK);
                    for (int64_t i = 0; i < rows; ++i) {
                        C* row = p.data() + i * kBlockK;
                        const C shift = lse[t0 + i];
                        if (shift == -std::numeric_limits<C>::infinity()) {  // fully masked row
                            std::fill(row, row + cols, C(1) / static_cast<C>(g.s));
                        } else {
                            exp_shifted(row, shift, row, cols);
                        }
                    }
                    gemm_tn_acc<C>(cols,
                                   h,
                                   rows,
                                   p.data(),
                                   kBlockK,
                                   doh.data() + t0 * h,
                                   h,
                                   dv.data() + s0 * h,
                                   h);
                    gemm_nt<C>(rows,
                               cols,
                               h,
                               doh.data() + t0 * h,
                               h,
                               vh.data() + s0 * h,
                               h,
                               vt.data() + s0,
                               g.s,
                               dp.data(),
                               kBlockK);
                    for (int64_t i = 0; i < rows; ++i) {
                        C* ds = dp.data() + i * kBlockK;
                        const C* pr = p.data() + i * kBlockK;
                        const C di = d[t0 + i];
                        if (lse[t0 + i] == -std::numeric_limits<C>::infinity()) {
                            std::fill(ds, ds + cols, C(0));  // where() passes no gradient
                        } else {
                            for (int64_t j = 0; j < cols; ++j)
                                ds[j] = pr[j] * (ds[j] - di);
                        }
                        if (db != nullptr) {
                            T* dbr = db + (t0 + i) * g.s + s0;
                            for (int64_t j = 0; j < cols; ++j)
                                dbr[j] = T(ds[j]);
                        }
                    }
                    gemm_nn_acc<C>(rows,
                                   h,
                                   cols,
                                   dp.data(),
                                   kBlockK,
                                   kh.data() + s0 * h,
                                   h,
                                   dq.data() + t0 * h,
                                   h);
                    gemm_tn_acc<C>(cols,
                                   h,
                                   rows,
                                   dp.data(),
                                   kBlockK,
                                   qh.data() + t0 * h,
                                   h,
                                   dk.data() + s0 * h,
                                   h);
                }
            }
            for (C& x : dq)
                x *= scale;  // dq = scale ds k
            unpack(dq.data(),
                   g,
                   g.t,
                   bi,
                   ni,
                   0,
                   g.t,
                   static_cast<T*>(ctx.outputs[0].mutable_raw_data()));
            unpack(dk.data(),
                   g,
                   g.s,
                   bi,
                   ni,
                   0,
                   g.s,
                   static_cast<T*>(ctx.outputs[1].mutable_raw_data()));
            unpack(dv.data(),
                   g,
                   g.s,
                   bi,
                   ni,
                   0,
                   g.s,
                   static_cast<T*>(ctx.outputs[2].mutable_raw_data()));
        }
    });
}

template <bool kBackward>
void attention_kernel(const KernelContext& ctx) {
    visit_dtype(ctx.inputs[0].dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_floating_point_v<T> || is_half_v<T>) {
            if constexpr (kBackward) {
                attention_backward<T>(ctx);
            } else {
                attention_forward<T>(ctx);
            }
        }
    });
}

}  // namespace
}  // namespace tapeflow::cpu

namespace tapeflow {

void register_attention_cpu(KernelRegistry& r) {
    r.add(Op::attention, DeviceType::cpu, cpu::attention_kernel<false>, kFloatTypes);
    r.add(Op::attention_grad, DeviceType::cpu, cpu::attention_kernel<true>, kFloatTypes);
}

}  // namespace tapeflow
