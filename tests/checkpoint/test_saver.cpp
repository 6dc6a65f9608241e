// Saver and the checkpoint helpers: every dtype round trips bitwise; file names, the "checkpoint"
// state file, max_to_keep, latest_checkpoint; restore's checks (names, shapes, dtypes) with the
// offending name, all-or-nothing; deferred restore of variables created after restore().
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include <catch2/catch.hpp>

#include "checkpoint/checkpoint_test_util.hpp"
#include "io/crc32c.hpp"
#include "train/checkpoint/tensor_bundle.hpp"

namespace tf = tapeflow;
namespace t = tapeflow::train;
namespace fs = std::filesystem;
using Catch::Contains;
using ckpt_test::bitwise_equal;

TEST_CASE("every dtype round trips bitwise; list_variables and load_variable", "[checkpoint]") {
    const auto format = GENERATE(t::CheckpointFormat::tensorflow, t::CheckpointFormat::safetensors);
    const bool tf_format = format == t::CheckpointFormat::tensorflow;
    INFO((tf_format ? "TensorFlow's format" : "safetensors"));
    const std::string dir = ckpt_test::fresh_dir(tf_format ? "dtypes_tf" : "dtypes");
    const auto tensors = ckpt_test::tensors_of_every_dtype();
    std::map<std::string, tf::Variable> named;
    for (const auto& [name, value] : tensors)
        named.emplace(name, tf::Variable(value, {.name = "rt_" + name}));
    t::Saver saver(named, t::SaverOptions{.format = format});
    const std::string prefix = saver.save(dir + "/all", 7);
    CHECK(prefix == dir + "/all-7");
    const std::string file = prefix + (tf_format ? ".index" : ".safetensors");
    CHECK(fs::exists(file));
    CHECK(fs::exists(prefix + ".data-00000-of-00001") == tf_format);

    const auto listed = t::list_variables(prefix);
    REQUIRE(listed.size() == tensors.size());
    for (const auto& [name, value] : tensors) {
        INFO(name);
        REQUIRE(listed.count(name) == 1);
        CHECK(listed.at(name).first == value.shape());
        CHECK(listed.at(name).second == value.dtype());
        CHECK(bitwise_equal(t::load_variable(prefix, name), value));
        CHECK(bitwise_equal(t::load_variable(file, name), value));  // the file name works too
        CHECK(bitwise_equal(t::load_variable(dir, name), value));   // and the directory
    }
    // No "global_step" variable was saved: TensorFlow's format gives the prefix's "-7".
    CHECK(t::checkpoint_global_step(prefix) == std::optional<int64_t>(7));

    for (auto& [name, var] : named)
        var.assign(tf::zeros_like(var.value()));
    saver.restore(prefix);
    for (const auto& [name, value] : tensors)
        CHECK(bitwise_equal(named.at(name).value(), value));
    CHECK_THROWS_AS(t::load_variable(prefix, "nope"), tf::errors::NotFoundError);
    CHECK_THROWS_WITH(t::load_variable(prefix, "nope"), Contains("nope"));
}

TEST_CASE("the header: format, global step, a CRC per tensor, 8-byte aligned data",
          "[checkpoint]") {
    const std::string dir = ckpt_test::fresh_dir("header");
    tf::Variable w(tf::constant({1.f, 2.f}), {.name = "hdr_w"});
    const std::string prefix = t::Saver(std::vector<tf::Variable>{w},
                                        t::SaverOptions{.format = t::CheckpointFormat::safetensors})
                                   .save(dir + "/m", 42);
    const std::string bytes = ckpt_test::read_bytes(prefix + ".safetensors");
    uint64_t n = 0;
    std::memcpy(&n, bytes.data(), 8);
    CHECK(n % 8 == 0);
    const std::string header = bytes.substr(8, n);
    CHECK_THAT(header, Contains("\"format\":\"tapeflow-checkpoint/1\""));
    CHECK_THAT(header, Contains("\"global_step\":\"42\""));
    CHECK_THAT(header,
               Contains("\"hdr_w\":{\"data_offsets\":[0,8],\"dtype\":\"F32\",\"shape\":[2]}"));
    const float raw[2] = {1.f, 2.f};  // the plain CRC32C of the tensor's bytes
    CHECK_THAT(
        header,
        Contains(fmt::format("\"crc32c/hdr_w\":\"{:08x}\"", tf::io::crc32c_extend(0, raw, 8))));
    CHECK(bytes.size() == 8 + n + 8);
}

