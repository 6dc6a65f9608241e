// A training job that survives being killed (docs/checkpoints.md): a MonitoredTrainingSession
// checkpoints into a directory and, when the same program runs again, resumes from the latest
// checkpoint. Run twice with the same directory to see it resume:
//   checkpoint_resume /tmp/ckpt_demo 60     (trains steps 0..60)
//   checkpoint_resume /tmp/ckpt_demo 120    (restores step 60, trains to 120)
// Without arguments it does both in one process (as the samples test does), then inspects the
// files.
#include <cstdio>
#include <filesystem>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;

namespace {

// [train_job] The whole job: build the model and optimizer, then run the session loop. Rerun after
// a kill, the session restores the weights, Adam's slots and powers and the global step.
void train_job(const std::string& dir, int64_t last_step) {
    tf::random::set_seed(1);
    tf::Variable w(tf::random::normal({4, 1}, 0, 0.1), {.name = "linear/w"});
    tf::Variable b(tf::zeros({1}), {.name = "linear/b"});
    const tf::Tensor x = tf::random::uniform({32, 4}, -1, 1);
    const tf::Tensor y = tf::matmul(x, tf::constant({{1.f}, {-2.f}, {0.5f}, {3.f}})) + 0.25f;
    tf::train::AdamOptimizer opt(0.05);
    tf::Variable step = tf::train::get_or_create_global_step();

    namespace t = tf::train;
    t::MonitoredTrainingSession session({
        .checkpoint_dir = dir,
        .save_checkpoint_steps = 20,
        .save_summaries_steps = 10,
        .hooks =
            {std::make_shared<t::StopAtStepHook>(t::StopAtStepHookOptions{.last_step = last_step}),
             std::make_shared<t::NanTensorHook>(t::NanTensorHookOptions{.fail_on_nan_loss = true}),
             std::make_shared<t::LoggingTensorHook>(
                 t::LoggingTensorHookOptions{.every_n_iter = 50}),
             std::make_shared<t::ProgressBarHook>(
                 t::ProgressBarHookOptions{.total_steps = last_step})},
    });
    while (!session.should_stop()) {
        session.run([&] {
            return opt.minimize(
                [&] { return tf::reduce_mean(tf::square(tf::matmul(x, w) + b - y)); },
                {w, b},
                step);
        });
    }
}  // the session's destructor saves the final checkpoint (session.close() does it explicitly)
// [train_job]

}  // namespace

int main(int argc, char** argv) {
    const std::string dir =
        argc > 1 ? argv[1]
                 : (std::filesystem::temp_directory_path() / "tapeflow_ckpt_demo").string();
    if (argc > 2) {
        train_job(dir, std::stoll(argv[2]));
        return 0;
    }
    std::filesystem::remove_all(dir);
    train_job(dir, 60);   // a first run ...
    train_job(dir, 120);  // ... and a rerun that resumes at step 60

    // [inspect] What is in the latest checkpoint, and one value.
    const std::optional<std::string> latest =
        tf::train::latest_checkpoint(dir);  // ".../model.ckpt-120"
    for (const auto& [name, info] : tf::train::list_variables(*latest)) {
        fmt::print("{:<28} {} {}\n", name, info.first, tf::dtype_name(info.second));
    }
    const tf::Tensor w = tf::train::load_variable(*latest, "linear/w");
    fmt::print("linear/w = {}\n", w);
    // [inspect]

    // [saver] A Saver on its own: explicit variables, a step suffix, max_to_keep.
    tf::Variable v(tf::constant({1.f, 2.f, 3.f}), {.name = "v"});
    tf::train::Saver saver(std::vector<tf::Variable>{v}, tf::train::SaverOptions{.max_to_keep = 2});
    const std::string prefix = saver.save(dir + "/saver/v", 7);  // ".../v-7.index", ".data-..."
    v.assign(tf::zeros({3}));
    saver.restore(prefix);  // v is {1, 2, 3} again
    // [saver]
    return v.value().to_vector<float>() == std::vector<float>{1.f, 2.f, 3.f} &&
                   tf::train::global_step(*tf::train::get_global_step()) == 120
               ? 0
               : 1;
}
