// Checkpoints in distributed training: only the chief writes, a restore reads on the chief and
// gives every process its values (errors included), and DistributedOptimizer's slots created after
// a restore take the chief's checkpointed values, so the replicas stay identical.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <unistd.h>

#include <tapeflow/tapeflow.hpp>
#include <tapeflow/train/saver.hpp>

namespace tf = tapeflow;
namespace td = tapeflow::distribute;
using Catch::Contains;

namespace {

// One scratch directory for all processes of this (one-machine) job: named by the chief's pid.
std::string shared_dir(const std::string& what) {
    const int64_t pid = td::rank() == 0 ? static_cast<int64_t>(::getpid()) : 0;
    const int64_t chief_pid = td::all_reduce(tf::constant(pid), td::ReduceOp::max).item<int64_t>();
    return (std::filesystem::temp_directory_path() /
            ("tapeflow_dist_" + what + "_" + std::to_string(chief_pid)))
        .string();
}

float rank_value() {
    return 100.f + static_cast<float>(td::rank());
}

}  // namespace

TEST_CASE("Saver: the chief writes, restore gives every process the chief's values",
          "[distribute][checkpoint]") {
    CHECK(td::chief_rank() == 0);
    CHECK(td::is_chief() == (td::rank() == 0));
    const std::string dir = shared_dir("saver");
    tf::Variable v(tf::fill({3}, rank_value()), {.name = "ckpt_v"});
    tf::train::Saver saver(std::vector<tf::Variable>{v});
    const std::string prefix = saver.save(dir + "/model", 7);
    CHECK(prefix == dir + "/model-7");
    td::barrier();
    CHECK(std::filesystem::exists(prefix + ".index"));
    CHECK(tf::train::load_variable(prefix, "ckpt_v").to_vector<float>() ==
          std::vector<float>(3, 100.f));
    v.assign(tf::fill({3}, -1.f * rank_value()));
    saver.restore(prefix);
    CHECK(v.value().to_vector<float>() == std::vector<float>(3, 100.f));
    // A missing checkpoint: NotFoundError everywhere (the others learn it from the chief).
    CHECK_THROWS_AS(saver.restore(dir + "/nothing-1"), tf::errors::NotFoundError);
    if (td::size() > 1 && !td::is_chief()) {
        CHECK_THROWS_WITH(saver.restore(dir + "/nothing-1"),
                          Contains("raised on the chief, rank 0"));
    } else {
        CHECK_THROWS_WITH(saver.restore(dir + "/nothing-1"),
                          Contains("Failed to find any matching files"));
    }
    td::barrier();
    if (td::is_chief()) std::filesystem::remove_all(dir);
}

TEST_CASE("DistributedOptimizer after a restore: slots created later take the chief's values",
          "[distribute][checkpoint]") {
    const std::string dir = shared_dir("slots");
    const tf::Tensor x = tf::fill({2, 2}, 1.0f + static_cast<float>(td::rank()));
    auto loss = [&](const tf::Variable& w) {
        return tf::reduce_sum(tf::square(tf::matmul(x, w)));
    };
    std::string prefix;
    std::vector<float> after_restore_step;
    {
        tf::Variable w(tf::fill({2, 2}, 0.5f), {.name = "slot_w"});
        td::DistributedOptimizer opt(std::make_shared<tf::train::MomentumOptimizer>(0.01, 0.9));
        for (int i = 0; i < 2; ++i)
            opt.minimize([&] { return loss(w); }, {w});
        prefix = tf::train::Saver().save(dir + "/model", 2);
        // The reference: the third step from the live state.
        opt.minimize([&] { return loss(w); }, {w});
        after_restore_step = w.value().to_vector<float>();
    }
    {
        // A fresh model (different values on every process), restored, then one step.
        tf::Variable w(tf::fill({2, 2}, rank_value()), {.name = "slot_w"});
        td::DistributedOptimizer opt(std::make_shared<tf::train::MomentumOptimizer>(0.01, 0.9));
        tf::train::Saver saver;
        saver.restore(prefix);
        CHECK(w.value().to_vector<float>() != std::vector<float>(4, rank_value()));
        opt.minimize([&] { return loss(w); }, {w});
        const std::vector<float> got = w.value().to_vector<float>();
        for (std::size_t i = 0; i < got.size(); ++i)
            CHECK(got[i] == Approx(after_restore_step[i]).epsilon(1e-6));
        const std::vector<float> slot = opt.get_slot(w, "momentum")->value().to_vector<float>();
        const std::vector<float> chief_slot =
            td::broadcast(tf::constant(slot, {4}), td::chief_rank()).to_vector<float>();
        CHECK(slot == chief_slot);
    }
    td::barrier();
    if (td::is_chief()) std::filesystem::remove_all(dir);
}

TEST_CASE("MonitoredTrainingSession: the chief restores, every process resumes from its values",
          "[distribute][checkpoint]") {
    const std::string dir = shared_dir("mts");
    const tf::train::MonitoredTrainingSessionOptions options{
        .checkpoint_dir = dir, .save_summaries_steps = std::nullopt, .log_step_count_steps = 0};
    {
        tf::Variable w(tf::fill({2}, 1.f), {.name = "mts_w"});
        tf::train::MonitoredTrainingSession session(options);
        CHECK_FALSE(session.restored_from().has_value());
        session.run([&] {
            w.assign(tf::fill({2}, 5.f));
            tf::train::get_or_create_global_step().assign_add(tf::constant(int64_t{1}));
            return tf::constant(0.f);
        });
        session.close();  // the final checkpoint (a new global step), written by the chief
    }
    td::barrier();
    {
        tf::Variable w(tf::fill({2}, rank_value()), {.name = "mts_w"});
        tf::train::MonitoredTrainingSession session(options);
        CHECK(session.restored_from().has_value());
        CHECK(w.value().to_vector<float>() == std::vector<float>(2, 5.f));
        session.close();
    }
    td::barrier();
    if (td::is_chief()) std::filesystem::remove_all(dir);
}
