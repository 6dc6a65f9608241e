// The main demo (scripts/demo.sh): a small convnet learns the UCI handwritten digits (8x8, 1797
// images, samples/data/digits.csv.gz) with Adam, through MonitoredTrainingSession: a progress bar,
// checkpoints (a rerun resumes), TensorBoard logs (loss, accuracy, weight histograms, the
// misclassified test digits as an image and as text, the loss curve as sound, the graph). Prints
// the test accuracy and the time taken; exits 1 below 95%.
//   build/samples/demo [--logdir DIR] [--data FILE] [--steps N] [--fresh]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <string>

#include <tapeflow/tapeflow.hpp>

#include "digits.hpp"

using samples::ConvNet;
using samples::Digits;
using samples::load_digits;
using samples::split;

namespace tf = tapeflow;

namespace {

constexpr int64_t kBatch = 32;
constexpr int64_t kDefaultSteps = 1500;  // about 33 epochs of the 1437 training images
constexpr int64_t kCheckpointSteps = 250;
constexpr int64_t kSummarySteps = 50;
constexpr double kTestFraction = 0.2;

float accuracy(const ConvNet& model, const Digits& data) {
    auto correct = tf::equal(model.predict(data.images), data.labels);
    return tf::reduce_mean(tf::cast(correct, tf::float32)).item<float>();
}

// The misclassified test digits side by side (up to 40, 8 per row), each scaled 4x with a border,
// as one [1, H, W, 1] image; also a caption "predicted/true" per digit, row by row.
std::pair<tf::Tensor, std::string> misclassified_grid(const Digits& test,
                                                      const tf::Tensor& predicted) {
    constexpr int kScale = 4, kCell = 8 * kScale + 2, kPerRow = 8, kMax = 40;
    const auto pixels = test.images.to_vector<float>();
    const auto truth = test.labels.to_vector<int32_t>();
    const auto guess = predicted.to_vector<int32_t>();
    std::vector<int64_t> wrong;
    for (std::size_t i = 0; i < truth.size() && wrong.size() < kMax; ++i)
        if (truth[i] != guess[i]) wrong.push_back(static_cast<int64_t>(i));
    const int64_t n = std::max<int64_t>(1, static_cast<int64_t>(wrong.size()));
    const int64_t rows = (n + kPerRow - 1) / kPerRow, cols = std::min<int64_t>(n, kPerRow);
    const int64_t height = rows * kCell, width = cols * kCell;
    std::vector<float> grid(static_cast<std::size_t>(height * width), 0.25f);  // grey borders
    std::string caption;
    for (std::size_t k = 0; k < wrong.size(); ++k) {
        const int64_t top = static_cast<int64_t>(k) / kPerRow * kCell + 1,
                      left = static_cast<int64_t>(k) % kPerRow * kCell + 1;
        for (int64_t y = 0; y < 8 * kScale; ++y)
            for (int64_t x = 0; x < 8 * kScale; ++x)
                grid[static_cast<std::size_t>((top + y) * width + left + x)] =
                    pixels[static_cast<std::size_t>(wrong[k] * 64 + (y / kScale) * 8 + x / kScale)];
        caption += fmt::format(
            "{}/{}{}", guess[wrong[k]], truth[wrong[k]], (k + 1) % kPerRow == 0 ? "\n\n" : "  ");
    }
    return {tf::constant(grid, {1, height, width, 1}), caption};
}

// The loss curve as sound for TensorBoard's audio tab: a tone sweep, one 50 ms piece per logged
// loss, high pitch for a high loss (log scale, 200 Hz to 1 kHz), as [1, T, 1] floats at 8 kHz.
tf::Tensor loss_sweep(const std::vector<float>& losses) {
    constexpr double kRate = 8000, kPi = 3.14159265358979;
    const auto [lo, hi] = std::minmax_element(losses.begin(), losses.end());
    const double log_lo = std::log(*lo), span = std::max(1e-6, std::log(*hi) - log_lo);
    std::vector<float> samples;
    double phase = 0;
    for (float loss : losses) {
        const double hz = 200 + 800 * (std::log(loss) - log_lo) / span;
        for (int i = 0; i < kRate / 20; ++i) {
            phase += 2 * kPi * hz / kRate;
            samples.push_back(static_cast<float>(0.5 * std::sin(phase)));
        }
    }
    return tf::constant(samples, {1, static_cast<int64_t>(samples.size()), 1});
}

// TensorBoard files each tag under the plugin of its first value, so a tag written by two plugins
// in one run (say an image and its caption) hides one of them. Returns the tags that were.
std::vector<std::string> tags_shared_by_plugins(const std::string& logdir) {
    std::map<std::string, std::string> plugin_of;
    std::set<std::string> shared;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(logdir)) {
        if (entry.path().filename().string().rfind("events.out.tfevents", 0) != 0) continue;
        for (const auto& event : tf::summary::summary_iterator(entry.path().string())) {
            for (const auto& value : event.values) {
                const std::string run_tag = entry.path().parent_path().string() + ":" + value.tag;
                const auto [it, inserted] = plugin_of.emplace(run_tag, value.plugin_name);
                if (!inserted && it->second != value.plugin_name) shared.insert(run_tag);
            }
        }
    }
    return {shared.begin(), shared.end()};
}

struct Args {
    std::string logdir = "logs/digits";
    std::string data = TAPEFLOW_SAMPLES_DATA_DIR "/digits.csv.gz";
    int64_t steps = kDefaultSteps;
    bool fresh = false;
};

