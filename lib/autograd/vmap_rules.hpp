// Batching rules of vectorized_map (NOTE [Vectorized map] in lib/autograd/vectorized_map.cpp): how
// one op recorded on a single example runs once on the whole batch. A rule gets the op's inputs,
// each either batched (an extra leading axis of the batch size) or the same for every example, and
// the per-example call as traced (its inputs and outputs: shapes, dtypes, views); it returns the
// outputs, batched or not. An op without a rule, or whose rule declines (an empty result: e.g. a
// batched convolution filter), runs once per example.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include <tapeflow/core/tensor.hpp>

#include "ops/attrs.hpp"
#include "ops/op.hpp"

namespace tapeflow {

struct VmapValue {
    Tensor value;
    bool batched = false;  // value has the batch axis in front
};

struct VmapCall {
    Op op;
    const Attrs& attrs;
    std::span<const VmapValue> in;
    std::span<const Tensor> traced_in;   // the per-example call's inputs
    std::span<const Tensor> traced_out;  // and outputs
    int64_t batch;
};

using VmapOutputs = std::vector<VmapValue>;
using VmapFn = VmapOutputs (*)(const VmapCall& call);

/// `shape` with the batch axis of `batch` examples in front.
Shape with_batch(int64_t batch, const Shape& shape);
/// Every example's copy of the value: the value itself when batched, else broadcast to the batch.
Tensor materialized(const VmapValue& v, int64_t batch);

/// The op's batching rule; nullptr for the ops that run once per example (docs/autograd.md
/// "vectorized_map" lists them).
VmapFn vmap_rule(Op op);

}  // namespace tapeflow
