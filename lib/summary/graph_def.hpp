// tf::Graph -> tensorflow.GraphDef: the one conversion behind TensorBoard graph events,
// Graph::to_text() and tf::train::write_graph.
#pragma once

#include <string>

#include <tapeflow/autograd/graph.hpp>

namespace tapeflow::summary {

/// The GraphDef as deterministic binary protobuf (what Event.graph_def and binary write_graph
/// hold).
std::string serialize_graph_def(const Graph& graph);

}  // namespace tapeflow::summary
