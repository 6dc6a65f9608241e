// MonitoredTrainingSession and the ready hooks: restore on start (slots deferred), periodic and
// final checkpoints, resumption to the same values, summaries in checkpoint_dir, the NaN guard,
// the progress bar's text, and option validation.
#include <cmath>
#include <filesystem>

#include <catch2/catch.hpp>

#include "checkpoint/checkpoint_test_util.hpp"

namespace tf = tapeflow;
namespace t = tapeflow::train;
namespace fs = std::filesystem;
using Catch::Contains;

namespace {

// A small regression trained with Adam under a MonitoredTrainingSession until `last_step`;
// returns the final weights. Objects are created inside, as a restarted process would.
std::vector<float> train_to(const std::string& dir,
                            int64_t last_step,
                            int64_t save_steps,
                            bool async = false) {
    tf::Variable step = t::get_or_create_global_step();
    tf::Variable w(tf::constant({0.5f, -0.25f, 1.f}), {.name = "sess_w"});
    t::AdamOptimizer opt(0.05);
    const tf::Tensor x = tf::constant({{1.f, 2.f, 3.f}, {-1.f, 0.5f, 2.f}});
    const tf::Tensor y = tf::constant({1.f, -1.f});
    t::MonitoredTrainingSession session({.checkpoint_dir = dir,
                                         .save_checkpoint_steps = save_steps,
                                         .save_summaries_steps = 2,
                                         .log_step_count_steps = 0,
                                         .hooks = {std::make_shared<t::StopAtStepHook>(
                                             t::StopAtStepHookOptions{.last_step = last_step})},
                                         .async_checkpoints = async});
    while (!session.should_stop()) {
        session.run([&] {
            return opt.minimize(
                [&] {
                    const tf::Tensor pred = tf::reduce_sum(x * w.value(), {1});
                    return tf::reduce_mean(tf::square(pred - y));
                },
                {w},
                step);
        });
    }
    session.close();
    return w.value().to_vector<float>();
}

}  // namespace

TEST_CASE("MonitoredTrainingSession with background checkpoints resumes to the same values",
          "[checkpoint][session][async]") {
    const std::string a = ckpt_test::fresh_dir("session_async_a");
    const std::string b = ckpt_test::fresh_dir("session_async_b");
    t::get_or_create_global_step().assign(tf::constant(int64_t{0}));
    const std::vector<float> straight = train_to(a, 10, 100);
    t::get_or_create_global_step().assign(tf::constant(int64_t{0}));
    train_to(b, 5, 2, /*async=*/true);  // saves at steps 0, 2, 4 in the background, 5 at close
    CHECK(t::latest_checkpoint(b) == b + "/model.ckpt-5");  // close() waited for it
    CHECK(t::checkpoint_global_step(b + "/model.ckpt-4") == 4);
    for (const auto& e : fs::directory_iterator(b))
        CHECK_THAT(e.path().string(), !Contains(".tmp."));
    t::get_or_create_global_step().assign(tf::constant(int64_t{0}));
    CHECK(train_to(b, 10, 2, /*async=*/true) == straight);  // bitwise, as the synchronous run
}

TEST_CASE("MonitoredTrainingSession: a resumed run reaches the uninterrupted run's values",
          "[checkpoint][session]") {
    const std::string a = ckpt_test::fresh_dir("session_a");
    const std::string b = ckpt_test::fresh_dir("session_b");
    t::get_or_create_global_step().assign(tf::constant(int64_t{0}));
    const std::vector<float> straight = train_to(a, 10, 100);
    CHECK(t::latest_checkpoint(a) == a + "/model.ckpt-10");  // the final checkpoint of close()

    t::get_or_create_global_step().assign(tf::constant(int64_t{0}));
    train_to(b, 4, 100);  // "killed" after 4 steps: close() saved step 4
    CHECK(t::latest_checkpoint(b) == b + "/model.ckpt-4");
    t::get_or_create_global_step().assign(tf::constant(int64_t{0}));
    const std::vector<float> resumed = train_to(b, 10, 100);
    CHECK(resumed == straight);  // bitwise: Adam's slots and beta powers were restored too
    CHECK(t::global_step(t::get_or_create_global_step()) == 10);

    // Rerunning a finished job runs no step and changes nothing.
    CHECK(train_to(b, 10, 100) == straight);

    // Summaries went to the checkpoint directory.
    bool events = false;
    for (const auto& e : fs::directory_iterator(a))
        events = events || e.path().filename().string().starts_with("events.out.tfevents");
    CHECK(events);
}
