// TF2 object-based checkpoints: TensorFlow's own tf.Module checkpoint restored through its object
// graph, round trips (module trees, a Keras Sequential with an Adam optimizer and its slots,
// deferred slot restoration, save_counter), TF's keys and graph structure, load-status assertions,
// bad input, and CheckpointManager's retention and state file.
#include <filesystem>
#include <thread>

#include <catch2/catch.hpp>

#include "checkpoint/checkpoint_test_util.hpp"
#include "train/checkpoint/checkpoint_state.hpp"
#include "train/checkpoint/object_graph.hpp"
#include "train/checkpoint/tensor_bundle.hpp"

namespace tf = tapeflow;
namespace t = tapeflow::train;
namespace kl = tapeflow::keras::layers;
namespace ko = tapeflow::keras::optimizers;
namespace objects = tapeflow::train::ckpt::objects;
namespace fs = std::filesystem;
using Catch::Contains;
using ckpt_test::fresh_dir;
using ckpt_test::read_bytes;

namespace {

const auto golden = &ckpt_test::golden_tf_checkpoint;

float scalar(const tf::Variable& v) {
    return v.value().item<float>();
}

objects::ObjectGraph graph_of(const std::string& prefix) {
    const t::CheckpointReader reader(prefix);
    const auto bytes = reader.get_tensor_bytes("_CHECKPOINTABLE_OBJECT_GRAPH");
    REQUIRE(bytes.size() == 1);
    return objects::parse_object_graph(bytes.front(), prefix);
}

std::vector<std::string> keys_of(const std::string& prefix) {
    std::vector<std::string> out;
    for (const auto& [key, shape] : t::CheckpointReader(prefix).get_variable_to_shape_map())
        out.push_back(key);
    return out;
}

// half_plus_two's tf.Module: a, b, c by attribute name.
std::shared_ptr<tf::Module> half_plus_two_module() {
    auto m = std::make_shared<tf::Module>("half_plus_two");
    m->track_as("a", tf::Variable(tf::constant(0.0F), {.name = "a"}));
    m->track_as("b", tf::Variable(tf::constant(0.0F), {.name = "b"}));
    m->track_as("c", tf::Variable(tf::constant(0.0F), {.name = "c"}));
    return m;
}

// Dense(3) -> BatchNormalization, built on a [4, 2] input.
std::shared_ptr<tf::keras::Sequential> small_model(uint64_t seed) {
    auto model = std::make_shared<tf::keras::Sequential>(std::vector<std::shared_ptr<kl::Layer>>{
        std::make_shared<kl::Dense>(
            3,
            kl::DenseOptions{.kernel_initializer = tf::keras::initializers::glorot_uniform(seed)}),
        std::make_shared<kl::BatchNormalization>()});
    (*model)(tf::zeros({4, 2}));
    return model;
}

tf::Tensor batch() {
    return tf::constant(std::vector<float>{1, 2, -1, 0.5F, 3, -2, 0, 1}, {4, 2});
}

void train_step(tf::keras::Sequential& model, t::Optimizer& opt) {
    opt.minimize([&] { return tf::reduce_mean(tf::square(model(batch(), /*training=*/true))); },
                 model.trainable_variables());
}

void check_same_values(const std::vector<tf::Variable>& a, const std::vector<tf::Variable>& b) {
    REQUIRE(a.size() == b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
        INFO(a[i].name());
        CHECK(ckpt_test::bitwise_equal(a[i].value(), b[i].value()));
    }
}

}  // namespace

TEST_CASE("object checkpoint: TensorFlow's half_plus_two tf.Module restores by its object graph",
          "[object_checkpoint]") {
    auto module = half_plus_two_module();
    t::Checkpoint ckpt(module);
    const auto status = ckpt.restore(golden("saved_model_half_plus_two_tf2_cpu"));
    CHECK(scalar(module->own_variables()[0]) == 0.5F);
    CHECK(scalar(module->own_variables()[1]) == 2.0F);
    CHECK(scalar(module->own_variables()[2]) == 3.0F);
    // The signatures, functions and the asset hold no values: nothing is left over.
    CHECK_NOTHROW(status.assert_consumed());
    CHECK_NOTHROW(status.assert_existing_objects_matched());

    // Restoring by structure, not by variable name: other names, same attributes.
    auto renamed = std::make_shared<tf::Module>("other");
    renamed->track_as("c", tf::Variable(tf::constant(0.0F), {.name = "x"}));
    t::Checkpoint partial(renamed);
    const auto partial_status = partial.restore(golden("saved_model_half_plus_two_tf2_cpu"));
    CHECK(scalar(renamed->own_variables()[0]) == 3.0F);
    CHECK_NOTHROW(partial_status.assert_existing_objects_matched());
    CHECK_THROWS_TYPED(partial_status.assert_consumed(),
                       tf::errors::AssertionError,
                       Contains("Unresolved object") && Contains("a") && Contains("b"));
    partial_status.expect_partial();
}

