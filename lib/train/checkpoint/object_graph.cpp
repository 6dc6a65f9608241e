// The TrackableObjectGraph through protoc's classes (lib/proto/tapeflow_proto), and TF's names.
#include "train/checkpoint/object_graph.hpp"

#include <fmt/format.h>

#include <tapeflow/core/error.hpp>

#include "tapeflow_proto/trackable_object_graph.pb.h"

namespace tapeflow::train::ckpt::objects {

std::string serialize_object_graph(const ObjectGraph& graph) {
    proto::TrackableObjectGraph out;
    for (const ObjectGraph::Node& node : graph.nodes) {
        auto* n = out.add_nodes();
        for (const auto& c : node.children) {
            auto* ref = n->add_children();
            ref->set_node_id(c.node_id);
            ref->set_local_name(c.local_name);
        }
        for (const auto& a : node.attributes) {
            auto* t = n->add_attributes();
            t->set_name(a.name);
            t->set_full_name(a.full_name);
            t->set_checkpoint_key(a.checkpoint_key);
        }
        for (const auto& s : node.slot_variables) {
            auto* ref = n->add_slot_variables();
            ref->set_original_variable_node_id(s.original_variable_node_id);
            ref->set_slot_name(s.slot_name);
            ref->set_slot_variable_node_id(s.slot_variable_node_id);
        }
        // TensorFlow sets the wrapper on every node (an empty message for false).
        n->mutable_has_checkpoint_values()->set_value(node.has_checkpoint_values);
    }
    std::string bytes;
    out.SerializeToString(&bytes);
    return bytes;
}

ObjectGraph parse_object_graph(std::string_view bytes, const std::string& file) {
    proto::TrackableObjectGraph in;
    if (!in.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
        throw errors::DataLossError(fmt::format(
            "Corrupt checkpoint {}: {} is not a TrackableObjectGraph", file, kObjectGraphKey));
    }
    const int n = in.nodes_size();
    if (n == 0) {
        throw errors::DataLossError(
            fmt::format("Corrupt checkpoint {}: its object graph has no root node", file));
    }
    auto check_id = [&](int32_t id, int node, const char* what) {
        if (id < 0 || id >= n) {
            throw errors::DataLossError(
                fmt::format("Corrupt checkpoint {}: object graph node {} has a {} {} outside "
                            "[0, {})",
                            file,
                            node,
                            what,
                            id,
                            n));
        }
    };
    ObjectGraph graph;
    graph.nodes.resize(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
        const auto& src = in.nodes(i);
        ObjectGraph::Node& node = graph.nodes[static_cast<std::size_t>(i)];
        for (const auto& c : src.children()) {
            check_id(c.node_id(), i, "child");
            node.children.push_back({c.node_id(), c.local_name()});
        }
        for (const auto& a : src.attributes())
            node.attributes.push_back({a.name(), a.full_name(), a.checkpoint_key()});
        for (const auto& s : src.slot_variables()) {
            check_id(s.original_variable_node_id(), i, "slot's original variable");
            check_id(s.slot_variable_node_id(), i, "slot variable");
            node.slot_variables.push_back(
                {s.original_variable_node_id(), s.slot_name(), s.slot_variable_node_id()});
        }
        node.has_checkpoint_values =
            src.has_has_checkpoint_values() ? src.has_checkpoint_values().value() : true;
    }
    return graph;
}

std::string escape_local_name(std::string_view name) {
    std::string out;
    for (const char c : name) {
        if (c == '.') {
            out += "..";
        } else if (c == '/') {
            out += ".S";
        } else {
            out += c;
        }
    }
    return out;
}

std::string attribute_key(std::string_view object_path, std::string_view attribute) {
    return fmt::format("{}/.ATTRIBUTES/{}", object_path, escape_local_name(attribute));
}

std::string slot_variable_path(std::string_view variable_path,
                               std::string_view optimizer_path,
                               std::string_view slot_name) {
    return fmt::format(
        "{}/.OPTIMIZER_SLOT/{}/{}", variable_path, optimizer_path, escape_local_name(slot_name));
}

}  // namespace tapeflow::train::ckpt::objects
