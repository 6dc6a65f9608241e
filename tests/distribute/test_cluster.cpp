// TF1's cluster idioms (tf::train::ClusterSpec, Server, replica_device_setter, tf::device with job
// and task names): alone, and under mpirun with 2 and 4 processes as one ps and workers (two ps at
// 4). Every process runs the same program, as a TF1 between-graph script does.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;
namespace td = tapeflow::distribute;
using Catch::Contains;

namespace {

tf::train::ClusterSpec ps_cluster(int num_ps) {
    std::vector<std::string> ps, workers;
    for (int i = 0; i < td::size(); ++i)
        (i < num_ps ? ps : workers).push_back(fmt::format("localhost:{}", 2222 + i));
    return tf::train::ClusterSpec({{"ps", ps}, {"worker", workers}});
}

float max_abs_diff(const tf::Tensor& a, const tf::Tensor& b) {
    return tf::reduce_max(tf::abs(a - b)).item<float>();
}

}  // namespace

TEST_CASE("ClusterSpec: TF's queries, ClusterDef text and the tasks' MPI ranks", "[cluster]") {
    const tf::train::ClusterSpec cluster(
        {{"ps", {"ps0:2222", "ps1:2222"}}, {"worker", {"w0:2222", "w1:2222", "w2:2222"}}});
    CHECK(cluster.job_names() == std::vector<std::string>{"ps", "worker"});
    CHECK(cluster.num_tasks("worker") == 3);
    CHECK(cluster.task_indices("ps") == std::vector<int>{0, 1});
    CHECK(cluster.task_address("worker", 2) == "w2:2222");
    CHECK(cluster.job_tasks("ps") == std::vector<std::string>{"ps0:2222", "ps1:2222"});
    CHECK(cluster.num_processes() == 5);
    CHECK(cluster.rank_of("ps", 1) == 1);
    CHECK(cluster.rank_of("worker", 0) == 2);
    CHECK(cluster.task_of_rank(4) == std::pair<std::string, int>{"worker", 2});
    CHECK(static_cast<bool>(cluster));
    CHECK_FALSE(static_cast<bool>(tf::train::ClusterSpec()));
    CHECK(cluster.as_cluster_def().starts_with(
        "job {\n  name: \"ps\"\n  tasks {\n    key: 0\n    value: \"ps0:2222\"\n  }\n"));
    // The ps job's tasks come first whatever the other jobs are called.
    const tf::train::ClusterSpec three({{"chief", {"c:1"}}, {"ps", {"p:1"}}, {"worker", {"w:1"}}});
    CHECK(three.rank_of("ps", 0) == 0);
    CHECK(three.rank_of("chief", 0) == 1);
    CHECK(three.rank_of("worker", 0) == 2);
    CHECK_THROWS_WITH(cluster.num_tasks("evaluator"),
                      Contains("No such job in cluster: 'evaluator'"));
    CHECK_THROWS_WITH(cluster.task_address("worker", 3),
                      Contains("No task with index 3 in job 'worker'"));
    CHECK_THROWS_AS(cluster.task_of_rank(5), tf::errors::InvalidArgumentError);
    CHECK_THROWS_AS(tf::train::ClusterSpec({{"bad/job", {"x"}}}), tf::errors::InvalidArgumentError);
}

