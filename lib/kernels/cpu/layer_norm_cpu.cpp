// CPU kernels of LayerNorm and LayerNormGrad over the rows of a [rows, cols] tensor. Each row is
// read from memory once: its statistics and its outputs are computed while it sits in cache
// (xsimd batches; 16-bit rows are widened to float32 first). Rows go to threads whole; the
// backward's column sums (dgamma, dbeta) add per-block partials in block order, with blocks fixed
// by the row count alone, so results never depend on the thread count.
#include <algorithm>
#include <cmath>
#include <vector>

#include <xsimd/xsimd.hpp>

#include "core/dtype_dispatch.hpp"
#include "core/parallel.hpp"
#include "ops/op_families.hpp"

namespace tapeflow::cpu {
namespace {

constexpr DTypeSet kLayerNormTypes = kFloatTypes;
constexpr int64_t kElementGrain = 1 << 14;  // elements per thread before rows go parallel

// Calls f(batch_or_scalar, j) over j in [0, n): xsimd batches, then a scalar tail.
template <class C, class F>
void for_batches(int64_t n, const F& f) {
    using B = xsimd::batch<C>;
    constexpr auto W = static_cast<int64_t>(B::size);
    int64_t j = 0;
    for (; j + W <= n; j += W)
        f(B(), j);
    for (; j < n; ++j)
        f(C(), j);
}

template <class V, class C>
V get(const C* p) {
    if constexpr (std::is_same_v<V, C>) {
        return *p;
    } else {
        return V::load_unaligned(p);
    }
}

template <class V, class C>
void put(C* p, const V& v) {
    if constexpr (std::is_same_v<V, C>) {
        *p = v;
    } else {
        v.store_unaligned(p);
    }
}

// sum_j f(j) with four vector accumulators (one would make each row pass wait on the add's
// latency: four cut the passes' time about in half) and one scalar accumulator.
template <class C, class F>
C sum_of(int64_t n, const F& f) {
    using B = xsimd::batch<C>;
    constexpr auto W = static_cast<int64_t>(B::size);
    B acc0(C(0)), acc1(C(0)), acc2(C(0)), acc3(C(0));
    int64_t j = 0;
    for (; j + 4 * W <= n; j += 4 * W) {
        acc0 += f(B(), j);
        acc1 += f(B(), j + W);
        acc2 += f(B(), j + 2 * W);
        acc3 += f(B(), j + 3 * W);
    }
    for (; j + W <= n; j += W)
        acc0 += f(B(), j);
    C tail = 0;
    for (; j < n; ++j)
        tail += f(C(), j);
    return xsimd::hadd((acc0 + acc1) + (acc2 + acc3)) + tail;
}

// Spread over a row's last pass (one call per batch), asks for the next row's cache lines while
// this row is worked on in cache (a row is one 4 KiB page for 1024 floats, where the hardware's
// stream prefetch stops); `write`: for a row about to be stored.
template <bool kWrite = false, class T>
void prefetch_next(const T* next, int64_t j) {
    if (next != nullptr) __builtin_prefetch(next + j, kWrite ? 1 : 0);
}

// The row as compute-type values: the row itself, or its widened copy in `buf`.
template <class T, class C>
const C* widen(const T* row, int64_t n, std::vector<C>& buf) {
    if constexpr (std::is_same_v<T, C>) {
        return row;
    } else {
        buf.resize(static_cast<std::size_t>(n));
        for (int64_t j = 0; j < n; ++j)
            buf[j] = static_cast<C>(row[j]);
        return buf.data();
    }
}

template <class T, class C>
void narrow(const C* values, int64_t n, T* out) {
    for (int64_t j = 0; j < n; ++j)
        out[j] = T(values[j]);
}

template <class T, class C>
std::vector<C> widened(const Tensor& t) {
    const auto* p = static_cast<const T*>(t.raw_data());
    std::vector<C> v(static_cast<std::size_t>(t.num_elements()));
    for (std::size_t j = 0; j < v.size(); ++j)
        v[j] = static_cast<C>(p[j]);
    return v;
}

void layer_norm_kernel(const KernelContext& ctx) {
    const Tensor& x = ctx.inputs[0];
    const int64_t rows = x.shape()[0];
    const int64_t cols = x.shape()[1];
    if (rows == 0) return;
    visit_dtype(x.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_floating_point_v<T> || is_half_v<T>) {
            using C = compute_t<T>;
            const auto eps = static_cast<C>(ctx.attrs.get<double>("epsilon"));
            const std::vector<C> gamma = widened<T, C>(ctx.inputs[1]);
            const std::vector<C> beta = widened<T, C>(ctx.inputs[2]);
            const auto* in = static_cast<const T*>(x.raw_data());
            auto* out = static_cast<T*>(ctx.outputs[0].mutable_raw_data());
            auto* mean_out = static_cast<C*>(ctx.outputs[1].mutable_raw_data());
            auto* rstd_out = static_cast<C*>(ctx.outputs[2].mutable_raw_data());
            const int64_t grain = std::max<int64_t>(1, kElementGrain / std::max<int64_t>(cols, 1));
            parallel_for(rows, grain, [&](int64_t begin, int64_t end) {
                std::vector<C> buf, ybuf(is_half_v<T> ? static_cast<std::size_t>(cols) : 0);
                for (int64_t r = begin; r < end; ++r) {
                    const bool more = r + 1 < end && !is_half_v<T>;
                    const T* x_next = more ? in + (r + 1) * cols : nullptr;
                    T* y_next = more ? out + (r + 1) * cols : nullptr;
                    const C* xr = widen(in + r * cols, cols, buf);
                    const C n = static_cast<C>(cols);
                    const C mean =
                        sum_of<C>(cols,
                                  [&](auto v, int64_t j) { return get<decltype(v)>(xr + j); }) /
                        n;
                    const C var = sum_of<C>(cols,
                                            [&](auto v, int64_t j) {
                                                const auto d = get<decltype(v)>(xr + j) - mean;
                                                return d * d;
                                            }) /
                                  n;
                    const C rstd = C(1) / std::sqrt(var + eps);
                    mean_out[r] = mean;
                    rstd_out[r] = rstd;
                    C* yr = nullptr;
                    if constexpr (is_half_v<T>) {
                        yr = ybuf.data();
                    } else {
                        yr = out + r * cols;
                    }
                    for_batches<C>(cols, [&](auto v, int64_t j) {
                        using V = decltype(v);
                        if constexpr (!std::is_arithmetic_v<V>) {
                            prefetch_next(x_next, j);
                            prefetch_next<true>(y_next, j);
                        }
                        const V xhat = (get<V>(xr + j) - mean) * rstd;
                        put(yr + j, V(xhat * get<V>(gamma.data() + j) + get<V>(beta.data() + j)));
                    });
                    if constexpr (is_half_v<T>) narrow(yr, cols, out + r * cols);
                }
            });
        }
    });
}

