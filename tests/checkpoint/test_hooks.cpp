// The ready hooks: option validation, StopAtStepHook's two modes, periodic checkpoints by steps,
// loss summaries and global_step/sec in the event file, the NaN guard (no checkpoint of a failed
// step), summaries recorded inside run() on summary steps only, and the progress bar's text.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>

#include <catch2/catch.hpp>

#include "checkpoint/checkpoint_test_util.hpp"

namespace tf = tapeflow;
namespace t = tapeflow::train;
namespace fs = std::filesystem;
using Catch::Contains;

namespace {

// A session whose step only increments the global step and returns `loss(step)`.
struct Counter {
    tf::Variable step = t::get_or_create_global_step();
    Counter() { step.assign(tf::constant(int64_t{0})); }
    tf::Tensor run(t::MonitoredTrainingSession& s, float loss) {
        return s.run([&] {
            step.assign_add(tf::constant(int64_t{1}));
            return tf::constant(loss);
        });
    }
};

std::vector<tf::summary::Event> events_in(const std::string& dir) {
    std::vector<tf::summary::Event> all;
    for (const auto& e : fs::directory_iterator(dir)) {
        if (!e.path().filename().string().starts_with("events.out.tfevents")) continue;
        for (auto& ev : tf::summary::summary_iterator(e.path().string()))
            all.push_back(std::move(ev));
    }
    return all;
}

std::vector<int64_t> steps_of(const std::vector<tf::summary::Event>& events,
                              const std::string& tag) {
    std::vector<int64_t> out;
    for (const auto& ev : events) {
        for (const auto& v : ev.values) {
            if (v.tag == tag) out.push_back(ev.step);
        }
    }
    return out;
}

}  // namespace

TEST_CASE("hook options are validated", "[checkpoint][hooks]") {
    CHECK_THROWS_AS(t::StopAtStepHook(), tf::errors::InvalidArgumentError);
    CHECK_THROWS_AS(t::StopAtStepHook({.num_steps = 1, .last_step = 2}),
                    tf::errors::InvalidArgumentError);
    CHECK_THROWS_AS(t::CheckpointSaverHook(), tf::errors::InvalidArgumentError);
    CHECK_THROWS_WITH(
        t::CheckpointSaverHook({.checkpoint_dir = "x", .save_steps = 1, .save_secs = 1}),
        Contains("at most one of save_steps and save_secs"));
    CHECK_THROWS_AS(t::SummarySaverHook({.output_dir = ""}), tf::errors::InvalidArgumentError);
    CHECK_THROWS_AS(t::LoggingTensorHook({.every_n_iter = 0}), tf::errors::InvalidArgumentError);
    CHECK_THROWS_AS(t::StepCounterHook({.every_n_steps = 0}), tf::errors::InvalidArgumentError);
    CHECK_THROWS_AS(t::MonitoredTrainingSession({.hooks = {nullptr}}),
                    tf::errors::InvalidArgumentError);
}

TEST_CASE("StopAtStepHook: num_steps counts from the step at begin, last_step is absolute",
          "[checkpoint][hooks]") {
    Counter c;
    c.step.assign(tf::constant(int64_t{10}));
    auto by_count = std::make_shared<t::StopAtStepHook>(t::StopAtStepHookOptions{.num_steps = 3});
    {
        t::MonitoredTrainingSession s({.hooks = {by_count}});
        int runs = 0;
        while (!s.should_stop()) {
            s.run([&] {
                c.step.assign_add(tf::constant(int64_t{1}));
                return tf::constant(0.f);
            });
            ++runs;
        }
        CHECK(runs == 3);
        CHECK(by_count->last_step() == 13);
    }
    // Without a checkpoint dir nothing is written; run() itself does not move the step.
    t::MonitoredTrainingSession s(
        {.hooks = {std::make_shared<t::StopAtStepHook>(t::StopAtStepHookOptions{.last_step = 5})}});
    CHECK(s.should_stop());  // already past step 5
    s.run([] { return tf::constant(1.f); });
    CHECK(t::global_step(c.step) == 13);
}