TEST_CASE("replica_device_setter: variables round robin on the ps tasks, the rest on the worker",
          "[cluster]") {
    const tf::train::ClusterSpec cluster({{"ps", {"p0:1", "p1:1"}}, {"worker", {"w0:1"}}});
    auto place = tf::train::replica_device_setter(cluster, "/job:worker/task:0/device:CPU:0");
    CHECK(place({"VarHandleOp", "a"}) == "/job:ps/task:0");
    CHECK(place({"VarHandleOp", "b"}) == "/job:ps/task:1");
    CHECK(place({"VarHandleOp", "c"}) == "/job:ps/task:0");
    CHECK(place({"", ""}) == "/job:worker/task:0/device:CPU:0");
    // Without ps tasks everything stays on the worker device.
    auto local = tf::train::replica_device_setter(tf::train::ReplicaDeviceSetterOptions{});
    CHECK(local({"VarHandleOp", "a"}) == "/job:worker");
    tf::train::ReplicaDeviceSetterOptions custom;
    custom.ps_tasks = 2;
    custom.ps_strategy = [](const tf::PlacementRequest& r) {
        return r.name == "big" ? 1 : 5;
    };
    auto by_name = tf::train::replica_device_setter(custom);
    CHECK(by_name({"VarHandleOp", "big"}) == "/job:ps/task:1");
    CHECK_THROWS_WITH(by_name({"VarHandleOp", "small"}),
                      Contains("put variable 'small' on ps task 5, but there are 2"));
    tf::train::ReplicaDeviceSetterOptions negative;
    negative.ps_tasks = -1;
    CHECK_THROWS_AS(tf::train::replica_device_setter(negative), tf::errors::InvalidArgumentError);
    tf::train::ReplicaDeviceSetterOptions malformed;
    malformed.worker_device = "/job:worker/task:x";
    CHECK_THROWS_AS(tf::train::replica_device_setter(malformed), tf::errors::InvalidArgumentError);
}

TEST_CASE("Server::create_local_server: one task of this process, names accepted in tf::device",
          "[cluster]") {
    auto server = tf::train::Server::create_local_server();
    CHECK(server.job_name() == "localhost");
    CHECK(server.task_index() == 0);
    CHECK(server.target() == fmt::format("mpi://rank:{}", td::rank()));
    CHECK(server.strategy() == nullptr);
    CHECK_THROWS_AS(tf::train::Server::create_local_server(), tf::errors::AlreadyExistsError);
    tf::Variable v;
    {
        auto scope = tf::device("/job:localhost/replica:0/task:0/device:CPU:0");
        v = tf::Variable(tf::ones({2}), {.name = "local_v"});
    }
    CHECK(v.device() == tf::Device::cpu());
    server.join();  // nothing to serve
}

TEST_CASE("Server: the task must be this process", "[cluster][errors]") {
    const tf::train::ClusterSpec too_big(
        {{"worker", std::vector<std::string>(static_cast<std::size_t>(td::size()) + 1, "h:1")}});
    CHECK_THROWS_WITH(tf::train::Server(too_big, "worker", 0),
                      Contains(fmt::format("mpirun -np {}", td::size() + 1)));
    const tf::train::ClusterSpec fits(
        {{"worker", std::vector<std::string>(static_cast<std::size_t>(td::size()), "h:1")}});
    CHECK_THROWS_WITH(tf::train::Server(fits, "ps", 0), Contains("No such job in cluster: 'ps'"));
    if (td::size() > 1) {
        CHECK_THROWS_WITH(tf::train::Server(fits, "worker"), Contains("task_index must be given"));
        const int other = (td::rank() + 1) % td::size();
        CHECK_THROWS_WITH(tf::train::Server(fits, "worker", other),
                          Contains(fmt::format("but this process is rank {}", td::rank())));
    }
    // A cluster of workers only holds every variable locally (synchronous training all-reduces).
    auto server = tf::train::Server::from_mpi(fits);
    CHECK(server.task_index() == td::rank());
    CHECK(server.is_chief() == (td::rank() == 0));
    CHECK(server.strategy() == nullptr);
    server.join();
}

