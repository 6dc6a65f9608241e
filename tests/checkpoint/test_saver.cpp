// Saver and the checkpoint helpers: every dtype round trips bitwise; file names, the "checkpoint"
// state file, max_to_keep, latest_checkpoint; restore's checks (names, shapes, dtypes) with the
// offending name, all-or-nothing; deferred restore of variables created after restore().
#include <filesystem>
#include <random>

#include <catch2/catch.hpp>

#include "checkpoint/checkpoint_test_util.hpp"
#include "io/crc32c.hpp"

namespace tf = tapeflow;
namespace t = tapeflow::train;
namespace fs = std::filesystem;
using Catch::Contains;
using ckpt_test::bitwise_equal;

TEST_CASE("every dtype round trips bitwise; list_variables and load_variable", "[checkpoint]") {
    const std::string dir = ckpt_test::fresh_dir("dtypes");
    const auto tensors = ckpt_test::tensors_of_every_dtype();
    std::map<std::string, tf::Variable> named;
    for (const auto& [name, value] : tensors)
        named.emplace(name, tf::Variable(value, {.name = "rt_" + name}));
    t::Saver saver(named);
    const std::string prefix = saver.save(dir + "/all", 7);
    CHECK(prefix == dir + "/all-7");
    CHECK(fs::exists(prefix + ".safetensors"));

    const auto listed = t::list_variables(prefix);
    REQUIRE(listed.size() == tensors.size());
    for (const auto& [name, value] : tensors) {
        INFO(name);
        REQUIRE(listed.count(name) == 1);
        CHECK(listed.at(name).first == value.shape());
        CHECK(listed.at(name).second == value.dtype());
        CHECK(bitwise_equal(t::load_variable(prefix, name), value));
        CHECK(bitwise_equal(t::load_variable(prefix + ".safetensors", name),
                            value));                               // the file name works too
        CHECK(bitwise_equal(t::load_variable(dir, name), value));  // and the directory
    }
    CHECK(t::checkpoint_global_step(prefix) == 7);

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
    const std::string prefix = t::Saver(std::vector<tf::Variable>{w}).save(dir + "/m", 42);
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
    CHECK_FALSE(fs::exists(dir + "/model.ckpt-10.safetensors"));
    CHECK(fs::exists(dir + "/model.ckpt-20.safetensors"));
    CHECK(t::latest_checkpoint(dir) == dir + "/model.ckpt-30");
    CHECK(ckpt_test::read_bytes(dir + "/checkpoint") ==
          "model_checkpoint_path: \"model.ckpt-30\"\n"
          "all_model_checkpoint_paths: \"model.ckpt-20\"\n"
          "all_model_checkpoint_paths: \"model.ckpt-30\"\n");
    // Without a step: "<path>.safetensors", and the prefix is the path.
    CHECK(saver.save(dir + "/plain") == dir + "/plain");
    CHECK(fs::exists(dir + "/plain.safetensors"));
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
    CHECK_FALSE(fs::exists(dir + "/model-3.safetensors"));
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
    fs::create_directories(dir + "/bad-2.safetensors/blocker");
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
    CHECK_THROWS_AS(t::Saver(reserved).save(dir + "/r"), tf::errors::InvalidArgumentError);

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