TEST_CASE("periodic checkpoints by steps, loss summaries and global_step/sec in checkpoint_dir",
          "[checkpoint][hooks]") {
    const std::string dir = ckpt_test::fresh_dir("hooks_periodic");
    Counter c;
    {
        t::MonitoredTrainingSession s({.checkpoint_dir = dir,
                                       .save_checkpoint_steps = 4,
                                       .save_summaries_steps = 3,
                                       .log_step_count_steps = 5,
                                       .max_to_keep = 0});
        for (int i = 0; i < 10; ++i)
            c.run(s, 0.5f * static_cast<float>(i));
    }
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(dir)) {
        if (e.path().extension() == ".index") files.push_back(e.path().filename().string());
    }
    std::sort(files.begin(), files.end());  // TensorFlow's format, the Saver's default
    CHECK(files == std::vector<std::string>{"model.ckpt-0.index",
                                            "model.ckpt-10.index",
                                            "model.ckpt-4.index",
                                            "model.ckpt-8.index"});
    const auto events = events_in(dir);
    // TF1's labels: the global step after the run, the first run and every 3 steps after it
    CHECK(steps_of(events, "loss") == std::vector<int64_t>{1, 4, 7, 10});
    CHECK(steps_of(events, "global_step/sec") == std::vector<int64_t>{5, 10});
    // and one SessionLog START, at the first summary's step, before it
    std::vector<int64_t> starts;
    for (const auto& ev : events) {
        if (ev.session_log_status == 1) starts.push_back(ev.step);
    }
    CHECK(starts == std::vector<int64_t>{1});
}

TEST_CASE("summaries written inside run() go to checkpoint_dir on summary steps only",
          "[checkpoint][hooks]") {
    const std::string dir = ckpt_test::fresh_dir("hooks_record_if");
    Counter c;
    {
        t::MonitoredTrainingSession s(
            {.checkpoint_dir = dir, .save_summaries_steps = 2, .log_step_count_steps = 0});
        for (int i = 0; i < 5; ++i) {
            s.run([&] {
                tf::summary::scalar("custom", 1.0, t::global_step(c.step));
                c.step.assign_add(tf::constant(int64_t{1}));
                return tf::constant(1.f);
            });
        }
    }
    CHECK(steps_of(events_in(dir), "custom") == std::vector<int64_t>{0, 2, 4});
}

TEST_CASE("NanTensorHook raises NanLossDuringTrainingError; the failed step is not checkpointed",
          "[checkpoint][hooks]") {
    const std::string dir = ckpt_test::fresh_dir("hooks_nan");
    Counter c;
    try {
        t::MonitoredTrainingSession s({.checkpoint_dir = dir,
                                       .save_checkpoint_steps = 100,
                                       .log_step_count_steps = 0,
                                       .hooks = {std::make_shared<t::NanTensorHook>()}});
        c.run(s, 1.f);
        c.run(s, 2.f);
        CHECK_THROWS_AS(c.run(s, std::numeric_limits<float>::quiet_NaN()),
                        t::NanLossDuringTrainingError);
        CHECK_THROWS_WITH(c.run(s, std::numeric_limits<float>::infinity()),
                          Contains("NaN loss during training."));
        s.close();  // after a failed step: no final checkpoint
    } catch (...) {
        FAIL("unexpected exception");
    }
    CHECK(t::latest_checkpoint(dir) == dir + "/model.ckpt-0");
    const t::NanLossDuringTrainingError e("x");
    CHECK(e.code() == tf::errors::Code::unknown);

    // fail_on_nan_loss = false: a warning and a stop request instead.
    t::MonitoredTrainingSession s({.hooks = {std::make_shared<t::NanTensorHook>(
                                       t::NanTensorHookOptions{.fail_on_nan_loss = false})}});
    c.run(s, std::nanf(""));
    CHECK(s.should_stop());
}