TEST_CASE("object checkpoint: TensorFlow's object graph of half_plus_two parsed",
          "[object_checkpoint]") {
    const objects::ObjectGraph g = graph_of(golden("saved_model_half_plus_two_tf2_cpu"));
    REQUIRE(g.nodes.size() == 24);
    std::vector<std::string> root_children;
    for (const auto& c : g.nodes[0].children)
        root_children.push_back(c.local_name);
    CHECK(root_children == std::vector<std::string>{"a",
                                                    "b",
                                                    "c",
                                                    "asset",
                                                    "classify_x2y3",
                                                    "classify_xy",
                                                    "predict",
                                                    "regress_x2y3",
                                                    "regress_xy",
                                                    "regress_xy2",
                                                    "signatures"});
    CHECK(g.nodes[0].children[0].node_id == 1);
    CHECK(g.nodes[0].children[10].node_id == 11);
    CHECK(g.nodes[0].has_checkpoint_values);
    for (int i = 1; i <= 3; ++i) {
        const std::string name(1, static_cast<char>('a' + i - 1));
        REQUIRE(g.nodes[i].attributes.size() == 1);
        CHECK(g.nodes[i].attributes[0].name == "VARIABLE_VALUE");
        CHECK(g.nodes[i].attributes[0].full_name == name);
        CHECK(g.nodes[i].attributes[0].checkpoint_key == name + "/.ATTRIBUTES/VARIABLE_VALUE");
        CHECK(g.nodes[i].has_checkpoint_values);
        CHECK(g.nodes[i].children.empty());
    }
    CHECK_FALSE(g.nodes[4].has_checkpoint_values);  // the asset
    REQUIRE(g.nodes[11].children.size() == 6);      // the signatures
    CHECK(g.nodes[11].children[5].local_name == "serving_default");
    CHECK(g.nodes[11].children[5].node_id == 23);

    // Serialized again and parsed, the graph is the same (TensorFlow's writer puts an
    // ObjectReference's local_name before its node_id; protoc's C++ goes by field number, so the
    // bytes differ while the message is the same).
    const objects::ObjectGraph again =
        objects::parse_object_graph(objects::serialize_object_graph(g), "again");
    REQUIRE(again.nodes.size() == g.nodes.size());
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
        CHECK(again.nodes[i].children.size() == g.nodes[i].children.size());
        CHECK(again.nodes[i].attributes.size() == g.nodes[i].attributes.size());
        CHECK(again.nodes[i].has_checkpoint_values == g.nodes[i].has_checkpoint_values);
    }
    CHECK(again.nodes[11].children[5].local_name == "serving_default");
}

TEST_CASE("object checkpoint: TF's local name escaping and keys", "[object_checkpoint]") {
    CHECK(objects::escape_local_name("a.b/c") == "a..b.Sc");
    CHECK(objects::attribute_key("model/dense", "VARIABLE_VALUE") ==
          "model/dense/.ATTRIBUTES/VARIABLE_VALUE");
    CHECK(objects::slot_variable_path("model/k", "optimizer", "m") ==
          "model/k/.OPTIMIZER_SLOT/optimizer/m");
}

