// Training across processes: DistributedOptimizer on each process's shard of the global batch must
// give the variables one process gets on the whole batch (every optimizer of both families, dense
// and IndexedSlices gradients), and parameter-server training must converge on the tutorial
// network. Every process runs the single-process reference itself, so each compares locally.
#include <cmath>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <unistd.h>

#include <tapeflow/tapeflow.hpp>

#include "distribute/reduce_stats.hpp"

namespace tf = tapeflow;
namespace td = tapeflow::distribute;
namespace ko = tapeflow::keras::optimizers;
using Catch::Contains;

namespace {

constexpr int64_t kBatch = 12;  // divisible by 1, 2, 3 and 4 processes
constexpr int kSteps = 3;

using Factory = std::function<std::shared_ptr<tf::train::Optimizer>()>;

std::vector<std::pair<std::string, Factory>> optimizer_families() {
    namespace t = tf::train;
    return {
        {"GradientDescent",
         [] {
             return std::make_shared<t::GradientDescentOptimizer>(0.1);
         }},
        {"Momentum",
         [] {
             return std::make_shared<t::MomentumOptimizer>(
                 0.1, 0.9, t::MomentumOptimizerOptions{.use_nesterov = true});
         }},
        {"Adagrad",
         [] {
             return std::make_shared<t::AdagradOptimizer>(0.1);
         }},
        {"Adadelta",
         [] {
             return std::make_shared<t::AdadeltaOptimizer>(1.0);
         }},
        {"Adam",
         [] {
             return std::make_shared<t::AdamOptimizer>(0.05);
         }},
        {"Ftrl",
         [] {
             return std::make_shared<t::FtrlOptimizer>(
                 0.1, t::FtrlOptimizerOptions{.l1_regularization_strength = 0.01});
         }},
        {"RMSProp",
         [] {
             return std::make_shared<t::RMSPropOptimizer>(
                 0.01, t::RMSPropOptimizerOptions{.momentum = 0.5, .centered = true});
         }},
        {"ProximalGradientDescent",
         [] {
             return std::make_shared<t::ProximalGradientDescentOptimizer>(
                 0.1,
                 t::ProximalGradientDescentOptimizerOptions{.l1_regularization_strength = 0.01});
         }},
        {"ProximalAdagrad",
         [] {
             return std::make_shared<t::ProximalAdagradOptimizer>(0.1);
         }},
        {"keras.SGD",
         [] {
             return std::make_shared<ko::SGD>(
                 ko::SGDOptions{.learning_rate = 0.1, .momentum = 0.9});
         }},
        {"keras.RMSprop",
         [] {
             return std::make_shared<ko::RMSprop>(ko::RMSpropOptions{.learning_rate = 0.01});
         }},
        {"keras.Adam",
         [] {
             return std::make_shared<ko::Adam>(ko::AdamOptions{.learning_rate = 0.05});
         }},
        {"keras.AdamW",
         [] {
             return std::make_shared<ko::AdamW>(ko::AdamWOptions{.learning_rate = 0.05});
         }},
        {"keras.Adamax",
         [] {
             return std::make_shared<ko::Adamax>(ko::AdamaxOptions{.learning_rate = 0.05});
         }},
        {"keras.Nadam",
         [] {
             return std::make_shared<ko::Nadam>(ko::NadamOptions{.learning_rate = 0.05});
         }},
        {"keras.Adagrad",
         [] {
             return std::make_shared<ko::Adagrad>(ko::AdagradOptions{.learning_rate = 0.1});
         }},
        {"keras.Adadelta",
         [] {
             return std::make_shared<ko::Adadelta>(ko::AdadeltaOptions{.learning_rate = 1.0});
         }},
        {"keras.Ftrl",
         [] {
             return std::make_shared<ko::Ftrl>(ko::FtrlOptions{.learning_rate = 0.1});
         }},
        {"keras.SGD global_clipnorm",
         [] {
             return std::make_shared<ko::SGD>(
                 ko::SGDOptions{.learning_rate = 0.1, .global_clipnorm = 0.05});
         }},
    };
}

// The global batch: x [12, 3], ids [12] into a 5-row embedding, y [12, 2].
struct Batch {
    tf::Tensor x =
        tf::reshape(tf::range(0, kBatch * 3, 1, tf::DType::float32) * 0.1f - 1.f, {kBatch, 3});
    tf::Tensor ids = tf::constant({0, 3, 3, 1, 4, 0, 2, 3, 3, 1, 0, 4});
    tf::Tensor y =
        tf::reshape(tf::cos(tf::range(0, kBatch * 2, 1, tf::DType::float32)), {kBatch, 2});

