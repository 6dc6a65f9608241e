// RNNSequence: one layer direction over one sequence as one recorded op (lib/ops/rnn.hpp), with
// its BPTT gradient RNNSequenceGrad in the same file. The CPU kernels are in
// lib/kernels/cpu/rnn_cpu.cpp, their shared plan in lib/kernels/shared/rnn_plan.hpp. When a tape
// records the backward pass (a higher derivative), the gradient is instead the tape's gradient of
// the same recurrence written as a loop of differentiable ops (run_loop), so every order is exact.
#include "ops/rnn.hpp"

#include <array>
#include <vector>

#include <tapeflow/autograd/gradient_tape.hpp>
#include <tapeflow/core/device.hpp>
#include <tapeflow/ops/array.hpp>
#include <tapeflow/ops/creation.hpp>
#include <tapeflow/ops/math.hpp>
#include <tapeflow/ops/nn.hpp>

#include "autograd/tape.hpp"
#include "ops/apply.hpp"
#include "ops/op_families.hpp"

namespace tapeflow {
namespace rnn {

bool fused_activation(const std::string& name, Act& out) {
    if (name.empty() || name == "linear") {
        out = Act::linear;
    } else if (name == "tanh") {
        out = Act::tanh;
    } else if (name == "sigmoid") {
        out = Act::sigmoid;
    } else if (name == "relu") {
        out = Act::relu;
    } else if (name == "hard_sigmoid") {
        out = Act::hard_sigmoid;
    } else {
        return false;
    }
    return true;
}

namespace {

Tensor apply_act(Act a, const Tensor& x) {
    switch (a) {
        case Act::tanh:
            return tanh(x);
        case Act::sigmoid:
            return sigmoid(x);
        case Act::relu:
            return nn::relu(x);
        case Act::hard_sigmoid:
            return divide(nn::relu6(add(x, scalar_like(x, 3.0))), scalar_like(x, 6.0));
        case Act::linear:
            break;
    }
    return x;
}

ActivationFn fn_of(Act a) {
    return [a](const Tensor& x) {
        return apply_act(a, x);
    };
}

bool has(const Tensor& t) {
    return t.defined() && t.num_elements() > 0;
}

// The recurrence as differentiable ops, one step at a time (Keras 3's cell formulas).
SequenceOutputs run_loop(const SequenceSpec& s, const SequenceInputs& in) {
    const int64_t T = in.xproj.shape()[1];
    const int64_t U = s.units;
    const ActivationFn& act = s.activation_fn;
    const ActivationFn& ract = s.recurrent_activation_fn;
    const std::vector<Tensor> xs = unstack(in.xproj, 1);
    std::vector<Tensor> ms;
    if (has(in.mask)) ms = unstack(expand_dims(in.mask, -1), 1);  // [B, 1] each
    Tensor rk_zr, rk_h;
    if (s.cell == Cell::gru_before) {
        rk_zr = slice(in.recurrent_kernel, {0, 0}, {U, 2 * U});
        rk_h = slice(in.recurrent_kernel, {0, 2 * U}, {U, U});
    }
    Tensor h = in.h0;
    Tensor c = in.c0;
    std::vector<Tensor> hs, cs;
    for (int64_t t = 0; t < T; ++t) {
        const Tensor& x = xs[static_cast<std::size_t>(t)];
        const Tensor hin =
            in.recurrent_dropout_mask.defined() ? multiply(h, in.recurrent_dropout_mask) : h;
        Tensor hn, cn;
        switch (s.cell) {
            case Cell::simple:
                hn = act(add(x, matmul(hin, in.recurrent_kernel)));
                break;
            case Cell::lstm: {
                const std::vector<Tensor> z = split(add(x, matmul(hin, in.recurrent_kernel)), 4, 1);
                const Tensor i = ract(z[0]), f = ract(z[1]), g = act(z[2]), o = ract(z[3]);
                cn = add(multiply(f, c), multiply(i, g));
                hn = multiply(o, act(cn));
                break;
            }
            case Cell::gru:
            case Cell::gru_before: {
                const std::vector<Tensor> xp = split(x, 3, 1);
                Tensor z, r, hh;
                if (s.cell == Cell::gru) {
                    Tensor inner = matmul(hin, in.recurrent_kernel);
                    if (has(in.recurrent_bias)) inner = add(inner, in.recurrent_bias);
                    const std::vector<Tensor> ip = split(inner, 3, 1);
                    z = ract(add(xp[0], ip[0]));
                    r = ract(add(xp[1], ip[1]));
                    hh = act(add(xp[2], multiply(r, ip[2])));
                } else {
                    const std::vector<Tensor> ip = split(matmul(hin, rk_zr), 2, 1);
                    z = ract(add(xp[0], ip[0]));
                    r = ract(add(xp[1], ip[1]));
                    hh = act(add(xp[2], matmul(multiply(r, hin), rk_h)));
                }
                hn = add(multiply(z, h), multiply(subtract(scalar_like(z, 1.0), z), hh));
                break;
            }
        }
        if (!ms.empty()) {  // masked steps carry the states
            const Tensor& m = ms[static_cast<std::size_t>(t)];
            const Tensor keep = subtract(scalar_like(m, 1.0), m);
            hn = add(multiply(m, hn), multiply(keep, h));
            if (cn.defined()) cn = add(multiply(m, cn), multiply(keep, c));
        }
        h = hn;
        hs.push_back(h);
        if (cn.defined()) {
            c = cn;
            cs.push_back(c);
        }
    }
    SequenceOutputs out;
    out.states = stack(hs, 1);
    if (!cs.empty()) out.cells = stack(cs, 1);
    return out;
}

Attrs attrs_of(Cell cell, Act act, Act ract, int64_t units) {
    Attrs a;
    a.set("cell", static_cast<int64_t>(cell));
    a.set("activation", static_cast<int64_t>(act));
    a.set("recurrent_activation", static_cast<int64_t>(ract));
    a.set("units", units);
    return a;
}

Tensor empty_like_dtype(const Tensor& like) {
    const DeviceScope scope(like.device());
    return zeros(Shape({0}), like.dtype());
}

// The gradient: the fused BPTT kernel, or the op loop's gradient from a tape when a tape records
// this backward pass.
Grads rnn_sequence_grad(const GradCtx& c) {
    const auto cell = static_cast<Cell>(c.attrs.get<int64_t>("cell"));
    const auto act = static_cast<Act>(c.attrs.get<int64_t>("activation"));
    const auto ract = static_cast<Act>(c.attrs.get<int64_t>("recurrent_activation"));
    const int64_t units = c.attrs.get<int64_t>("units");
    const bool lstm = cell == Cell::lstm;
    const Tensor& xproj = c.in[0];
    const Tensor& rk = c.in[1];
    const Tensor& h0 = c.in[2];
    const Tensor& c0 = c.in[3];
    const Tensor& rbias = c.in[4];
    const Tensor& mask = c.in[5];
    const Tensor& dH = c.grads[0];
    const Tensor& dC = c.grads[1];
    const std::array<Tensor, 7> read{dH, dC, xproj, rk, h0, c0, rbias};
    if (any_tape_watches(read)) {
        SequenceSpec spec{cell, units, "", "", fn_of(act), fn_of(ract)};
        SequenceInputs in{xproj, rk, h0, lstm ? c0 : Tensor(), rbias, mask, Tensor()};
        GradientTape tape(false, false);
        std::vector<Tensor> sources{xproj, rk, h0};
        if (lstm) sources.push_back(c0);
        if (has(rbias)) sources.push_back(rbias);
        tape.watch(sources);
        const SequenceOutputs o = run_loop(spec, in);
        std::vector<Tensor> targets{o.states};
        GradientOptions options;
        options.output_gradients = {dH};
        if (lstm) {
            targets.push_back(o.cells);
            options.output_gradients.push_back(dC);
        }
        options.unconnected_gradients = UnconnectedGradients::zero;
        std::vector<Gradient> g = tape.gradient(targets, sources, options);
        Grads out(6);
        out[0] = std::move(g[0]);
        out[1] = std::move(g[1]);
        out[2] = std::move(g[2]);
        std::size_t k = 3;
        if (lstm) out[3] = std::move(g[k++]);
        if (has(rbias)) out[4] = std::move(g[k]);
        return out;
    }
    const std::array<OutputSpec, 5> specs{OutputSpec{xproj.shape(), xproj.dtype()},
                                          OutputSpec{rk.shape(), rk.dtype()},
                                          OutputSpec{h0.shape(), h0.dtype()},
                                          OutputSpec{c0.shape(), c0.dtype()},
                                          OutputSpec{rbias.shape(), rbias.dtype()}};
    const std::array<Tensor, 9> inputs{dH, dC, rk, h0, c0, mask, c.out[0], c.out[1], c.out[2]};
    std::vector<Tensor> r = apply_multi(Op::rnn_sequence_grad, inputs, specs, c.attrs);
    Grads out(6);
    out[0] = r[0];
    out[1] = r[1];
    out[2] = r[2];
    if (lstm) out[3] = r[3];
    if (has(rbias)) out[4] = r[4];
    return out;
}

}  // namespace

bool uses_fused(const SequenceSpec& spec, const SequenceInputs& in) {
    Act a = Act::linear, ra = Act::linear;
    const DType d = in.xproj.dtype();
    return in.xproj.device().type() == DeviceType::cpu &&
           (d == DType::float32 || d == DType::float64) && !in.recurrent_dropout_mask.defined() &&
           fused_activation(spec.activation, a) &&
           (spec.cell == Cell::simple || fused_activation(spec.recurrent_activation, ra));
}

SequenceOutputs run_sequence(const SequenceSpec& spec, const SequenceInputs& in, bool allow_fused) {
    if (!allow_fused || !uses_fused(spec, in)) return run_loop(spec, in);
    Act act = Act::linear, ract = Act::sigmoid;
    fused_activation(spec.activation, act);
    if (spec.cell != Cell::simple) fused_activation(spec.recurrent_activation, ract);
    const Tensor& x = in.xproj;
    const int64_t B = x.shape()[0], T = x.shape()[1], U = spec.units;
    const bool lstm = spec.cell == Cell::lstm;
    const Tensor none = empty_like_dtype(x);
    const std::array<Tensor, 6> inputs{x,
                                       in.recurrent_kernel,
                                       in.h0,
                                       lstm ? in.c0 : none,
                                       has(in.recurrent_bias) ? in.recurrent_bias : none,
                                       has(in.mask) ? in.mask : none};
    const std::array<OutputSpec, 3> specs{
        OutputSpec{Shape({B, T, U}), x.dtype()},
        OutputSpec{lstm ? Shape({B, T, U}) : Shape({0}), x.dtype()},
        OutputSpec{Shape({B, T, workspace_blocks(spec.cell) * U}), x.dtype()}};
    std::vector<Tensor> r =
        apply_multi(Op::rnn_sequence, inputs, specs, attrs_of(spec.cell, act, ract, U));
    SequenceOutputs out;
    out.states = r[0];
    if (lstm) out.cells = r[1];
    return out;
}

}  // namespace rnn

namespace {
const OpDef kRnnOps[] = {
    // The workspace (output 2) is internal: no gradient flows into it.
    {Op::rnn_sequence,
     Save::inputs_and_output,
     rnn::rnn_sequence_grad,
     kNotBatchable,
     jvp_by_double_vjp},
    // Runs only where no tape records it (rnn_sequence_grad above), so it needs no formula.
    {Op::rnn_sequence_grad, Save::nothing, nullptr},
};
}  // namespace

std::span<const OpDef> rnn_op_defs() {
    return kRnnOps;
}

}  // namespace tapeflow