TEST_CASE("object checkpoint: a module tree round trip, save, write and save_counter",
          "[object_checkpoint]") {
    const std::string dir = fresh_dir("object_tree");
    auto make = [](float w, float b) {
        auto encoder = std::make_shared<tf::Module>("encoder");
        encoder->track_as("w", tf::Variable(tf::fill({2, 2}, w), {.name = "w"}));
        auto root = std::make_shared<tf::Module>("net");
        root->track_as("encoder", encoder);
        root->track_as("b.x/y", tf::Variable(tf::constant(b), {.name = "b"}));
        return root;
    };
    auto net = make(1.5F, -2.0F);
    tf::Variable step(tf::constant(int64_t{7}), {.name = "step"});
    t::Checkpoint ckpt({{"step", step}, {"net", net}});
    CHECK(ckpt.save_counter().value().item<int64_t>() == 0);
    const std::string first = ckpt.save(dir + "/ckpt");
    CHECK(first == dir + "/ckpt-1");
    CHECK(ckpt.save(dir + "/ckpt") == dir + "/ckpt-2");
    CHECK(ckpt.save_counter().value().item<int64_t>() == 2);
    CHECK(t::CheckpointReader(dir).prefix() == dir + "/ckpt-2");
    const auto state = t::ckpt::read_checkpoint_state(dir);
    REQUIRE(state);
    CHECK(state->all_model_checkpoint_paths == std::vector<std::string>{dir + "/ckpt-2"});

    CHECK(keys_of(first) == std::vector<std::string>{"_CHECKPOINTABLE_OBJECT_GRAPH",
                                                     "net/b..x.Sy/.ATTRIBUTES/VARIABLE_VALUE",
                                                     "net/encoder/w/.ATTRIBUTES/VARIABLE_VALUE",
                                                     "save_counter/.ATTRIBUTES/VARIABLE_VALUE",
                                                     "step/.ATTRIBUTES/VARIABLE_VALUE"});
    // Children sorted by name as TF's keyword arguments, save_counter last.
    const auto g = graph_of(first);
    REQUIRE(g.nodes[0].children.size() == 3);
    CHECK(g.nodes[0].children[0].local_name == "net");
    CHECK(g.nodes[0].children[1].local_name == "step");
    CHECK(g.nodes[0].children[2].local_name == "save_counter");
    CHECK(g.nodes[1].children[1].local_name == "encoder");  // variables, then submodules
    CHECK(t::CheckpointReader(first)
              .get_tensor("save_counter/.ATTRIBUTES/VARIABLE_VALUE")
              .item<int64_t>() == 1);

    // write: exactly the prefix, no counter change, no state file change.
    const std::string written = ckpt.write(dir + "/exact");
    CHECK(written == dir + "/exact");
    CHECK(fs::exists(dir + "/exact.index"));
    CHECK(ckpt.save_counter().value().item<int64_t>() == 2);
    CHECK(t::CheckpointReader(dir).prefix() == dir + "/ckpt-2");

    auto fresh = make(0, 0);
    tf::Variable fresh_step(tf::constant(int64_t{0}), {.name = "step"});
    t::Checkpoint restored({{"net", fresh}, {"step", fresh_step}});
    restored.restore(first).assert_consumed();
    check_same_values(fresh->variables(), net->variables());
    CHECK(fresh_step.value().item<int64_t>() == 7);
    CHECK(restored.save_counter().value().item<int64_t>() == 1);
    // A directory restores its latest checkpoint.
    restored.restore(dir).assert_consumed();
    CHECK(restored.save_counter().value().item<int64_t>() == 2);
}

