// Profiling a training step (docs/profiler.md): the demo's convnet on the digits with Adam, first
// timed without and with the profiler (its overhead), then under tf::profiler::experimental::start
// / stop with one Trace per step (a trace file TensorBoard and Perfetto open), and the tfprof-style
// tables of that session. Checks the counts of the report against the model's ops; exits 1 when
// they are wrong.
//   build/samples/profile_step [LOGDIR] [--steps N]
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include <tapeflow/tapeflow.hpp>

#include "digits.hpp"

namespace tf = tapeflow;
namespace prof = tf::profiler;

namespace {

constexpr int64_t kBatch = 32;

struct Trainer {
    samples::ConvNet model;
    tf::train::AdamOptimizer optimizer{0.005};
    samples::Digits train;
    int64_t next = 0;

    void step() {
        const int64_t n = train.size() / kBatch;
        const int64_t start = (next++ % n) * kBatch;
        const tf::Tensor x = tf::slice(train.images, {start, 0, 0, 0}, {kBatch, 8, 8, 1});
        const tf::Tensor y = tf::slice(train.labels, {start}, {kBatch});
        optimizer.minimize([&] { return model.loss(x, y); });
    }

    // Seconds per step over `steps` steps (slices included, as a training loop has them).
    double time_steps(int64_t steps, bool traced) {
        const auto t0 = std::chrono::steady_clock::now();
        for (int64_t i = 0; i < steps; ++i) {
            if (traced) {
                const prof::experimental::Trace trace("train", next);
                step();
            } else {
                step();
            }
        }
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() /
               static_cast<double>(steps);
    }
};

}  // namespace

int main(int argc, char** argv) {
    std::string logdir = "profile_logs";
    int64_t steps = 100;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--steps" && i + 1 < argc) {
            steps = std::stoll(argv[++i]);
        } else {
            logdir = arg;
        }
    }
    std::filesystem::remove_all(logdir);
    const std::string data = std::string(TAPEFLOW_SAMPLES_DATA_DIR) + "/digits.csv.gz";
    Trainer trainer;
    trainer.train = samples::split(samples::load_digits(data), 0.2).first;
    trainer.time_steps(20, false);  // warm-up: slots, caches, the thread pool

    // Overhead: short blocks of steps without and with a session, alternating, and the median of
    // each kind, so bursts of load on a shared machine hit both alike.
    std::vector<double> off, on;
    for (int64_t done = 0; done < steps; done += 10) {
        off.push_back(trainer.time_steps(10, false));
        prof::experimental::start(logdir + "/overhead");
        on.push_back(trainer.time_steps(10, true));
        prof::experimental::stop(/*save=*/false);
    }
    const auto median = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
    };
    const double off_s = median(off), on_s = median(on);
    fmt::print(
        "one digits step (median of {} blocks of 10): {:.3f} ms without the profiler, {:.3f} "
        "ms with it ({:+.1f}%)\n",
        off.size(),
        off_s * 1e3,
        on_s * 1e3,
        100.0 * (on_s - off_s) / off_s);

    // A session of 5 steps: the trace file, then its report.
    constexpr int64_t kSteps = 5;
    prof::experimental::start(logdir);
    trainer.time_steps(kSteps, true);
    prof::experimental::stop();
    const prof::Profile report = prof::profile();
    fmt::print("{}\n{}\n",
               report.table(prof::Profile::GroupBy::op_type, 12),
               report.table(prof::Profile::GroupBy::op_name, 12));

    // Per step: 2 forward convolutions, the second's input gradient (the first layer's images need
    // none), both filter gradients, one dense product forward and two backward, six Adam updates.
    int failures = 0;
    const auto expect = [&](const std::string& type, int64_t per_step) {
        int64_t count = 0;
        for (const prof::OpStats& r : report.by_op_type)
            if (r.name == type) count = r.count;
        if (count != per_step * kSteps) {
            fmt::print("FAIL: {} ran {} times, expected {}\n", type, count, per_step * kSteps);
            ++failures;
        }
    };
    expect("Conv2D", 2);
    expect("Conv2DBackpropInput", 1);
    expect("Conv2DBackpropFilter", 2);
    expect("MatMul", 3);
    expect("ResourceApplyAdam", 6);
    bool trace_written = false;
    for (const auto& entry :
         std::filesystem::recursive_directory_iterator(logdir + "/plugins/profile"))
        trace_written = trace_written || entry.path().string().ends_with(".trace.json.gz");
    if (!trace_written) {
        fmt::print("FAIL: no trace file under {}/plugins/profile\n", logdir);
        ++failures;
    }
    if (std::filesystem::exists(logdir + "/overhead")) {
        fmt::print("FAIL: a session stopped with save=false wrote {}/overhead\n", logdir);
        ++failures;
    }
    fmt::print(
        "trace: {}/plugins/profile/<run>/<host>.trace.json.gz (TensorBoard's Profile tab, "
        "or ui.perfetto.dev)\n",
        logdir);
    return failures == 0 ? 0 : 1;
}
