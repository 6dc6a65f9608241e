// OpTrace: a thread-local record of every op apply() runs, in order, with its inputs, outputs and
// attrs (not only the ops tapes record: the ops a gradient computation runs too). While one is
// installed (OpTraceScope), apply() offers it each call after the kernel ran; otherwise it costs
// one thread-local load per op. vectorized_map traces its function with it (NOTE [Vectorized map]
// in lib/autograd/vectorized_map.cpp).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <tapeflow/core/error.hpp>
#include <tapeflow/core/tensor.hpp>

#include "ops/attrs.hpp"
#include "ops/op.hpp"

namespace tapeflow {

struct TracedCall {
    Op op;
    Attrs attrs;
    std::vector<Tensor> inputs;
    std::vector<Tensor> outputs;
};

class OpTrace {
public:
    /// Non-empty: the traced function must not change state, and `who` ("vectorized_map") names
    /// the caller in the InvalidArgumentError raised, before the change, by an in-place op (no
    /// outputs: the optimizers' updates) or a Variable assignment.
    explicit OpTrace(std::string forbid_state_changes_in = {})
        : forbid_(std::move(forbid_state_changes_in)) {}

    void record(Op op,
                std::span<const Tensor> inputs,
                std::span<const Tensor> outputs,
                const Attrs& attrs) {
        calls_.push_back({op,
                          attrs,
                          std::vector<Tensor>(inputs.begin(), inputs.end()),
                          std::vector<Tensor>(outputs.begin(), outputs.end())});
    }
    const std::vector<TracedCall>& calls() const { return calls_; }

    /// Called before a state change (`what`: "op ResourceApplyAdam", "assign to variable 'w'").
    void state_change(std::string_view what) const {
        if (forbid_.empty()) return;
        throw errors::InvalidArgumentError(forbid_ + ": fn must not change state, but it ran " +
                                           std::string(what) +
                                           " (compute the new values in fn and assign them after)");
    }

private:
    std::string forbid_;
    std::vector<TracedCall> calls_;
};

namespace detail {
/// The trace apply() records into on this thread, or nullptr.
OpTrace*& active_op_trace();

/// Offers a state change on this thread to the active trace (which may refuse it: see OpTrace).
inline void trace_state_change(std::string_view what) {
    if (const OpTrace* t = active_op_trace()) [[unlikely]]
        t->state_change(what);
}
}  // namespace detail

/// Installs `trace` on this thread for the scope's lifetime (nested scopes: the inner one wins, the
/// outer one is restored).
class OpTraceScope {
public:
    explicit OpTraceScope(OpTrace& trace) : previous_(detail::active_op_trace()) {
        detail::active_op_trace() = &trace;
    }
    ~OpTraceScope() { detail::active_op_trace() = previous_; }
    OpTraceScope(const OpTraceScope&) = delete;
    OpTraceScope& operator=(const OpTraceScope&) = delete;

private:
    OpTrace* previous_;
};

}  // namespace tapeflow