TEST_CASE("object checkpoint: Keras Sequential with BatchNormalization and Adam, TF's keys",
          "[object_checkpoint]") {
    const std::string dir = fresh_dir("object_keras");
    auto model = small_model(1);
    auto adam = std::make_shared<ko::Adam>(ko::AdamOptions{.learning_rate = 0.01});
    train_step(*model, *adam);
    t::Checkpoint ckpt({{"optimizer", adam}, {"model", model}});
    const std::string prefix = ckpt.save(dir + "/ckpt");

    const std::string k0 = "model/layer_with_weights-0/";
    const std::string k1 = "model/layer_with_weights-1/";
    const std::string v = "/.ATTRIBUTES/VARIABLE_VALUE";
    std::vector<std::string> expected = {"_CHECKPOINTABLE_OBJECT_GRAPH",
                                         k0 + "bias" + v,
                                         k0 + "kernel" + v,
                                         k1 + "beta" + v,
                                         k1 + "gamma" + v,
                                         k1 + "moving_mean" + v,
                                         k1 + "moving_variance" + v,
                                         "optimizer/iter" + v,
                                         "save_counter" + v};
    for (const std::string w : {"layer_with_weights-0/bias",
                                "layer_with_weights-0/kernel",
                                "layer_with_weights-1/beta",
                                "layer_with_weights-1/gamma"})
        for (const std::string slot : {"m", "v"})
            expected.push_back("model/" + w + "/.OPTIMIZER_SLOT/optimizer/" + slot + v);
    std::sort(expected.begin(), expected.end());
    CHECK(keys_of(prefix) == expected);

    // The graph as TF builds it: breadth first, slots appended per slot name then variable.
    const auto g = graph_of(prefix);
    REQUIRE(g.nodes.size() == 21);
    CHECK(g.nodes[0].children[0].local_name == "model");
    CHECK(g.nodes[0].children[1].local_name == "optimizer");
    CHECK(g.nodes[0].children[2].local_name == "save_counter");
    REQUIRE(g.nodes[1].children.size() == 4);
    CHECK(g.nodes[1].children[0].local_name == "layer_with_weights-0");
    CHECK(g.nodes[1].children[1].local_name == "layer-0");
    CHECK(g.nodes[1].children[0].node_id == g.nodes[1].children[1].node_id);
    CHECK(g.nodes[2].children[0].local_name == "iter");
    REQUIRE(g.nodes[2].slot_variables.size() == 8);
    CHECK(g.nodes[2].slot_variables[0].slot_name == "m");
    CHECK(g.nodes[2].slot_variables[0].original_variable_node_id == 7);  // the kernel
    CHECK(g.nodes[2].slot_variables[0].slot_variable_node_id == 13);
    CHECK(g.nodes[2].slot_variables[4].slot_name == "v");
    CHECK(g.nodes[7].attributes[0].full_name == model->layers()[0]->variables()[0].name());
    CHECK(g.nodes[13].attributes[0].checkpoint_key ==
          "model/layer_with_weights-0/kernel/.OPTIMIZER_SLOT/optimizer/m" + v);

    // Restore into a fresh model and optimizer: the slots do not exist yet and are restored when
    // the first step creates them; then both take the same step.
    auto model2 = small_model(2);
    auto adam2 = std::make_shared<ko::Adam>(ko::AdamOptions{.learning_rate = 0.01});
    t::Checkpoint ckpt2({{"model", model2}, {"optimizer", adam2}});
    const auto status = ckpt2.restore(prefix);
    check_same_values(model2->variables(), model->variables());
    CHECK_THROWS_AS(status.assert_consumed(), tf::errors::AssertionError);  // slots pending
    CHECK_NOTHROW(status.assert_existing_objects_matched());
    train_step(*model2, *adam2);
    train_step(*model, *adam);
    CHECK_NOTHROW(status.assert_consumed());
    check_same_values(model2->variables(), model->variables());
    CHECK(adam2->iterations() == 2);
    const auto vars = model->trainable_variables();
    const auto vars2 = model2->trainable_variables();
    for (std::size_t i = 0; i < vars.size(); ++i)
        for (const std::string slot : {"momentum", "velocity"})
            CHECK(ckpt_test::bitwise_equal(adam->get_slot(vars[i], slot)->value(),
                                           adam2->get_slot(vars2[i], slot)->value()));
}

