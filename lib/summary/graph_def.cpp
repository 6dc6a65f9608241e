// Graph -> GraphDef protobuf. Node attributes are kept in the Graph as AttrValue text, so they are
// parsed here with protobuf's TextFormat; text output is protobuf's own printer of the same
// message.
#include "summary/graph_def.hpp"

#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/text_format.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/summary.hpp>

#include "io/file_util.hpp"
#include "tapeflow_proto/graph.pb.h"

namespace tapeflow {
namespace {

proto::GraphDef to_graph_def(const Graph& graph) {
    proto::GraphDef def;
    for (const GraphNode& node : graph.nodes()) {
        proto::NodeDef* n = def.add_node();
        n->set_name(node.name);
        n->set_op(node.op);
        for (const std::string& input : node.inputs)
            n->add_input(input);
        n->set_device(node.device);
        for (const auto& [key, text] : node.attrs) {
            proto::AttrValue value;
            if (!google::protobuf::TextFormat::ParseFromString(text, &value)) {
                throw errors::InternalError(
                    fmt::format("attribute {} of graph node {} is not AttrValue text: '{}'",
                                key,
                                node.name,
                                text));
            }
            (*n->mutable_attr())[key] = std::move(value);
        }
    }
    // TensorFlow 2.12's TF_GRAPH_DEF_VERSION: the release whose op signatures tape.graph() writes
    // (lib/autograd/graph_signatures.cpp)
    def.mutable_versions()->set_producer(1394);
    return def;
}

}  // namespace

std::string Graph::to_text() const {
    std::string out;
    google::protobuf::TextFormat::PrintToString(to_graph_def(*this), &out);
    return out;
}

namespace summary {

std::string serialize_graph_def(const Graph& graph) {
    const proto::GraphDef def = to_graph_def(graph);
    std::string out;
    {
        google::protobuf::io::StringOutputStream stream(&out);
        google::protobuf::io::CodedOutputStream coded(&stream);
        coded.SetSerializationDeterministic(
            true);  // attr maps in key order: same graph, same bytes
        def.SerializeToCodedStream(&coded);
    }
    return out;
}

}  // namespace summary

namespace train {

void write_graph(const Graph& graph,
                 const std::string& logdir,
                 const std::string& name,
                 bool as_text) {
    if (name.empty()) throw errors::InvalidArgumentError("write_graph needs a non-empty file name");
    io::make_dirs(logdir);
    const std::string path = (logdir.empty() ? std::string(".") : logdir) + "/" + name;
    io::write_file_atomically(path,
                              as_text ? graph.to_text() : summary::serialize_graph_def(graph));
}

}  // namespace train
}  // namespace tapeflow
