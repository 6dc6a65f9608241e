// The steps and slots of a Plan (plan.hpp), shared by plan.cpp and plan_graph.cpp.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "function/plan.hpp"
#include "ops/apply.hpp"
#include "ops/op_def.hpp"

namespace tapeflow::function_detail {

struct Plan::Slot {
    int32_t root = -1;      // the slot whose storage this one views (itself when computed)
    int32_t def = -1;       // the step producing it (-1: an argument or a constant)
    int32_t last_use = -1;  // the last step reading it (or a view of it, for roots)
    bool escapes = false;   // roots: returned, handed to a host step, or read by a deferred op
    bool arena = false;     // roots: lives in the arena
    bool fixed = false;   // the same tensor at every replay (arena results, their views, constants)
    bool output = false;  // returned by the function
    std::size_t offset = 0;  // arena byte offset (roots in the arena)
    TensorMeta meta;
};

struct Plan::Step {
    StepKind kind = StepKind::kernel;
    // kernel steps
    Op op = Op::identity;
    KernelFn fn = nullptr;
    Device device;
    Attrs attrs;
    bool computed = true;  // false: every output is a view, no kernel runs
    std::optional<RandomCall> random;
    std::vector<OutputSpec> out_spec;
    std::vector<Tensor> in_buf, out_buf;
    bool inputs_fixed = false, outputs_fixed = false;
    bool materialize = false;  // reads arena tensors into per-replay results: compute them now
    // read steps
    std::shared_ptr<VariableState> variable;
    std::string variable_name;
    // host steps
    std::string what;
    HostBody body;
    // every step
    std::vector<int32_t> in, out;
    std::vector<int32_t> release;  // slots no later step reads
};

}  // namespace tapeflow::function_detail