TEST_CASE("object checkpoint: tf.keras 2's layout with optimizer_v2 hyperparameters restores",
          "[object_checkpoint]") {
    // What tf.keras 2 writes for the same model has, besides tapeflow's nodes, the optimizer's
    // hyperparameter variables (beta_1, beta_2, decay, learning_rate): add them to a tapeflow
    // checkpoint's graph and bundle, as TensorFlow lays them out.
    const std::string dir = fresh_dir("object_hypers");
    auto model = small_model(4);
    auto adam = std::make_shared<ko::Adam>(ko::AdamOptions{.learning_rate = 0.01});
    train_step(*model, *adam);
    const std::string mine =
        t::Checkpoint({{"model", model}, {"optimizer", adam}}).write(dir + "/a");
    objects::ObjectGraph g = graph_of(mine);
    const t::CheckpointReader reader(mine);
    t::ckpt::bundle::BundleWriter w(dir + "/tf_layout");
    for (const auto& [key, dtype] : reader.get_variable_to_dtype_map())
        w.add(key, reader.get_tensor(key));
    const auto optimizer = static_cast<std::size_t>(g.nodes[0].children[1].node_id);
    for (const std::string hyper : {"beta_1", "beta_2", "decay", "learning_rate"}) {
        const std::string key = "optimizer/" + hyper + "/.ATTRIBUTES/VARIABLE_VALUE";
        g.nodes[optimizer].children.push_back({static_cast<int32_t>(g.nodes.size()), hyper});
        objects::ObjectGraph::Node node;
        node.attributes.push_back({"VARIABLE_VALUE", "Adam/" + hyper, key});
        node.has_checkpoint_values = true;
        g.nodes.push_back(node);
        w.add(key, tf::constant(0.5F));
    }
    w.add_strings(
        "_CHECKPOINTABLE_OBJECT_GRAPH", tf::Shape{}, {objects::serialize_object_graph(g)});
    w.finish();

    auto model2 = small_model(5);
    auto adam2 = std::make_shared<ko::Adam>(ko::AdamOptions{.learning_rate = 0.01});
    const auto status =
        t::Checkpoint({{"model", model2}, {"optimizer", adam2}}).read(dir + "/tf_layout");
    check_same_values(model2->variables(), model->variables());
    train_step(*model2, *adam2);
    train_step(*model, *adam);
    check_same_values(model2->variables(), model->variables());
    CHECK_NOTHROW(status.assert_existing_objects_matched());
    // The hyperparameters are constructor options in tapeflow: nothing takes them.
    CHECK_THROWS_TYPED(status.assert_consumed(),
                       tf::errors::AssertionError,
                       Contains("optimizer/learning_rate") && Contains("optimizer/beta_1"));
    status.expect_partial();
}

TEST_CASE("object checkpoint: an unbuilt Keras model takes its weights when it builds",
          "[object_checkpoint]") {
    const std::string dir = fresh_dir("object_unbuilt");
    auto model = small_model(3);
    auto adam = std::make_shared<ko::Adam>(ko::AdamOptions{.learning_rate = 0.01});
    train_step(*model, *adam);
    t::Checkpoint ckpt({{"model", model}, {"optimizer", adam}});
    const std::string prefix = ckpt.save(dir + "/ckpt");

    // Not built: no weights, so the layers are reachable only as "layer-<i>" (TF's layout
    // names them both ways); their weights and slots are restored when they are created.
    auto unbuilt = std::make_shared<tf::keras::Sequential>(std::vector<std::shared_ptr<kl::Layer>>{
        std::make_shared<kl::Dense>(3), std::make_shared<kl::BatchNormalization>()});
    auto adam2 = std::make_shared<ko::Adam>(ko::AdamOptions{.learning_rate = 0.01});
    t::Checkpoint ckpt2({{"model", unbuilt}, {"optimizer", adam2}});
    const auto status = ckpt2.restore(prefix);
    CHECK(unbuilt->variables().empty());
    CHECK_THROWS_AS(status.assert_consumed(), tf::errors::AssertionError);
    (*unbuilt)(tf::zeros({4, 2}));
    check_same_values(unbuilt->variables(), model->variables());
    train_step(*unbuilt, *adam2);
    train_step(*model, *adam);
    CHECK_NOTHROW(status.assert_consumed());
    check_same_values(unbuilt->variables(), model->variables());
}

TEST_CASE("object checkpoint: MultiHeadAttention's projections as tf.keras 2's sublayers",
          "[object_checkpoint]") {
    const std::string dir = fresh_dir("object_mha");
    auto make = [] {
        auto mha = std::make_shared<kl::MultiHeadAttention>(2, 4);
        const tf::Tensor q = tf::random::normal({1, 3, 8}, 0, 1, tf::float32, 5);
        (*mha)(q, q);
        return mha;
    };
    auto mha = make();
    const std::string prefix = t::Checkpoint({{"attention", mha}}).write(dir + "/mha");
    const std::string v = "/.ATTRIBUTES/VARIABLE_VALUE";
    std::vector<std::string> expected = {"_CHECKPOINTABLE_OBJECT_GRAPH"};
    for (const std::string sub : {"_query_dense", "_key_dense", "_value_dense", "_output_dense"})
        for (const std::string w : {"kernel", "bias"})
            expected.push_back("attention/" + sub + "/" + w + v);
    std::sort(expected.begin(), expected.end());
    CHECK(keys_of(prefix) == expected);
    auto other = make();
    t::Checkpoint({{"attention", other}}).read(prefix).assert_consumed();
    check_same_values(other->variables(), mha->variables());
}

