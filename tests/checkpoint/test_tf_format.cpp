// The Saver in TensorFlow's checkpoint format: TF1's keys for the tf::train optimizers' slots and
// state, a checkpoint laid out as TF1's AdamOptimizer writes it resuming training exactly, format
// detection, and what a kill at each point of a save leaves on disk.
#include <cmath>
#include <filesystem>
#include <set>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "checkpoint/checkpoint_test_util.hpp"
#include "train/checkpoint/tensor_bundle.hpp"

namespace tf = tapeflow;
namespace t = tapeflow::train;
namespace fs = std::filesystem;
namespace bundle = tapeflow::train::ckpt::bundle;
using Catch::Contains;

namespace {

// The keys of a checkpoint, but a global step that an earlier test case may have left alive.
std::set<std::string> keys_of(const std::string& prefix) {
    std::set<std::string> out;
    for (const auto& [key, shape] : t::load_checkpoint(prefix).get_variable_to_shape_map())
        out.insert(key);
    out.erase("global_step");
    return out;
}

// One update of `opt` on loss = sum(w²)/2 (gradient: w), then a default-Saver checkpoint's keys.
std::set<std::string> keys_after_step(t::Optimizer& opt, tf::Variable& w, const std::string& dir) {
    opt.minimize([&] { return tf::reduce_sum(w.value() * w.value()) * 0.5f; }, {w});
    return keys_of(t::Saver().save(dir + "/m"));
}

}  // namespace

