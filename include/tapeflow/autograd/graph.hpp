// tf::Graph: the ops a GradientTape recorded, as a TensorFlow GraphDef-shaped list of nodes (for
// TensorBoard's graph tab and for writing to disk).
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include <tapeflow/core/dtype.hpp>
#include <tapeflow/core/export.hpp>
#include <tapeflow/core/shape.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow {

/// One node: a recorded op, or a Placeholder / VarHandleOp standing for a watched tensor or
/// variable.
struct GraphNode {
    std::string name;                 // unique; "scope/OpType", "scope/OpType_1", ...
    std::string op;                   // TensorFlow op type ("MatMul")
    std::vector<std::string> inputs;  // producer node names, with ":k" for output k > 0
    std::string device;               // "/device:CPU:0"
    /// Attributes as AttrValue text ("type: DT_FLOAT", "i: 3", "list { i: 1 i: 2 }").
    std::map<std::string, std::string> attrs;
};

class Graph {
public:
    std::size_t num_nodes() const { return nodes_.size(); }
    const std::vector<GraphNode>& nodes() const { return nodes_; }
    void add_node(GraphNode node) { nodes_.push_back(std::move(node)); }
    /// GraphDef in protobuf text format (what `write_graph(..., as_text = true)` writes):
    /// protobuf's TextFormat of the GraphDef that graph events carry (lib/summary/graph_def.cpp).
    std::string to_text() const;

private:
    std::vector<GraphNode> nodes_;
};

/// TensorFlow's DataType name of a dtype: "DT_FLOAT", "DT_INT64", ...
std::string tf_datatype_name(DType dtype);

}  // namespace tapeflow

TAPEFLOW_API_END