TEST_CASE("variables the checkpoint lacks keep their values; secs take precedence over steps",
          "[checkpoint][hooks]") {
    const std::string dir = ckpt_test::fresh_dir("hooks_partial");
    Counter c;
    {
        tf::Variable a(tf::constant({1.f}), {.name = "hp_a"});
        t::MonitoredTrainingSession s({.checkpoint_dir = dir, .log_step_count_steps = 0});
        a.assign(tf::constant({5.f}));
        c.run(s, 1.f);
    }
    tf::Variable a(tf::constant({0.f}), {.name = "hp_a"});
    tf::Variable fresh(tf::constant({3.f}), {.name = "hp_new"});
    {
        t::MonitoredTrainingSession s(
            {.checkpoint_dir = dir, .save_checkpoint_secs = 3600.0, .log_step_count_steps = 0});
        CHECK(s.restored_from() == dir + "/model.ckpt-1");
        CHECK(a.value().to_vector<float>() == std::vector<float>{5.f});
        CHECK(fresh.value().to_vector<float>() == std::vector<float>{3.f});
        CHECK(t::global_step(s.global_step()) == 1);
        for (int i = 0; i < 3; ++i)
            c.run(s, 1.f);  // steps 2..4: no periodic save (secs rule it)
        CHECK(t::latest_checkpoint(dir) == dir + "/model.ckpt-1");
    }
    CHECK(t::latest_checkpoint(dir) == dir + "/model.ckpt-4");  // the final save
}

TEST_CASE("ProgressBarHook: the bar's text, plain lines when not a terminal",
          "[checkpoint][hooks]") {
    t::ProgressBarHook bar({.total_steps = 200, .width = 10});
    CHECK(bar.render(50, 25.0, 0.125) ==
          "[==>       ] 50/200  25%  25 steps/s  ETA 0:00:06  loss 0.125");
    CHECK(bar.render(200, 25.0, std::nullopt) == "[==========] 200/200 100%  25 steps/s");
    CHECK(bar.render(200, 0.0, std::nullopt) ==
          "[==========] 200/200 100%");  // resumed, nothing ran
    t::ProgressBarHook unknown({.width = 10});
    CHECK(unknown.render(7, 2.5, 1.5) == "step 7  2.5 steps/s  loss 1.5");

    std::FILE* out = std::tmpfile();
    Counter c;
    {
        auto hook = std::make_shared<t::ProgressBarHook>(t::ProgressBarHookOptions{
            .total_steps = 4, .width = 4, .stream = out, .refresh_secs_plain = 0});
        t::MonitoredTrainingSession s({.hooks = {hook,
                                                 std::make_shared<t::StopAtStepHook>(
                                                     t::StopAtStepHookOptions{.last_step = 4})}});
        while (!s.should_stop())
            c.run(s, 0.5f);
    }
    std::rewind(out);
    std::string text(4096, '\0');
    text.resize(std::fread(text.data(), 1, text.size(), out));
    std::fclose(out);
    CHECK_THAT(text, !Contains("\r"));  // a file: plain lines
    CHECK_THAT(
        text, Contains("[=>  ] 1/4  25%") && Contains("[====] 4/4 100%") && Contains("loss 0.5\n"));
    CHECK(std::count(text.begin(), text.end(), '\n') ==
          4);  // one line per step, the last not repeated
}

TEST_CASE("hooks used without checkpoint_dir keep one event file", "[checkpoint][hooks]") {
    const std::string dir = ckpt_test::fresh_dir("hooks_standalone");
    Counter c;
    {
        t::MonitoredTrainingSession s(
            {.hooks = {std::make_shared<t::SummarySaverHook>(
                           t::SummarySaverHookOptions{.output_dir = dir, .save_steps = 1}),
                       std::make_shared<t::StepCounterHook>(
                           t::StepCounterHookOptions{.every_n_steps = 2, .output_dir = dir})}});
        for (int i = 0; i < 4; ++i)
            c.run(s, 1.f);
    }
    int files = 0;
    for (const auto& e : fs::directory_iterator(dir))
        files += e.path().filename().string().starts_with("events.out") ? 1 : 0;
    CHECK(files == 1);
    const auto events = events_in(dir);
    CHECK(steps_of(events, "loss") == std::vector<int64_t>{1, 2, 3, 4});
    CHECK(steps_of(events, "global_step/sec") == std::vector<int64_t>{2, 4});
}
