// TensorFlow's op signatures for tape.graph(): the attributes each op has in TensorFlow's OpDef
// (Conv2D's strides, padding and data_format, Mean's keep_dims and Tidx, ...) instead of
// tapeflow's kernel attributes, and the arguments TensorFlow takes as tensors (Reshape's shape,
// a reduction's axes, Transpose's perm) as Const nodes, so that the GraphDef imports into
// TensorFlow (tests/summary/test_graph_signatures.cpp checks it against TensorFlow's OpDefs).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <tapeflow/autograd/graph.hpp>

#include "autograd/tape.hpp"

namespace tapeflow {

/// Rewrites `node` (made from `entry`, with tapeflow's attributes as AttrValue text) into
/// TensorFlow's signature. `add_const(values)` adds an int32 Const node holding `values` and
/// returns its name.
void to_tf_signature(const TapeEntry& entry,
                     GraphNode& node,
                     const std::function<std::string(const std::vector<int64_t>&)>& add_const);

/// The GraphDef-shaped graph of `entries` (GradientTape::graph(), a tf::function's trace): inputs
/// no entry produced become Placeholder nodes, variables of read_variable entries VarHandleOps.
Graph graph_of(const std::vector<const TapeEntry*>& entries);

}  // namespace tapeflow