TEST_CASE("object checkpoint: tf.compat.v1 Adam's beta powers and slots, restored when created",
          "[object_checkpoint]") {
    const std::string dir = fresh_dir("object_tf1");
    auto make = [] {
        auto m = std::make_shared<tf::Module>("m");
        m->track_as("w",
                    tf::Variable(tf::constant(std::vector<float>{1, -2, 3}, {3}), {.name = "w"}));
        return m;
    };
    auto loss = [](const tf::Module& m) {
        return [&m] {
            return tf::reduce_sum(tf::square(m.own_variables()[0]));
        };
    };
    auto m = make();
    auto opt = std::make_shared<t::AdamOptimizer>(0.1);
    opt->minimize(loss(*m), m->variables());
    t::Checkpoint ckpt({{"model", m}, {"opt", opt}});
    const std::string prefix = ckpt.write(dir + "/tf1");
    const auto keys = keys_of(prefix);
    for (const std::string k : {"opt/beta1_power/.ATTRIBUTES/VARIABLE_VALUE",
                                "opt/beta2_power/.ATTRIBUTES/VARIABLE_VALUE",
                                "model/w/.OPTIMIZER_SLOT/opt/m/.ATTRIBUTES/VARIABLE_VALUE",
                                "model/w/.OPTIMIZER_SLOT/opt/v/.ATTRIBUTES/VARIABLE_VALUE"})
        CHECK(std::find(keys.begin(), keys.end(), k) != keys.end());

    auto m2 = make();
    auto opt2 = std::make_shared<t::AdamOptimizer>(0.1);
    t::Checkpoint ckpt2({{"model", m2}, {"opt", opt2}});
    const auto status = ckpt2.read(prefix);
    opt2->minimize(loss(*m2), m2->variables());
    opt->minimize(loss(*m), m->variables());
    status.assert_consumed();
    check_same_values(m2->variables(), m->variables());
    check_same_values(opt2->variables(), opt->variables());
}

TEST_CASE("object checkpoint: load status assertions", "[object_checkpoint]") {
    const std::string dir = fresh_dir("object_status");
    auto root = std::make_shared<tf::Module>("r");
    root->track_as("x", tf::Variable(tf::constant(1.0F), {.name = "x"}));
    root->track_as("y", tf::Variable(tf::constant(2.0F), {.name = "y"}));
    const std::string prefix = t::Checkpoint(root).write(dir + "/xy");

    // A live object the checkpoint lacks.
    auto more = std::make_shared<tf::Module>("r");
    more->track_as("x", tf::Variable(tf::constant(0.0F), {.name = "x"}));
    more->track_as("z", tf::Variable(tf::constant(0.0F), {.name = "z"}));
    t::Checkpoint c1(more);
    const auto s1 = c1.read(prefix);
    CHECK(scalar(more->own_variables()[0]) == 1.0F);
    CHECK_THROWS_TYPED(
        s1.assert_existing_objects_matched(), tf::errors::FailedPreconditionError, Contains("z"));
    CHECK_THROWS_TYPED(s1.assert_consumed(), tf::errors::AssertionError, Contains("y"));
    s1.expect_partial();

    // A saved object nothing takes: consumed fails, existing objects matched passes.
    auto fewer = std::make_shared<tf::Module>("r");
    fewer->track_as("y", tf::Variable(tf::constant(0.0F), {.name = "y"}));
    t::Checkpoint c2(fewer);
    const auto s2 = c2.read(prefix);
    CHECK(scalar(fewer->own_variables()[0]) == 2.0F);
    CHECK_NOTHROW(s2.assert_existing_objects_matched());
    CHECK_THROWS_TYPED(s2.assert_consumed(),
                       tf::errors::AssertionError,
                       Contains("Unresolved object") && Contains("x"));
    CHECK(&s2.expect_partial() == &s2);
}

