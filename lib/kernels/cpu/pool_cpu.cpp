// CPU kernels of MaxPool (values and the flat index of each maximum), AvgPool and AvgPoolGrad in
// NHWC. Each output pixel lists its window's non-padding cells once, then walks them for xsimd
// batches of channels (a scalar tail for the rest), so the inner loop is loads and selects or
// adds with no index math. Padding cells never enter: max ignores them, avg divides by the number
// of non-padding cells (TensorFlow's SAME rule). Every output is computed from its own window, in
// the same order whatever the vector width or thread count. float32 and float64.
#include <algorithm>
#include <limits>
#include <type_traits>
#include <vector>

#include <xsimd/xsimd.hpp>

#include "core/dtype_dispatch.hpp"
#include "core/parallel.hpp"
#include "ops/nn_common.hpp"
#include "ops/op_families.hpp"

namespace tapeflow::cpu {
namespace {

using nn_detail::Window2d;

constexpr DTypeSet kPoolTypes{DType::float32, DType::float64};

// The window of output (oh, ow) clipped to the input: rows [h0, h1), columns [w0, w1).
struct Span2d {
    int64_t h0, h1, w0, w1;
    int64_t count() const { return std::max<int64_t>(h1 - h0, 0) * std::max<int64_t>(w1 - w0, 0); }
};

Span2d clipped(const Window2d& w, int64_t oh, int64_t ow) {
    const int64_t hs = oh * w.sh - w.pad_top;
    const int64_t ws = ow * w.sw - w.pad_left;
    return {std::max<int64_t>(hs, 0),
            std::min(hs + w.kh, w.h),
            std::max<int64_t>(ws, 0),
            std::min(ws + w.kw, w.w)};
}

template <class Body>
void visit_pool_dtype(DType dtype, Body&& body) {
    visit_dtype(dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) body(tag);
    });
}

int64_t row_grain(const Window2d& w) {
    return std::max<int64_t>(1, 8192 / std::max<int64_t>(w.ow * w.c * w.kh * w.kw, 1));
}

// The most cells a clipped window holds: SAME accepts windows larger than the input, whose cells
// outside it never enter (so a huge ksize allocates no more than the input's plane).
std::size_t max_cells(const Window2d& w) {
    return static_cast<std::size_t>(std::min(w.kh, w.h) * std::min(w.kw, w.w));
}

// The input offsets (pixel * c) of a clipped window's cells in TensorFlow's order (rows, then
// columns): the inner loops below then walk a list instead of recomputing indices.
int64_t window_cells(const Window2d& w, int64_t n, const Span2d& s, int64_t* cells) {
    int64_t t = 0;
    for (int64_t ih = s.h0; ih < s.h1; ++ih)
        for (int64_t iw = s.w0; iw < s.w1; ++iw)
            cells[t++] = ((n * w.h + ih) * w.w + iw) * w.c;
    return t;
}

// Max over the cells of one window for channels [c, c + B::size) (or one channel when B is T):
// the first cell is taken as it is, later ones only when strictly greater, so the first maximum
// wins and a NaN wins only as the first cell (what the scalar kernel and TensorFlow's give).
// A vector's winning cell positions ride along in lanes of T (exact: such windows hold fewer than
// 2^24 cells) and become flat indices afterwards; one channel's goes straight to arg.
template <class B, class T>
void max_of_cells(
    const T* xp, const int64_t* cells, int64_t count, int64_t c, T* y, T* pos, int64_t* arg) {
    constexpr bool kScalar = std::is_same_v<B, T>;
    const auto load = [&](const T* p) {
        if constexpr (kScalar) {
            return *p;
        } else {
            return B::load_unaligned(p);
        }
    };
    B best = load(xp + cells[0] + c);
    std::conditional_t<kScalar, int64_t, B> at{};
    for (int64_t t = 1; t < count; ++t) {
        const B v = load(xp + cells[t] + c);
        if constexpr (kScalar) {
            if (v > best) {
                best = v;
                at = t;
            }
        } else {
            const auto take = v > best;
            best = xsimd::select(take, v, best);
            at = xsimd::select(take, B(static_cast<T>(t)), at);
        }
    }
    if constexpr (kScalar) {
        y[c] = best;
        arg[c] = cells[at] + c;
    } else {
        best.store_unaligned(y + c);
        at.store_unaligned(pos + c);
    }
}

void max_pool_kernel(const KernelContext& ctx) {
    const Tensor& x = ctx.inputs[0];
    const Window2d w = nn_detail::window_from(x.shape(), ctx.attrs);
    if (ctx.outputs[0].num_elements() == 0) return;
    visit_pool_dtype(x.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        using B = xsimd::batch<T>;
        constexpr auto W = static_cast<int64_t>(B::size);
        // Positions in lanes of T must stay exact; larger windows take the scalar path.
        const bool vector_ok = max_cells(w) < (std::size_t{1} << 24);
        const auto* xp = static_cast<const T*>(x.raw_data());
        auto* yp = static_cast<T*>(ctx.outputs[0].mutable_raw_data());
        auto* ap = static_cast<int64_t*>(ctx.outputs[1].mutable_raw_data());
        // One task per output row (n, oh); every output cell is computed from its window alone.
        parallel_for(w.n * w.oh, row_grain(w), [&](int64_t begin, int64_t end) {
            std::vector<int64_t> cells(max_cells(w));
            std::vector<T> pos(static_cast<std::size_t>(w.c));
            for (int64_t r = begin; r < end; ++r) {
                const int64_t n = r / w.oh;
                const int64_t oh = r % w.oh;
                for (int64_t ow = 0; ow < w.ow; ++ow) {
                    T* y = yp + (r * w.ow + ow) * w.c;
                    int64_t* arg = ap + (r * w.ow + ow) * w.c;
                    const int64_t count = window_cells(w, n, clipped(w, oh, ow), cells.data());
                    if (count == 0) {  // not reachable with SAME/VALID; kept for safety
                        std::fill(y, y + w.c, -std::numeric_limits<T>::infinity());
                        std::fill(arg, arg + w.c, int64_t{-1});
                        continue;
                    }
                    const int64_t vector_end = vector_ok ? w.c - w.c % W : 0;
                    for (int64_t c = 0; c < vector_end; c += W)
                        max_of_cells<B>(xp, cells.data(), count, c, y, pos.data(), arg);
                    for (int64_t c = 0; c < vector_end; ++c)
                        arg[c] = cells[static_cast<std::size_t>(pos[c])] + c;
                    for (int64_t c = vector_end; c < w.c; ++c)
                        max_of_cells<T>(xp, cells.data(), count, c, y, pos.data(), arg);
                }
            }
        });
    });
}

