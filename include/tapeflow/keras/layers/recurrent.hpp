// Keras' recurrent layers: SimpleRNN, LSTM, GRU (Keras 3 formulas, gate order, defaults, weight
// names and layouts), Bidirectional and TimeDistributed. Inputs are [batch, timesteps, features].
// On the CPU in float32/float64 with the activations linear, tanh, sigmoid, relu and hard_sigmoid
// each layer direction runs as one fused op per sequence (one gemm for the input projection of the
// whole sequence, then one recurrent gemm and one pass over the gates per step; its gradient is
// one fused BPTT op); elsewhere the same formulas run as a loop of ops.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <tapeflow/core/export.hpp>
#include <tapeflow/keras/activations.hpp>
#include <tapeflow/keras/initializers.hpp>
#include <tapeflow/keras/layer.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow::keras::layers {

/// The options of SimpleRNN, LSTM and GRU, with Keras' names and defaults.
struct RNNOptions {
    std::string activation = "tanh";
    std::string recurrent_activation = "sigmoid";  // LSTM and GRU
    bool use_bias = true;
    Initializer kernel_initializer = initializers::glorot_uniform();
    Initializer recurrent_initializer = initializers::orthogonal();
    Initializer bias_initializer = initializers::zeros();
    /// LSTM: the forget gate's bias starts at 1 (the bias initializer for the other gates).
    bool unit_forget_bias = true;
    /// Fractions in [0, 1) dropped of the inputs and of the recurrent state while training; one
    /// mask per sequence (the same for every step and gate), drawn from `seed`.
    double dropout = 0;
    double recurrent_dropout = 0;
    bool return_sequences = false;  // [B, T, units] instead of the last output [B, units]
    bool return_state = false;      // call_with_states always returns the states
    /// Reads the sequence from its end; the sequence output is then in that (reversed) order.
    bool go_backwards = false;
    /// The last states of a batch are the initial states of the next (reset_states() zeroes them).
    bool stateful = false;
    /// Accepted for Keras compatibility: the fused op computes the same values either way.
    bool unroll = false;
    /// GRU: true (Keras' default) applies the reset gate after the recurrent product and has a
    /// second (recurrent) bias: bias [2, 3 * units]; false: bias [3 * units].
    bool reset_after = true;
    /// Masked steps output zeros instead of the previous output (Bidirectional sets it).
    bool zero_output_for_mask = false;
    std::optional<uint64_t> seed = std::nullopt;
    std::string name = "";
    /// Keras' dtype=: a policy name ("mixed_float16", "float32", ...); "" = the global policy.
    std::string dtype = "";
};

/// The shared part of SimpleRNN, LSTM and GRU (Keras' RNN with its cell). Weights: kernel
/// [features, G * units], recurrent_kernel [units, G * units], bias [G * units] (GRU with
/// reset_after: [2, 3 * units], the input bias then the recurrent one); G = 1, 4 (i, f, c, o) or
/// 3 (z, r, h).
class Recurrent : public Layer {
public:
    void build(const Shape& input_shape) override;
    Config get_config() const override;
    /// The output: [B, units] (the last step) or [B, T, units] with return_sequences.
    Tensor call(const Tensor& x, bool training) override;
    Tensor call_with_mask(const Tensor& x, const Tensor& mask, bool training) override;
    /// The input mask with return_sequences, else none (Keras' RNN.compute_mask).
    Tensor compute_mask(const Tensor& x, const Tensor& mask) const override;

    /// [output, h] (LSTM: [output, h, c]) for x [B, T, features], an optional mask [B, T] (bool
    /// or 0/1; masked steps keep the previous states) and optional initial states ([B, units]
    /// each, as many as the layer has states: InvalidArgumentError naming the layer otherwise).
    std::vector<Tensor> call_with_states(const Tensor& x,
                                         const Tensor& mask = {},
                                         const std::vector<Tensor>& initial_state = {},
                                         bool training = false);
    /// Stateful layers: zeroes the kept states (Keras' reset_states / reset_state).
    void reset_states();
    /// Stateful layers: the kept states (empty before the first call). They live in
    /// non-trainable Variables, as Keras' (so a tf::function's replay, e.g. fit's, reads and
    /// updates them at every call).
    std::vector<Tensor> states() const;

    int64_t units() const { return units_; }
    const RNNOptions& options() const { return options_; }
    /// 2 for LSTM (h, c), else 1.
    int64_t num_states() const { return kind_ == Kind::lstm ? 2 : 1; }
    Variable kernel() const { return kernel_; }
    Variable recurrent_kernel() const { return recurrent_kernel_; }
    /// Empty handle when use_bias is false.
    Variable bias() const { return bias_; }