TEST_CASE("object checkpoint: bad input is a typed error and changes nothing",
          "[object_checkpoint]") {
    const std::string dir = fresh_dir("object_bad");
    auto root = std::make_shared<tf::Module>("r");
    root->track_as("x", tf::Variable(tf::constant(1.0F), {.name = "x"}));
    root->track_as("v", tf::Variable(tf::zeros({3}), {.name = "v"}));
    const std::string prefix = t::Checkpoint(root).write(dir + "/good");

    SECTION("shape mismatch names the path; nothing is assigned") {
        auto other = std::make_shared<tf::Module>("r");
        other->track_as("x", tf::Variable(tf::constant(5.0F), {.name = "x"}));
        other->track_as("v", tf::Variable(tf::zeros({4}), {.name = "v"}));
        t::Checkpoint c(other);
        CHECK_THROWS_TYPED(c.read(prefix),
                           tf::errors::InvalidArgumentError,
                           Contains("'v'") && Contains("(3,)") && Contains("(4,)"));
        CHECK(scalar(other->own_variables()[0]) == 5.0F);
    }
    SECTION("dtype mismatch") {
        auto other = std::make_shared<tf::Module>("r");
        other->track_as("x", tf::Variable(tf::constant(5.0), {.name = "x"}));
        t::Checkpoint c(other);
        CHECK_THROWS_TYPED(c.read(prefix),
                           tf::errors::InvalidArgumentError,
                           Contains("'x'") && Contains("float32") && Contains("float64"));
    }
    SECTION("a checkpoint without an object graph (TF1) is a NotFoundError") {
        t::Checkpoint c(root);
        CHECK_THROWS_TYPED(c.read(golden("saved_model_half_plus_two_cpu")),
                           tf::errors::NotFoundError,
                           Contains("_CHECKPOINTABLE_OBJECT_GRAPH"));
    }
    SECTION("a missing checkpoint is a NotFoundError") {
        t::Checkpoint c(root);
        CHECK_THROWS_AS(c.read(dir + "/nothing"), tf::errors::NotFoundError);
    }
    SECTION("a corrupt object graph is a DataLossError") {
        for (const std::string bytes : {std::string("\xff\xff\xff", 3), std::string()}) {
            t::ckpt::bundle::BundleWriter w(dir + "/corrupt");
            w.add("x/.ATTRIBUTES/VARIABLE_VALUE", tf::constant(1.0F));
            w.add_strings("_CHECKPOINTABLE_OBJECT_GRAPH", tf::Shape{}, {bytes});
            w.finish();
            t::Checkpoint c(root);
            CHECK_THROWS_TYPED(
                c.read(dir + "/corrupt"), tf::errors::DataLossError, Contains("corrupt"));
        }
        // A child pointing past the nodes.
        objects::ObjectGraph g;
        g.nodes.resize(1);
        g.nodes[0].children.push_back({5, "x"});
        t::ckpt::bundle::BundleWriter w(dir + "/dangling");
        w.add_strings(
            "_CHECKPOINTABLE_OBJECT_GRAPH", tf::Shape{}, {objects::serialize_object_graph(g)});
        w.finish();
        t::Checkpoint c(root);
        CHECK_THROWS_TYPED(c.read(dir + "/dangling"),
                           tf::errors::DataLossError,
                           Contains("node 0") && Contains("child 5"));
    }
    SECTION("an object graph naming a key the bundle lacks") {
        objects::ObjectGraph g;
        g.nodes.resize(2);
        g.nodes[0].children.push_back({1, "x"});
        g.nodes[1].attributes.push_back({"VARIABLE_VALUE", "x", "x/.ATTRIBUTES/VARIABLE_VALUE"});
        t::ckpt::bundle::BundleWriter w(dir + "/lacking");
        w.add_strings(
            "_CHECKPOINTABLE_OBJECT_GRAPH", tf::Shape{}, {objects::serialize_object_graph(g)});
        w.finish();
        t::Checkpoint c(root);
        CHECK_THROWS_TYPED(c.read(dir + "/lacking"),
                           tf::errors::NotFoundError,
                           Contains("x/.ATTRIBUTES/VARIABLE_VALUE"));
    }
    SECTION("bad children") {
        CHECK_THROWS_AS(t::Checkpoint({{"", root}}), tf::errors::InvalidArgumentError);
        CHECK_THROWS_AS(t::Checkpoint({{"save_counter", root}}), tf::errors::InvalidArgumentError);
        CHECK_THROWS_AS(t::Checkpoint({{"a", root}, {"a", root}}),
                        tf::errors::InvalidArgumentError);
        CHECK_THROWS_AS(t::Checkpoint({{"a", std::shared_ptr<tf::Module>()}}),
                        tf::errors::InvalidArgumentError);
    }
}