    Batch shard(int64_t index, int64_t count) const {
        const int64_t rows = kBatch / count;
        Batch b;
        b.x = tf::slice(x, {index * rows, 0}, {rows, 3});
        b.ids = tf::slice(ids, {index * rows}, {rows});
        b.y = tf::slice(y, {index * rows, 0}, {rows, 2});
        return b;
    }
};

// y_hat = tanh(x W + b) + E[ids]: W and b get dense gradients, E IndexedSlices.
struct Model {
    tf::Variable w, b, e;
    explicit Model(float offset)
        : w(tf::reshape(tf::sin(tf::range(0, 6, 1, tf::DType::float32)), {3, 2}) + offset,
            {.name = "w"}),
          b(tf::constant({0.1f, -0.2f}) + offset, {.name = "b"}),
          e(tf::reshape(tf::cos(tf::range(0, 10, 1, tf::DType::float32)) * 0.5f, {5, 2}) + offset,
            {.name = "e"}) {}
    tf::Tensor loss(const Batch& d) const {
        const tf::Tensor pred = tf::tanh(tf::matmul(d.x, w) + b) + tf::gather(e, d.ids);
        return tf::reduce_mean(tf::square(pred - d.y));
    }
    std::vector<tf::Variable> vars() const { return {w, b, e}; }
};

void check_close(const tf::Variable& got, const tf::Variable& want, const std::string& what) {
    const std::vector<float> g = got.value().to_vector<float>();
    const std::vector<float> w = want.value().to_vector<float>();
    REQUIRE(g.size() == w.size());
    for (std::size_t i = 0; i < g.size(); ++i) {
        INFO(what << " element " << i);
        REQUIRE(g[i] == Approx(w[i]).epsilon(2e-5).margin(2e-6));
    }
}

}  // namespace

TEST_CASE(
    "DistributedOptimizer: N processes on shards == 1 process on the global batch, every optimizer",
    "[distribute][sync]") {
    if (kBatch % td::size() != 0) {
        WARN("the global batch of " << kBatch << " does not split evenly over " << td::size()
                                    << " processes");
        return;
    }
    const Batch global;
    const Batch mine = global.shard(td::rank(), td::size());
    for (const auto& [name, make] : optimizer_families()) {
        for (int64_t bucket_bytes :
             {int64_t{16}, int64_t{25} << 20}) {  // several buckets, then one
            INFO(name << " bucket_bytes " << bucket_bytes);
            Model reference(0.f);
            auto reference_opt = make();
            // The replicas start apart: rank 0's values reach the others at the first step.
            Model replica(static_cast<float>(td::rank()));
            td::DistributedOptimizer opt(make(), {.bucket_bytes = bucket_bytes});
            for (int step = 0; step < kSteps; ++step) {
                reference_opt->minimize([&] { return reference.loss(global); }, reference.vars());
                if (step % 2 == 0) {
                    opt.minimize([&] { return replica.loss(mine); }, replica.vars());
                } else {  // default var_list, through compute_gradients + apply_gradients
                    opt.apply_gradients(opt.compute_gradients([&] { return replica.loss(mine); }));
                }
            }
            check_close(replica.w, reference.w, name + " w");
            check_close(replica.b, reference.b, name + " b");
            check_close(replica.e, reference.e, name + " e");
            CHECK(opt.iterations() == kSteps);
            CHECK(opt.variables().size() == reference_opt->variables().size());
        }
    }
}

TEST_CASE("DistributedOptimizer: sum instead of mean, float64, and reduce_gradients",
          "[distribute][sync]") {
    tf::Variable v(tf::constant({1.0, 2.0, 3.0}), {.name = "v64"});
    td::DistributedOptimizer opt(std::make_shared<tf::train::GradientDescentOptimizer>(0.5),
                                 {.average = false});
    // Process r's loss sum((r + 1) v): the summed gradient is n(n + 1)/2 per element.
    const double r1 = td::rank() + 1.0;
    opt.minimize([&] { return tf::reduce_sum(v.value() * r1); }, {v});
    const double n = td::size();
    const double step = 0.5 * n * (n + 1) / 2;
    CHECK(v.value().to_vector<double>() == std::vector<double>{1 - step, 2 - step, 3 - step});
    const std::vector<tf::train::GradAndVar> reduced =
        opt.reduce_gradients({{tf::constant({r1, r1, r1}), v}, {tf::Gradient(), v}});
    CHECK(reduced[0].gradient.dense().to_vector<double>() ==
          std::vector<double>(3, n * (n + 1) / 2));
    CHECK_FALSE(reduced[1].gradient.defined());
    CHECK_THROWS_AS(td::DistributedOptimizer(nullptr), tf::errors::InvalidArgumentError);
    CHECK_THROWS_WITH(
        td::DistributedOptimizer(std::make_shared<tf::train::GradientDescentOptimizer>(0.1),
                                 {.bucket_bytes = 0}),
        Contains("bucket_bytes must be positive"));
}

