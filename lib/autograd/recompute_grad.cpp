// tf::recompute_grad: gradient checkpointing as TensorFlow's custom_gradient.py builds it. The
// returned function runs fn unrecorded and records one custom-gradient op whose inputs are fn's
// inputs and the values of the trainable variables fn reads; its backward reruns fn under a fresh
// tape (the random ops replaying the first run's streams) and walks that tape with the upstream
// gradient.
//
// NOTE [Checkpointed variables]: a tape routes a variable's gradient through the read_variable
// entry of each read. fn's own reads happen unrecorded, so the op reads every variable fn read once
// more, recorded, and takes those reads as extra inputs: their gradients (from the recompute's
// walk, which watches the variables) reach the variables through the outer tapes' read entries, as
// TensorFlow's `variables=` gradients do. The forward run finds the variables under a watcher tape
// (TapeState::variables_only, TensorFlow's VariableWatcher), which notes the trainable variables
// read and records nothing. The recompute's tape watches the variables it sees read, so one the
// forward run did not read is an error, not a silently missing gradient.
#include <tapeflow/autograd/recompute_grad.hpp>
#include <tapeflow/core/error.hpp>
#include <tapeflow/ops/array.hpp>

#include "autograd/tape.hpp"
#include "ops/random_streams.hpp"

