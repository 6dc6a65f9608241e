// The recurrent sequence op behind the Keras recurrent layers (lib/keras/layers/recurrent.cpp):
// the whole time loop of one layer direction over one sequence, given the input projection
// (x @ kernel + input bias, one gemm over the sequence done by the caller). Either the fused
// RNNSequence op (CPU, float32/float64, activations the kernels know: rnn_plan.hpp) whose gradient
// is the fused RNNSequenceGrad (BPTT), or, elsewhere, the same formulas as a loop of
// differentiable ops (also the gradient's formula when a tape records the backward pass).
#pragma once

#include <functional>
#include <string>

#include <tapeflow/core/tensor.hpp>

#include "kernels/shared/rnn_plan.hpp"

namespace tapeflow::rnn {

using ActivationFn = std::function<Tensor(const Tensor&)>;

struct SequenceSpec {
    Cell cell = Cell::lstm;
    int64_t units = 0;
    /// Keras' names ("tanh", "sigmoid", ...): the fused op runs when both are in Act.
    std::string activation = "tanh";
    std::string recurrent_activation = "sigmoid";
    /// The functions themselves, for the op loop (any Keras activation).
    ActivationFn activation_fn;
    ActivationFn recurrent_activation_fn;
};

struct SequenceInputs {
    Tensor xproj;             // [B, T, G*U]
    Tensor recurrent_kernel;  // [U, G*U]
    Tensor h0;                // [B, U]
    Tensor c0;                // [B, U], LSTM only
    Tensor recurrent_bias;    // [G*U], GRU (reset_after) with use_bias only
    Tensor mask;              // [B, T] of the input dtype (1 keep, 0 carry) or undefined
    /// Keras' recurrent dropout: h_prev * this [B, U] before the recurrent product (op loop only).
    Tensor recurrent_dropout_mask;
};

struct SequenceOutputs {
    Tensor states;  // H [B, T, U]: the carried state after every step
    Tensor cells;   // C [B, T, U] (LSTM), else undefined
};

/// The activation code of a Keras name, or false when the fused kernels do not have it.
bool fused_activation(const std::string& name, Act& out);

/// Runs the sequence: the fused op when `allow_fused` and it applies, else the op loop.
SequenceOutputs run_sequence(const SequenceSpec& spec,
                             const SequenceInputs& in,
                             bool allow_fused = true);

/// Whether run_sequence would use the fused op.
bool uses_fused(const SequenceSpec& spec, const SequenceInputs& in);

}  // namespace tapeflow::rnn