TEST_CASE("TF format: the tf::train optimizers' slots and state under TF1's keys",
          "[checkpoint][tf_format]") {
    const std::string dir = ckpt_test::fresh_dir("tf1_keys");
    using Keys = std::set<std::string>;
    {
        tf::Variable w(tf::constant({1.f, 2.f}), {.name = "k1/w"});
        t::AdamOptimizer opt(0.1);
        CHECK(keys_after_step(opt, w, dir) ==
              Keys{"k1/w", "k1/w/Adam", "k1/w/Adam_1", "beta1_power", "beta2_power"});
        // tapeflow's own names are unchanged (and are safetensors' keys).
        CHECK(opt.get_slot(w, "v")->name() == "k1/w/Adam/v");
    }
    {
        tf::Variable w(tf::constant({1.f, 2.f}), {.name = "k2/w"});
        t::AdamOptimizer opt(0.1, {.name = "MyAdam"});
        CHECK(keys_after_step(opt, w, dir) ==
              Keys{"k2/w", "k2/w/MyAdam", "k2/w/MyAdam_1", "beta1_power", "beta2_power"});
    }
    {
        tf::Variable w(tf::constant({1.f, 2.f}), {.name = "k3/w"});
        t::MomentumOptimizer opt(0.1, 0.9);
        CHECK(keys_after_step(opt, w, dir) == Keys{"k3/w", "k3/w/Momentum"});
    }
    {
        tf::Variable w(tf::constant({1.f, 2.f}), {.name = "k4/w"});
        t::RMSPropOptimizer opt(0.1);
        CHECK(keys_after_step(opt, w, dir) == Keys{"k4/w", "k4/w/RMSProp", "k4/w/RMSProp_1"});
        // TF1 creates rms first: "<var>/RMSProp" is the mean square (it starts at 1).
        CHECK(t::load_variable(dir + "/m", "k4/w/RMSProp").to_vector<float>() ==
              opt.get_slot(w, "rms")->value().to_vector<float>());
    }
    {
        tf::Variable w(tf::constant({1.f, 2.f}), {.name = "k5/w"});
        t::RMSPropOptimizer opt(0.1, {.centered = true});
        CHECK(keys_after_step(opt, w, dir) ==
              Keys{"k5/w", "k5/w/RMSProp", "k5/w/RMSProp_1", "k5/w/RMSProp_2"});
        CHECK(t::load_variable(dir + "/m", "k5/w/RMSProp_1").to_vector<float>() ==
              opt.get_slot(w, "mg")->value().to_vector<float>());
    }
    {
        tf::Variable w(tf::constant({1.f, 2.f}), {.name = "k6/w"});
        t::AdagradOptimizer opt(0.1);
        CHECK(keys_after_step(opt, w, dir) == Keys{"k6/w", "k6/w/Adagrad"});
    }
    {
        tf::Variable w(tf::constant({1.f, 2.f}), {.name = "k7/w"});
        t::AdadeltaOptimizer opt(0.1);
        CHECK(keys_after_step(opt, w, dir) == Keys{"k7/w", "k7/w/Adadelta", "k7/w/Adadelta_1"});
    }
    {
        tf::Variable w(tf::constant({1.f, 2.f}), {.name = "k8/w"});
        t::FtrlOptimizer opt(0.1);
        CHECK(keys_after_step(opt, w, dir) == Keys{"k8/w", "k8/w/Ftrl", "k8/w/Ftrl_1"});
    }
    {
        tf::Variable w(tf::constant({1.f, 2.f}), {.name = "k9/w"});
        t::FtrlOptimizer opt(0.1, {.accum_name = "acc", .linear_name = "lin"});
        CHECK(keys_after_step(opt, w, dir) == Keys{"k9/w", "k9/w/acc", "k9/w/lin"});
    }
    {
        tf::Variable w(tf::constant({1.f, 2.f}), {.name = "k10/w"});
        t::ProximalAdagradOptimizer opt(0.1);
        CHECK(keys_after_step(opt, w, dir) == Keys{"k10/w", "k10/w/ProximalAdagrad"});
    }
    {
        // Two live Adams: tapeflow names the second "Adam_1" (TF2's rule; TF1 would keep "Adam"
        // and give its slots "w/Adam_2", "w/Adam_3"). Its slots are "w/Adam_1" and "w/Adam_1_1",
        // each made unique as a TF1 graph name is: "w/Adam_1" is taken (the first Adam's v), so
        // m gets "w/Adam_1_1" and v, whose name that now is, "w/Adam_1_1_1".
        tf::Variable w(tf::constant({1.f, 2.f}), {.name = "k11/w"});
        t::AdamOptimizer a(0.1), b(0.1);
        a.minimize([&] { return tf::reduce_sum(w.value()); }, {w});
        CHECK(b.name() == "Adam_1");
        CHECK(keys_after_step(b, w, dir) == Keys{"k11/w",
                                                 "k11/w/Adam",
                                                 "k11/w/Adam_1",
                                                 "k11/w/Adam_1_1",
                                                 "k11/w/Adam_1_1_1",
                                                 "beta1_power",
                                                 "beta1_power_1",
                                                 "beta2_power",
                                                 "beta2_power_1"});
    }
    // Keys of dead optimizers are free again: a new Adam gets the plain keys.
    tf::Variable w(tf::constant({1.f, 2.f}), {.name = "k11/w"});
    t::AdamOptimizer opt(0.1);
    CHECK(keys_after_step(opt, w, dir) ==
          Keys{"k11/w", "k11/w/Adam", "k11/w/Adam_1", "beta1_power", "beta2_power"});
}