TEST_CASE("save: step suffix, the TF state file, max_to_keep, latest_checkpoint", "[checkpoint]") {
    const std::string dir = ckpt_test::fresh_dir("state");
    tf::Variable w(tf::constant({1.f}), {.name = "state_w"});
    t::Saver saver(std::vector<tf::Variable>{w}, t::SaverOptions{.max_to_keep = 2});
    CHECK_FALSE(t::latest_checkpoint(dir).has_value());
    for (int step : {10, 20, 30})
        saver.save(dir + "/model.ckpt", step);
    CHECK(saver.last_checkpoints() ==
          std::vector<std::string>{dir + "/model.ckpt-20", dir + "/model.ckpt-30"});
    CHECK_FALSE(fs::exists(dir + "/model.ckpt-10.index"));  // TensorFlow's format by default
    CHECK_FALSE(fs::exists(dir + "/model.ckpt-10.data-00000-of-00001"));
    CHECK(fs::exists(dir + "/model.ckpt-20.index"));
    CHECK(fs::exists(dir + "/model.ckpt-20.data-00000-of-00001"));
    CHECK(t::latest_checkpoint(dir) == dir + "/model.ckpt-30");
    CHECK(ckpt_test::read_bytes(dir + "/checkpoint") ==
          "model_checkpoint_path: \"model.ckpt-30\"\n"
          "all_model_checkpoint_paths: \"model.ckpt-20\"\n"
          "all_model_checkpoint_paths: \"model.ckpt-30\"\n");
    // Without a step: "<path>.index", and the prefix is the path.
    CHECK(saver.save(dir + "/plain") == dir + "/plain");
    CHECK(fs::exists(dir + "/plain.index"));
    CHECK(t::latest_checkpoint(dir) == dir + "/plain");
    // No temporary files are left behind.
    for (const auto& e : fs::directory_iterator(dir))
        CHECK_THAT(e.path().string(), !Contains(".tmp."));
    // max_to_keep = 0 keeps everything.
    t::Saver all(std::vector<tf::Variable>{w}, t::SaverOptions{.max_to_keep = 0});
    for (int step = 0; step < 7; ++step)
        all.save(dir + "/keep", step);
    CHECK(all.last_checkpoints().size() == 7);
}

TEST_CASE("async save: a snapshot at the call, durable after wait(), in order, state file last",
          "[checkpoint][async]") {
    const std::string dir = ckpt_test::fresh_dir("async");
    tf::Variable w(tf::constant({1.f, 2.f, 3.f}), {.name = "async_w"});
    t::Saver saver(std::vector<tf::Variable>{w}, t::SaverOptions{.max_to_keep = 2, .async = true});
    for (int step = 1; step <= 5; ++step) {
        CHECK(saver.save(dir + "/model", step) == fmt::format("{}/model-{}", dir, step));
        // Changing the variable at once does not reach the checkpoint being written.
        w.assign(tf::constant({10.f * step, 0.f, 0.f}));
    }
    saver.wait();
    CHECK(saver.last_checkpoints() == std::vector<std::string>{dir + "/model-4", dir + "/model-5"});
    CHECK(t::latest_checkpoint(dir) == dir + "/model-5");
    CHECK_FALSE(fs::exists(dir + "/model-3.index"));
    // model-5 holds the value at the save() call (40), not the later assign (50).
    CHECK(t::load_variable(dir + "/model-5", "async_w").to_vector<float>() ==
          std::vector<float>{40.f, 0.f, 0.f});
    CHECK(t::load_variable(dir + "/model-4", "async_w").to_vector<float>() ==
          std::vector<float>{30.f, 0.f, 0.f});
    for (const auto& e : fs::directory_iterator(dir))
        CHECK_THAT(e.path().string(), !Contains(".tmp."));
    // restore() waits for the save in flight and reads the finished file.
    saver.save(dir + "/model", 6);
    w.assign(tf::constant({0.f, 0.f, 0.f}));
    saver.restore(dir + "/model-6");
    CHECK(w.value().to_vector<float>() == std::vector<float>{50.f, 0.f, 0.f});
    saver.wait();  // nothing in flight: returns at once
}

TEST_CASE("async save: a failed background write is raised by wait() and not kept",
          "[checkpoint][async]") {
    const std::string dir = ckpt_test::fresh_dir("async_fail");
    tf::Variable w(tf::constant({1.f}), {.name = "async_fail_w"});
    t::Saver saver(std::vector<tf::Variable>{w}, t::SaverOptions{.async = true});
    saver.save(dir + "/good", 1);
    saver.wait();
    // A directory where the checkpoint file should go makes the background rename fail.
    fs::create_directories(dir + "/bad-2.index/blocker");
    saver.save(dir + "/bad", 2);
    CHECK_THROWS_AS(saver.wait(), tf::errors::OpError);
    CHECK(saver.last_checkpoints() == std::vector<std::string>{dir + "/good-1"});
    CHECK(t::latest_checkpoint(dir) == dir + "/good-1");
    // The next save works again; a failure not yet collected is raised by the next save().
    saver.save(dir + "/good", 3);
    saver.save(dir + "/bad", 2);
    CHECK_THROWS_AS(saver.save(dir + "/good", 4), tf::errors::OpError);
    saver.wait();
    CHECK(t::latest_checkpoint(dir) == dir + "/good-3");
}

