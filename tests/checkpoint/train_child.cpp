// The process the kill test kills: a small model trained with Adam and an EMA under a
// MonitoredTrainingSession that checkpoints every `save_steps` steps into `dir` and stops at
// `last_step`. Rerun after a kill, it resumes from the latest checkpoint. The data of each step
// depends only on the global step, so every resumed run computes the same values.
// Usage: ckpt_train_child <dir> <last_step> <save_steps> [tensorflow|safetensors]
#include <cstdio>
#include <cstdlib>
#include <string>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;
namespace t = tapeflow::train;

int main(int argc, char** argv) {
    if (argc != 4 && argc != 5) {
        std::fprintf(
            stderr, "usage: %s <dir> <last_step> <save_steps> [tensorflow|safetensors]\n", argv[0]);
        return 2;
    }
    const std::string dir = argv[1];
    const int64_t last_step = std::atoll(argv[2]);
    const int64_t save_steps = std::atoll(argv[3]);
    const bool safetensors = argc == 5 && std::string(argv[4]) == "safetensors";
    tf::logging::set_verbosity(tf::logging::WARN);

    tf::random::set_seed(7);
    tf::Variable w1(tf::random::normal({32, 64}, 0, 0.2), {.name = "dense/kernel"});
    tf::Variable b1(tf::zeros({64}), {.name = "dense/bias"});
    tf::Variable w2(tf::random::normal({64, 8}, 0, 0.2), {.name = "out/kernel"});
    const tf::Tensor x_all = tf::random::uniform({64, 32}, -1, 1);
    const tf::Tensor y_all = tf::random::uniform({64, 8}, -1, 1);
    t::AdamOptimizer opt(0.01);
    t::ExponentialMovingAverage ema(0.99);
    tf::Variable step = t::get_or_create_global_step();

    t::MonitoredTrainingSession session(
        {.checkpoint_dir = dir,
         .save_checkpoint_steps = save_steps,
         .save_summaries_steps = {},
         .log_step_count_steps = 0,
         .hooks = {std::make_shared<t::StopAtStepHook>(
             t::StopAtStepHookOptions{.last_step = last_step})},
         .max_to_keep = 3,
         .checkpoint_format =
             safetensors ? t::CheckpointFormat::safetensors : t::CheckpointFormat::tensorflow});
    while (!session.should_stop()) {
        session.run([&] {
            const int64_t s = t::global_step(step);
            const tf::Tensor rows =
                tf::constant({s % 64, (s * 7 + 3) % 64, (s * 13 + 5) % 64, (s * 29 + 1) % 64});
            const tf::Tensor x = tf::gather(x_all, rows), y = tf::gather(y_all, rows);
            const tf::Tensor loss = opt.minimize(
                [&] {
                    const tf::Tensor h = tf::nn::relu(tf::matmul(x, w1.value()) + b1.value());
                    return tf::reduce_mean(tf::square(tf::matmul(h, w2.value()) - y));
                },
                {w1, b1, w2},
                step);
            ema.apply({w1, b1, w2});
            return loss;
        });
    }
    session.close();
    return 0;
}
