// CPU kernels of RNNSequence and RNNSequenceGrad (lib/ops/rnn.cpp; the plan and the gate math:
// lib/kernels/shared/rnn_plan.hpp), float32 and float64. Per step: one gemm of the previous state
// with the recurrent kernel (two for GRU with reset_after = false) and one pass over all gates of
// all rows (xsimd batches). The backward pass walks the steps in reverse with one gemm per step
// (the state gradient through rk^T, two for reset_after = false) and finishes with one gemm over
// the whole sequence for d rk ([U, B*T] x [B*T, G*U]). The products are cut by their shapes alone
// (routed_parallel_gemm) and the gate passes run in a fixed order, so results never depend on the
// thread count.
#include <algorithm>
#include <cstring>
#include <vector>

#include <xsimd/xsimd.hpp>

#include "kernels/cpu/gemm_route.hpp"
#include "kernels/shared/rnn_plan.hpp"
#include "ops/op_families.hpp"

namespace tapeflow::cpu {
namespace {

using rnn::Act;
using rnn::Cell;
using rnn::Plan;

constexpr DTypeSet kRnnTypes = {DType::float32, DType::float64};

template <class V, class T>
V ld(const T* p) {
    if constexpr (std::is_same_v<V, T>) {
        return *p;
    } else {
        return V::load_unaligned(p);
    }
}

template <class V, class T>
void st(T* p, const V& v) {
    if constexpr (std::is_same_v<V, T>) {
        *p = v;
    } else {
        v.store_unaligned(p);
    }
}

// f(V(), j) over j in [0, n): xsimd batches, then a scalar tail.
template <class T, class F>
void lanes(int64_t n, const F& f) {
    using B = xsimd::batch<T>;
    constexpr auto W = static_cast<int64_t>(B::size);
    int64_t j = 0;
    for (; j + W <= n; j += W)
        f(B(), j);
    for (; j < n; ++j)
        f(T(), j);
}

// C = op(A) op(B) + beta C, beta 0 or 1, row-major: routed_parallel_gemm (gemm_route.hpp), cut by
// its shape alone and shared by tapeflow's threads, so the bits never depend on the thread count;
// with beta 1 the product goes to a scratch first and is then added.
template <class T>
void product(bool ta,
             bool tb,
             int64_t m,
             int64_t n,
             int64_t k,
             const T* a,
             int64_t lda,
             const T* b,
             int64_t ldb,
             T beta,
             T* c,
             int64_t ldc) {
    if (beta == T(0)) {
        routed_parallel_gemm<T>(ta, tb, m, n, k, a, lda, b, ldb, c, ldc);
        return;
    }
    std::vector<T> scratch(static_cast<std::size_t>(m * n));
    routed_parallel_gemm<T>(ta, tb, m, n, k, a, lda, b, ldb, scratch.data(), n);
    for (int64_t i = 0; i < m; ++i) {
        T* row = c + i * ldc;
        const T* add = scratch.data() + i * n;
        lanes<T>(n, [&](auto v, int64_t j) {
            using V = decltype(v);
            st(row + j, V(ld<V>(row + j) + ld<V>(add + j)));
        });
    }
}

template <class T>
Plan plan_of(const KernelContext& ctx,
             const Tensor& xproj,
             const Tensor& mask,
             const Tensor& rbias) {
    const auto cell = static_cast<Cell>(ctx.attrs.get<int64_t>("cell"));
    const auto act = static_cast<Act>(ctx.attrs.get<int64_t>("activation"));
    const auto ract = static_cast<Act>(ctx.attrs.get<int64_t>("recurrent_activation"));
    const int64_t U = ctx.attrs.get<int64_t>("units");
    return Plan::make(cell,
                      act,
                      ract,
                      xproj.shape()[0],
                      xproj.shape()[1],
                      U,
                      mask.num_elements() > 0,
                      rbias.num_elements() > 0);
}

template <class T>
const T* data(const Tensor& t) {
    return static_cast<const T*>(t.raw_data());
}
template <class T>
T* out(const Tensor& t) {
    return static_cast<T*>(t.mutable_raw_data());
}

// Inputs: xproj, rk, h0, c0, rbias, mask. Outputs: H, C, WS.
template <class T>
void forward(const KernelContext& ctx) {
    const Tensor& xt = ctx.inputs[0];
    const Plan p = plan_of<T>(ctx, xt, ctx.inputs[5], ctx.inputs[4]);
    const int64_t B = p.B, Tn = p.T, U = p.U, GU = p.GU, WU = p.WU;
    if (B == 0 || Tn == 0 || U == 0) return;
    const T* x = data<T>(xt);
    const T* rk = data<T>(ctx.inputs[1]);
    const T* h0 = data<T>(ctx.inputs[2]);
    const T* c0 = p.cell == Cell::lstm ? data<T>(ctx.inputs[3]) : nullptr;
    const T* rb = p.has_rbias ? data<T>(ctx.inputs[4]) : nullptr;
    const T* mask = p.has_mask ? data<T>(ctx.inputs[5]) : nullptr;
    T* H = out<T>(ctx.outputs[0]);
    T* C = p.cell == Cell::lstm ? out<T>(ctx.outputs[1]) : nullptr;
    T* WS = out<T>(ctx.outputs[2]);
    std::vector<T> pre(static_cast<std::size_t>(B * GU));
    std::vector<T> pre2(p.cell == Cell::gru_before ? static_cast<std::size_t>(B * U) : 0);
    const Act act = p.act, ract = p.ract;
    for (int64_t t = 0; t < Tn; ++t) {
        // The previous states of all rows: h0 / c0, or step t - 1 of H / C.
        const T* hp = t == 0 ? h0 : H + (t - 1) * U;
        const int64_t ldh = t == 0 ? U : p.s_b();
        const T* cp = C == nullptr ? nullptr : (t == 0 ? c0 : C + (t - 1) * U);
        const int64_t gate_cols = p.cell == Cell::gru_before ? 2 * U : GU;
        product<T>(false, false, B, gate_cols, U, hp, ldh, rk, GU, T(0), pre.data(), gate_cols);
        for (int64_t b = 0; b < B; ++b) {
            const T* xr = x + b * p.x_b() + t * GU;
            const T* pr = pre.data() + b * gate_cols;
            const T* hpr = hp + b * ldh;
            T* hr = H + b * p.s_b() + t * U;
            T* wr = WS + b * p.w_b() + t * WU;
            switch (p.cell) {
                case Cell::simple:
                    lanes<T>(U, [&](auto v, int64_t j) {
                        using V = decltype(v);
                        st(wr + j, rnn::activate(act, V(ld<V>(xr + j) + ld<V>(pr + j))));
                    });
                    break;
                case Cell::lstm: {
                    const T* cpr = cp + b * ldh;
                    T* cr = C + b * p.s_b() + t * U;
                    lanes<T>(U, [&](auto v, int64_t j) {
                        using V = decltype(v);
                        const V i = rnn::activate(ract, V(ld<V>(xr + j) + ld<V>(pr + j)));
                        const V f = rnn::activate(ract, V(ld<V>(xr + U + j) + ld<V>(pr + U + j)));
                        const V g =
                            rnn::activate(act, V(ld<V>(xr + 2 * U + j) + ld<V>(pr + 2 * U + j)));
                        const V o =
                            rnn::activate(ract, V(ld<V>(xr + 3 * U + j) + ld<V>(pr + 3 * U + j)));
                        const V c = f * ld<V>(cpr + j) + i * g;
                        const V ac = rnn::activate(act, c);
                        st(wr + j, i);
                        st(wr + U + j, f);
                        st(wr + 2 * U + j, g);
                        st(wr + 3 * U + j, o);
                        st(wr + 4 * U + j, ac);
                        st(cr + j, c);
                        st(hr + j, V(o * ac));
                    });
                    if (mask != nullptr && mask[b * Tn + t] == T(0)) {
                        std::memcpy(cr, cpr, sizeof(T) * static_cast<std::size_t>(U));
                        std::memcpy(hr, hpr, sizeof(T) * static_cast<std::size_t>(U));
                    }
                    continue;
                }
                case Cell::gru:
                    lanes<T>(U, [&](auto v, int64_t j) {
                        using V = decltype(v);
                        V iz = ld<V>(pr + j), ir = ld<V>(pr + U + j), ih = ld<V>(pr + 2 * U + j);
                        if (rb != nullptr) {
                            iz = iz + ld<V>(rb + j);
                            ir = ir + ld<V>(rb + U + j);
                            ih = ih + ld<V>(rb + 2 * U + j);
                        }
                        const V z = rnn::activate(ract, V(ld<V>(xr + j) + iz));
                        const V r = rnn::activate(ract, V(ld<V>(xr + U + j) + ir));
                        const V hh = rnn::activate(act, V(ld<V>(xr + 2 * U + j) + r * ih));
                        st(wr + j, z);
                        st(wr + U + j, r);
                        st(wr + 2 * U + j, hh);
                        st(wr + 3 * U + j, ih);
                    });
                    break;
                case Cell::gru_before:
                    lanes<T>(U, [&](auto v, int64_t j) {
                        using V = decltype(v);
                        const V z = rnn::activate(ract, V(ld<V>(xr + j) + ld<V>(pr + j)));
                        const V r = rnn::activate(ract, V(ld<V>(xr + U + j) + ld<V>(pr + U + j)));
                        st(wr + j, z);
                        st(wr + U + j, r);
                        st(wr + 3 * U + j, V(r * ld<V>(hpr + j)));
                    });
                    break;
            }
        }
        if (p.cell == Cell::gru_before) {  // (r * h_prev) @ rk[:, 2U:]
            product<T>(false,
                       false,
                       B,
                       U,
                       U,
                       WS + t * WU + 3 * U,
                       p.w_b(),
                       rk + 2 * U,
                       GU,
                       T(0),
                       pre2.data(),
                       U);
        }
        // The new states (simple, gru, gru_before; the LSTM wrote its own above).
        if (p.cell == Cell::lstm) continue;
        for (int64_t b = 0; b < B; ++b) {
            const T* xr = x + b * p.x_b() + t * GU;
            const T* hpr = hp + b * ldh;
            T* hr = H + b * p.s_b() + t * U;
            T* wr = WS + b * p.w_b() + t * WU;
            if (mask != nullptr && mask[b * Tn + t] == T(0)) {
                if (p.cell == Cell::gru_before) {  // hh still feeds nothing, but keep it defined
                    std::fill(wr + 2 * U, wr + 3 * U, T(0));
                }
                std::memcpy(hr, hpr, sizeof(T) * static_cast<std::size_t>(U));
                continue;
            }
            if (p.cell == Cell::simple) {
                std::memcpy(hr, wr, sizeof(T) * static_cast<std::size_t>(U));
                continue;
            }
            const T* p2 = pre2.data() + b * U;
            lanes<T>(U, [&](auto v, int64_t j) {
                using V = decltype(v);
                const V z = ld<V>(wr + j);
                V hh;
                if (p.cell == Cell::gru_before) {
                    hh = rnn::activate(act, V(ld<V>(xr + 2 * U + j) + ld<V>(p2 + j)));
                    st(wr + 2 * U + j, hh);
                } else {
                    hh = ld<V>(wr + 2 * U + j);
                }
                const V h = z * ld<V>(hpr + j) + (V(T(1)) - z) * hh;
                st(hr + j, h);
            });
        }
    }
}

// Inputs: dH, dC, rk, h0, c0, mask, H, C, WS. Outputs: dxproj, drk, dh0, dc0, drbias.
template <class T>
void backward(const KernelContext& ctx) {
    const Tensor& dHt = ctx.inputs[0];
    const Plan p = plan_of<T>(ctx, dHt, ctx.inputs[5], ctx.outputs[4]);
    const int64_t B = p.B, Tn = p.T, U = p.U, GU = p.GU, WU = p.WU;
    T* dX = out<T>(ctx.outputs[0]);
    T* drk = out<T>(ctx.outputs[1]);
    T* dh0 = out<T>(ctx.outputs[2]);
    T* dc0 = p.cell == Cell::lstm ? out<T>(ctx.outputs[3]) : nullptr;
    T* drb = p.has_rbias ? out<T>(ctx.outputs[4]) : nullptr;
    const auto zero = [](const Tensor& t) {
        if (t.num_elements() > 0)
            std::memset(t.mutable_raw_data(), 0, t.num_elements() * dtype_size(t.dtype()));
    };
    for (const Tensor& o : ctx.outputs)
        zero(o);
    if (B == 0 || Tn == 0 || U == 0) return;
    const T* dH = data<T>(dHt);
    const T* dC = p.cell == Cell::lstm ? data<T>(ctx.inputs[1]) : nullptr;
    const T* rk = data<T>(ctx.inputs[2]);
    const T* h0 = data<T>(ctx.inputs[3]);
    const T* c0 = p.cell == Cell::lstm ? data<T>(ctx.inputs[4]) : nullptr;
    const T* mask = p.has_mask ? data<T>(ctx.inputs[5]) : nullptr;
    const T* H = data<T>(ctx.inputs[6]);
    const T* C = p.cell == Cell::lstm ? data<T>(ctx.inputs[7]) : nullptr;
    const T* WS = data<T>(ctx.inputs[8]);
    const auto n = [](int64_t v) {
        return static_cast<std::size_t>(v);
    };
    std::vector<T> dh(n(B * U), T(0)), dc(C != nullptr ? n(B * U) : 0, T(0));
    // The gradients of the recurrent pre-activations (h_prev @ rk + rb); they differ from dX only
    // in the GRU's candidate block (r * (h_prev @ rk_h + rb_h)).
    std::vector<T> dI(p.cell == Cell::gru ? n(B * Tn * GU) : 0);
    std::vector<T> drh(p.cell == Cell::gru_before ? n(B * U) : 0);
    const Act act = p.act, ract = p.ract;
    for (int64_t t = Tn - 1; t >= 0; --t) {
        const T* hp = t == 0 ? h0 : H + (t - 1) * U;
        const int64_t ldh = t == 0 ? U : p.s_b();
        const T* cp = C == nullptr ? nullptr : (t == 0 ? c0 : C + (t - 1) * U);
        for (int64_t b = 0; b < B; ++b) {
            const T m = mask == nullptr ? T(1) : (mask[b * Tn + t] != T(0) ? T(1) : T(0));
            const T* dHr = dH + b * p.s_b() + t * U;
            const T* wr = WS + b * p.w_b() + t * WU;
            const T* hpr = hp + b * ldh;
            T* dhr = dh.data() + b * U;
            T* dXr = dX + b * p.x_b() + t * GU;
            if (m == T(0)) {  // the step carried the states: their gradients pass through
                lanes<T>(U, [&](auto v, int64_t j) {
                    using V = decltype(v);
                    st(dhr + j, V(ld<V>(dhr + j) + ld<V>(dHr + j)));
                });
                if (dC != nullptr) {
                    T* dcr = dc.data() + b * U;
                    const T* dCr = dC + b * p.s_b() + t * U;
                    lanes<T>(U, [&](auto v, int64_t j) {
                        using V = decltype(v);
                        st(dcr + j, V(ld<V>(dcr + j) + ld<V>(dCr + j)));
                    });
                }
                if (p.cell == Cell::gru_before)
                    std::fill(drh.begin() + b * U, drh.begin() + (b + 1) * U, T(0));
                continue;  // dX (and dI) rows stay zero
            }
            switch (p.cell) {
                case Cell::simple:
                    lanes<T>(U, [&](auto v, int64_t j) {
                        using V = decltype(v);
                        const V g = ld<V>(dhr + j) + ld<V>(dHr + j);
                        st(dXr + j, V(g * rnn::derivative(act, ld<V>(wr + j))));
                        st(dhr + j, V(T(0)));
                    });
                    break;
                case Cell::lstm: {
                    T* dcr = dc.data() + b * U;
                    const T* dCr = dC + b * p.s_b() + t * U;
                    const T* cpr = cp + b * ldh;
                    lanes<T>(U, [&](auto v, int64_t j) {
                        using V = decltype(v);
                        const V gh = ld<V>(dhr + j) + ld<V>(dHr + j);
                        const V i = ld<V>(wr + j), f = ld<V>(wr + U + j);
                        const V g = ld<V>(wr + 2 * U + j), o = ld<V>(wr + 3 * U + j);
                        const V ac = ld<V>(wr + 4 * U + j);
                        const V gc =
                            ld<V>(dcr + j) + ld<V>(dCr + j) + gh * o * rnn::derivative(act, ac);
                        st(dXr + j, V(gc * g * rnn::derivative(ract, i)));
                        st(dXr + U + j, V(gc * ld<V>(cpr + j) * rnn::derivative(ract, f)));
                        st(dXr + 2 * U + j, V(gc * i * rnn::derivative(act, g)));
                        st(dXr + 3 * U + j, V(gh * ac * rnn::derivative(ract, o)));
                        st(dcr + j, V(gc * f));
                        st(dhr + j, V(T(0)));
                    });
                    break;
                }
                case Cell::gru: {
                    T* dIr = dI.data() + b * p.x_b() + t * GU;
                    lanes<T>(U, [&](auto v, int64_t j) {
                        using V = decltype(v);
                        const V gh = ld<V>(dhr + j) + ld<V>(dHr + j);
                        const V z = ld<V>(wr + j), r = ld<V>(wr + U + j);
                        const V hh = ld<V>(wr + 2 * U + j), ih = ld<V>(wr + 3 * U + j);
                        const V hpv = ld<V>(hpr + j);
                        const V dpre_h = gh * (V(T(1)) - z) * rnn::derivative(act, hh);
                        const V dz = gh * (hpv - hh) * rnn::derivative(ract, z);
                        const V dr = dpre_h * ih * rnn::derivative(ract, r);
                        st(dXr + j, dz);
                        st(dXr + U + j, dr);
                        st(dXr + 2 * U + j, dpre_h);
                        st(dIr + j, dz);
                        st(dIr + U + j, dr);
                        st(dIr + 2 * U + j, V(dpre_h * r));
                        st(dhr + j, V(gh * z));
                    });
                    break;
                }
                case Cell::gru_before:
                    lanes<T>(U, [&](auto v, int64_t j) {
                        using V = decltype(v);
                        const V gh = ld<V>(dhr + j) + ld<V>(dHr + j);
                        const V z = ld<V>(wr + j), hh = ld<V>(wr + 2 * U + j);
                        const V hpv = ld<V>(hpr + j);
                        st(dXr + j, V(gh * (hpv - hh) * rnn::derivative(ract, z)));
                        st(dXr + 2 * U + j, V(gh * (V(T(1)) - z) * rnn::derivative(act, hh)));
                        st(dhr + j, V(gh * z));
                    });
                    break;
            }
        }
        T* dXt = dX + t * GU;
        const int64_t ldx = p.x_b();
        if (p.cell == Cell::gru_before) {
            // d(r * h_prev) = dpre_h @ rk_h^T, then dr and the direct term r * d(r h_prev).
            product<T>(false, true, B, U, U, dXt + 2 * U, ldx, rk + 2 * U, GU, T(0), drh.data(), U);
            for (int64_t b = 0; b < B; ++b) {
                if (mask != nullptr && mask[b * Tn + t] == T(0)) continue;
                const T* wr = WS + b * p.w_b() + t * WU;
                const T* hpr = hp + b * ldh;
                const T* drhr = drh.data() + b * U;
                T* dhr = dh.data() + b * U;
                T* dXr = dX + b * p.x_b() + t * GU;
                lanes<T>(U, [&](auto v, int64_t j) {
                    using V = decltype(v);
                    const V r = ld<V>(wr + U + j);
                    const V d = ld<V>(drhr + j);
                    st(dXr + U + j, V(d * ld<V>(hpr + j) * rnn::derivative(ract, r)));
                    st(dhr + j, V(ld<V>(dhr + j) + d * r));
                });
            }
            product<T>(false, true, B, U, 2 * U, dXt, ldx, rk, GU, T(1), dh.data(), U);
        } else if (p.cell == Cell::gru) {
            product<T>(false, true, B, U, GU, dI.data() + t * GU, ldx, rk, GU, T(1), dh.data(), U);
        } else {
            product<T>(false, true, B, U, GU, dXt, ldx, rk, GU, T(1), dh.data(), U);
        }
    }
    std::copy(dh.begin(), dh.end(), dh0);
    if (dc0 != nullptr) std::copy(dc.begin(), dc.end(), dc0);
    // h_prev of every (b, t), in dX's row order, for d rk = sum over rows of h_prev^T d(pre).
    std::vector<T> hprev(n(B * Tn * U));
    for (int64_t b = 0; b < B; ++b) {
        std::copy(h0 + b * U, h0 + (b + 1) * U, hprev.data() + b * Tn * U);
        std::copy(H + b * p.s_b(), H + b * p.s_b() + (Tn - 1) * U, hprev.data() + b * Tn * U + U);
    }
    const int64_t rows = B * Tn;
    if (p.cell == Cell::gru_before) {
        product<T>(true, false, U, 2 * U, rows, hprev.data(), U, dX, GU, T(0), drk, GU);
        product<T>(true, false, U, U, rows, WS + 3 * U, WU, dX + 2 * U, GU, T(0), drk + 2 * U, GU);
    } else {
        const T* dpre = p.cell == Cell::gru ? dI.data() : dX;
        product<T>(true, false, U, GU, rows, hprev.data(), U, dpre, GU, T(0), drk, GU);
        if (drb != nullptr) {
            for (int64_t r = 0; r < rows; ++r)
                for (int64_t j = 0; j < GU; ++j)
                    drb[j] += dpre[r * GU + j];
        }
    }
}

void rnn_sequence_kernel(const KernelContext& ctx) {
    if (ctx.inputs[0].dtype() == DType::float64) {
        forward<double>(ctx);
    } else {
        forward<float>(ctx);
    }
}

void rnn_sequence_grad_kernel(const KernelContext& ctx) {
    if (ctx.inputs[0].dtype() == DType::float64) {
        backward<double>(ctx);
    } else {
        backward<float>(ctx);
    }
}

}  // namespace
}  // namespace tapeflow::cpu

namespace tapeflow {

void register_rnn_cpu(KernelRegistry& r) {
    r.add(Op::rnn_sequence, DeviceType::cpu, cpu::rnn_sequence_kernel, cpu::kRnnTypes);
    r.add(Op::rnn_sequence_grad, DeviceType::cpu, cpu::rnn_sequence_grad_kernel, cpu::kRnnTypes);
}

}  // namespace tapeflow