TEST_CASE(
    "restore checks names, shapes and dtypes and names the variable; nothing changes on error",
    "[checkpoint][errors]") {
    const std::string dir = ckpt_test::fresh_dir("checks");
    tf::Variable a(tf::constant({1.f, 2.f}), {.name = "chk_a"});
    tf::Variable b(tf::constant({3.f, 4.f, 5.f}), {.name = "chk_b"});
    const std::string prefix = t::Saver(std::vector<tf::Variable>{a, b}).save(dir + "/m", 1);
    a.assign(tf::constant({-1.f, -2.f}));

    CHECK_THROWS_AS(t::Saver(std::vector<tf::Variable>{a}).restore(dir + "/missing"),
                    tf::errors::NotFoundError);
    CHECK_THROWS_WITH(t::Saver(std::vector<tf::Variable>{a}).restore(dir + "/missing"),
                      Contains("missing"));

    tf::Variable extra(tf::constant({0.f}), {.name = "chk_extra"});
    CHECK_THROWS_AS(t::Saver(std::vector<tf::Variable>{a, extra}).restore(prefix),
                    tf::errors::NotFoundError);
    CHECK_THROWS_WITH(t::Saver(std::vector<tf::Variable>{a, extra}).restore(prefix),
                      Contains("chk_extra"));
    CHECK(a.value().to_vector<float>() == std::vector<float>{-1.f, -2.f});  // all or nothing

    tf::Variable wrong_shape(tf::constant({0.f}), {.name = "ws"});
    std::map<std::string, tf::Variable> by_shape{{"chk_a", a}, {"chk_b", wrong_shape}};
    CHECK_THROWS_AS(t::Saver(by_shape).restore(prefix), tf::errors::InvalidArgumentError);
    CHECK_THROWS_WITH(t::Saver(by_shape).restore(prefix), Contains("chk_b") && Contains("(3,)"));
    CHECK(a.value().to_vector<float>() == std::vector<float>{-1.f, -2.f});

    tf::Variable wrong_dtype(tf::constant({0.0, 0.0, 0.0}), {.name = "wd"});
    std::map<std::string, tf::Variable> by_dtype{{"chk_b", wrong_dtype}};
    CHECK_THROWS_AS(t::Saver(by_dtype).restore(prefix), tf::errors::InvalidArgumentError);
    CHECK_THROWS_WITH(t::Saver(by_dtype).restore(prefix),
                      Contains("float64") && Contains("float32"));

    // Savers reject duplicate names and '__metadata__'.
    CHECK_THROWS_AS(t::Saver(std::vector<tf::Variable>{a, a}), tf::errors::InvalidArgumentError);
    std::map<std::string, tf::Variable> reserved{{"__metadata__", a}};
    CHECK_THROWS_AS(t::Saver(reserved, t::SaverOptions{.format = t::CheckpointFormat::safetensors})
                        .save(dir + "/r"),
                    tf::errors::InvalidArgumentError);

    t::Saver(std::vector<tf::Variable>{a, b}).restore(prefix);
    CHECK(a.value().to_vector<float>() == std::vector<float>{1.f, 2.f});
}

TEST_CASE("the default Saver restores slots created after restore() (deferred restore)",
          "[checkpoint]") {
    const std::string dir = ckpt_test::fresh_dir("deferred");
    std::string prefix;
    std::vector<float> m_saved, w_saved;
    int64_t iterations = 0;
    {
        tf::Variable w(tf::constant({1.f, -2.f}), {.name = "dfr_w"});
        tf::keras::optimizers::Adam opt({.learning_rate = 0.1});
        for (int i = 0; i < 3; ++i)
            opt.minimize([&] { return tf::reduce_sum(w.value() * w.value()); }, {w});
        m_saved = opt.get_slot(w, "momentum")->value().to_vector<float>();
        w_saved = w.value().to_vector<float>();
        iterations = opt.iterations();
        prefix = t::Saver().save(dir + "/m", 3);
    }
    tf::Variable w(tf::constant({0.f, 0.f}), {.name = "dfr_w"});
    tf::keras::optimizers::Adam opt({.learning_rate = 0.1});
    t::Saver saver;
    saver.restore(prefix);
    CHECK(w.value().to_vector<float>() == w_saved);
    CHECK(opt.iterations() == 0);
    CHECK_FALSE(opt.get_slot(w, "momentum").has_value());
    // The first update creates the slots and the iteration counter: they take the saved values.
    opt.minimize([&] { return tf::reduce_sum(w.value() * w.value()); }, {w});
    CHECK(opt.iterations() == iterations + 1);
}