TEST_CASE("Server: between-graph replication, variables on the ps, asynchronous workers",
          "[distribute][cluster]") {
    if (td::size() < 2) return;
    const int workers = td::size() - 1;
    const tf::train::ClusterSpec cluster = ps_cluster(1);
    auto server = tf::train::Server::from_mpi(cluster);
    CHECK(server.is_ps() == (td::rank() == 0));
    CHECK(server.is_chief() == (td::rank() == 1));
    tf::Variable w, b, global_step, local;
    {
        auto scope = tf::device(tf::train::replica_device_setter(
            cluster, fmt::format("/job:worker/task:{}", std::max(0, td::rank() - 1))));
        w = tf::Variable(tf::zeros({3, 1}), {.name = "w"});
        b = tf::Variable(tf::zeros({1}), {.name = "b"});
        global_step = tf::Variable(tf::constant(int64_t{0}), {.name = "global_step"});
        auto worker_scope = tf::device("/job:worker/task:0");
        local = tf::Variable(tf::zeros({1}), {.name = "worker_local"});
    }
    CHECK(server.strategy()->holds(w));
    CHECK(server.strategy()->holds(global_step));
    CHECK_FALSE(server.strategy()->holds(local));
    tf::train::GradientDescentOptimizer opt(0.1);
    const tf::Tensor true_w = tf::constant(std::vector<float>{1.f, -2.f, 0.5f}, {3, 1});
    constexpr int kSteps = 150;
    float ok = 0;
    if (server.is_ps()) {
        server.join();
        INFO("w " << w.value().str() << " global step " << global_step.value().str());
        // Every push applied exactly once, each incrementing the global step there.
        CHECK(global_step.value().item<int64_t>() == int64_t{workers} * kSteps);
        CHECK(opt.iterations() == int64_t{workers} * kSteps);
        CHECK(max_abs_diff(w.value(), true_w) < 0.02f);
        ok = global_step.value().item<int64_t>() == int64_t{workers} * kSteps &&
                     max_abs_diff(w.value(), true_w) < 0.02f
                 ? 1.f
                 : 0.f;
    } else {
        for (int step = 0; step < kSteps; ++step) {
            const tf::Tensor x =
                tf::random::normal({16, 3}, 0, 1, tf::DType::float32, 100 * td::rank() + step);
            const tf::Tensor y = tf::matmul(x, true_w) + 0.3f;
            opt.minimize(
                [&] {
                    return tf::reduce_mean(tf::square(tf::matmul(x, w.value()) + b.value() - y));
                },
                {w, b},
                global_step);
            // The local copies are the ps's after each step: at least this worker's steps.
            REQUIRE(global_step.value().item<int64_t>() >= step + 1);
        }
        CHECK(opt.iterations() == 0);  // the ps applied every update
        server.join();
    }
    // Every process learns the ps's verdict (the workers cannot read the ps after joining).
    CHECK(td::broadcast(tf::constant(ok), 0).item<float>() == 1.f);
}

TEST_CASE("Server: a variable placed on /job:ps/task:1 lives there only", "[distribute][cluster]") {
    if (td::size() < 2) return;
    const int num_ps = td::size() >= 4 ? 2 : 1;
    const tf::train::ClusterSpec cluster = ps_cluster(num_ps);
    auto server = tf::train::Server::from_mpi(cluster);
    if (num_ps == 1) {
        // Every process fails alike, before anything is sent.
        auto scope = tf::device("/job:ps/task:1");
        CHECK_THROWS_WITH(tf::Variable(tf::zeros({2})),
                          Contains("placed on ps task 1, but the cluster has 1 ps task(s)"));
        server.join();
        return;
    }
    const int workers = td::size() - num_ps;
    tf::Variable u, v, step;
    {
        auto scope = tf::device("/job:ps/task:0");
        u = tf::Variable(tf::fill({2}, 5.0), {.name = "u"});
        auto inner = tf::device("/task:1");  // merges: /job:ps/task:1
        v = tf::Variable(tf::fill({2}, 5.0), {.name = "v"});
        step = tf::Variable(tf::constant(int64_t{0}), {.name = "step"});
    }
    tf::train::GradientDescentOptimizer opt(1.0);
    const tf::Tensor c = tf::constant(std::vector<float>{1.f, 2.f}, {2});
    constexpr int kSteps = 10;
    if (server.is_ps()) {
        server.join();
        const tf::Tensor moved = tf::fill({2}, 5.0) - c * static_cast<float>(workers * kSteps);
        const tf::Tensor same = tf::fill({2}, 5.0);
        const bool ps1 = server.task_index() == 1;
        CHECK(max_abs_diff(v.value(), ps1 ? moved : same) == 0.f);
        CHECK(max_abs_diff(u.value(), ps1 ? same : moved) == 0.f);
        CHECK(step.value().item<int64_t>() == (ps1 ? int64_t{workers} * kSteps : 0));
    } else {
        for (int i = 0; i < kSteps; ++i) {
            opt.minimize(
                [&] { return tf::reduce_sum(u.value() * c) + tf::reduce_sum(v.value() * c); },
                {u, v},
                step);
        }
        CHECK(step.value().item<int64_t>() >= kSteps);
        server.join();
    }
}
