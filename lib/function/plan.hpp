// A tf::function's replay schedule, planned once from its recording (NOTE [Function replay]).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include <tapeflow/autograd/graph.hpp>
#include <tapeflow/core/tensor.hpp>

#include "function/recording.hpp"
#include "ops/attrs.hpp"
#include "ops/dispatch.hpp"

namespace tapeflow::function_detail {

/// What a plan holds, for reports and tests.
struct PlanStats {
    std::size_t kernel_steps = 0;          // ops run (views included)
    std::size_t host_steps = 0;            // host steps run
    std::size_t reads = 0;                 // variable reads
    std::size_t arena_tensors = 0;         // results living in the arena
    std::size_t arena_bytes = 0;           // the arena's size (results share it by liveness)
    std::size_t arena_unshared_bytes = 0;  // what those results would take without sharing
};

enum class StepKind : uint8_t { kernel, read, host };

class Plan {
public:
    /// Plans the replay of `recording`, whose function ran on `args` and returned `outputs`.
    Plan(const Recording& recording, std::span<const Tensor> args, std::span<const Tensor> outputs);
    ~Plan();
    Plan(const Plan&) = delete;
    Plan& operator=(const Plan&) = delete;

    /// Replays on `args` (the shapes, dtypes and devices of the traced call's): the function's
    /// outputs. One replay at a time per plan (a mutex serializes concurrent calls).
    std::vector<Tensor> run(std::span<const Tensor> args);

    const PlanStats& stats() const { return stats_; }
    /// The traced ops as a GraphDef-shaped graph (as GradientTape::graph()).
    Graph graph() const;

private:
    struct Step;
    struct Slot;
    std::vector<Step> steps_;
    std::vector<Slot> slots_;
    std::vector<int32_t> arg_slots_;
    std::vector<int32_t> output_slots_;
    std::vector<Tensor> frame_;  // each slot's tensor during a replay (fixed ones persist)
    std::shared_ptr<Storage> arena_;
    PlanStats stats_;
    std::mutex mutex_;
};

}  // namespace tapeflow::function_detail