TEST_CASE("TensorFlow's format: tf::train optimizers' slots and state under TF1's keys",
          "[checkpoint][tf1]") {
    const std::string dir = ckpt_test::fresh_dir("tf1_keys");
    // A checkpoint laid out as TF1's tf.train.AdamOptimizer writes it (adam.py: slots "m", "v" of
    // slot_creator are "<var>/Adam" and "<var>/Adam_1"; beta1_power and beta2_power are non-slot
    // variables of that name), after two steps; written with the bundle writer, not the Saver.
    const double b1 = 0.9, b2 = 0.999, lr = 0.1, eps = 1e-8;
    {
        tf::train::ckpt::bundle::BundleWriter writer(dir + "/tf1-2");
        writer.add("tf1_w", tf::constant({1.f, -2.f}));
        writer.add("tf1_w/Adam", tf::constant({0.1f, 0.2f}));
        writer.add("tf1_w/Adam_1", tf::constant({0.01f, 0.04f}));
        writer.add("beta1_power", tf::constant(static_cast<float>(b1 * b1)));
        writer.add("beta2_power", tf::constant(static_cast<float>(b2 * b2)));
        writer.add("global_step", tf::constant(int64_t{2}));
        writer.finish();
    }
    CHECK(t::checkpoint_global_step(dir + "/tf1-2") == 2);
    {
        tf::Variable w(tf::zeros({2}), {.name = "tf1_w"});
        tf::Variable step = t::get_or_create_global_step();
        t::AdamOptimizer opt(lr);
        t::Saver saver;
        saver.restore(dir + "/tf1-2");  // the slots and beta powers are restored when created
        CHECK(w.value().to_vector<float>() == std::vector<float>{1.f, -2.f});
        opt.minimize([&] { return tf::reduce_sum(w.value() * w.value()); }, {w}, step);
        CHECK(opt.get_slot(w, "m")->value().to_vector<float>()[0] ==
              Approx(b1 * 0.1 + (1 - b1) * 2.0).epsilon(1e-6));
        // TF1's step 3: lr_t = lr sqrt(1 - beta2^2) / (1 - beta1^2) with the restored powers.
        std::vector<double> expected;
        const double m0[2] = {0.1, 0.2}, v0[2] = {0.01, 0.04}, w0[2] = {1, -2};
        for (int i = 0; i < 2; ++i) {
            const double g = 2 * w0[i];
            const double m = b1 * m0[i] + (1 - b1) * g, v = b2 * v0[i] + (1 - b2) * g * g;
            const double lr_t = lr * std::sqrt(1 - b2 * b2) / (1 - b1 * b1);
            expected.push_back(w0[i] - lr_t * m / (std::sqrt(v) + eps));
        }
        const auto got = w.value().to_vector<float>();
        CHECK(got[0] == Approx(expected[0]).epsilon(1e-5));
        CHECK(got[1] == Approx(expected[1]).epsilon(1e-5));
        CHECK(t::global_step(step) == 3);
        // Saved again: TF1's keys, as a TF1 program would read them back.
        const std::string prefix = saver.save(dir + "/tf1", 3);
        const auto listed = t::list_variables(prefix);
        for (const char* key :
             {"tf1_w", "tf1_w/Adam", "tf1_w/Adam_1", "beta1_power", "beta2_power", "global_step"})
            CHECK(listed.count(key) == 1);
        CHECK(t::load_variable(prefix, "beta1_power").item<float>() ==
              Approx(b1 * b1 * b1).epsilon(1e-6));
        // The safetensors format keeps tapeflow's names.
        const std::string st =
            t::Saver(t::SaverOptions{.format = t::CheckpointFormat::safetensors}).save(dir + "/st");
        CHECK(t::list_variables(st).count("tf1_w/Adam/m") == 1);
        CHECK(t::list_variables(st).count("Adam/beta1_power") == 1);
    }
}