    /// A new (unbuilt) layer of the same class and options, named `name`, with go_backwards set
    /// as given (Bidirectional's forward and backward layers, as Keras recreates them).
    std::shared_ptr<Recurrent> copy_as(std::string name, bool go_backwards) const;

protected:
    enum class Kind { simple, lstm, gru };
    Recurrent(Kind kind, int64_t units, RNNOptions options, std::string_view class_name);

private:
    std::vector<Tensor> run(const Tensor& x,
                            const Tensor& mask,
                            const std::vector<Tensor>& initial_state,
                            bool training);
    std::vector<Tensor> forward(const Tensor& x,
                                const Tensor& mask,
                                const std::vector<Tensor>& initial_state,
                                bool training);
    void check_rank(const Shape& shape) const;

    Kind kind_;
    int64_t units_;
    RNNOptions options_;
    activations::Activation activation_, recurrent_activation_;
    Variable kernel_, recurrent_kernel_, bias_;
    std::vector<Variable> states_;
    uint64_t dropout_calls_ = 0;
};

/// Keras' SimpleRNN: h = activation(x W + b + h_prev U).
class SimpleRNN : public Recurrent {
public:
    explicit SimpleRNN(int64_t units, RNNOptions options = {});
};

/// Keras' LSTM: z = x W + b + h_prev U split into i, f, c, o; c = f c_prev + i act(z_c),
/// h = o act(c) (i, f, o through recurrent_activation).
class LSTM : public Recurrent {
public:
    explicit LSTM(int64_t units, RNNOptions options = {});
};

/// Keras' GRU: z, r = recurrent_activation(...), hh = act(x_h + r (h_prev U_h + b_h)) (reset_after)
/// or act(x_h + (r h_prev) U_h); h = z h_prev + (1 - z) hh.
class GRU : public Recurrent {
public:
    explicit GRU(int64_t units, RNNOptions options = {});
};

/// Runs a copy of `layer` named "forward_<name>" and one named "backward_<name>" with go_backwards
/// (or `backward_layer`) over the sequence, as Keras recreates them from the layer's config (the
/// given layer itself is not called), and merges the outputs: "concat" (default, last axis),
/// "sum", "mul", "ave", or "none" (call_with_states returns both; call() raises
/// InvalidArgumentError). The backward output is flipped back in time with return_sequences.
class Bidirectional : public Layer {
public:
    explicit Bidirectional(std::shared_ptr<Recurrent> layer,
                           std::string merge_mode = "concat",
                           std::shared_ptr<Recurrent> backward_layer = nullptr,
                           std::string name = "");
    Config get_config() const override;
    Tensor call(const Tensor& x, bool training) override;
    Tensor call_with_mask(const Tensor& x, const Tensor& mask, bool training) override;
    Tensor compute_mask(const Tensor& x, const Tensor& mask) const override;
    /// [merged output] (merge "none": [forward output, backward output]), then the forward
    /// layer's states, then the backward layer's. initial_state: the forward states then the
    /// backward ones (or none).
    std::vector<Tensor> call_with_states(const Tensor& x,
                                         const Tensor& mask = {},
                                         const std::vector<Tensor>& initial_state = {},
                                         bool training = false);
    const std::shared_ptr<Recurrent>& forward_layer() const { return forward_; }
    const std::shared_ptr<Recurrent>& backward_layer() const { return backward_; }
    const std::string& merge_mode() const { return merge_mode_; }

private:
    std::vector<Tensor> run(const Tensor& x,
                            const Tensor& mask,
                            const std::vector<Tensor>& initial_state,
                            bool training);
    std::shared_ptr<Recurrent> forward_, backward_;
    std::string merge_mode_;
};

/// Applies `layer` to every time step: [B, T, ...] is folded to [B * T, ...], the layer runs once,
/// and the result is unfolded to [B, T, ...]. The mask passes through.
class TimeDistributed : public Layer {
public:
    explicit TimeDistributed(std::shared_ptr<Layer> layer, std::string name = "");
    Config get_config() const override;
    Tensor call(const Tensor& x, bool training) override;
    Tensor compute_mask(const Tensor& x, const Tensor& mask) const override {
        (void)x;
        return mask;
    }
    const std::shared_ptr<Layer>& layer() const { return layer_; }

private:
    std::shared_ptr<Layer> layer_;
};

}  // namespace tapeflow::keras::layers

TAPEFLOW_API_END
