// Recording: the thread-local tape stack, what apply() and variable reads put on tapes, and the
// GradientTape API on top of compute_gradients (backward.cpp).
#include <algorithm>
#include <atomic>

#include <tapeflow/core/logging.hpp>
#include <tapeflow/ops/array.hpp>
#include <tapeflow/ops/creation.hpp>

#include "autograd/tape.hpp"

namespace tapeflow {
namespace {

TensorMeta meta_of(const Tensor& t) { return {t.shape(), t.dtype(), t.device()}; }

bool watched_input(const TapeState& tape, std::span<const Tensor> inputs) {
    for (const Tensor& in : inputs) {
        if (is_floating(in.dtype()) && tape.watched.count(in.id()) != 0) return true;
    }
    return false;
}

// Fills an entry's ids, metadata and saved tensors and appends it to `tape`; outputs become watched.
void append_entry(TapeState& tape, Op op, std::span<const Tensor> inputs,
                  std::span<const Tensor> outputs, const Attrs& attrs, Save save,
                  std::shared_ptr<CustomBackwardFn> custom) {
    TapeEntry& entry = tape.entries.emplace_back();
    try {
        entry.op = op;
        entry.attrs = attrs;
        entry.custom = std::move(custom);
        entry.input_ids.reserve(inputs.size());
        entry.in_meta.reserve(inputs.size());
        for (const Tensor& in : inputs) {
            entry.input_ids.push_back(in.id());
            entry.in_meta.push_back(meta_of(in));
        }
        entry.output_ids.reserve(outputs.size());
        entry.out_meta.reserve(outputs.size());
        for (const Tensor& out : outputs) {
            entry.output_ids.push_back(out.id());
            entry.out_meta.push_back(meta_of(out));
        }
        if (save == Save::inputs || save == Save::inputs_and_output) {
            entry.saved_in.assign(inputs.begin(), inputs.end());
        }
        if (save == Save::output || save == Save::inputs_and_output) {
            entry.saved_out.assign(outputs.begin(), outputs.end());
        }
        entry.scope = current_name_scope();
        for (const Tensor& out : outputs) {
            if (is_floating(out.dtype())) tape.watched.insert(out.id());
        }
    } catch (...) {  // out of memory: no half-filled entry stays on the tape
        tape.entries.pop_back();
        throw;
    }
}

[[noreturn]] void throw_consumed() {
    throw errors::RuntimeError(
        "A non-persistent GradientTape can only be used to compute one set of gradients (or "
        "jacobians)");
}

void warn_non_floating(std::string_view what, DType dtype) {
    static std::atomic<int> warnings{0};
    if (warnings.fetch_add(1) < 5) {
        logging::warn("The dtype of the {} must be floating (e.g. tf.float32), got {}", what,
                      dtype_name(dtype));
    }
}

}  // namespace

std::vector<TapeState*>& active_tapes() {
    thread_local std::vector<TapeState*> stack;
    return stack;
}

void push_tape(TapeState& tape) {
    if (tape.on_stack) return;
    active_tapes().push_back(&tape);
    tape.on_stack = true;
}

void pop_tape(TapeState& tape) {
    if (!tape.on_stack) return;
    auto& stack = active_tapes();
    stack.erase(std::remove(stack.begin(), stack.end(), &tape), stack.end());
    tape.on_stack = false;
}

void record_operation(Op op, std::span<const Tensor> inputs, std::span<const Tensor> outputs,
                      const Attrs& attrs) {
    for (TapeState* tape : active_tapes()) {
        if (!watched_input(*tape, inputs)) continue;
        append_entry(*tape, op, inputs, outputs, attrs, op_def(op).save, nullptr);
    }
}

void record_variable_read(const Variable& variable, const Tensor& value) {
    for (TapeState* tape : active_tapes()) {
        const int64_t id = variable.id();
        if (tape->watched.count(id) == 0) {
            if (!tape->watch_accessed_variables || !variable.trainable()) continue;
            tape->watched.insert(id);
            tape->watched_variables.push_back(variable);
        }
        if (!is_floating(value.dtype())) continue;
        const std::span<const Tensor> read(&value, 1);
        append_entry(*tape, Op::read_variable, read, read, Attrs(), Save::nothing, nullptr);
        TapeEntry& entry = tape->entries.back();
        entry.input_ids[0] = id;  // the input is the variable, not the value read
        entry.attrs.set("variable", variable.name());
    }
}

void record_custom(std::span<const Tensor> inputs, const Tensor& output,
                   std::shared_ptr<CustomBackwardFn> backward) {
    for (TapeState* tape : active_tapes()) {
        if (!watched_input(*tape, inputs)) continue;
        append_entry(*tape, Op::custom_gradient, inputs, std::span<const Tensor>(&output, 1), Attrs(),
                     Save::inputs_and_output, backward);
    }
}

std::pmr::memory_resource* tape_block_pool() {
    // Never destroyed: tapes may be released during static destruction.
    static auto* pool = new std::pmr::synchronized_pool_resource(
        std::pmr::pool_options{.max_blocks_per_chunk = 4, .largest_required_pool_block = 1 << 20});
    return pool;
}

void TapeState::clear() {
    // The containers must not outlive the memory release() takes back, so they are rebuilt.
    std::destroy_at(&entries);
    std::destroy_at(&watched);
    arena.release();
    std::construct_at(&watched, &arena);
    std::construct_at(&entries, &arena);
}

// ---- StopRecording ----

StopRecording::StopRecording(std::shared_ptr<TapeState> tape) : tape_(std::move(tape)) {
    if (tape_->consumed || tape_->closed) {
        throw errors::RuntimeError("Trying to stop recording a tape which is not recording.");
    }
    if (!tape_->on_stack) {
        throw errors::InvalidArgumentError("Tape is not recording (stop_recording is already active).");
    }
    pop_tape(*tape_);
}

StopRecording::~StopRecording() {
    if (!tape_->consumed && !tape_->closed) push_tape(*tape_);
}

// ---- GradientTape ----

GradientTape::GradientTape(bool persistent, bool watch_accessed_variables)
    : state_(std::make_shared<TapeState>()) {
    state_->persistent = persistent;
    state_->watch_accessed_variables = watch_accessed_variables;
    push_tape(*state_);
}

GradientTape::~GradientTape() {
    pop_tape(*state_);
    state_->closed = true;
}

void GradientTape::watch(const Tensor& tensor) {
    if (!tensor.defined()) throw errors::InvalidArgumentError("watch: the tensor is undefined");
    if (!is_floating(tensor.dtype())) warn_non_floating("watched tensor", tensor.dtype());
    state_->watched.insert(tensor.id());
}

void GradientTape::watch(const Variable& variable) {
    if (!variable.defined()) throw errors::InvalidArgumentError("watch: the variable handle is empty");
    if (state_->watched.insert(variable.id()).second) state_->watched_variables.push_back(variable);
}

void GradientTape::watch(const std::vector<Tensor>& tensors) {
    for (const Tensor& t : tensors) watch(t);
}

void GradientTape::watch(const std::vector<Variable>& variables) {
    for (const Variable& v : variables) watch(v);
}

StopRecording GradientTape::stop_recording() { return StopRecording(state_); }

void GradientTape::reset() {
    if (!state_->on_stack) throw errors::InvalidArgumentError("Tape is not recording.");
    state_->clear();
    state_->watched_variables.clear();
}

std::vector<Variable> GradientTape::watched_variables() const {
    std::vector<Variable> vars = state_->watched_variables;
    std::sort(vars.begin(), vars.end(),
              [](const Variable& a, const Variable& b) { return a.id() < b.id(); });
    return vars;
}

namespace {

struct Sources {
    std::vector<int64_t> ids;
    std::vector<TensorMeta> meta;
};

Sources sources_of(const std::vector<Tensor>& tensors) {
    Sources s;
    for (const Tensor& t : tensors) {
        if (!t.defined()) throw errors::InvalidArgumentError("gradient: a source tensor is undefined");
        if (!is_floating(t.dtype())) warn_non_floating("source tensor", t.dtype());
        s.ids.push_back(t.id());
        s.meta.push_back(meta_of(t));
    }
    return s;
}

Sources sources_of(const std::vector<Variable>& variables) {
    Sources s;
    for (const Variable& v : variables) {
        if (!v.defined()) throw errors::InvalidArgumentError("gradient: a source variable handle is empty");
        s.ids.push_back(v.id());
        s.meta.push_back({v.shape(), v.dtype(), v.device()});
    }
    return s;
}

// Checks the tape can still compute, and consumes a non-persistent one (it stops recording first,
// so ops run by the gradient formulas are not recorded on it).
void begin_gradient(TapeState& tape, const std::vector<Tensor>& targets, const GradientOptions& options) {
    if (tape.consumed) throw_consumed();
    for (const Tensor& t : targets) {
        if (!t.defined()) throw errors::InvalidArgumentError("gradient: the target is undefined (None)");
    }
    if (!options.output_gradients.empty() && options.output_gradients.size() != targets.size()) {
        throw errors::InvalidArgumentError(fmt::format(
            "gradient: {} output_gradients given for {} targets", options.output_gradients.size(),
            targets.size()));
    }
    for (std::size_t i = 0; i < options.output_gradients.size(); ++i) {
        const Tensor& og = options.output_gradients[i];
        if (og.defined() && og.shape() != targets[i].shape()) {
            throw errors::InvalidArgumentError(fmt::format(
                "gradient: output_gradients[{}] has shape {} but the target has shape {}", i,
                og.shape().str(), targets[i].shape().str()));
        }
    }
    if (!tape.persistent) {
        pop_tape(tape);
        tape.consumed = true;
    } else if (tape.on_stack) {
        static std::atomic<bool> warned{false};
        if (!warned.exchange(true)) {
            logging::warn(
                "Calling GradientTape.gradient on a persistent tape inside its context is "
                "significantly less efficient than calling it outside the context (it causes the "
                "gradient ops to be recorded on the tape, leading to increased CPU and memory usage). "
                "Only call GradientTape.gradient inside the context if you actually want to trace "
                "the gradient in order to compute higher order derivatives.");
        }
    }
}

void end_gradient(TapeState& tape) {
    if (!tape.persistent) tape.entries.clear();  // frees every saved tensor
}

std::vector<Gradient> run(TapeState& tape, const std::vector<Tensor>& targets, const Sources& sources,
                          const GradientOptions& options) {
    begin_gradient(tape, targets, options);
    auto result = compute_gradients(tape, targets, sources.ids, sources.meta, options);
    end_gradient(tape);
    return result;
}

}  // namespace

void stream_gradients(GradientTape& tape, const Tensor& target, const std::vector<Variable>& sources,
                      const GradientOptions& options, const SourceReadyFn& on_ready) {
    TapeState& state = *tape.state();
    const std::vector<Tensor> targets{target};
    const Sources src = sources_of(sources);
    begin_gradient(state, targets, options);
    compute_gradients(state, targets, src.ids, src.meta, options, on_ready);
    end_gradient(state);
}

Gradient GradientTape::gradient(const Tensor& target, const Tensor& source, const GradientOptions& options) {
    return run(*state_, {target}, sources_of(std::vector<Tensor>{source}), options)[0];
}

Gradient GradientTape::gradient(const Tensor& target, const Variable& source, const GradientOptions& options) {
    return run(*state_, {target}, sources_of(std::vector<Variable>{source}), options)[0];
}

std::vector<Gradient> GradientTape::gradient(const Tensor& target, const std::vector<Tensor>& sources,
                                             const GradientOptions& options) {
    return run(*state_, {target}, sources_of(sources), options);
}

std::vector<Gradient> GradientTape::gradient(const Tensor& target, const std::vector<Variable>& sources,
                                             const GradientOptions& options) {
    return run(*state_, {target}, sources_of(sources), options);
}

std::vector<Gradient> GradientTape::gradient(const std::vector<Tensor>& targets,
                                             const std::vector<Tensor>& sources,
                                             const GradientOptions& options) {
    return run(*state_, targets, sources_of(sources), options);
}

std::vector<Gradient> GradientTape::gradient(const std::vector<Tensor>& targets,
                                             const std::vector<Variable>& sources,
                                             const GradientOptions& options) {
    return run(*state_, targets, sources_of(sources), options);
}

namespace {

// One backward walk per element of the target, seeded with a one-hot output gradient: row i of the
// result is d target[i] / d source. Rows are stacked, then reshaped to target + source shape.
Tensor jacobian_rows(TapeState& tape, const Tensor& target, const Sources& source,
                     UnconnectedGradients unconnected) {
    GradientOptions probe;
    probe.unconnected_gradients = unconnected;
    begin_gradient(tape, {target}, probe);
    const TensorMeta& sm = source.meta[0];
    const int64_t n = target.num_elements();
    std::vector<Tensor> rows;
    rows.reserve(static_cast<std::size_t>(n));
    bool connected = false;
    for (int64_t i = 0; i < n; ++i) {
        GradientOptions options;
        options.output_gradients = {
            reshape(one_hot(constant(i), n, 1, 0, -1, target.dtype()), target.shape())};
        Gradient g = compute_gradients(tape, std::span<const Tensor>(&target, 1), source.ids, source.meta, options)[0];
        if (g.defined()) {
            connected = true;
            rows.push_back(g.dense());
        } else {
            const DeviceScope scope(sm.device);
            rows.push_back(zeros(sm.shape, sm.dtype));
        }
    }
    end_gradient(tape);
    if (!connected && unconnected == UnconnectedGradients::none) return {};
    std::vector<int64_t> dims = target.shape().dims();
    dims.insert(dims.end(), sm.shape.dims().begin(), sm.shape.dims().end());
    if (rows.empty()) {
        const DeviceScope scope(sm.device);
        return zeros(Shape(dims), sm.dtype);
    }
    return reshape(stack(rows, 0), Shape(dims));
}

}  // namespace

Tensor GradientTape::jacobian(const Tensor& target, const Tensor& source, UnconnectedGradients unconnected) {
    return jacobian_rows(*state_, target, sources_of(std::vector<Tensor>{source}), unconnected);
}

Tensor GradientTape::jacobian(const Tensor& target, const Variable& source, UnconnectedGradients unconnected) {
    return jacobian_rows(*state_, target, sources_of(std::vector<Variable>{source}), unconnected);
}

Tensor GradientTape::batch_jacobian(const Tensor& target, const Tensor& source,
                                    UnconnectedGradients /*unconnected: TF returns zeros regardless*/) {
    if (!target.defined() || !source.defined()) {
        throw errors::InvalidArgumentError("batch_jacobian: target and source must be defined");
    }
    if (target.rank() < 1 || source.rank() < 1 || target.shape()[0] != source.shape()[0]) {
        throw errors::InvalidArgumentError(fmt::format(
            "Need first dimension of target shape ({}) and source shape ({}) to match.",
            target.shape().str(), source.shape().str()));
    }
    const Sources src = sources_of(std::vector<Tensor>{source});
    GradientOptions probe;
    begin_gradient(*state_, {target}, probe);
    const int64_t batch = target.shape()[0];
    const int64_t per_example = batch == 0 ? 0 : target.num_elements() / batch;
    std::vector<Tensor> columns;  // column j: d sum_b target[b, j] / d source, shape [b, x...]
    for (int64_t j = 0; j < per_example; ++j) {
        Tensor column = one_hot(fill(Shape{batch}, static_cast<double>(j), DType::int64), per_example, 1,
                                0, -1, target.dtype());
        GradientOptions options;
        options.output_gradients = {reshape(column, target.shape())};
        Gradient g = compute_gradients(*state_, std::span<const Tensor>(&target, 1), src.ids, src.meta, options)[0];
        columns.push_back(g.defined() ? g.dense() : zeros_like(source));
    }
    end_gradient(*state_);
    std::vector<int64_t> dims = target.shape().dims();
    dims.insert(dims.end(), source.shape().dims().begin() + 1, source.shape().dims().end());
    if (columns.empty()) return zeros(Shape(dims), source.dtype());
    return reshape(stack(columns, 1), Shape(dims));
}

// ---- custom_gradient ----

Tensor custom_gradient(const std::vector<Tensor>& inputs,
                       std::function<Tensor(const std::vector<Tensor>& inputs)> forward,
                       std::function<std::vector<Tensor>(const std::vector<Tensor>& inputs,
                                                         const Tensor& output, const Tensor& upstream)>
                           backward) {
    if (!forward || !backward) {
        throw errors::InvalidArgumentError("custom_gradient: forward and backward must be callable");
    }
    Tensor y;
    {
        // Forward runs with every tape of this thread paused.
        std::vector<TapeState*> paused = std::exchange(active_tapes(), {});
        try {
            y = forward(inputs);
        } catch (...) {
            active_tapes() = std::move(paused);
            throw;
        }
        active_tapes() = std::move(paused);
    }
    if (!y.defined()) throw errors::InvalidArgumentError("custom_gradient: forward returned an undefined tensor");
    // A fresh id for the output, so it is distinct from anything forward returned as is.
    Tensor out = Tensor::view(y.impl()->storage, y.impl()->offset, y.shape(), y.dtype());
    const std::size_t n = inputs.size();
    auto fn = std::make_shared<CustomBackwardFn>([backward, n](const GradCtx& ctx) -> Grads {
        std::vector<Tensor> in(ctx.in.begin(), ctx.in.end());
        std::vector<Tensor> result = backward(in, ctx.out[0], ctx.grad());
        if (result.size() != n) {
            throw errors::InvalidArgumentError(fmt::format(
                "custom_gradient function expected to return {} gradients but returned {} instead", n,
                result.size()));
        }
        return Grads(result.begin(), result.end());
    });
    record_custom(inputs, out, std::move(fn));
    return out;
}

}  // namespace tapeflow
