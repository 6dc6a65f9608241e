// TF1's distributed training idioms, run with `mpirun -np 3 tf1_cluster [async|sync]`: the
// processes are the tasks of a tf.train.ClusterSpec. async: one ps task holds the variables
// (placed by tf.train.replica_device_setter) and the two workers train without waiting for each
// other, as TF1's between-graph replication does. sync: three workers all-reduce their gradients
// every step (DistributedOptimizer), so every replica keeps the same variables. Alone it runs as
// the single task of create_local_server. Exits 1 unless y = 2x - 1 is recovered.
#include <cmath>
#include <cstring>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;

namespace {

// Each task reads its own shard of the data (seeded by task), as TF1 input pipelines did.
std::pair<tf::Tensor, tf::Tensor> batch(int task, int step) {
    const tf::Tensor x =
        tf::random::uniform({32, 1}, -1, 1, tf::DType::float32, 1000 * task + step);
    return {x, 2.0f * x - 1.0f};
}

std::vector<std::string> addresses(const char* host, int first, int n) {
    std::vector<std::string> out;
    for (int i = 0; i < n; ++i)
        out.push_back(fmt::format("{}:{}", host, first + i));
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    tf::distribute::init(&argc, &argv);
    const bool sync = argc > 1 && std::strcmp(argv[1], "sync") == 0;
    const int n = tf::distribute::size();
    const bool async = !sync && n > 1;
    // TF1 scripts take --job_name and --task_index; under mpirun the rank decides.
    const tf::train::ClusterSpec cluster =
        async ? tf::train::ClusterSpec({{"ps", addresses("ps", 2222, 1)},
                                        {"worker", addresses("worker", 2222, n - 1)}})
              : tf::train::ClusterSpec({{"worker", addresses("worker", 2222, n)}});
    auto server = tf::train::Server::from_mpi(cluster);
    const int task = server.task_index();

    tf::Variable w, b, global_step;
    {
        auto scope = tf::device(tf::train::replica_device_setter(
            cluster, fmt::format("/job:worker/task:{}", server.is_ps() ? 0 : task)));
        w = tf::Variable(tf::zeros({1, 1}), {.name = "w"});
        b = tf::Variable(tf::zeros({1}), {.name = "b"});
        global_step = tf::train::get_or_create_global_step();
    }
    auto sgd = std::make_shared<tf::train::GradientDescentOptimizer>(0.2);
    tf::distribute::DistributedOptimizer all_reduce(sgd);
    tf::train::Optimizer& optimizer = sync ? static_cast<tf::train::Optimizer&>(all_reduce) : *sgd;

    if (server.is_ps()) {
        fmt::print("ps {}: serving w and b to {} workers\n", task, n - 1);
        server.join();
        fmt::print("ps {}: the workers are done after {} updates: w = {:.3f}, b = {:.3f}\n",
                   task,
                   tf::train::global_step(global_step),
                   w.value().to_vector<float>()[0],
                   b.value().to_vector<float>()[0]);
    } else {
        for (int step = 0; step < 200; ++step) {
            const auto [x, y] = batch(task, step);
            const tf::Tensor loss = optimizer.minimize(
                [&] { return tf::losses::mean_squared_error(y, tf::matmul(x, w) + b); },
                {w, b},
                global_step);
            if (server.is_chief() && step % 50 == 0)
                fmt::print("worker {}: step {:3}, global step {:3}, loss {:.5f}\n",
                           task,
                           step,
                           tf::train::global_step(global_step),
                           loss.item<float>());
        }
        server.join();
    }
    const float wv = w.value().to_vector<float>()[0], bv = b.value().to_vector<float>()[0];
    // Only the ps holds the final values in async mode; the workers' copies are from their last
    // step. Everyone checks what they hold.
    const bool ok = std::abs(wv - 2.f) < 0.05f && std::abs(bv + 1.f) < 0.05f;
    fmt::print("{} {} ({} mode): w = {:.3f} (true 2), b = {:.3f} (true -1){}\n",
               server.job_name(),
               task,
               sync    ? "sync"
               : async ? "async"
                       : "local",
               wv,
               bv,
               ok ? "" : " -- NOT recovered");
    tf::distribute::finalize();
    return ok ? 0 : 1;
}
