// The plan of the fused recurrent op (RNNSequence, lib/ops/rnn.cpp): the cell, its activations,
// the sizes and the batch-major strides of every tensor the kernels read and write, derived once
// from the op's shapes and attrs, and the gate math (Keras 3's formulas) written once for scalars
// and SIMD batches (the CPU kernel, lib/kernels/cpu/rnn_cpu.cpp) and for CUDA (TAPEFLOW_HD).
//
// Layouts (B batch, T steps, U units, G gates; all row-major, batch-major as Keras' [B, T, ...]):
//   xproj [B, T, G*U]   x @ kernel + input bias, gates in Keras' order (LSTM i f c o, GRU z r h)
//   rk    [U, G*U]      the recurrent kernel
//   H, C  [B, T, U]     the carried states after each step (C: LSTM only)
//   WS    [B, T, W*U]   what the backward pass reads per step (see kWorkspaceBlocks)
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "core/hd.hpp"
#include "kernels/shared/activation_functors.hpp"

namespace tapeflow::rnn {

/// The cells. gru: reset_after = true (Keras' default; a second, recurrent bias), gru_before:
/// reset_after = false (the reset gate scales h before the recurrent product of the candidate).
enum class Cell : int64_t { simple = 0, lstm = 1, gru = 2, gru_before = 3 };

/// The activations the fused kernels compute; their derivatives are functions of the output.
enum class Act : int64_t { linear = 0, tanh = 1, sigmoid = 2, relu = 3, hard_sigmoid = 4 };

inline constexpr int64_t gates_of(Cell cell) {
    return cell == Cell::simple ? 1 : cell == Cell::lstm ? 4 : 3;
}

/// Workspace blocks of U values per (b, t):
///   simple: [h_new]; lstm: [i, f, g, o, act(c_new)]; gru: [z, r, hh, h_prev @ rk_h + rb_h];
///   gru_before: [z, r, hh, r * h_prev].
inline constexpr int64_t workspace_blocks(Cell cell) {
    return cell == Cell::simple ? 1 : cell == Cell::lstm ? 5 : 4;
}

struct Plan {
    Cell cell = Cell::lstm;
    Act act = Act::tanh;
    Act ract = Act::sigmoid;
    int64_t B = 0, T = 0, U = 0;
    int64_t G = 4;           // gates
    int64_t GU = 0;          // G * U: a row of xproj, rk and the gate pre-activations
    int64_t WU = 0;          // a row of the workspace
    bool has_mask = false;   // mask [B, T] (1 keeps the step, 0 carries the state)
    bool has_rbias = false;  // gru: the recurrent bias [G*U]

    // Strides (elements) of the (b, t) rows of each batch-major tensor.
    int64_t x_b() const { return T * GU; }
    int64_t s_b() const { return T * U; }  // H, C
    int64_t w_b() const { return T * WU; }

    static Plan make(
        Cell cell, Act act, Act ract, int64_t B, int64_t T, int64_t U, bool mask, bool rbias) {
        Plan p;
        p.cell = cell;
        p.act = act;
        p.ract = ract;
        p.B = B;
        p.T = T;
        p.U = U;
        p.G = gates_of(cell);
        p.GU = p.G * U;
        p.WU = workspace_blocks(cell) * U;
        p.has_mask = mask;
        p.has_rbias = rbias;
        return p;
    }
};

/// a(x) for scalars and SIMD batches (exp and tanh found by argument-dependent lookup).
template <class V>
TAPEFLOW_HD V activate(Act a, V x) {
    using std::exp;
    using std::tanh;
    using E = typename act::Elem<V>::type;
    switch (a) {
        case Act::tanh:
            return tanh(x);
        case Act::sigmoid:
            return V(E(1)) / (V(E(1)) + exp(-x));
        case Act::relu:
            return act::pick(x > V(E(0)), x, V(E(0)));
        case Act::hard_sigmoid: {  // relu6(x + 3) / 6
            const V y = x / V(E(6)) + V(E(0.5));
            return act::pick(y > V(E(0)), act::pick(y < V(E(1)), y, V(E(1))), V(E(0)));
        }
        case Act::linear:
            break;
    }
    return x;
}

/// a'(x) written with y = a(x).
template <class V>
TAPEFLOW_HD V derivative(Act a, V y) {
    using E = typename act::Elem<V>::type;
    switch (a) {
        case Act::tanh:
            return V(E(1)) - y * y;
        case Act::sigmoid:
            return y * (V(E(1)) - y);
        case Act::relu:
            return act::pick(y > V(E(0)), V(E(1)), V(E(0)));
        case Act::hard_sigmoid:
            return act::pick(y > V(E(0)), act::pick(y < V(E(1)), V(E(1.0 / 6)), V(E(0))), V(E(0)));
        case Act::linear:
            break;
    }
    return V(E(1));
}

}  // namespace tapeflow::rnn