TEST_CASE("TF format: a checkpoint laid out as TF1's AdamOptimizer writes it resumes training",
          "[checkpoint][tf_format]") {
    const std::string dir = ckpt_test::fresh_dir("tf1_adam");
    // The keys TF1's adam.py gives (slots via _zeros_slot(v, "m"/"v", self._name): "<var>/Adam",
    // "<var>/Adam_1"; _create_non_slot_variable: "beta1_power", "beta2_power"), after 3 steps.
    const std::vector<float> w0{0.5f, -1.5f, 2.f}, m0{0.1f, -0.2f, 0.3f}, v0{0.01f, 0.04f, 0.02f};
    const float b1p = 0.729f * 0.9f, b2p = 0.997002999f * 0.999f;
    {
        bundle::BundleWriter writer(dir + "/model.ckpt-3");
        writer.add("beta1_power", tf::constant(b1p));
        writer.add("beta2_power", tf::constant(b2p));
        writer.add("dense/w", tf::constant(w0, {3}));
        writer.add("dense/w/Adam", tf::constant(m0, {3}));
        writer.add("dense/w/Adam_1", tf::constant(v0, {3}));
        writer.add("global_step", tf::constant(int64_t{3}));
        writer.finish();
    }
    CHECK(t::checkpoint_global_step(dir + "/model.ckpt-3") == 3);

    tf::Variable w(tf::zeros({3}), {.name = "dense/w"});
    tf::Variable step = t::get_or_create_global_step();
    t::AdamOptimizer opt(0.01);
    t::Saver saver;
    saver.restore(dir + "/model.ckpt-3");  // w and the step now; slots and powers when created
    CHECK(w.value().to_vector<float>() == w0);
    CHECK(t::global_step(step) == 3);
    opt.minimize([&] { return tf::reduce_sum(w.value() * w.value()) * 0.5f; }, {w}, step);

    // TF1's Adam step by hand (float64; g = w): lr_t = lr·√(1-β2^t)/(1-β1^t).
    const double lr_t = 0.01 * std::sqrt(1.0 - b2p) / (1.0 - b1p);
    const std::vector<float> got = w.value().to_vector<float>();
    for (std::size_t i = 0; i < 3; ++i) {
        const double g = w0[i];
        const double m = 0.9 * m0[i] + 0.1 * g, v = 0.999 * v0[i] + 0.001 * g * g;
        const double expected = w0[i] - lr_t * m / (std::sqrt(v) + 1e-8);
        INFO(i);
        CHECK(got[i] == Approx(expected).epsilon(1e-5));  // float32 arithmetic
        CHECK(opt.get_slot(w, "m")->value().to_vector<float>()[i] == Approx(m).epsilon(1e-5));
        CHECK(opt.get_slot(w, "v")->value().to_vector<float>()[i] == Approx(v).epsilon(1e-5));
    }
    CHECK(t::global_step(step) == 4);
    // And back: tapeflow's checkpoint has TF1's keys, the powers advanced once.
    const std::string prefix = saver.save(dir + "/model.ckpt", 4);
    const t::CheckpointReader reader(prefix);
    CHECK(reader.get_tensor("beta1_power").item<float>() == Approx(b1p * 0.9));
    CHECK(reader.get_tensor("beta2_power").item<float>() == Approx(b2p * 0.999));
    CHECK(reader.get_tensor("dense/w/Adam").to_vector<float>() ==
          opt.get_slot(w, "m")->value().to_vector<float>());
    CHECK(reader.get_tensor("dense/w/Adam_1").to_vector<float>() ==
          opt.get_slot(w, "v")->value().to_vector<float>());
    CHECK(reader.get_tensor("global_step").item<int64_t>() == 4);
}

TEST_CASE("TF format: detection by the files present; both formats under one directory",
          "[checkpoint][tf_format]") {
    const std::string dir = ckpt_test::fresh_dir("detect");
    tf::Variable a(tf::constant({1.f, 2.f}), {.name = "det_a"});
    t::Saver tf_saver(std::vector<tf::Variable>{a});
    t::Saver st_saver(std::vector<tf::Variable>{a}, {.format = t::CheckpointFormat::safetensors});
    tf_saver.save(dir + "/m", 1);
    a.assign(tf::constant({3.f, 4.f}));
    st_saver.save(dir + "/m", 2);
    CHECK(fs::exists(dir + "/m-1.index"));
    CHECK(fs::exists(dir + "/m-2.safetensors"));
    CHECK(t::latest_checkpoint(dir) == dir + "/m-2");
    CHECK(t::load_variable(dir + "/m-1", "det_a").to_vector<float>() == std::vector<float>{1, 2});
    CHECK(t::load_variable(dir + "/m-1.index", "det_a").to_vector<float>() ==
          std::vector<float>{1, 2});
    CHECK(t::load_variable(dir, "det_a").to_vector<float>() == std::vector<float>{3, 4});
    CHECK(t::checkpoint_global_step(dir + "/m-1") == 1);  // the name's step (no global_step)
    tf_saver.restore(dir + "/m-1");
    CHECK(a.value().to_vector<float>() == std::vector<float>{1, 2});
    st_saver.restore(dir + "/m-2");
    CHECK(a.value().to_vector<float>() == std::vector<float>{3, 4});
    // A TF checkpoint's string tensors are left out of list_variables, not an error.
    {
        bundle::BundleWriter w(dir + "/strings");
        w.add("x", tf::constant({1.f}));
        w.add_strings("_CHECKPOINTABLE_OBJECT_GRAPH", {}, {"graph"});
        w.finish();
    }
    CHECK(t::list_variables(dir + "/strings").size() == 1);
    CHECK_THROWS_AS(t::load_variable(dir + "/nothing", "x"), tf::errors::NotFoundError);
    CHECK_THROWS_WITH(t::load_variable(dir + "/nothing", "x"), Contains("nothing"));
    // Keys clashing with variable names: test_saver.cpp "[tf1]".
}

