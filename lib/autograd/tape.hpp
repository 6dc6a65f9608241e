// The tape's internals: what one recorded op keeps (TapeEntry), a tape's state (TapeState), and the
// thread-local stack of recording tapes that apply() offers every op to.
//
// NOTE [Tape ownership and thread-locality]: a GradientTape owns its TapeState; while the tape is
// recording, a raw pointer to that state sits on the creating thread's stack. Ops run on other
// threads are not recorded. StopRecording guards keep the state alive through shared_ptr.
//
// NOTE [Saved tensors]: every entry keeps its inputs' and outputs' ids and metadata, but tensor
// data only for what its OpDef row's Save flag names. Saved tensors share storage with the
// originals (no copy); Variables copy-on-write, so a later assign cannot change what the tape
// saved.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <memory_resource>
#include <span>
#include <string>
#include <unordered_set>
#include <vector>

#include <tapeflow/autograd/gradient_tape.hpp>

#include "ops/attrs.hpp"
#include "ops/op_def.hpp"

namespace tapeflow {

/// Backward function of an entry that is not a registered op (custom_gradient).
using CustomBackwardFn = std::function<Grads(const GradCtx& ctx)>;

// NOTE [Tape memory]: entries, their lists and the watched set live in their tape's arena
// (TapeState::arena), not on the global heap: a training step records a dozen entries with six
// lists each, and allocating and freeing them one by one with malloc cost more than the step's
// arithmetic (docs/performance.md, the tutorial network). An arena only grows, so reset() rebuilds
// the containers on a released arena; a non-persistent tape keeps it until it is destroyed.
struct TapeEntry {
    using allocator_type = std::pmr::polymorphic_allocator<>;
    explicit TapeEntry(const allocator_type& alloc)
        : input_ids(alloc),
          in_meta(alloc),
          output_ids(alloc),
          out_meta(alloc),
          saved_in(alloc),
          saved_out(alloc) {}

    Op op = Op::identity;
    Attrs attrs;
    std::pmr::vector<int64_t> input_ids;
    std::pmr::vector<TensorMeta> in_meta;
    std::pmr::vector<int64_t> output_ids;
    std::pmr::vector<TensorMeta> out_meta;
    std::pmr::vector<Tensor> saved_in;
    std::pmr::vector<Tensor> saved_out;
    std::shared_ptr<CustomBackwardFn> custom;  // set for custom_gradient entries
    std::string
        scope;  // name scope when recorded ("" mostly: no allocation); graph() adds the type
};

/// Where tape arenas get their blocks: a process-wide pool (blocks are reused from tape to tape,
/// not malloc'ed: a large malloc per step made glibc consolidate its free lists every step).
std::pmr::memory_resource* tape_block_pool();
/// A training step's tape (a dozen entries) fits in one block of this size.
inline constexpr std::size_t kTapeFirstBlock = 8192;

struct TapeState {
    bool persistent = false;
    bool watch_accessed_variables = true;
    bool on_stack = false;  // recording (pushed on this thread's stack)
    bool consumed = false;  // a non-persistent tape after its gradient()
    bool closed = false;    // its GradientTape was destroyed
    // A variable watcher (TensorFlow's VariableWatcher; recompute_grad): notes the trainable
    // variables read (watched_variables) and records nothing.
    bool variables_only = false;
    // Entries and the watched set allocate from this arena (NOTE [Tape memory]); declared first,
    // so it outlives them.
    std::pmr::monotonic_buffer_resource arena{kTapeFirstBlock, tape_block_pool()};
    std::pmr::unordered_set<int64_t> watched{&arena};  // tensor ids and variable ids
    std::vector<Variable> watched_variables;
    // A deque: recording (a persistent tape may record the gradient computation on itself)
    // never moves existing entries, so the backward walk reads them in place.
    std::pmr::deque<TapeEntry> entries{&arena};

    TapeState() {}  // NOLINT: user-provided, so make_shared does not zero the arena's buffer
    TapeState(const TapeState&) = delete;
    TapeState& operator=(const TapeState&) = delete;