TEST_CASE("TensorFlow's format: TF1 keys stay unique against variable names; two equal keys raise",
          "[checkpoint][tf1]") {
    const std::string dir = ckpt_test::fresh_dir("tf1_unique");
    auto step = [](t::AdamOptimizer& opt, tf::Variable& w) {
        opt.minimize([&] { return tf::reduce_sum(w.value() * w.value()); }, {w});
    };
    {
        // A variable already named "beta1_power": Adam's state takes "beta1_power_1", as in TF1.
        tf::Variable mine(tf::constant(7.f), {.name = "beta1_power"});
        tf::Variable w(tf::constant({1.f}), {.name = "uniq_w"});
        t::AdamOptimizer opt(0.1);
        step(opt, w);
        const std::string prefix = t::Saver().save(dir + "/a");
        const auto listed = t::list_variables(prefix);
        CHECK(listed.count("beta1_power") == 1);
        CHECK(listed.count("beta1_power_1") == 1);
        CHECK(t::load_variable(prefix, "beta1_power").item<float>() == 7.f);
        CHECK(t::load_variable(prefix, "beta1_power_1").item<float>() == Approx(0.81f));
    }
    {
        // Named after Adam's state took the key: the save cannot tell them apart and says so.
        tf::Variable w(tf::constant({1.f}), {.name = "uniq_w"});
        t::AdamOptimizer opt(0.1);
        step(opt, w);
        tf::Variable late(tf::constant(7.f), {.name = "beta1_power"});
        CHECK_THROWS_AS(t::Saver().save(dir + "/b"), tf::errors::InvalidArgumentError);
        CHECK_THROWS_WITH(t::Saver().save(dir + "/b"), Contains("'beta1_power'"));
        CHECK_FALSE(fs::exists(dir + "/b.index"));
        // safetensors saves by name: no clash there
        CHECK_NOTHROW(
            t::Saver(t::SaverOptions{.format = t::CheckpointFormat::safetensors}).save(dir + "/c"));
    }
}

TEST_CASE(
    "TensorFlow's format: a damaged checkpoint fails restore with a typed error, nothing changes",
    "[checkpoint][tf1][errors]") {
    const std::string dir = ckpt_test::fresh_dir("tf_damaged");
    tf::Variable v(tf::constant({1.f, 2.f, 3.f}), {.name = "dmg_v"});
    t::Saver saver(std::vector<tf::Variable>{v});
    const std::string prefix = saver.save(dir + "/m", 1);
    v.assign(tf::constant({0.f, 0.f, 0.f}));
    const std::string index = ckpt_test::read_bytes(prefix + ".index");
    const std::string data = ckpt_test::read_bytes(prefix + ".data-00000-of-00001");
    auto put = [](const std::string& file, const std::string& bytes) {
        std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
    };
    put(prefix + ".index", index.substr(0, index.size() / 2));  // truncated index
    CHECK_THROWS_AS(saver.restore(prefix), tf::errors::DataLossError);
    put(prefix + ".index", index);
    std::string flipped = data;
    flipped[4] = static_cast<char>(flipped[4] ^ 0x10);  // a flipped bit in the tensor's bytes
    put(prefix + ".data-00000-of-00001", flipped);
    CHECK_THROWS_AS(saver.restore(prefix), tf::errors::DataLossError);
    CHECK_THROWS_WITH(saver.restore(prefix), Contains("dmg_v"));
    fs::remove(prefix + ".data-00000-of-00001");  // a missing shard
    CHECK_THROWS_AS(saver.restore(prefix), tf::errors::NotFoundError);
    CHECK(v.value().to_vector<float>() == std::vector<float>{0.f, 0.f, 0.f});
    put(prefix + ".data-00000-of-00001", data);
    saver.restore(prefix);
    CHECK(v.value().to_vector<float>() == std::vector<float>{1.f, 2.f, 3.f});
}

TEST_CASE(
    "crc32c: the 3-stream hardware path agrees with the portable one on checkpoint-sized buffers",
    "[checkpoint][crc]") {
    std::mt19937 rng(11);
    std::string buf(3 * 8192 * 2 + 3 * 256 * 3 + 1000, '\0');
    for (char& c : buf)
        c = static_cast<char>(rng());
    for (const std::size_t n : {std::size_t{767},
                                std::size_t{768},
                                std::size_t{24575},
                                std::size_t{24576},
                                std::size_t{24576 + 768 + 13},
                                std::size_t{49152},
                                buf.size() - 8}) {
        for (std::size_t off = 0; off < 8; off += 3) {
            INFO(n << " bytes at offset " << off);
            CHECK(tf::io::crc32c_extend(0x12345678u, buf.data() + off, n) ==
                  tf::io::crc32c_extend_portable(0x12345678u, buf.data() + off, n));
        }
    }
}