// What a SIGKILL at each point of a TF-format save leaves: the files of the steps before it,
// recreated here, must leave the previous checkpoint restorable and the state file naming a
// complete one.
TEST_CASE("TF format: a save killed at each point leaves the previous checkpoint restorable",
          "[checkpoint][tf_format][kill]") {
    const std::string dir = ckpt_test::fresh_dir("kill_points");
    tf::Variable a(tf::constant({1.f, 2.f}), {.name = "kp_a"});
    t::Saver saver(std::vector<tf::Variable>{a}, {.max_to_keep = 1});
    saver.save(dir + "/m", 1);
    const std::string data1 = ckpt_test::read_bytes(dir + "/m-1.data-00000-of-00001");
    const std::string index1 = ckpt_test::read_bytes(dir + "/m-1.index");
    const std::string state1 = ckpt_test::read_bytes(dir + "/checkpoint");
    a.assign(tf::constant({5.f, 6.f}));
    saver.save(dir + "/m", 2);
    const std::string data2 = ckpt_test::read_bytes(dir + "/m-2.data-00000-of-00001");
    const std::string index2 = ckpt_test::read_bytes(dir + "/m-2.index");
    const std::string state2 = ckpt_test::read_bytes(dir + "/checkpoint");
    CHECK_FALSE(fs::exists(dir + "/m-1.index"));  // max_to_keep deleted both files
    CHECK_FALSE(fs::exists(dir + "/m-1.data-00000-of-00001"));

    const std::string tmp = ".tmp.999999";  // a process that no longer runs
    struct Point {
        const char* name;
        std::vector<std::pair<std::string, std::string>> files;  // written by the killed save
        int expect_step;
    };
    const std::vector<Point> points = {
        {"data half written", {{"m-2.data-00000-of-00001" + tmp, data2.substr(0, 3)}}, 1},
        {"data and index written, not renamed",
         {{"m-2.data-00000-of-00001" + tmp, data2}, {"m-2.index" + tmp, index2}},
         1},
        {"data renamed, index not",
         {{"m-2.data-00000-of-00001", data2}, {"m-2.index" + tmp, index2}},
         1},
        {"index renamed, state file not",
         {{"m-2.data-00000-of-00001", data2}, {"m-2.index", index2}},
         1},
        {"state file written, old checkpoint not deleted",
         {{"m-2.data-00000-of-00001", data2}, {"m-2.index", index2}, {"checkpoint", state2}},
         2},
    };
    for (const Point& p : points) {
        INFO(p.name);
        for (const auto& e : fs::directory_iterator(dir))
            fs::remove(e.path());
        ckpt_test::write_bytes(dir + "/m-1.data-00000-of-00001", data1);
        ckpt_test::write_bytes(dir + "/m-1.index", index1);
        ckpt_test::write_bytes(dir + "/checkpoint", state1);
        for (const auto& [name, bytes] : p.files)
            ckpt_test::write_bytes(dir + "/" + name, bytes);
        const auto latest = t::latest_checkpoint(dir);
        REQUIRE(latest == fmt::format("{}/m-{}", dir, p.expect_step));
        tf::Variable b(tf::zeros({2}), {.name = "kp_b"});
        t::Saver(std::map<std::string, tf::Variable>{{"kp_a", b}}).restore(*latest);
        CHECK(b.value().to_vector<float>() ==
              (p.expect_step == 1 ? std::vector<float>{1, 2} : std::vector<float>{5, 6}));
        // The next save cleans up after the killed one.
        t::Saver next(std::vector<tf::Variable>{a}, {.max_to_keep = 1});
        next.recover_last_checkpoints({dir + "/m-1"});
        next.save(dir + "/m", 3);
        for (const auto& e : fs::directory_iterator(dir))
            CHECK_THAT(e.path().string(), !Contains(".tmp."));
        CHECK(t::latest_checkpoint(dir) == dir + "/m-3");
        CHECK_FALSE(fs::exists(dir + "/m-1.index"));
    }
}
