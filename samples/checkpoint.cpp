// Checkpoints as TF1's tf.train.Saver wrote them: a regression trained with Adam saves every 25
// steps (keeping the last 2), "crashes" at step 60, and a fresh process-like restart (new
// variables, new optimizer) restores the latest checkpoint (weights, Adam's slots and beta powers,
// the global step) and trains on to step 100. Exits 1 unless that ends bitwise where an
// uninterrupted run of 100 steps ends; also shows list_variables and load_variable.
#include <filesystem>

#include <fmt/format.h>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;

namespace {

const tf::Tensor kX = tf::random::uniform({64, 3}, -1, 1, tf::float32, 11);
const tf::Tensor kY = tf::matmul(kX, tf::constant({{1.f}, {-2.f}, {0.5f}})) + 0.3f;

// Trains from the current state to `last_step`; with a saver, saves every 25 global steps.
// Returns the final weights.
std::vector<float> train(int64_t last_step, const std::string& checkpoint_dir, bool resume) {
    tf::Variable w(tf::zeros({3, 1}), {.name = "w"});
    tf::Variable b(tf::zeros({}), {.name = "b"});
    tf::Variable global_step = tf::train::get_or_create_global_step();
    tf::train::AdamOptimizer optimizer(0.05);
    tf::train::Saver saver(tf::train::SaverOptions{.max_to_keep = 2});  // every global variable
    if (resume) {
        auto latest = tf::train::latest_checkpoint(checkpoint_dir);  // "<dir>/model-50"
        saver.restore(*latest);  // Adam's slots do not exist yet: restored when created
        fmt::print("restored {} at global step {}\n", *latest, tf::train::global_step(global_step));
    }
    while (tf::train::global_step(global_step) < last_step) {
        optimizer.minimize([&] { return tf::reduce_mean(tf::square(tf::matmul(kX, w) + b - kY)); },
                           {},
                           global_step);
        const int64_t step = tf::train::global_step(global_step);
        if (!checkpoint_dir.empty() && step % 25 == 0) saver.save(checkpoint_dir + "/model", step);
    }
    if (!checkpoint_dir.empty())
        fmt::print("kept: {}\n", fmt::join(saver.last_checkpoints(), ", "));
    return w.value().to_vector<float>();
}

}  // namespace

int main(int argc, char** argv) {
    namespace fs = std::filesystem;
    const std::string dir =
        argc > 1 ? argv[1] : (fs::temp_directory_path() / "tapeflow_checkpoint_sample").string();
    fs::remove_all(dir);

    const auto reference = train(100, "", false);                             // uninterrupted
    tf::train::get_or_create_global_step().assign(tf::constant(int64_t{0}));  // a new "process"
    train(60, dir, false);  // "crashes" after step 60: its last checkpoint is step 50
    for (const auto& [name, spec] : tf::train::list_variables(dir))
        fmt::print("  {} {} {}\n", name, spec.first, tf::dtype_name(spec.second));
    fmt::print("w in the checkpoint: {}\n", tf::train::load_variable(dir, "w"));
    const auto resumed = train(100, dir, true);  // a new run resumes from step 50

    fmt::print("w uninterrupted: [{}]\nw resumed:       [{}]\n",
               fmt::join(reference, ", "),
               fmt::join(resumed, ", "));
    return resumed == reference ? 0 : 1;
}
