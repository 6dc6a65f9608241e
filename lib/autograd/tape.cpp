// Recording: the thread-local tape stack, what apply() and variable reads put on tapes, and the
// GradientTape API on top of compute_gradients (backward.cpp).
#include "autograd/tape.hpp"

#include <algorithm>
#include <atomic>

#include <tapeflow/core/logging.hpp>
#include <tapeflow/ops/array.hpp>
#include <tapeflow/ops/creation.hpp>

#include "autograd/forward_mode.hpp"

namespace tapeflow {
namespace {

TensorMeta meta_of(const Tensor& t) {
    return {t.shape(), t.dtype(), t.device()};
}

bool watched_input(const TapeState& tape, std::span<const Tensor> inputs) {
    for (const Tensor& in : inputs) {
        if (is_floating(in.dtype()) && tape.watched.count(in.id()) != 0) return true;
    }
    return false;
}

// Fills an entry's ids, metadata and saved tensors and appends it to `tape`; outputs become
// watched.
void append_entry(TapeState& tape,
                  Op op,
                  std::span<const Tensor> inputs,
                  std::span<const Tensor> outputs,
                  const Attrs& attrs,
                  Save save,
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
        logging::warn("The dtype of the {} must be floating (e.g. tf.float32), got {}",
                      what,
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

bool any_tape_watches(std::span<const Tensor> inputs) {
    for (const TapeState* tape : active_tapes()) {
        if (watched_input(*tape, inputs)) return true;
    }
    for (const AccumulatorState* acc : active_accumulators()) {  // forward mode differentiates too
        for (const Tensor& in : inputs) {
            if (is_floating(in.dtype()) && acc->tangents.count(in.id()) != 0) return true;
        }
    }
    return false;
}

void record_on_tapes(Op op,
                     std::span<const Tensor> inputs,
                     std::span<const Tensor> outputs,
                     const Attrs& attrs) {
    for (TapeState* tape : active_tapes()) {
        if (!watched_input(*tape, inputs)) continue;
        append_entry(*tape, op, inputs, outputs, attrs, op_def(op).save, nullptr);
    }
}

void record_operation(Op op,
                      std::span<const Tensor> inputs,
                      std::span<const Tensor> outputs,
                      const Attrs& attrs) {
    record_on_tapes(op, inputs, outputs, attrs);
    if (!active_accumulators().empty()) accumulate_operation(op, inputs, outputs, attrs);
}

void record_variable_read(const Variable& variable, const Tensor& value) {
    for (TapeState* tape : active_tapes()) {
        const int64_t id = variable.id();
        if (tape->watched.count(id) == 0) {
            if (!tape->watch_accessed_variables || !variable.trainable()) continue;
            tape->watched.insert(id);
            tape->watched_variables.push_back(variable);
        }
        if (tape->variables_only || !is_floating(value.dtype())) continue;
        const std::span<const Tensor> read(&value, 1);
        append_entry(*tape, Op::read_variable, read, read, Attrs(), Save::nothing, nullptr);
        TapeEntry& entry = tape->entries.back();
        entry.input_ids[0] = id;  // the input is the variable, not the value read
        entry.attrs.set("variable", variable.name());
    }
    if (!active_accumulators().empty()) accumulate_variable_read(variable, value);
}

void record_custom(std::span<const Tensor> inputs,
                   const Tensor& output,
                   std::shared_ptr<CustomBackwardFn> backward) {
    for (TapeState* tape : active_tapes()) {
        if (!watched_input(*tape, inputs)) continue;
        append_entry(*tape,
                     Op::custom_gradient,
                     inputs,
                     std::span<const Tensor>(&output, 1),
                     Attrs(),
                     Save::inputs_and_output,
                     backward);
    }
    if (!active_accumulators().empty()) accumulate_custom(inputs, output, *backward);
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
        throw errors::InvalidArgumentError(
            "Tape is not recording (stop_recording is already active).");
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
    if (!variable.defined())
        throw errors::InvalidArgumentError("watch: the variable handle is empty");
    if (state_->watched.insert(variable.id()).second) state_->watched_variables.push_back(variable);
}

void GradientTape::watch(const std::vector<Tensor>& tensors) {
    for (const Tensor& t : tensors)
        watch(t);
}

void GradientTape::watch(const std::vector<Variable>& variables) {
    for (const Variable& v : variables)
        watch(v);
}

StopRecording GradientTape::stop_recording() {
    return StopRecording(state_);
}

void GradientTape::reset() {
    if (!state_->on_stack) throw errors::InvalidArgumentError("Tape is not recording.");
    state_->clear();
    state_->watched_variables.clear();
}

std::vector<Variable> GradientTape::watched_variables() const {
    std::vector<Variable> vars = state_->watched_variables;
    std::sort(vars.begin(), vars.end(), [](const Variable& a, const Variable& b) {
        return a.id() < b.id();
    });
    return vars;
}

namespace {

struct Sources {
    std::vector<int64_t> ids;
    std::vector<TensorMeta> meta;
};

Sources sources_of(const std::vector<Tensor>& tensors) {
    Sources s;
    s.ids.reserve(tensors.size());
    s.meta.reserve(tensors.size());
    for (const Tensor& t : tensors) {
        if (!t.defined())
            throw errors::InvalidArgumentError("gradient: a source tensor is undefined");
        if (!is_floating(t.dtype())) warn_non_floating("source tensor", t.dtype());
        s.ids.push_back(t.id());
        s.meta.push_back(meta_of(t));
    }
    return s;
}

Sources sources_of(const std::vector<Variable>& variables) {
    Sources s;
    s.ids.reserve(variables.size());
    s.meta.reserve(variables.size());
    for (const Variable& v : variables) {
        if (!v.defined())
            throw errors::InvalidArgumentError("gradient: a source variable handle is empty");
        s.ids.push_back(v.id());
        s.meta.push_back({v.shape(), v.dtype(), v.device()});
    }
    return s;
}

// Checks the tape can still compute, and consumes a non-persistent one (it stops recording first,
// so ops run by the gradient formulas are not recorded on it).
void begin_gradient(TapeState& tape,
                    const std::vector<Tensor>& targets,
                    const GradientOptions& options) {
    if (tape.consumed) throw_consumed();
    for (const Tensor& t : targets) {
        if (!t.defined())
            throw errors::InvalidArgumentError("gradient: the target is undefined (None)");
    }
    if (!options.output_gradients.empty() && options.output_gradients.size() != targets.size()) {
        throw errors::InvalidArgumentError(
            fmt::format("gradient: {} output_gradients given for {} targets",
                        options.output_gradients.size(),
                        targets.size()));
    }
    for (std::size_t i = 0; i < options.output_gradients.size(); ++i) {
        const Tensor& og = options.output_gradients[i];
        if (og.defined() && og.shape() != targets[i].shape()) {
            throw errors::InvalidArgumentError(fmt::format(
                "gradient: output_gradients[{}] has shape {} but the target has shape {}",
                i,
                og.shape().str(),
                targets[i].shape().str()));
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
                "gradient ops to be recorded on the tape, leading to increased CPU and memory "
                "usage). "
                "Only call GradientTape.gradient inside the context if you actually want to trace "
                "the gradient in order to compute higher order derivatives.");
        }
    }
}

void end_gradient(TapeState& tape) {
    if (!tape.persistent) tape.entries.clear();  // frees every saved tensor
}

std::vector<Gradient> run(TapeState& tape,
                          const std::vector<Tensor>& targets,
                          const Sources& sources,
                          const GradientOptions& options) {
    begin_gradient(tape, targets, options);
    auto result = compute_gradients(tape, targets, sources.ids, sources.meta, options);
    end_gradient(tape);
    return result;
}

}  // namespace

void stream_gradients(GradientTape& tape,
                      const Tensor& target,
                      const std::vector<Variable>& sources,
                      const GradientOptions& options,
                      const SourceReadyFn& on_ready) {
    TapeState& state = *tape.state();
    const std::vector<Tensor> targets{target};
    const Sources src = sources_of(sources);
    begin_gradient(state, targets, options);
    compute_gradients(state, targets, src.ids, src.meta, options, on_ready);
    end_gradient(state);
}

Gradient GradientTape::gradient(const Tensor& target,
                                const Tensor& source,
                                const GradientOptions& options) {
    return run(*state_, {target}, sources_of(std::vector<Tensor>{source}), options)[0];
}

Gradient GradientTape::gradient(const Tensor& target,
                                const Variable& source,
                                const GradientOptions& options) {
    return run(*state_, {target}, sources_of(std::vector<Variable>{source}), options)[0];
}

std::vector<Gradient> GradientTape::gradient(const Tensor& target,
                                             const std::vector<Tensor>& sources,
                                             const GradientOptions& options) {
    return run(*state_, {target}, sources_of(sources), options);
}

std::vector<Gradient> GradientTape::gradient(const Tensor& target,
                                             const std::vector<Variable>& sources,
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

// Checked before the tape is consumed. experimental_use_pfor = false: TensorFlow then needs a
// persistent tape (it calls gradient() in a loop); so does tapeflow, to keep the same contract.
void check_jacobian_options(const TapeState& tape, const JacobianOptions& options) {
    if (options.parallel_iterations < 0) {
        throw errors::InvalidArgumentError(
            fmt::format("jacobian: parallel_iterations must be >= 0 (0: automatic), got {}",
                        options.parallel_iterations));
    }
    if (options.experimental_use_pfor || tape.persistent) return;
    throw errors::RuntimeError(
        "GradientTape must be created with persistent=True to compute the jacobian with eager "
        "execution enabled and with experimental_use_pfor set to False.");
}

// Target rows per walk: JacobianOptions::parallel_iterations (0 = automatic), 1 for the loop.
int64_t rows_per_walk(const JacobianOptions& options, int64_t rows, int64_t row_elements) {
    if (!options.experimental_use_pfor) return 1;
    int64_t chunk = options.parallel_iterations;
    if (chunk == 0) chunk = kAutoJacobianElements / std::max<int64_t>(row_elements, 1);
    return std::clamp<int64_t>(chunk, 1, std::max<int64_t>(rows, 1));
}

// The gradients for `seeds` [rows, *target.shape], [rows, *source.shape] (undefined when no walk
// reaches the source): one vectorized walk (NOTE [Vectorized jacobians] in backward.cpp), or with
// use_pfor false (one row) an ordinary walk.
Gradient walk_rows(TapeState& tape,
                   const Tensor& target,
                   const Sources& source,
                   const Tensor& seeds,
                   bool use_pfor) {
    GradientOptions options;
    options.output_gradients = {use_pfor ? seeds : reshape(seeds, target.shape())};
    const Gradient g = compute_gradients(tape,
                                         std::span<const Tensor>(&target, 1),
                                         source.ids,
                                         source.meta,
                                         options,
                                         {},
                                         use_pfor ? 1 : 0)[0];
    if (use_pfor || !g.defined()) return g;
    return expand_dims(g.dense(), 0);
}

// What walk_rows gives `count` rows of an unconnected source: zeros [count, *source shape].
Tensor zero_rows(int64_t count, const TensorMeta& source) {
    std::vector<int64_t> dims = source.shape.dims();
    dims.insert(dims.begin(), count);
    const DeviceScope scope(source.device);
    return zeros(Shape(std::move(dims)), source.dtype);
}

// Rows [begin, begin + count) of the n x n identity, in `dtype`.
Tensor identity_rows(int64_t begin, int64_t count, int64_t n, DType dtype) {
    const Tensor indices =
        range(static_cast<double>(begin), static_cast<double>(begin + count), 1, DType::int64);
    return one_hot(indices, n, 1, 0, -1, dtype);
}

// d target[i] / d source for the n elements i of the target, [n, *source.shape] (undefined when
// no walk reaches the source): walks of `chunk` one-hot rows at once, or (use_pfor false) one walk
// per element, each seeded with one one-hot output gradient.
Gradient jacobian_by_rows(TapeState& tape,
                          const Tensor& target,
                          const Sources& source,
                          const JacobianOptions& options) {
    const TensorMeta& sm = source.meta[0];
    const int64_t n = target.num_elements();
    std::vector<int64_t> seed_dims = target.shape().dims();
    seed_dims.insert(seed_dims.begin(), 0);
    const int64_t chunk = rows_per_walk(options, n, std::max(n, sm.shape.num_elements()));
    std::vector<Tensor> parts;
    bool connected = false;
    for (int64_t begin = 0; begin < n; begin += chunk) {
        const int64_t count = std::min(chunk, n - begin);
        seed_dims[0] = count;
        const Tensor seeds =
            reshape(identity_rows(begin, count, n, target.dtype()), Shape(seed_dims));
        const Gradient g = walk_rows(tape, target, source, seeds, options.experimental_use_pfor);
        connected = connected || g.defined();
        parts.push_back(g.defined() ? g.dense() : zero_rows(count, sm));
    }
    if (!connected) return {};
    return parts.size() == 1 ? parts[0] : concat(parts, 0);
}

// The jacobian from the rows (undefined: unconnected), shaped target.shape + source.shape.
Tensor jacobian_from_rows(const Gradient& rows,
                          const Tensor& target,
                          const Sources& source,
                          const JacobianOptions& options) {
    if (!rows.defined() && options.unconnected_gradients == UnconnectedGradients::none) return {};
    const TensorMeta& sm = source.meta[0];
    std::vector<int64_t> dims = target.shape().dims();
    dims.insert(dims.end(), sm.shape.dims().begin(), sm.shape.dims().end());
    if (!rows.defined()) {
        const DeviceScope scope(sm.device);
        return zeros(Shape(dims), sm.dtype);
    }
    return reshape(rows.dense(), Shape(dims));
}

Tensor jacobian_impl(TapeState& tape,
                     const Tensor& target,
                     const Sources& source,
                     const JacobianOptions& options) {
    check_jacobian_options(tape, options);
    begin_gradient(tape, {target}, GradientOptions{});
    const Gradient rows = jacobian_by_rows(tape, target, source, options);
    end_gradient(tape);
    return jacobian_from_rows(rows, target, source, options);
}

}  // namespace

Tensor jacobian_on_tape(TapeState& tape,
                        const Tensor& target,
                        const Tensor& source,
                        UnconnectedGradients unconnected) {
    const Sources src = sources_of(std::vector<Tensor>{source});
    const JacobianOptions options{.unconnected_gradients = unconnected};
    return jacobian_from_rows(jacobian_by_rows(tape, target, src, options), target, src, options);
}

Tensor GradientTape::jacobian(const Tensor& target,
                              const Tensor& source,
                              UnconnectedGradients unconnected) {
    return jacobian(target, source, JacobianOptions{.unconnected_gradients = unconnected});
}

Tensor GradientTape::jacobian(const Tensor& target,
                              const Variable& source,
                              UnconnectedGradients unconnected) {
    return jacobian(target, source, JacobianOptions{.unconnected_gradients = unconnected});
}

Tensor GradientTape::jacobian(const Tensor& target,
                              const Tensor& source,
                              const JacobianOptions& options) {
    return jacobian_impl(*state_, target, sources_of(std::vector<Tensor>{source}), options);
}

Tensor GradientTape::jacobian(const Tensor& target,
                              const Variable& source,
                              const JacobianOptions& options) {
    return jacobian_impl(*state_, target, sources_of(std::vector<Variable>{source}), options);
}

Tensor GradientTape::batch_jacobian(const Tensor& target,
                                    const Tensor& source,
                                    UnconnectedGradients unconnected) {
    return batch_jacobian(target, source, JacobianOptions{.unconnected_gradients = unconnected});
}

// Column j of the result, d sum_b target[b, j] / d source ([b, x...]), is the gradient seeded with
// target[:, j] = 1: a vectorized walk seeds `count` columns at once ([count, b, y...]) and
// transposes [per_example, b, x...] to [b, per_example, x...] at the end.
Tensor GradientTape::batch_jacobian(const Tensor& target,
                                    const Tensor& source,
                                    const JacobianOptions& options) {
    // options.unconnected_gradients is not read: TensorFlow returns zeros regardless.
    if (!target.defined() || !source.defined()) {
        throw errors::InvalidArgumentError("batch_jacobian: target and source must be defined");
    }
    if (target.rank() < 1 || source.rank() < 1 || target.shape()[0] != source.shape()[0]) {
        throw errors::InvalidArgumentError(
            fmt::format("Need first dimension of target shape ({}) and source shape ({}) to match.",
                        target.shape().str(),
                        source.shape().str()));
    }
    check_jacobian_options(*state_, options);
    const Sources src = sources_of(std::vector<Tensor>{source});
    begin_gradient(*state_, {target}, GradientOptions{});
    const int64_t batch = target.shape()[0];
    const int64_t per_example = batch == 0 ? 0 : target.num_elements() / batch;
    const int64_t chunk =
        rows_per_walk(options, per_example, std::max(target.num_elements(), source.num_elements()));
    std::vector<Tensor> columns;  // [count, b, x...] per walk
    for (int64_t begin = 0; begin < per_example; begin += chunk) {
        const int64_t count = std::min(chunk, per_example - begin);
        const Tensor rows = identity_rows(begin, count, per_example, target.dtype());  // [count, y]
        const Tensor seeds =  // seeds[c, i, y] = rows[c, y] for every example i
            broadcast_to(expand_dims(rows, 1), Shape{count, batch, per_example});
        std::vector<int64_t> seed_dims = target.shape().dims();
        seed_dims.insert(seed_dims.begin(), count);
        const Gradient g = walk_rows(
            *state_, target, src, reshape(seeds, Shape(seed_dims)), options.experimental_use_pfor);
        columns.push_back(g.defined() ? g.dense() : zero_rows(count, src.meta[0]));
    }
    end_gradient(*state_);
    std::vector<int64_t> dims = target.shape().dims();
    dims.insert(dims.end(), source.shape().dims().begin() + 1, source.shape().dims().end());
    if (columns.empty()) return zeros(Shape(dims), source.dtype());
    const Tensor all = columns.size() == 1 ? columns[0] : concat(columns, 0);  // [y, b, x...]
    std::vector<int64_t> perm(static_cast<std::size_t>(all.rank()));
    for (std::size_t d = 0; d < perm.size(); ++d)
        perm[d] = static_cast<int64_t>(d);
    std::swap(perm[0], perm[1]);
    return reshape(transpose(all, perm), Shape(dims));
}

// ---- custom_gradient ----

Tensor custom_gradient(const std::vector<Tensor>& inputs,
                       std::function<Tensor(const std::vector<Tensor>& inputs)> forward,
                       std::function<std::vector<Tensor>(const std::vector<Tensor>& inputs,
                                                         const Tensor& output,
                                                         const Tensor& upstream)> backward) {
    if (!forward || !backward) {
        throw errors::InvalidArgumentError(
            "custom_gradient: forward and backward must be callable");
    }
    Tensor y;
    {
        // Forward runs with every tape and forward accumulator of this thread paused.
        std::vector<TapeState*> paused = std::exchange(active_tapes(), {});
        std::vector<AccumulatorState*> paused_acc = std::exchange(active_accumulators(), {});
        try {
            y = forward(inputs);
        } catch (...) {
            active_tapes() = std::move(paused);
            active_accumulators() = std::move(paused_acc);
            throw;
        }
        active_tapes() = std::move(paused);
        active_accumulators() = std::move(paused_acc);
    }
    if (!y.defined())
        throw errors::InvalidArgumentError("custom_gradient: forward returned an undefined tensor");
    // A fresh id for the output, so it is distinct from anything forward returned as is.
    Tensor out = Tensor::view(y.impl()->storage, y.impl()->offset, y.shape(), y.dtype());
    const std::size_t n = inputs.size();
    auto fn = std::make_shared<CustomBackwardFn>([backward, n](const GradCtx& ctx) -> Grads {
        std::vector<Tensor> in(ctx.in.begin(), ctx.in.end());
        std::vector<Tensor> result = backward(in, ctx.out[0], ctx.grad());
        if (result.size() != n) {
            throw errors::InvalidArgumentError(fmt::format(
                "custom_gradient function expected to return {} gradients but returned {} instead",
                n,
                result.size()));
        }
        return Grads(result.begin(), result.end());
    });
    record_custom(inputs, out, std::move(fn));
    return out;
}

}  // namespace tapeflow
