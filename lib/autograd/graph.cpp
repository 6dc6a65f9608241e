// tape.graph(): turns a tape's entries into GraphDef-shaped nodes. Graph::to_text() is in
// lib/summary/graph_def.cpp (protobuf's TextFormat of the GraphDef).
#include <unordered_map>

#include <fmt/format.h>

#include <tapeflow/autograd/graph.hpp>

#include "autograd/graph_signatures.hpp"
#include "autograd/tape.hpp"

namespace tapeflow {
namespace {

std::string shape_text(const Shape& s) {
    std::string out = "shape {";
    for (int64_t d : s.dims())
        out += fmt::format(" dim {{ size: {} }}", d);
    return out + " }";
}

std::string attr_text(const AttrValue& v) {
    return std::visit(
        [](const auto& x) -> std::string {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, bool>) {
                return x ? "b: true" : "b: false";
            } else if constexpr (std::is_same_v<T, int64_t>) {
                return fmt::format("i: {}", x);
            } else if constexpr (std::is_same_v<T, double>) {
                return fmt::format("f: {}", x);
            } else if constexpr (std::is_same_v<T, std::string>) {
                std::string
                    escaped;  // text-format escapes, so protobuf's TextFormat parses it back
                for (char c : x) {
                    const auto u = static_cast<unsigned char>(c);
                    if (c == '"' || c == '\\') {
                        escaped += std::string{'\\', c};
                    } else if (u < 0x20 || u == 0x7F) {
                        escaped += fmt::format("\\{:03o}", u);
                    } else {
                        escaped += c;
                    }
                }
                return "s: \"" + escaped + "\"";
            } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
                std::string out = "list {";
                for (int64_t i : x)
                    out += fmt::format(" i: {}", i);
                return out + " }";
            } else if constexpr (std::is_same_v<T, DType>) {
                return "type: " + tf_datatype_name(x);
            } else {
                return shape_text(x);
            }
        },
        v);
}

}  // namespace

std::string tf_datatype_name(DType dtype) {
    switch (dtype) {
        case DType::float32:
            return "DT_FLOAT";
        case DType::float64:
            return "DT_DOUBLE";
        case DType::int32:
            return "DT_INT32";
        case DType::int64:
            return "DT_INT64";
        case DType::uint8:
            return "DT_UINT8";
        case DType::bool_:
            return "DT_BOOL";
        case DType::float16:
            return "DT_HALF";
        case DType::bfloat16:
            return "DT_BFLOAT16";
    }
    return "DT_INVALID";
}

Graph GradientTape::graph() const {
    std::vector<const TapeEntry*> entries;
    for (const TapeEntry& e : state_->entries)
        entries.push_back(&e);
    return graph_of(entries);
}

Graph graph_of(const std::vector<const TapeEntry*>& entries) {
    Graph graph;
    std::unordered_map<std::string, int> used;          // name -> times used
    std::unordered_map<int64_t, std::string> producer;  // tensor or variable id -> "node[:k]"
    auto unique = [&](const std::string& base) {
        const int n = used[base]++;
        return n == 0 ? base : fmt::format("{}_{}", base, n);
    };
    auto meta_attrs = [](GraphNode& node, const TensorMeta& m, const char* type_key) {
        node.attrs[type_key] = "type: " + tf_datatype_name(m.dtype);
        node.attrs["_output_shapes"] = "list { " + shape_text(m.shape) + " }";
    };
    for (const TapeEntry* entry : entries) {
        const TapeEntry& e = *entry;
        GraphNode node;
        for (std::size_t i = 0; i < e.input_ids.size(); ++i) {
            auto it = producer.find(e.input_ids[i]);
            if (it == producer.end()) {
                // An input the tape did not produce: a watched tensor, or the variable of a read.
                GraphNode source;
                const bool variable = e.op == Op::read_variable;
                source.name = unique(variable && e.attrs.has("variable")
                                         ? e.attrs.get<std::string>("variable")
                                         : std::string("input"));
                source.op = variable ? "VarHandleOp" : "Placeholder";
                source.device = e.in_meta[i].device.str();
                meta_attrs(source, e.in_meta[i], "dtype");
                source.attrs["shape"] = shape_text(e.in_meta[i].shape);
                if (variable) source.attrs["shared_name"] = "s: \"" + source.name + "\"";
                it = producer.emplace(e.input_ids[i], source.name).first;
                graph.add_node(std::move(source));
            }
            node.inputs.push_back(it->second);
        }
        node.name = unique(e.op == Op::read_variable && e.attrs.has("variable")
                               ? e.attrs.get<std::string>("variable") + "/Read/ReadVariableOp"
                               : e.scope + std::string(op_type(e.op)));
        node.op = std::string(op_type(e.op));
        if (!e.out_meta.empty()) {
            node.device = e.out_meta[0].device.str();
            meta_attrs(node, e.out_meta[0], "T");
        }
        for (const auto& [key, value] : e.attrs.items()) {
            if (key == "variable") continue;
            node.attrs[std::string(key)] = attr_text(value);
        }
        to_tf_signature(e, node, [&](const std::vector<int64_t>& values) {
            GraphNode c;
            c.name = unique(e.scope + "Const");
            c.op = "Const";
            c.device = node.device;
            c.attrs["dtype"] = "type: DT_INT32";
            std::string tensor = fmt::format(
                "tensor {{ dtype: DT_INT32 tensor_shape {{ dim {{ size: {} }} }}", values.size());
            for (int64_t v : values)
                tensor += fmt::format(" int_val: {}", v);
            c.attrs["value"] = tensor + " }";
            c.attrs["_output_shapes"] =
                fmt::format("list {{ shape {{ dim {{ size: {} }} }} }}", values.size());
            graph.add_node(c);
            return c.name;
        });
        for (std::size_t k = 0; k < e.output_ids.size(); ++k) {
            producer[e.output_ids[k]] = k == 0 ? node.name : fmt::format("{}:{}", node.name, k);
        }
        graph.add_node(std::move(node));
    }
    return graph;
}

}  // namespace tapeflow