TEST_CASE("DistributedOptimizer: buckets start reducing while the backward walk goes on",
          "[distribute][sync]") {
    // Three layers; every variable is its own bucket (16 bytes). The walk finishes the last
    // layer's gradients first, so the buckets of the two later layers start before the walk ends.
    // (Not the first layer's: buckets start in order, and which of its w and b the walk finishes
    // last depends on the order C++ evaluated `matmul(h, w) + b`'s operands.)
    std::vector<tf::Variable> vars;
    for (int layer = 0; layer < 3; ++layer) {
        vars.emplace_back(tf::fill({4, 4}, 0.1 * (layer + 1)),
                          tf::VariableOptions{.name = "mlp_w"});
        vars.emplace_back(tf::fill({4}, 0.01), tf::VariableOptions{.name = "mlp_b"});
    }
    const tf::Tensor x = tf::fill({2, 4}, 1.0 + td::rank());
    td::DistributedOptimizer opt(std::make_shared<tf::train::GradientDescentOptimizer>(0.1),
                                 {.bucket_bytes = 16});
    opt.minimize([&] {
        tf::Tensor h = x;
        for (std::size_t k = 0; k < vars.size(); k += 2)
            h = tf::tanh(tf::matmul(h, vars[k]) + vars[k + 1]);
        return tf::reduce_mean(h);
    });
    const auto stats = td::detail::last_reduce_stats();
    CHECK(stats.buckets == vars.size());
    CHECK(stats.started_before_last_gradient >= stats.buckets - 2);
}

// The tutorial network: 2 -> 3 relu -> 1, learning whether x1 + x2 < 1.
TEST_CASE("ParameterServerStrategy: asynchronous training converges on the tutorial network",
          "[distribute][ps]") {
    if (td::size() < 2) {
        CHECK_THROWS_WITH(td::ParameterServerStrategy::from_mpi(1),
                          Contains("num_ps must be in [1, 1)"));
        return;
    }
    auto strategy = td::ParameterServerStrategy::from_mpi(1);
    CHECK(strategy.is_ps() == (td::rank() == 0));
    CHECK(strategy.is_chief() == (td::rank() == 1));
    CHECK(strategy.num_workers() == td::size() - 1);
    tf::random::set_seed(1);
    auto w1 = strategy.create_variable(tf::random::normal({2, 3}, 0, 1, tf::DType::float32, 11),
                                       {.name = "w1"});
    auto b1 = strategy.create_variable(tf::fill({3}, 0.1), {.name = "b1"});
    auto w2 = strategy.create_variable(tf::random::normal({3, 1}, 0, 1, tf::DType::float32, 12),
                                       {.name = "w2"});
    auto b2 = strategy.create_variable(tf::zeros({1}), {.name = "b2"});
    const std::vector<tf::Variable> vars{w1, b1, w2, b2};
    tf::train::AdamOptimizer opt(0.05);
    strategy.register_optimizer(opt);
    auto logits = [&](const tf::Tensor& x) {
        return tf::matmul(tf::nn::relu(tf::matmul(x, w1.value()) + b1.value()), w2.value()) +
               b2.value();
    };
    auto labels_of = [](const tf::Tensor& x) {
        return tf::cast(tf::less(tf::reduce_sum(x, {1}, true), tf::constant(1.f)),
                        tf::DType::float32);
    };
    const tf::Tensor test_x = tf::random::uniform({200, 2}, 0, 1, tf::DType::float32, 99);
    const tf::Tensor test_y = labels_of(test_x);
    if (strategy.is_ps()) {
        strategy.run_server();
        CHECK(opt.iterations() > 0);
        return;
    }
    auto loss_on = [&](const tf::Tensor& x, const tf::Tensor& y) {
        return tf::reduce_mean(tf::nn::sigmoid_cross_entropy_with_logits(y, logits(x)));
    };
    const float initial = loss_on(test_x, test_y).item<float>();
    auto accuracy_now = [&] {
        const tf::Tensor predicted =
            tf::cast(tf::greater(logits(test_x), tf::constant(0.f)), tf::DType::float32);
        return tf::reduce_mean(tf::cast(tf::equal(predicted, test_y), tf::DType::float32))
            .item<float>();
    };
    // Asynchronous: how far the ps has got when this worker looks depends on scheduling (an
    // oversubscribed machine let one worker finish 300 steps while most pushes still queued), so
    // each worker trains until its view has converged, within a cap.
    float final_loss = initial;
    float accuracy = 0;
    int step = 0;
    for (; step < 3000; ++step) {
        const tf::Tensor x =
            tf::random::uniform({32, 2}, 0, 1, tf::DType::float32, 1000 * td::rank() + step);
        const tf::Tensor y = labels_of(x);
        strategy.apply_gradients(opt, opt.compute_gradients([&] { return loss_on(x, y); }, vars));
        strategy.pull(vars);
        if (step >= 200 && step % 50 == 0) {
            final_loss = loss_on(test_x, test_y).item<float>();
            accuracy = accuracy_now();
            if (final_loss < 0.5f * initial && accuracy >= 0.9f) break;
        }
    }
    INFO("worker " << strategy.task_index() << ": loss " << initial << " -> " << final_loss
                   << ", accuracy " << accuracy << " after " << step << " steps");
    CHECK(final_loss < 0.5f * initial);
    CHECK(accuracy >= 0.9f);
    CHECK(opt.iterations() == 0);  // the ps applied the updates, not the worker
    CHECK_THROWS_AS(strategy.run_server(), tf::errors::FailedPreconditionError);
    strategy.finish();
}