// dx = rstd (g gamma - mean(g gamma) - xhat mean(g gamma xhat)); dgamma = sum_rows(g xhat),
// dbeta = sum_rows(g), from per-block partial sums.
void layer_norm_grad_kernel(const KernelContext& ctx) {
    const Tensor& dy = ctx.inputs[0];
    const Tensor& x = ctx.inputs[1];
    const int64_t rows = x.shape()[0];
    const int64_t cols = x.shape()[1];
    visit_dtype(x.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_floating_point_v<T> || is_half_v<T>) {
            using C = compute_t<T>;
            const std::vector<C> gamma = widened<T, C>(ctx.inputs[2]);
            const auto* mean = static_cast<const C*>(ctx.inputs[3].raw_data());
            const auto* rstd = static_cast<const C*>(ctx.inputs[4].raw_data());
            const auto* g_in = static_cast<const T*>(dy.raw_data());
            const auto* x_in = static_cast<const T*>(x.raw_data());
            auto* dx_out = static_cast<T*>(ctx.outputs[0].mutable_raw_data());
            // Blocks of rows, fixed by the row count: at most 64 partial rows of 2 * cols.
            const int64_t block = std::max<int64_t>(16, (rows + 63) / 64);
            const int64_t blocks = (rows + block - 1) / block;
            std::vector<C> partial(static_cast<std::size_t>(blocks * 2 * cols), C(0));
            const int64_t grain =
                std::max<int64_t>(1, kElementGrain / std::max<int64_t>(block * cols, 1));
            parallel_for(blocks, grain, [&](int64_t begin, int64_t end) {
                std::vector<C> gbuf, xbuf, dxbuf(is_half_v<T> ? static_cast<std::size_t>(cols) : 0);
                for (int64_t blk = begin; blk < end; ++blk) {
                    C* pg = partial.data() + blk * 2 * cols;
                    C* pb = pg + cols;
                    const int64_t row_end = std::min(rows, (blk + 1) * block);
                    for (int64_t r = blk * block; r < row_end; ++r) {
                        const bool more = r + 1 < row_end && !is_half_v<T>;
                        const T* g_next = more ? g_in + (r + 1) * cols : nullptr;
                        const T* x_next = more ? x_in + (r + 1) * cols : nullptr;
                        T* dx_next = more ? dx_out + (r + 1) * cols : nullptr;
                        const C* g = widen(g_in + r * cols, cols, gbuf);
                        const C* xr = widen(x_in + r * cols, cols, xbuf);
                        const C m = mean[r];
                        const C s = rstd[r];
                        const C* gm = gamma.data();
                        const C n = static_cast<C>(cols);
                        const C a = sum_of<C>(cols,
                                              [&](auto v, int64_t j) {
                                                  using V = decltype(v);
                                                  return V(get<V>(g + j) * get<V>(gm + j));
                                              }) /
                                    n;
                        const C b = sum_of<C>(cols,
                                              [&](auto v, int64_t j) {
                                                  using V = decltype(v);
                                                  return V(get<V>(g + j) * get<V>(gm + j) *
                                                           ((get<V>(xr + j) - m) * s));
                                              }) /
                                    n;
                        C* dxr = nullptr;
                        if constexpr (is_half_v<T>) {
                            dxr = dxbuf.data();
                        } else {
                            dxr = dx_out + r * cols;
                        }
                        for_batches<C>(cols, [&](auto v, int64_t j) {
                            using V = decltype(v);
                            if constexpr (!std::is_arithmetic_v<V>) {
                                prefetch_next(g_next, j);
                                prefetch_next(x_next, j);
                                prefetch_next<true>(dx_next, j);
                            }
                            const V gj = get<V>(g + j);
                            const V xhat = (get<V>(xr + j) - m) * s;
                            put(dxr + j, V(s * (gj * get<V>(gm + j) - a - xhat * b)));
                            put(pg + j, V(get<V>(pg + j) + gj * xhat));
                            put(pb + j, V(get<V>(pb + j) + gj));
                        });
                        if constexpr (is_half_v<T>) narrow(dxr, cols, dx_out + r * cols);
                    }
                }
            });
            auto* dgamma = static_cast<T*>(ctx.outputs[1].mutable_raw_data());
            auto* dbeta = static_cast<T*>(ctx.outputs[2].mutable_raw_data());
            parallel_for(cols,
                         kElementGrain / std::max<int64_t>(blocks, 1),
                         [&](int64_t begin, int64_t end) {
                             for (int64_t j = begin; j < end; ++j) {
                                 C sg = 0, sb = 0;
                                 for (int64_t blk = 0; blk < blocks; ++blk) {
                                     sg += partial[blk * 2 * cols + j];
                                     sb += partial[blk * 2 * cols + cols + j];
                                 }
                                 dgamma[j] = T(sg);
                                 dbeta[j] = T(sb);
                             }
                         });
        }
    });
}

}  // namespace
}  // namespace tapeflow::cpu

namespace tapeflow {

void register_layer_norm_cpu(KernelRegistry& r) {
    r.add(Op::layer_norm, DeviceType::cpu, cpu::layer_norm_kernel, cpu::kLayerNormTypes);
    r.add(Op::layer_norm_grad, DeviceType::cpu, cpu::layer_norm_grad_kernel, cpu::kLayerNormTypes);
}

}  // namespace tapeflow
