// SimpleRNN, LSTM, GRU, Bidirectional and TimeDistributed. Each recurrent call: x (reversed in
// time for go_backwards) times the kernel as one gemm over the whole sequence, plus the input
// bias, then the time loop as one op (lib/ops/rnn.cpp: fused on the CPU, a loop of ops elsewhere),
// then the outputs Keras' backend.rnn returns: the states carried through masked steps, the
// outputs of masked steps the previous output (zeros before the first kept step) or zeros.
#include <fmt/format.h>

#include <tapeflow/core/device.hpp>
#include <tapeflow/core/error.hpp>
#include <tapeflow/keras/layers/recurrent.hpp>
#include <tapeflow/ops/array.hpp>
#include <tapeflow/ops/creation.hpp>
#include <tapeflow/ops/math.hpp>
#include <tapeflow/ops/nn.hpp>

#include "ops/rnn.hpp"

namespace tapeflow::keras::layers {

namespace {

int64_t gates(int kind_lstm, int kind_gru) {
    return kind_lstm != 0 ? 4 : kind_gru != 0 ? 3 : 1;
}

// x with axis 1 reversed (go_backwards).
Tensor reverse_time(const Tensor& x) {
    const int64_t rank = x.rank();
    std::vector<int64_t> zero(static_cast<std::size_t>(rank), 0);
    std::vector<int64_t> strides(static_cast<std::size_t>(rank), 1);
    strides[1] = -1;
    const int64_t all = (int64_t{1} << rank) - 1;
    return strided_slice(x, zero, zero, strides, all, all);
}

// Step t of [B, T, U] as [B, U].
Tensor step(const Tensor& seq, int64_t t) {
    const int64_t B = seq.shape()[0], U = seq.shape()[2];
    return reshape(slice(seq, {0, t, 0}, {B, 1, U}), Shape({B, U}));
}

std::string shape_list(const std::vector<Tensor>& ts) {
    std::string s;
    for (const Tensor& t : ts)
        s += (s.empty() ? "" : ", ") + (t.defined() ? t.shape().debug_string() : "undefined");
    return s;
}

}  // namespace

// ---- Recurrent ----

Recurrent::Recurrent(Kind kind, int64_t units, RNNOptions options, std::string_view class_name)
    : Layer(options.name, class_name), kind_(kind), units_(units), options_(std::move(options)) {
    use_dtype_option(options_.dtype);
    if (units <= 0)
        throw errors::InvalidArgumentError(
            fmt::format("{}: units must be a positive integer, got {}", this->class_name(), units));
    for (const double rate : {options_.dropout, options_.recurrent_dropout})
        if (!(rate >= 0 && rate < 1))
            throw errors::InvalidArgumentError(
                fmt::format("layer \"{}\" ({}): dropout and recurrent_dropout must be in [0, 1), "
                            "got {}",
                            name(),
                            this->class_name(),
                            rate));
    activation_ = activations::get(options_.activation, name());
    recurrent_activation_ = activations::get(options_.recurrent_activation, name());
}

void Recurrent::check_rank(const Shape& shape) const {
    if (shape.rank() != 3)
        throw errors::InvalidArgumentError(fmt::format(
            "layer \"{}\" ({}) needs inputs of rank 3 ([batch, timesteps, features]), got shape "
            "{}; add a time axis (expand_dims(x, 1)) or wrap it in TimeDistributed",
            name(),
            class_name(),
            shape.debug_string()));
}

void Recurrent::build(const Shape& input_shape) {
    check_rank(input_shape);
    const int64_t in = input_shape[-1];
    const int64_t G = gates(kind_ == Kind::lstm, kind_ == Kind::gru);
    const DType dt = variable_dtype();
    kernel_ = add_weight("kernel", {in, G * units_}, options_.kernel_initializer, dt);
    recurrent_kernel_ =
        add_weight("recurrent_kernel", {units_, G * units_}, options_.recurrent_initializer, dt);
    if (options_.use_bias) {
        if (kind_ == Kind::lstm && options_.unit_forget_bias) {
            // Keras: [init(units), ones(units), init(2 units)].
            const Initializer base = options_.bias_initializer;
            const int64_t u = units_;
            const Initializer forget_one = [base, u](const Shape&) {
                const DType d = DType::float32;  // Initializer casts to the weight's dtype
                return concat({base(Shape({u}), d), ones(Shape({u}), d), base(Shape({2 * u}), d)},
                              0);
            };
            bias_ = add_weight("bias", {G * units_}, forget_one, dt);
        } else if (kind_ == Kind::gru && options_.reset_after) {
            bias_ = add_weight("bias", {2, G * units_}, options_.bias_initializer, dt);
        } else {
            bias_ = add_weight("bias", {G * units_}, options_.bias_initializer, dt);
        }
    }
    set_input_spec({.ndim = 3, .axes = {{-1, in}}});
}

Tensor Recurrent::call(const Tensor& x, bool training) {
    return forward(x, {}, {}, training)[0];
}

Tensor Recurrent::call_with_mask(const Tensor& x, const Tensor& mask, bool training) {
    if (!mask.defined()) return (*this)(x, training);
    return run(x, mask, {}, training)[0];
}

Tensor Recurrent::compute_mask(const Tensor&, const Tensor& mask) const {
    return options_.return_sequences ? mask : Tensor();
}

std::vector<Tensor> Recurrent::call_with_states(const Tensor& x,
                                                const Tensor& mask,
                                                const std::vector<Tensor>& initial_state,
                                                bool training) {
    return run(x, mask, initial_state, training);
}

// Layer::operator()'s steps (name scope, device, input cast, build, input check, policy), with the
// mask and the initial states.
std::vector<Tensor> Recurrent::run(const Tensor& x,
                                   const Tensor& mask,
                                   const std::vector<Tensor>& initial_state,
                                   bool training) {
    if (!x.defined())
        throw errors::InvalidArgumentError(fmt::format(
            "layer \"{}\" ({}) was called with an undefined tensor", name(), class_name()));
    const auto scope = name_scope();
    std::optional<DeviceScope> on_device;
    if (x.device() != default_device()) on_device.emplace(x.device());
    const Tensor in = cast_input(x);
    if (!built()) {
        check_rank(in.shape());
        choose_variable_dtype(in);
        build(in.shape());
        set_built();
    }
    check_input(in, input_spec());
    std::vector<Tensor> out;
    call_with_policy([&] {
        out = forward(in, mask, initial_state, training);
        return out[0];
    });
    set_output_shape(out[0].shape());
    return out;
}

void Recurrent::reset_states() {
    for (Variable& s : states_)
        s.assign(zeros_like(s.value()));
}

std::vector<Tensor> Recurrent::states() const {
    std::vector<Tensor> out;
    for (const Variable& s : states_)
        out.push_back(s.value());
    return out;
}

std::vector<Tensor> Recurrent::forward(const Tensor& x_in,
                                       const Tensor& mask_in,
                                       const std::vector<Tensor>& initial_state,
                                       bool training) {
    check_rank(x_in.shape());
    const int64_t B = x_in.shape()[0], T = x_in.shape()[1], F = x_in.shape()[2];
    const int64_t U = units_;
    const int64_t G = gates(kind_ == Kind::lstm, kind_ == Kind::gru);
    const DType dt = x_in.dtype();
    if (T == 0)
        throw errors::InvalidArgumentError(
            fmt::format("layer \"{}\" ({}) got a sequence of 0 timesteps (shape {})",
                        name(),
                        class_name(),
                        x_in.shape().debug_string()));
    Tensor mask;
    if (mask_in.defined()) {
        if (mask_in.shape() != Shape({B, T}))
            throw errors::InvalidArgumentError(fmt::format(
                "layer \"{}\" ({}): the mask must have shape [batch, timesteps] = [{}, {}], got {}",
                name(),
                class_name(),
                B,
                T,
                mask_in.shape().debug_string()));
        mask = mask_in.dtype() == dt ? mask_in : cast(mask_in, dt);
    }
    // Initial states: given, kept (stateful) or zeros.
    const auto n_states = static_cast<std::size_t>(num_states());
    std::vector<Tensor> init = initial_state;
    if (!init.empty()) {
        bool ok = init.size() == n_states;
        for (const Tensor& s : init)
            ok = ok && s.defined() && s.shape() == Shape({B, U});
        if (!ok)
            throw errors::InvalidArgumentError(fmt::format(
                "layer \"{}\" ({}) expects {} initial state(s) of shape [{}, {}] (batch, units), "
                "got {} with shapes [{}]",
                name(),
                class_name(),
                n_states,
                B,
                U,
                init.size(),
                shape_list(init)));
        for (Tensor& s : init)
            if (s.dtype() != dt) s = cast(s, dt);
    } else if (options_.stateful && !states_.empty()) {
        if (states_[0].shape()[0] != B)
            throw errors::InvalidArgumentError(fmt::format(
                "layer \"{}\" ({}) is stateful: the batch size must stay {} (the kept states'), "
                "got {}",
                name(),
                class_name(),
                states_[0].shape()[0],
                B));
        init = states();
    } else {
        for (std::size_t k = 0; k < n_states; ++k)
            init.push_back(zeros(Shape({B, U}), dt));
    }
    // The input projection of the whole sequence: one gemm.
    Tensor x = options_.go_backwards ? reverse_time(x_in) : x_in;
    if (mask.defined() && options_.go_backwards) mask = reverse_time(mask);
    if (training && options_.dropout > 0) {
        const Tensor keep = nn::dropout(ones(Shape({B, 1, F}), dt),
                                        options_.dropout,
                                        detail::next_seed(options_.seed, dropout_calls_));
        x = multiply(x, keep);
    }
    Tensor rdrop;
    if (training && options_.recurrent_dropout > 0) {
        rdrop = nn::dropout(ones(Shape({B, U}), dt),
                            options_.recurrent_dropout,
                            detail::next_seed(options_.seed, dropout_calls_));
    }
    const Tensor kernel = kernel_;
    Tensor xproj = matmul(reshape(x, Shape({B * T, F})), kernel);
    Tensor input_bias, recurrent_bias;
    if (bias_.defined()) {
        const Tensor bias = bias_;
        if (kind_ == Kind::gru && options_.reset_after) {
            input_bias = reshape(slice(bias, {0, 0}, {1, G * U}), Shape({G * U}));
            recurrent_bias = reshape(slice(bias, {1, 0}, {1, G * U}), Shape({G * U}));
        } else {
            input_bias = bias;
        }
        xproj = nn::bias_add(xproj, input_bias);
    }
    xproj = reshape(xproj, Shape({B, T, G * U}));

    rnn::SequenceSpec spec;
    spec.cell = kind_ == Kind::simple  ? rnn::Cell::simple
                : kind_ == Kind::lstm  ? rnn::Cell::lstm
                : options_.reset_after ? rnn::Cell::gru
                                       : rnn::Cell::gru_before;
    spec.units = U;
    spec.activation = options_.activation;
    spec.recurrent_activation = options_.recurrent_activation;
    spec.activation_fn = activation_;
    spec.recurrent_activation_fn = recurrent_activation_;
    rnn::SequenceInputs seq;
    seq.xproj = xproj;
    seq.recurrent_kernel = recurrent_kernel_;
    seq.h0 = init[0];
    if (kind_ == Kind::lstm) seq.c0 = init[1];
    seq.recurrent_bias = recurrent_bias;
    seq.mask = mask;
    seq.recurrent_dropout_mask = rdrop;
    const rnn::SequenceOutputs r = rnn::run_sequence(spec, seq);

    std::vector<Tensor> last_states{step(r.states, T - 1)};
    if (kind_ == Kind::lstm) last_states.push_back(step(r.cells, T - 1));
    Tensor outputs = r.states;
    Tensor last = last_states[0];
    if (mask.defined()) {
        // Keras' backend.rnn: a masked step outputs the previous output (zeros before the first
        // kept step), or zeros with zero_output_for_mask.
        const Tensor keep = options_.zero_output_for_mask
                                ? mask
                                : cast(greater(cumsum(mask, 1), zeros(Shape({}), dt)), dt);
        outputs = multiply(outputs, expand_dims(keep, -1));
        last = step(outputs, T - 1);
    }
    if (options_.stateful) {
        if (states_.empty()) {
            for (const Tensor& s : last_states)
                states_.emplace_back(stop_gradient(s),
                                     VariableOptions{.name = "state", .trainable = false});
        } else {
            for (std::size_t k = 0; k < states_.size(); ++k)
                states_[k].assign(stop_gradient(last_states[k]));
        }
    }
    std::vector<Tensor> out{options_.return_sequences ? outputs : last};
    for (const Tensor& s : last_states)
        out.push_back(s);
    return out;
}

std::shared_ptr<Recurrent> Recurrent::copy_as(std::string name, bool go_backwards) const {
    RNNOptions o = options_;
    o.go_backwards = go_backwards;
    o.name = std::move(name);
    if (dtype_policy_applies()) o.dtype = dtype_policy().name();
    switch (kind_) {
        case Kind::simple:
            return std::make_shared<SimpleRNN>(units_, o);
        case Kind::lstm:
            return std::make_shared<LSTM>(units_, o);
        case Kind::gru:
            break;
    }
    return std::make_shared<GRU>(units_, o);
}

SimpleRNN::SimpleRNN(int64_t units, RNNOptions options)
    : Recurrent(Kind::simple, units, std::move(options), "SimpleRNN") {}

LSTM::LSTM(int64_t units, RNNOptions options)
    : Recurrent(Kind::lstm, units, std::move(options), "LSTM") {}

GRU::GRU(int64_t units, RNNOptions options)
    : Recurrent(Kind::gru, units, std::move(options), "GRU") {}

// ---- Bidirectional ----

Bidirectional::Bidirectional(std::shared_ptr<Recurrent> layer,
                             std::string merge_mode,
                             std::shared_ptr<Recurrent> backward_layer,
                             std::string name)
    : Layer(std::move(name), "Bidirectional"), merge_mode_(std::move(merge_mode)) {
    if (!layer)
        throw errors::InvalidArgumentError(
            fmt::format("Bidirectional \"{}\": got an empty layer pointer", this->name()));
    if (merge_mode_ == "None") merge_mode_ = "none";
    if (merge_mode_ != "concat" && merge_mode_ != "sum" && merge_mode_ != "mul" &&
        merge_mode_ != "ave" && merge_mode_ != "none")
        throw errors::InvalidArgumentError(fmt::format(
            "Bidirectional \"{}\": merge_mode must be one of concat, sum, mul, ave, none; got "
            "\"{}\"",
            this->name(),
            merge_mode_));
    // Keras: both recreated from the layer's config (no state carried over).
    const auto without = [](const std::string& n, const std::string& prefix) {
        return n.rfind(prefix, 0) == 0 ? n.substr(prefix.size()) : n;
    };
    auto forward_layer = layer->copy_as("forward_" + without(layer->name(), "forward_"),
                                        layer->options().go_backwards);
    if (!backward_layer)
        backward_layer = layer->copy_as("backward_" + without(layer->name(), "backward_"), true);
    layer = std::move(forward_layer);
    const RNNOptions& f = layer->options();
    const RNNOptions& b = backward_layer->options();
    if (f.go_backwards == b.go_backwards)
        throw errors::InvalidArgumentError(
            fmt::format("Bidirectional \"{}\": the forward and backward layers must have different "
                        "go_backwards values",
                        this->name()));
    if (f.stateful != b.stateful || f.return_sequences != b.return_sequences ||
        f.return_state != b.return_state)
        throw errors::InvalidArgumentError(fmt::format(
            "Bidirectional \"{}\": the forward and backward layers must agree in stateful, "
            "return_sequences and return_state",
            this->name()));
    forward_ = track(std::move(layer));
    backward_ = track(std::move(backward_layer));
}

std::vector<Tensor> Bidirectional::run(const Tensor& x,
                                       const Tensor& mask,
                                       const std::vector<Tensor>& initial_state,
                                       bool training) {
    std::vector<Tensor> fs, bs;
    if (!initial_state.empty()) {
        const std::size_t half = initial_state.size() / 2;
        fs.assign(initial_state.begin(), initial_state.begin() + static_cast<std::ptrdiff_t>(half));
        bs.assign(initial_state.begin() + static_cast<std::ptrdiff_t>(half), initial_state.end());
    }
    std::vector<Tensor> y = forward_->call_with_states(x, mask, fs, training);
    std::vector<Tensor> y_rev = backward_->call_with_states(x, mask, bs, training);
    Tensor a = y[0], b = y_rev[0];
    if (forward_->options().return_sequences) b = reverse_time(b);
    std::vector<Tensor> out;
    if (merge_mode_ == "concat") {
        out.push_back(concat({a, b}, -1));
    } else if (merge_mode_ == "sum") {
        out.push_back(add(a, b));
    } else if (merge_mode_ == "mul") {
        out.push_back(multiply(a, b));
    } else if (merge_mode_ == "ave") {
        out.push_back(divide(add(a, b), scalar_like(a, 2.0)));
    } else {
        out.push_back(a);
        out.push_back(b);
    }
    out.insert(out.end(), y.begin() + 1, y.end());
    out.insert(out.end(), y_rev.begin() + 1, y_rev.end());
    return out;
}

Tensor Bidirectional::call(const Tensor& x, bool training) {
    if (merge_mode_ == "none")
        throw errors::InvalidArgumentError(fmt::format(
            "Bidirectional \"{}\" with merge_mode none has two outputs; use call_with_states",
            name()));
    return run(x, {}, {}, training)[0];
}

Tensor Bidirectional::call_with_mask(const Tensor& x, const Tensor& mask, bool training) {
    if (!mask.defined()) return (*this)(x, training);
    if (merge_mode_ == "none")
        throw errors::InvalidArgumentError(fmt::format(
            "Bidirectional \"{}\" with merge_mode none has two outputs; use call_with_states",
            name()));
    const auto scope = name_scope();
    const Tensor y = run(x, mask, {}, training)[0];
    set_built();
    set_output_shape(y.shape());
    return y;
}

std::vector<Tensor> Bidirectional::call_with_states(const Tensor& x,
                                                    const Tensor& mask,
                                                    const std::vector<Tensor>& initial_state,
                                                    bool training) {
    const auto scope = name_scope();
    std::vector<Tensor> out = run(x, mask, initial_state, training);
    set_built();
    set_output_shape(out[0].shape());
    return out;
}

Tensor Bidirectional::compute_mask(const Tensor&, const Tensor& mask) const {
    return forward_->options().return_sequences ? mask : Tensor();
}

// ---- TimeDistributed ----

TimeDistributed::TimeDistributed(std::shared_ptr<Layer> layer, std::string name)
    : Layer(std::move(name), "TimeDistributed") {
    if (!layer)
        throw errors::InvalidArgumentError(
            fmt::format("TimeDistributed \"{}\": got an empty layer pointer", this->name()));
    layer_ = track(std::move(layer));
}

Tensor TimeDistributed::call(const Tensor& x, bool training) {
    if (x.rank() < 3)
        throw errors::InvalidArgumentError(fmt::format(
            "layer \"{}\" (TimeDistributed) needs inputs of rank >= 3 ([batch, timesteps, ...]), "
            "got shape {}",
            name(),
            x.shape().debug_string()));
    const int64_t B = x.shape()[0], T = x.shape()[1];
    std::vector<int64_t> folded{B * T};
    for (int64_t i = 2; i < x.rank(); ++i)
        folded.push_back(x.shape()[i]);
    const Tensor y = (*layer_)(reshape(x, Shape(folded)), training);
    std::vector<int64_t> unfolded{B, T};
    for (int64_t i = 1; i < y.rank(); ++i)
        unfolded.push_back(y.shape()[i]);
    return reshape(y, Shape(unfolded));
}

}  // namespace tapeflow::keras::layers