TEST_CASE(
    "ParameterServerStrategy: several ps tasks, IndexedSlices pushes, every push applied once",
    "[distribute][ps]") {
    if (td::size() < 2) return;
    const int num_ps = td::size() >= 4 ? 2 : 1;
    auto strategy = td::ParameterServerStrategy::from_mpi(num_ps);
    auto e =
        strategy.create_variable(tf::zeros({5, 2}), {.name = "ps_e"});  // variable 0: ps task 0
    auto d = strategy.create_variable(tf::zeros({3}),
                                      {.name = "ps_d"});  // variable 1: ps task 1 % num_ps
    tf::train::GradientDescentOptimizer opt(1.0);
    strategy.register_optimizer(opt);
    constexpr int kPushes = 5;
    if (strategy.is_ps()) {
        strategy.run_server();
        // Every worker's pushes were applied: rows 0 and 2 of e were gathered once and twice per
        // push.
        const float w = static_cast<float>(strategy.num_workers() * kPushes);
        if (strategy.task_index() == 0) {
            CHECK(e.value().to_vector<float>() ==
                  std::vector<float>{-w, -w, 0, 0, -2 * w, -2 * w, 0, 0, 0, 0});
        }
        if (strategy.task_index() == 1 % num_ps)
            CHECK(d.value().to_vector<float>() == std::vector<float>(3, -w));
        return;
    }
    for (int step = 0; step < kPushes; ++step) {
        auto grads = opt.compute_gradients(
            [&] {
                return tf::reduce_sum(tf::gather(e, tf::constant({0, 2, 2}))) +
                       tf::reduce_sum(d.value());
            },
            {e, d});
        REQUIRE(grads[0].gradient.is_sparse());
        strategy.apply_gradients(opt, grads);
    }
    strategy.pull({e, d});
    const std::vector<float> mine = e.value().to_vector<float>();
    CHECK(mine[0] <=
          -kPushes);  // at least this worker's own pushes (pushes before a pull are applied)
    CHECK_THROWS_AS(strategy.pull({tf::Variable(tf::zeros({1}))}),
                    tf::errors::InvalidArgumentError);
    strategy.finish();
}

TEST_CASE("summaries: only the chief writes by default, every process when asked",
          "[distribute][summary]") {
    // every process names the same directory, as a script run under mpirun does
    const std::string dir =
        (std::filesystem::temp_directory_path() /
         fmt::format("tapeflow_chief_summaries_{}",
                     td::broadcast(tf::constant(int64_t{::getpid()})).item<int64_t>()))
            .string();
    auto writer = tf::summary::create_file_writer(dir);
    const bool wrote = writer.scalar("loss", 1.0, 0);
    CHECK(wrote == td::is_chief());
    CHECK(writer.path().empty() == !td::is_chief());
    writer.close();
    auto own = tf::summary::create_file_writer(
        dir, {.filename_suffix = fmt::format(".rank{}", td::rank()), .every_process = true});
    CHECK(own.scalar("loss", 1.0, 0));
    own.close();
    CHECK(tf::summary::summary_iterator(own.path()).size() == 2);
    td::barrier();
    if (td::is_chief()) {
        int files = 0;
        for (const auto& e : std::filesystem::directory_iterator(dir))
            files += e.is_regular_file() ? 1 : 0;
        CHECK(files == td::size() + 1);
    }
    td::barrier();
}
