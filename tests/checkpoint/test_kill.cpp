// The kill test: ckpt_train_child trains and checkpoints every 2 steps (each save: temporary file,
// fsync, rename, state file) and is SIGKILLed at 50 random moments — during start-up, restore,
// training steps and saves. After every kill the latest checkpoint must restore without error; at
// the end a resumed run must reach bitwise the values of an uninterrupted run.
#include <catch2/catch.hpp>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <random>
#include <thread>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "checkpoint/checkpoint_test_util.hpp"

extern char** environ;

namespace tf = tapeflow;
namespace t = tapeflow::train;
namespace fs = std::filesystem;

namespace {

constexpr int kKills = 50;
constexpr int64_t kLastStep = 1500;

std::string child_path() {
    if (const char* env = std::getenv("TAPEFLOW_CKPT_CHILD")) return env;
    return (fs::read_symlink("/proc/self/exe").parent_path() / "ckpt_train_child").string();
}

pid_t spawn_child(const std::string& dir, int64_t save_steps) {
    const std::string exe = child_path(), last = std::to_string(kLastStep), save = std::to_string(save_steps);
    std::vector<char*> argv{const_cast<char*>(exe.c_str()), const_cast<char*>(dir.c_str()),
                            const_cast<char*>(last.c_str()), const_cast<char*>(save.c_str()), nullptr};
    pid_t pid = 0;
    REQUIRE(posix_spawn(&pid, exe.c_str(), nullptr, nullptr, argv.data(), environ) == 0);
    return pid;
}

int wait_child(pid_t pid) {
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    return status;
}

// Every tensor of the latest checkpoint, restored through a Saver into fresh variables.
std::map<std::string, tf::Tensor> restore_latest(const std::string& dir) {
    const std::optional<std::string> latest = t::latest_checkpoint(dir);
    if (!latest) return {};
    std::map<std::string, tf::Variable> vars;
    for (const auto& [name, info] : t::list_variables(*latest)) {
        vars.emplace(name, tf::Variable(tf::zeros(info.first, info.second)));
    }
    t::Saver(vars).restore(*latest);
    std::map<std::string, tf::Tensor> out;
    for (const auto& [name, v] : vars) out.emplace(name, v.value());
    CHECK(t::checkpoint_global_step(*latest) == out.at("global_step").item<int64_t>());
    return out;
}

}  // namespace

TEST_CASE("kill test: SIGKILL at 50 random moments; each latest checkpoint restores; resuming is exact",
          "[checkpoint][kill]") {
    const std::string killed = ckpt_test::fresh_dir("kill");
    const std::string straight = ckpt_test::fresh_dir("kill_reference");
    std::mt19937 rng(20261130);
    std::uniform_int_distribution<int> delay_ms(0, 160);
    int64_t last_restored = -1;
    int mid_save = 0;
    for (int k = 0; k < kKills; ++k) {
        const pid_t pid = spawn_child(killed, 2);
        std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms(rng)));
        ::kill(pid, SIGKILL);
        const int status = wait_child(pid);
        INFO("kill " << k);
        // Either killed, or it had already finished cleanly.
        CHECK((WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) == 0)));
        for (const auto& e : fs::directory_iterator(killed)) {
            mid_save += e.path().filename().string().find(".tmp.") != std::string::npos ? 1 : 0;
        }
        const auto values = restore_latest(killed);  // throws (fails the test) on any corruption
        if (!values.empty()) {
            const int64_t step = values.at("global_step").item<int64_t>();
            CHECK(step >= last_restored);  // progress is never lost
            last_restored = step;
        }
    }
    WARN("kills: " << kKills << ", leftover temporary files seen after kills: " << mid_save
                   << ", latest checkpoint at step " << last_restored << " of " << kLastStep);

    // Finish the killed job, and run the same job uninterrupted (saving only at the end).
    CHECK(wait_child(spawn_child(killed, 1'000'000)) == 0);  // resumes, saves at the end
    CHECK(wait_child(spawn_child(straight, 1'000'000)) == 0);
    const auto a = restore_latest(killed);
    const auto b = restore_latest(straight);
    CHECK(t::latest_checkpoint(killed) == killed + "/model.ckpt-" + std::to_string(kLastStep));
    REQUIRE(a.size() == b.size());
    REQUIRE(a.size() > 8);  // weights, Adam slots and powers, EMA shadows, global step
    for (const auto& [name, value] : b) {
        INFO(name);
        REQUIRE(a.count(name) == 1);
        CHECK(ckpt_test::bitwise_equal(a.at(name), value));
    }
    // Stale temporary files of killed saves are cleaned up by later saves.
    for (const auto& e : fs::directory_iterator(killed)) {
        CHECK(e.path().filename().string().find(".tmp.") == std::string::npos);
    }
}
