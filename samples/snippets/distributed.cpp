// The code blocks of docs/distributed.md, compiled and run as a test (tests/docs checks that the
// page's blocks occur here). Alone (no mpirun) the synchronous part trains as one process of size 1
// and the parameter-server part, which needs 2 or more processes, is skipped; under
// `mpirun -np 3` both run. Exits 1 unless the synchronous loss went down.
// Laid out as in the page, not by clang-format (tests/docs/check_code_blocks.py compares them).
// clang-format off
#include <cstdio>

#include <tapeflow/tapeflow.hpp>
namespace tf = tapeflow;

namespace {

// y = 2 x1 - x2 on 48 examples.
tf::Tensor inputs() { return tf::random::uniform({48, 2}, -1, 1, tf::float32, 7); }
tf::Tensor targets(const tf::Tensor& x) { return tf::matmul(x, tf::constant({{2.f}, {-1.f}})); }

bool synchronous(int argc, char** argv) {
    const tf::Tensor x = inputs();
    const tf::data::Dataset<std::vector<tf::Tensor>> dataset = tf::data::from_tensor_slices({x, targets(x)});
    const int64_t global_batch = 12;
    const int epochs = 20;
    tf::Variable w(tf::zeros({2, 1}), {.name = "w_sync"});
    auto loss_fn = [&](const std::vector<tf::Tensor>& b) { return tf::square(tf::matmul(b[0], w) - b[1]); };
    const float before = tf::reduce_mean(loss_fn({x, targets(x)})).item<float>();

namespace td = tf::distribute;
td::init(&argc, &argv);
auto opt = std::make_shared<td::DistributedOptimizer>(
    std::make_shared<tf::train::AdamOptimizer>(0.001), td::DistributedOptions{.bucket_bytes = 25 << 20});
// Each process takes every size()-th example, then batches its share of the global batch.
for (const auto& batch : td::shard(dataset).batch(global_batch / td::size()).repeat(epochs)) {
    opt->minimize([&] { return tf::reduce_mean(loss_fn(batch)); });
}

    const float after = tf::reduce_mean(loss_fn({x, targets(x)})).item<float>();
    if (td::rank() == 0) std::printf("synchronous: loss %.4f -> %.4f on %d process(es)\n", before, after, td::size());
    return after < before;
}

int parameter_server(int argc, char** argv) {
    const int steps = 50;
    auto next_batch = [] { return inputs(); };

namespace td = tf::distribute;
td::init(&argc, &argv);
auto strategy = td::ParameterServerStrategy::from_mpi(/*num_ps=*/1);  // rank 0: ps, others: workers
auto w = strategy.create_variable(tf::random::normal({2, 3}), {.name = "w"});   // every process,
auto b = strategy.create_variable(tf::zeros({3}), {.name = "b"});               // same order

    auto loss = [&](const tf::Tensor& x) {
        return tf::reduce_mean(tf::square(tf::matmul(x, w.value()) + b.value() - tf::concat({targets(x), targets(x), targets(x)}, 1)));
    };

tf::train::AdamOptimizer opt(0.01);
strategy.register_optimizer(opt);              // every process
if (strategy.is_ps()) {
    strategy.run_server();                     // until every worker has finished
    return 0;
}
for (int step = 0; step < steps; ++step) {
    auto grads = opt.compute_gradients([&] { return loss(next_batch()); }, {w, b});
    strategy.apply_gradients(opt, grads);      // push: returns without waiting
    strategy.pull({w, b});                     // the latest values
}
strategy.finish();                             // also done by the destructor

    if (strategy.is_chief()) std::printf("parameter server: worker 0 done, loss %.4f\n", loss(inputs()).item<float>());
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (!synchronous(argc, argv)) return 1;
    if (tf::distribute::size() >= 2) return parameter_server(argc, argv);
    std::printf("parameter server: skipped (one process; run with mpirun -np 3)\n");
    return 0;
}