Args parse_args(int argc, char** argv) {
    Args args;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--fresh") {
            args.fresh = true;
        } else if (i + 1 < argc && a == "--logdir") {
            args.logdir = argv[++i];
        } else if (i + 1 < argc && a == "--data") {
            args.data = argv[++i];
        } else if (i + 1 < argc && a == "--steps") {
            args.steps = std::stoll(argv[++i]);
        } else {
            throw tf::errors::InvalidArgumentError(
                "usage: demo [--logdir DIR] [--data digits.csv.gz] [--steps N] [--fresh]; got " +
                a);
        }
    }
    return args;
}

}  // namespace

int main(int argc, char** argv) {
    const auto start = std::chrono::steady_clock::now();
    const Args args = parse_args(argc, argv);
    if (args.fresh) std::filesystem::remove_all(args.logdir);

    tf::random::set_seed(42);
    const Digits all = load_digits(args.data);
    const auto [train, test] = split(all, kTestFraction);
    fmt::print(
        "tapeflow {}: a convnet learns the UCI handwritten digits ({} train, {} test images of "
        "8x8)\n",
        tf::version(),
        train.size(),
        test.size());

    ConvNet model;
    tf::train::AdamOptimizer optimizer(0.005);
    // One pass through the model under a tape gives the graph for TensorBoard's graph tab.
    tf::Graph graph;
    {
        tf::GradientTape tape;
        model.loss(tf::slice(train.images, {0, 0, 0, 0}, {kBatch, 8, 8, 1}),
                   tf::slice(train.labels, {0}, {kBatch}));
        graph = tape.graph();
    }
    auto batches = tf::data::from_tensor_slices({train.images, train.labels})
                       .shuffle(2048, 7)
                       .batch(kBatch, true)
                       .repeat();
    auto batch = batches.begin();

    auto eval_writer = tf::summary::create_file_writer(args.logdir + "/eval");
    eval_writer.graph(graph);
    tf::train::write_graph(graph, args.logdir, "graph.pbtxt");

    tf::Variable global_step = tf::train::get_or_create_global_step();
    namespace tt = tf::train;
    tt::MonitoredTrainingSession session({
        .checkpoint_dir = args.logdir + "/train",
        .save_checkpoint_steps = kCheckpointSteps,
        .save_summaries_steps = kSummarySteps,
        .log_step_count_steps = 0,  // the progress bar shows the rate
        .hooks = {std::make_shared<tt::StopAtStepHook>(
                      tt::StopAtStepHookOptions{.last_step = args.steps}),
                  std::make_shared<tt::ProgressBarHook>(
                      tt::ProgressBarHookOptions{.total_steps = args.steps}),
                  std::make_shared<tt::NanTensorHook>()},
    });
    const int64_t first_step = tt::global_step(global_step);
    if (session.restored_from()) {
        fmt::print("resuming from checkpoint {} at step {} of {}\n",
                   *session.restored_from(),
                   first_step,
                   args.steps);
    }
    // The training step as a tf::function: traced on the first call, then replayed
    // (docs/function.md).
    auto train_step = tf::function([&](const tf::Tensor& x, const tf::Tensor& y) {
        return optimizer.minimize([&] { return model.loss(x, y); }, {}, global_step);
    });
    std::vector<float> losses;  // every kSummarySteps steps, for the audio summary
    while (!session.should_stop()) {
        auto loss = session.run([&] {
            const std::vector<tf::Tensor> xy = *batch;
            ++batch;
            return train_step(xy[0], xy[1]);
        });
        const int64_t step = tt::global_step(global_step);
        if (step % kSummarySteps == 0) {
            eval_writer.scalar("accuracy/test", accuracy(model, test), step);
            losses.push_back(loss.item<float>());
            for (const tf::Variable& v : model.variables())
                eval_writer.histogram(v.name(), v.value(), step);
        }
    }
    session.close();

    const int64_t last_step = tt::global_step(global_step);
    const float test_accuracy = accuracy(model, test), train_accuracy = accuracy(model, train);
    auto predicted = model.predict(test.images);
    auto [grid, caption] = misclassified_grid(test, predicted);
    if (last_step % kSummarySteps != 0)
        eval_writer.scalar("accuracy/test", test_accuracy, last_step);
    eval_writer.image("misclassified_test_digits", grid, last_step);
    eval_writer.text(
        "misclassified_test_digits_caption",
        fmt::format("predicted/true, row by row:\n\n{}", caption.empty() ? "none" : caption),
        last_step);
    if (losses.size() > 1) eval_writer.audio("loss_as_sound", loss_sweep(losses), 8000, last_step);
    eval_writer.close();

    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    fmt::print(
        "trained steps {}..{}; train accuracy {:.1f}%, test accuracy {:.1f}% ({} of {} test digits "
        "misclassified)\n",
        first_step,
        last_step,
        100 * train_accuracy,
        100 * test_accuracy,
        static_cast<int64_t>(std::lround((1 - test_accuracy) * static_cast<double>(test.size()))),
        test.size());
    fmt::print(
        "time taken: {:.1f} s; checkpoints in {}/train (rerun to resume)\n", seconds, args.logdir);
    fmt::print("tensorboard --logdir {}\n",
               std::filesystem::absolute(args.logdir).lexically_normal().string());
    const std::vector<std::string> shared = tags_shared_by_plugins(args.logdir);
    for (const std::string& tag : shared)
        fmt::print("tag {} is written by two plugins\n", tag);
    return test_accuracy >= 0.95f && shared.empty() ? 0 : 1;
}