// y[c, c + W) = sum over the cells in order, then * inv: per channel the same additions in the
// same order as one scalar loop, so the vector and scalar channels agree bit for bit.
template <class B, class T>
void mean_of_cells(const T* xp, const int64_t* cells, int64_t count, int64_t c, T inv, T* y) {
    if constexpr (std::is_same_v<B, T>) {
        T acc = 0;
        for (int64_t t = 0; t < count; ++t)
            acc += xp[cells[t] + c];
        y[c] = acc * inv;
    } else {
        B acc(T(0));
        for (int64_t t = 0; t < count; ++t)
            acc += B::load_unaligned(xp + cells[t] + c);
        (acc * B(inv)).store_unaligned(y + c);
    }
}

void avg_pool_kernel(const KernelContext& ctx) {
    const Tensor& x = ctx.inputs[0];
    const Window2d w = nn_detail::window_from(x.shape(), ctx.attrs);
    if (ctx.outputs[0].num_elements() == 0) return;
    visit_pool_dtype(x.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        using B = xsimd::batch<T>;
        constexpr auto W = static_cast<int64_t>(B::size);
        const auto* xp = static_cast<const T*>(x.raw_data());
        auto* yp = static_cast<T*>(ctx.outputs[0].mutable_raw_data());
        parallel_for(w.n * w.oh, row_grain(w), [&](int64_t begin, int64_t end) {
            std::vector<int64_t> cells(max_cells(w));
            for (int64_t r = begin; r < end; ++r) {
                const int64_t n = r / w.oh;
                const int64_t oh = r % w.oh;
                for (int64_t ow = 0; ow < w.ow; ++ow) {
                    T* y = yp + (r * w.ow + ow) * w.c;
                    const int64_t count = window_cells(w, n, clipped(w, oh, ow), cells.data());
                    const T inv = T(1) / static_cast<T>(std::max<int64_t>(count, 1));
                    int64_t c = 0;
                    for (; c + W <= w.c; c += W)
                        mean_of_cells<B>(xp, cells.data(), count, c, inv, y);
                    for (; c < w.c; ++c)
                        mean_of_cells<T>(xp, cells.data(), count, c, inv, y);
                }
            }
        });
    });
}

// inputs (g) -> dx: each output cell's g / count added to its window's non-padding cells.
// Parallel over images, so no two threads write the same cell; each cell's additions keep the
// output order whatever the vector width.
void avg_pool_grad_kernel(const KernelContext& ctx) {
    const Tensor& g = ctx.inputs[0];
    Tensor& dx = ctx.outputs[0];
    const Window2d w = nn_detail::window_from(dx.shape(), ctx.attrs);
    if (dx.num_elements() == 0) return;
    visit_pool_dtype(g.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        using B = xsimd::batch<T>;
        constexpr auto W = static_cast<int64_t>(B::size);
        const auto* gp = static_cast<const T*>(g.raw_data());
        auto* dp = static_cast<T*>(dx.mutable_raw_data());
        std::fill(dp, dp + dx.num_elements(), T(0));
        parallel_for(w.n, 1, [&](int64_t begin, int64_t end) {
            std::vector<int64_t> cells(max_cells(w));
            for (int64_t n = begin; n < end; ++n) {
                for (int64_t oh = 0; oh < w.oh; ++oh) {
                    for (int64_t ow = 0; ow < w.ow; ++ow) {
                        const T* gc = gp + ((n * w.oh + oh) * w.ow + ow) * w.c;
                        const int64_t count = window_cells(w, n, clipped(w, oh, ow), cells.data());
                        const T inv = T(1) / static_cast<T>(std::max<int64_t>(count, 1));
                        int64_t c = 0;
                        for (; c + W <= w.c; c += W) {
                            const B share = B::load_unaligned(gc + c) * B(inv);
                            for (int64_t t = 0; t < count; ++t) {
                                T* d = dp + cells[t] + c;
                                (B::load_unaligned(d) + share).store_unaligned(d);
                            }
                        }
                        for (; c < w.c; ++c) {
                            const T share = gc[c] * inv;
                            for (int64_t t = 0; t < count; ++t)
                                dp[cells[t] + c] += share;
                        }
                    }
                }
            }
        });
    });
}

}  // namespace
}  // namespace tapeflow::cpu

namespace tapeflow {

void register_pool_cpu(KernelRegistry& r) {
    using namespace cpu;
    constexpr auto kCpu = DeviceType::cpu;
    r.add(Op::max_pool, kCpu, max_pool_kernel, kPoolTypes);
    r.add(Op::avg_pool, kCpu, avg_pool_kernel, kPoolTypes);
    r.add(Op::avg_pool_grad, kCpu, avg_pool_grad_kernel, kPoolTypes);
}

}  // namespace tapeflow
