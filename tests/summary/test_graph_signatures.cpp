// tape.graph()'s GraphDef against TensorFlow's OpDefs (tests/golden/tf-op-defs.json) for the ops of
// a small convnet and the shape/axis ops, the checks TensorFlow's import_graph_def makes before it
// accepts a node: a known op, its number of inputs, inputs naming nodes of the graph, every
// attribute one of the op's with a value of its type (and an allowed value), every required
// attribute present; and the producer version.
#include <cstdlib>
#include <fstream>
#include <set>

#include <catch2/catch.hpp>
#include <google/protobuf/text_format.h>
#include <nlohmann/json.hpp>

#include <tapeflow/tapeflow.hpp>

#include "tapeflow_proto/graph.pb.h"

namespace tf = tapeflow;

namespace {

nlohmann::json op_defs() {
    const char* env = std::getenv("TAPEFLOW_GOLDEN_DIR");
    const std::string path =
        std::string(env != nullptr ? env : "../tests/golden") + "/tf-op-defs.json";
    std::ifstream in(path);
    REQUIRE(in.good());
    return nlohmann::json::parse(in)["ops"];
}

bool has_kind(const tapeflow::proto::AttrValue& v, const std::string& type) {
    using K = tapeflow::proto::AttrValue;
    if (type == "type") return v.value_case() == K::kType;
    if (type == "bool") return v.value_case() == K::kB;
    if (type == "string") return v.value_case() == K::kS;
    if (type == "int") return v.value_case() == K::kI;
    if (type == "shape") return v.value_case() == K::kShape;
    if (type == "tensor") return v.value_case() == K::kTensor;
    if (type == "list(int)") return v.value_case() == K::kList && v.list().s_size() == 0;
    if (type == "list(string)") return v.value_case() == K::kList && v.list().i_size() == 0;
    return false;
}

// The problems TensorFlow's import would report for this GraphDef (empty: it imports).
std::vector<std::string> import_errors(const tapeflow::proto::GraphDef& def,
                                       const nlohmann::json& ops) {
    std::vector<std::string> errors;
    std::set<std::string> names;
    for (const auto& n : def.node())
        names.insert(n.name());
    for (const auto& n : def.node()) {
        if (!ops.contains(n.op())) {
            errors.push_back(n.name() + ": op " + n.op() + " is not in tf-op-defs.json");
            continue;
        }
        const auto& op = ops[n.op()];
        if (static_cast<std::size_t>(n.input_size()) != op["inputs"].size()) {
            errors.push_back(fmt::format("{}: {} inputs, {} takes {}",
                                         n.name(),
                                         n.input_size(),
                                         n.op(),
                                         op["inputs"].size()));
        }
        for (const std::string& input : n.input()) {
            if (!names.contains(input.substr(0, input.find(':'))))
                errors.push_back(n.name() + ": no node " + input);
        }
        for (const auto& [key, value] : n.attr()) {
            if (key.starts_with("_")) continue;  // _output_shapes and friends: allowed anywhere
            if (!op["attrs"].contains(key)) {
                errors.push_back(n.name() + ": " + n.op() + " has no attr " + key);
                continue;
            }
            const auto& spec = op["attrs"][key];
            if (!has_kind(value, spec["type"])) {
                errors.push_back(fmt::format(
                    "{}: attr {} is not a {}", n.name(), key, spec["type"].get<std::string>()));
            } else if (spec.contains("allowed")) {
                const auto& allowed = spec["allowed"];
                if (std::find(allowed.begin(), allowed.end(), value.s()) == allowed.end()) {
                    errors.push_back(n.name() + ": " + key + " = " + value.s() + " is not allowed");
                }
            }
        }
        for (const auto& [key, spec] : op["attrs"].items()) {
            if (!spec.value("optional", false) && !n.attr().contains(key)) {
                errors.push_back(n.name() + ": required attr " + key + " missing");
            }
        }
    }
    return errors;
}

tapeflow::proto::GraphDef graph_def_of(const tf::Graph& g) {
    tapeflow::proto::GraphDef def;
    REQUIRE(google::protobuf::TextFormat::ParseFromString(g.to_text(), &def));
    return def;
}

}  // namespace

TEST_CASE("the GraphDef of a convnet has TensorFlow's op signatures", "[summary][graph]") {
    tf::random::set_seed(1);
    tf::Variable kernel(tf::random::normal({3, 3, 1, 4}), {.name = "sig/kernel"});
    tf::Variable bias(tf::zeros({4}), {.name = "sig/bias"});
    tf::Variable dense(tf::random::normal({64, 3}), {.name = "sig/dense"});
    const tf::Tensor images = tf::random::uniform({2, 8, 8, 1});
    const tf::Tensor labels = tf::constant({0, 2});
    tf::GradientTape tape;
    tape.watch(images);
    {
        auto scope = tf::name_scope("net");
        auto h = tf::nn::relu(tf::nn::bias_add(tf::nn::conv2d(images, kernel, 1, "SAME"), bias));
        h = tf::nn::max_pool2d(h, 2, 2, "SAME");
        const auto logits = tf::matmul(tf::reshape(h, {-1, 64}), dense);
        const auto loss =
            tf::reduce_mean(tf::nn::sparse_softmax_cross_entropy_with_logits(labels, logits));
        tf::reduce_sum(tf::transpose(tf::expand_dims(tf::cast(logits, tf::float64), 0)), {0, 2});
        tf::sigmoid(loss * 2.0f + 1.0f);
        tf::nn::conv2d(images, kernel, 1, "VALID");
    }
    const tapeflow::proto::GraphDef def = graph_def_of(tape.graph());
    const auto errors = import_errors(def, op_defs());
    for (const auto& e : errors)
        UNSCOPED_INFO(e);
    CHECK(errors.empty());
    CHECK(def.versions().producer() == 1394);

    auto node = [&](const std::string& name) -> const tapeflow::proto::NodeDef& {
        for (const auto& n : def.node()) {
            if (n.name() == name) return n;
        }
        FAIL("no node " << name);
        return def.node(0);
    };
    const auto& conv = node("net/Conv2D");
    CHECK(conv.attr().at("padding").s() == "SAME");
    CHECK(conv.attr().at("data_format").s() == "NHWC");
    CHECK(conv.attr().at("strides").list().i_size() == 4);
    CHECK(node("net/Conv2D_1").attr().at("padding").s() == "VALID");
    CHECK(node("net/MaxPool").attr().at("ksize").list().i(1) == 2);
    const auto& reshape = node("net/Reshape");
    const auto& shape = node(reshape.input(1));
    CHECK(shape.op() == "Const");
    CHECK(shape.attr().at("value").tensor().int_val_size() == 2);
    CHECK(shape.attr().at("value").tensor().int_val(1) == 64);
    const auto& mean = node("net/Mean");
    CHECK(mean.input_size() == 2);
    CHECK(node(mean.input(1)).op() == "Const");
    CHECK(node("net/Cast").attr().at("DstT").type() == tapeflow::proto::DT_DOUBLE);
    CHECK(node("net/SparseSoftmaxCrossEntropyWithLogits").attr().at("Tlabels").type() ==
          tapeflow::proto::DT_INT32);
}