    /// Forgets every entry and watched id and gives the arena's memory back (reset()).
    void clear();
};

/// The recording tapes of this thread, innermost last.
std::vector<TapeState*>& active_tapes();

struct AccumulatorState;  // a ForwardAccumulator's state (forward_mode.hpp)
/// The recording forward accumulators of this thread, innermost last.
std::vector<AccumulatorState*>& active_accumulators();

/// Cheap check apply() makes before anything else: is any tape or forward accumulator recording
/// on this thread?
inline bool any_tape_recording() {
    return !active_tapes().empty() || !active_accumulators().empty();
}

/// Whether a recording tape would record an op reading `inputs` (one is watched and floating), or
/// a recording forward accumulator has a tangent for one.
/// Gradient rows with a fused backward kernel that no tape can differentiate run their composite
/// of differentiable ops instead when it is true: higher derivatives are being recorded.
bool any_tape_watches(std::span<const Tensor> inputs);

/// NOTE [Fused matmul tangent] (forward_mode.cpp): called by apply() before a rank-2 matmul runs
/// while an accumulator records. When exactly one accumulator records, no tape outside it exists
/// (nothing would record the JVP computation) and it holds a tangent t for input 0 (not
/// transposed, on the CPU, at least 2^16 multiply-adds) and none for input 1, the primal and the
/// tangent share one gemm: [a; t] b, whose row blocks become the output and its tangent t b, so
/// the output keeps its tangent's memory alive. Returns the output with its tangent stored and
/// the op recorded on the tapes; undefined when the fast path does not apply (the op then runs as
/// usual, its tangent computed after it by jvp_bilinear).
Tensor fused_matmul_with_tangent(std::span<const Tensor> inputs, const Attrs& attrs);
/// Offers a finished op to the recording tapes only (record_operation's first half;
/// fused_matmul_with_tangent computes its tangent itself).
void record_on_tapes(Op op,
                     std::span<const Tensor> inputs,
                     std::span<const Tensor> outputs,
                     const Attrs& attrs);
/// Offers a finished op to every recording tape, then to every recording forward accumulator
/// (called by apply()).
void record_operation(Op op,
                      std::span<const Tensor> inputs,
                      std::span<const Tensor> outputs,
                      const Attrs& attrs);
/// Records a variable read: the read tensor `value` depends on variable id `variable_id`.
void record_variable_read(const Variable& variable, const Tensor& value);
/// Records a custom_gradient op.
void record_custom(std::span<const Tensor> inputs,
                   const Tensor& output,
                   std::shared_ptr<CustomBackwardFn> backward);

void push_tape(TapeState& tape);
void pop_tape(TapeState& tape);

/// Receives source `index`'s final gradient during a streaming walk (NOTE [Streaming sources]).
using SourceReadyFn = std::function<void(std::size_t index, const Gradient& gradient)>;

/// The backward walk (backward.cpp): gradients of the summed targets w.r.t. the sources, named by
/// id with their metadata. With `on_ready`, every source's gradient is also handed to it, as early
/// as possible (variables: as soon as final; the returned entry of such a source is undefined).
/// With batch_dims 1, every output_gradients seed (all must be given) has a leading batch dim and
/// so has every gradient returned (NOTE [Vectorized jacobians] in backward.cpp).
std::vector<Gradient> compute_gradients(TapeState& tape,
                                        std::span<const Tensor> targets,
                                        std::span<const int64_t> source_ids,
                                        std::span<const TensorMeta> source_meta,
                                        const GradientOptions& options,
                                        const SourceReadyFn& on_ready = {},
                                        int batch_dims = 0);

/// GradientTape::jacobian on `tape`'s entries without consuming it or checking persistence (the
/// walks are recorded by whatever records now): tf::hessians' second walk.
Tensor jacobian_on_tape(TapeState& tape,
                        const Tensor& target,
                        const Tensor& source,
                        UnconnectedGradients unconnected);

/// GradientTape::gradient(target, variables) that hands each variable's gradient to `on_ready` as
/// soon as it is final instead of returning them all (optimizers' gate_none).
void stream_gradients(GradientTape& tape,
                      const Tensor& target,
                      const std::vector<Variable>& sources,
                      const GradientOptions& options,
                      const SourceReadyFn& on_ready);

}  // namespace tapeflow