TEST_CASE("object checkpoint: CheckpointManager keeps max_to_keep and records the state",
          "[object_checkpoint]") {
    const std::string dir = fresh_dir("object_manager");
    tf::Variable w(tf::constant(0.0F), {.name = "w"});
    t::Checkpoint ckpt({{"w", w}});
    CHECK_THROWS_AS(t::CheckpointManager(ckpt, dir, 0), tf::errors::InvalidArgumentError);
    {
        t::CheckpointManager manager(ckpt, dir, 2);
        CHECK_FALSE(manager.latest_checkpoint());
        CHECK_FALSE(manager.restore_or_initialize());
        for (int i = 1; i <= 4; ++i) {
            w.assign(tf::constant(static_cast<float>(i)));
            CHECK(manager.save() == fmt::format("{}/ckpt-{}", dir, i));
        }
        CHECK(manager.checkpoints() == std::vector<std::string>{dir + "/ckpt-3", dir + "/ckpt-4"});
        CHECK(manager.latest_checkpoint() == dir + "/ckpt-4");
        CHECK_FALSE(fs::exists(dir + "/ckpt-1.index"));
        CHECK_FALSE(fs::exists(dir + "/ckpt-2.data-00000-of-00001"));
        CHECK(fs::exists(dir + "/ckpt-3.index"));
        const auto state = t::ckpt::read_checkpoint_state(dir);
        REQUIRE(state);
        CHECK(state->model_checkpoint_path == dir + "/ckpt-4");
        CHECK(state->all_model_checkpoint_paths == manager.checkpoints());
        CHECK(state->all_model_checkpoint_timestamps.size() == 2);
        CHECK(state->last_preserved_timestamp);
        const std::string text = read_bytes(dir + "/checkpoint");
        CHECK_THAT(text,
                   Contains("model_checkpoint_path: \"ckpt-4\"") &&
                       Contains("all_model_checkpoint_timestamps: ") &&
                       Contains("last_preserved_timestamp: "));
        CHECK(manager.save(100) == dir + "/ckpt-100");  // an explicit number
        CHECK(ckpt.save_counter().value().item<int64_t>() == 5);
    }
    // A new manager picks the list up and keeps sweeping it.
    t::CheckpointManager again(ckpt, dir, 2);
    CHECK(again.checkpoints() == std::vector<std::string>{dir + "/ckpt-4", dir + "/ckpt-100"});
    w.assign(tf::constant(-1.0F));
    CHECK(again.restore_or_initialize() == dir + "/ckpt-100");
    CHECK(scalar(w) == 4.0F);
    again.save();
    CHECK_FALSE(fs::exists(dir + "/ckpt-4.index"));
}

TEST_CASE("object checkpoint: keep_checkpoint_every_n_hours keeps old ones on disk",
          "[object_checkpoint]") {
    tf::Variable w(tf::constant(0.0F), {.name = "w"});
    t::Checkpoint ckpt({{"w", w}});
    SECTION("every interval passed: each swept checkpoint is kept") {
        const std::string dir = fresh_dir("object_keep_all");
        t::CheckpointManager manager(ckpt, dir, 1, 1e-12, "model");
        for (int i = 0; i < 3; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
            manager.save();
        }
        CHECK(manager.checkpoints().size() == 1);
        for (int i = 1; i <= 3; ++i)
            CHECK(fs::exists(fmt::format("{}/model-{}.index", dir, i)));
    }
    SECTION("a long interval: they are deleted") {
        const std::string dir = fresh_dir("object_keep_none");
        t::CheckpointManager manager(ckpt, dir, 1, 1000.0, "model");
        for (int i = 0; i < 3; ++i)
            manager.save();
        CHECK_FALSE(fs::exists(dir + "/model-1.index"));
        CHECK_FALSE(fs::exists(dir + "/model-2.index"));
        CHECK(fs::exists(dir + "/model-3.index"));
    }
    SECTION("max_to_keep none keeps everything") {
        const std::string dir = fresh_dir("object_keep_unbounded");
        t::CheckpointManager manager(ckpt, dir, std::nullopt);
        for (int i = 0; i < 3; ++i)
            manager.save();
        CHECK(manager.checkpoints().size() == 3);
    }
}