namespace tapeflow {
namespace {

using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

constexpr const char* kWho = "recompute_grad";

// One recompute_grad(fn).
struct Checkpointed {
    Fn fn;
};

// Pauses every tape and forward accumulator of this thread while alive (custom_gradient's rule
// for the forward pass).
class PauseRecording {
public:
    PauseRecording()
        : tapes_(std::exchange(active_tapes(), {})),
          accumulators_(std::exchange(active_accumulators(), {})) {}
    ~PauseRecording() {
        active_tapes() = std::move(tapes_);
        active_accumulators() = std::move(accumulators_);
    }
    PauseRecording(const PauseRecording&) = delete;
    PauseRecording& operator=(const PauseRecording&) = delete;

private:
    std::vector<TapeState*> tapes_;
    std::vector<AccumulatorState*> accumulators_;
};

// Pushes a tape on this thread's stack while alive.
class Recording {
public:
    explicit Recording(TapeState& tape) : tape_(tape) { push_tape(tape_); }
    ~Recording() { pop_tape(tape_); }
    Recording(const Recording&) = delete;
    Recording& operator=(const Recording&) = delete;

private:
    TapeState& tape_;
};

TensorMeta meta_of(const Tensor& t) {
    return {t.shape(), t.dtype(), t.device()};
}

const Tensor& checked_output(const Tensor& y) {
    if (!y.defined()) {
        throw errors::InvalidArgumentError(
            fmt::format("{}: fn returned an undefined tensor", kWho));
    }
    return y;
}

// The variables `tape` saw read that `known` (sorted by id) lacks.
std::vector<Variable> unknown_reads(const TapeState& tape, const std::vector<Variable>& known) {
    std::vector<Variable> extra;
    for (const Variable& v : tape.watched_variables) {
        const bool found = std::binary_search(
            known.begin(), known.end(), v, [](const Variable& a, const Variable& b) {
                return a.id() < b.id();
            });
        if (!found) extra.push_back(v);
    }
    return extra;
}

// A variable fn reads must hold the value the first run read until the gradient: a recompute
// with another value would give another function's gradient. Its read keeps the first run's buffer
// (Variables copy on write), so a different buffer now means an assignment in between.
void check_unchanged(const Variable& v, const Tensor& first_read) {
    Tensor now;
    {
        const PauseRecording pause;
        now = v.value();
    }
    if (now.impl()->storage != first_read.impl()->storage ||
        now.impl()->offset != first_read.impl()->offset) {
        throw errors::InvalidArgumentError(fmt::format(
            "{}: variable '{}' was assigned between the forward pass and the gradient; the "
            "recompute would read its new value (compute the gradient before updating the "
            "variables fn reads)",
            kWho,
            v.name()));
    }
}

// The backward of one call: rerun fn on views of the saved inputs under a fresh tape that watches
// them and the variables, then walk it seeded with the upstream gradient.
Grads recompute_and_differentiate(const Checkpointed& c,
                                  const std::vector<Variable>& variables,
                                  const random_detail::StreamLog& streams,
                                  const GradCtx& ctx) {
    const std::size_t n = ctx.in.size() - variables.size();
    for (std::size_t k = 0; k < variables.size(); ++k)
        check_unchanged(variables[k], ctx.in[n + k]);
    TapeState tape;
    tape.watch_accessed_variables = true;
    std::vector<Tensor> inputs(n);
    Tensor y;
    {
        const Recording recording(tape);
        // Fresh ids (reshape is a view) so that an input passed twice gets two gradients; outer
        // tapes record the views, so higher derivatives reach the real inputs.
        for (std::size_t i = 0; i < n; ++i) {
            inputs[i] =
                is_floating(ctx.in[i].dtype()) ? reshape(ctx.in[i], ctx.in[i].shape()) : ctx.in[i];
            if (is_floating(inputs[i].dtype())) tape.watched.insert(inputs[i].id());
        }
        for (const Variable& v : variables) {
            tape.watched.insert(v.id());
            tape.watched_variables.push_back(v);
        }
        const random_detail::ReplayStreams replay(streams, kWho);
        y = c.fn(inputs);
        if (replay.served() != streams.size()) {
            throw errors::InvalidArgumentError(fmt::format(
                "{}: the recomputed forward pass drew {} random streams, the first pass {}; fn "
                "must run the same random ops on every call",
                kWho,
                replay.served(),
                streams.size()));
        }
    }
    checked_output(y);
    const TensorMeta& first = ctx.out_meta[0];
    if (y.shape() != first.shape || y.dtype() != first.dtype) {
        throw errors::InvalidArgumentError(
            fmt::format("{}: the recompute returned a {} tensor of shape {}, the forward pass a {} "
                        "tensor of shape {}; fn must compute the same function on every call",
                        kWho,
                        dtype_name(y.dtype()),
                        y.shape().str(),
                        dtype_name(first.dtype),
                        first.shape.str()));
    }
    const std::vector<Variable> extra = unknown_reads(tape, variables);
    if (!extra.empty()) {
        throw errors::InvalidArgumentError(
            fmt::format("{}: fn read the trainable variable '{}' in the recompute but not in the "
                        "forward pass, so its gradient would be lost; fn must read the same "
                        "variables on every call",
                        kWho,
                        extra[0].name()));
    }
    // The sources: every floating input and variable the engine wants a gradient for.
    std::vector<int64_t> ids;
    std::vector<TensorMeta> meta;
    std::vector<std::size_t> slot;  // which input of the op each source is
    for (std::size_t i = 0; i < n; ++i) {
        if (!is_floating(inputs[i].dtype()) || !ctx.needs_grad(i)) continue;
        ids.push_back(inputs[i].id());
        meta.push_back(meta_of(inputs[i]));
        slot.push_back(i);
    }
    for (std::size_t k = 0; k < variables.size(); ++k) {
        if (!ctx.needs_grad(n + k)) continue;
        ids.push_back(variables[k].id());
        meta.push_back({variables[k].shape(), variables[k].dtype(), variables[k].device()});
        slot.push_back(n + k);
    }
    Grads grads(ctx.in.size());
    if (ids.empty()) return grads;
    GradientOptions options;
    options.output_gradients = {ctx.grad()};
    const std::vector<Gradient> found =
        compute_gradients(tape, std::span<const Tensor>(&y, 1), ids, meta, options);
    for (std::size_t s = 0; s < slot.size(); ++s)
        grads[slot[s]] = found[s];
    return grads;
}

Tensor call(const std::shared_ptr<Checkpointed>& c, const std::vector<Tensor>& inputs) {
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        if (!inputs[i].defined()) {
            throw errors::InvalidArgumentError(fmt::format("{}: input {} is undefined", kWho, i));
        }
    }
    if (!any_tape_recording()) {
        Tensor y = c->fn(inputs);
        return checked_output(y);
    }
    auto streams = std::make_shared<random_detail::StreamLog>();
    Tensor y;
    std::vector<Variable> variables;
    {
        const PauseRecording pause;
        const random_detail::RecordStreams record(*streams);
        TapeState watcher;  // NOTE [Checkpointed variables]
        watcher.variables_only = true;
        {
            const Recording recording(watcher);
            y = c->fn(inputs);
        }
        for (const Variable& v : watcher.watched_variables) {
            if (is_floating(v.dtype())) variables.push_back(v);
        }
        std::sort(variables.begin(), variables.end(), [](const Variable& a, const Variable& b) {
            return a.id() < b.id();
        });
    }
    checked_output(y);
    // The op's inputs: fn's, then one recorded read of each variable.
    std::vector<Tensor> op_inputs = inputs;
    for (const Variable& v : variables)
        op_inputs.push_back(v.value());
    // A fresh id for the output, distinct from anything fn returned as is (an input, say).
    Tensor out = Tensor::view(y.impl()->storage, y.impl()->offset, y.shape(), y.dtype());
    auto backward = std::make_shared<CustomBackwardFn>(
        [c, variables = std::move(variables), streams](const GradCtx& ctx) -> Grads {
            return recompute_and_differentiate(*c, variables, *streams, ctx);
        });
    record_custom(op_inputs, out, std::move(backward));
    return out;
}

}  // namespace

std::function<Tensor(const std::vector<Tensor>&)> recompute_grad(Fn fn) {
    if (!fn) throw errors::InvalidArgumentError(fmt::format("{}: fn must be callable", kWho));
    auto c = std::make_shared<Checkpointed>();
    c->fn = std::move(fn);
    return [c](const std::vector<Tensor>& inputs) {
        return call(c, inputs);
    };
}

}  // namespace tapeflow
