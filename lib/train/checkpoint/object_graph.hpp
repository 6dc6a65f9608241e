// TensorFlow's TrackableObjectGraph, the "_CHECKPOINTABLE_OBJECT_GRAPH" entry of an object-based
// checkpoint, as plain structs, and TF's naming of objects and keys (trackable/base.py,
// checkpoint/graph_view.py, save_util_v1.py): local names escaped ("." -> "..", "/" -> ".S"),
// joined by "/" along the first breadth-first path from the root.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tapeflow::train::ckpt::objects {

/// The bundle key of the serialized graph.
inline constexpr std::string_view kObjectGraphKey = "_CHECKPOINTABLE_OBJECT_GRAPH";
/// The attribute name of a variable's value.
inline constexpr std::string_view kVariableValue = "VARIABLE_VALUE";

struct ObjectGraph {
    struct Child {
        int32_t node_id = 0;
        std::string local_name;
    };
    struct Attribute {
        std::string name;       // "VARIABLE_VALUE"
        std::string full_name;  // the variable's name ("dense/kernel")
        std::string checkpoint_key;
    };
    struct SlotVariable {
        int32_t original_variable_node_id = 0;
        std::string slot_name;
        int32_t slot_variable_node_id = 0;
    };
    struct Node {
        std::vector<Child> children;
        std::vector<Attribute> attributes;
        std::vector<SlotVariable> slot_variables;
        bool has_checkpoint_values = false;
    };
    std::vector<Node> nodes;  // nodes[0] is the root
};

/// The TrackableObjectGraph proto's bytes (what TensorFlow writes: every node's
/// has_checkpoint_values set).
std::string serialize_object_graph(const ObjectGraph& graph);
/// Parses and validates (node ids in range, a root): DataLossError naming `file` otherwise.
ObjectGraph parse_object_graph(std::string_view bytes, const std::string& file);

/// TF's escape_local_name: "." -> "..", "/" -> ".S".
std::string escape_local_name(std::string_view name);
/// "<object path>/.ATTRIBUTES/<attribute>".
std::string attribute_key(std::string_view object_path, std::string_view attribute);
/// The object path of an optimizer's slot: "<variable path>/.OPTIMIZER_SLOT/<optimizer
/// path>/<slot>".
std::string slot_variable_path(std::string_view variable_path,
                               std::string_view optimizer_path,
                               std::string_view slot_name);

}  // namespace tapeflow::train::ckpt::objects
