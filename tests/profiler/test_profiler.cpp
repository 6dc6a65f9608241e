// tf::profiler (docs/profiler.md): the report's counts, times and FLOPs for known programs, the
// trace file read back (gzip + JSON: events, nesting, thread tracks, the framework's spans), and
// TensorFlow's errors for start twice / stop without start.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <unistd.h>
#include <zlib.h>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;
namespace fs = std::filesystem;
namespace prof = tf::profiler;
using Catch::Contains;
using nlohmann::json;

namespace {

std::string temp_dir(const std::string& name) {
    const fs::path dir = fs::temp_directory_path() /
                         ("tapeflow_test_profiler_" + std::to_string(::getpid()) + "_" + name);
    fs::remove_all(dir);
    return dir.string();
}

const prof::OpStats* row(const std::vector<prof::OpStats>& rows, const std::string& name) {
    for (const prof::OpStats& r : rows)
        if (r.name == name) return &r;
    return nullptr;
}

// The one trace file a session wrote under logdir, decompressed and parsed.
json read_trace(const std::string& logdir) {
    std::vector<fs::path> files;
    for (const auto& entry : fs::recursive_directory_iterator(fs::path(logdir) / "plugins/profile"))
        if (entry.path().string().ends_with(".trace.json.gz")) files.push_back(entry.path());
    REQUIRE(files.size() == 1);
    gzFile f = gzopen(files[0].c_str(), "rb");
    REQUIRE(f != nullptr);
    std::string text;
    char buf[1 << 14];
    int n = 0;
    while ((n = gzread(f, buf, sizeof buf)) > 0)
        text.append(buf, static_cast<std::size_t>(n));
    const int end = gzclose(f);
    REQUIRE(n == 0);
    REQUIRE(end == Z_OK);
    return json::parse(text);
}

std::vector<json> complete_events(const json& trace, const std::string& name) {
    std::vector<json> out;
    for (const json& e : trace["traceEvents"])
        if (e["ph"] == "X" && e["name"] == name) out.push_back(e);
    return out;
}

bool inside(const json& inner, const json& outer) {
    const double eps = 1e-3;  // ts and dur are microseconds with nanosecond digits
    return inner["tid"] == outer["tid"] &&
           inner["ts"].get<double>() + eps >= outer["ts"].get<double>() &&
           inner["ts"].get<double>() + inner["dur"].get<double>() <=
               outer["ts"].get<double>() + outer["dur"].get<double>() + eps;
}

}  // namespace

TEST_CASE("profile() before any saved session is FailedPreconditionError", "[profiler]") {
    CHECK_THROWS_AS(prof::profile(), tf::errors::FailedPreconditionError);
}

TEST_CASE("the report counts every op of a known program by type and by name", "[profiler]") {
    const tf::Tensor a = tf::constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});  // [2, 3]
    const tf::Tensor b = tf::ones({3, 4});
    const prof::Profile p = prof::profile([&] {
        tf::Tensor y = tf::matmul(a, b);  // [2, 4]
        {
            const auto scope = tf::name_scope("dense");
            y = tf::matmul(a, b) + y;
            y = tf::matmul(a, b) + y;
        }
        (void)tf::nn::relu(y);
    });
    CHECK(p.op_count == 6);
    REQUIRE(p.by_op_type.size() == 3);
    const prof::OpStats* mm = row(p.by_op_type, "MatMul");
    const prof::OpStats* add = row(p.by_op_type, "AddV2");
    const prof::OpStats* relu = row(p.by_op_type, "Relu");
    REQUIRE(mm != nullptr);
    REQUIRE(add != nullptr);
    REQUIRE(relu != nullptr);
    CHECK(mm->count == 3);
    CHECK(add->count == 2);
    CHECK(relu->count == 1);
    // FLOPs of a [m, k] x [k, n] product: 2 m n k; element-wise ops have no formula.
    CHECK(mm->flops_known);
    CHECK(mm->flops == 3 * 2.0 * 2 * 4 * 3);
    CHECK_FALSE(add->flops_known);
    CHECK(mm->output_bytes == 3 * 2 * 4 * 4);
    CHECK(mm->peak_bytes >= 2 * 4 * 4);
    // Per name: the name scope the op ran under, then its type.
    REQUIRE(row(p.by_op_name, "MatMul") != nullptr);
    REQUIRE(row(p.by_op_name, "dense/MatMul") != nullptr);
    CHECK(row(p.by_op_name, "MatMul")->count == 1);
    CHECK(row(p.by_op_name, "dense/MatMul")->count == 2);
    CHECK(row(p.by_op_name, "dense/AddV2")->count == 2);
    for (const prof::OpStats& r : p.by_op_type) {
        CHECK(r.self_cpu_us > 0);
        CHECK(r.self_cpu_us <= r.total_cpu_us);
        CHECK(r.gpu_us == 0);
    }
    // Sorted by self time.
    for (std::size_t i = 1; i < p.by_op_type.size(); ++i)
        CHECK(p.by_op_type[i - 1].self_cpu_us >= p.by_op_type[i].self_cpu_us);
}

TEST_CASE("FLOPs follow the contracted axis of transposed and batched products and convolutions",
          "[profiler]") {
    const tf::Tensor at = tf::ones({3, 2});  // a^T of a [2, 3]
    const tf::Tensor b = tf::ones({3, 4});
    const tf::Tensor x = tf::ones({2, 5, 7, 3});  // NHWC
    const tf::Tensor w = tf::ones({3, 3, 3, 8});  // [KH, KW, IC, OC]
    const tf::Tensor ba = tf::ones({5, 2, 3});
    const tf::Tensor bb = tf::ones({5, 3, 6});
    const prof::Profile p = prof::profile([&] {
        (void)tf::matmul(at, b, /*transpose_a=*/true);
        (void)tf::matmul(ba, bb);
        (void)tf::nn::conv2d(x, w, 1, "SAME");
    });
    const prof::OpStats* mm = row(p.by_op_type, "MatMul");
    const prof::OpStats* bmm = row(p.by_op_type, "BatchMatMulV2");
    const prof::OpStats* conv = row(p.by_op_type, "Conv2D");
    REQUIRE(mm != nullptr);
    REQUIRE(bmm != nullptr);
    REQUIRE(conv != nullptr);
    CHECK(mm->flops == 2.0 * 2 * 4 * 3);
    CHECK(bmm->flops == 2.0 * 5 * 2 * 6 * 3);
    // 2 * (N OH OW OC) * (KH KW IC), SAME padding at stride 1 keeps 5 x 7.
    CHECK(conv->flops == 2.0 * (2 * 5 * 7 * 8) * (3 * 3 * 3));
}

TEST_CASE("self time excludes the ops an op runs inside itself", "[profiler]") {
    // Forward mode runs each op's JVP inside the op's call: those ops nest in it.
    const tf::Tensor x = tf::constant({1., 2., 3.});
    const prof::Profile p = prof::profile([&] {
        tf::autodiff::ForwardAccumulator acc({x}, {tf::ones_like(x)});
        (void)acc.jvp(tf::exp(x));
    });
    const prof::OpStats* e = row(p.by_op_type, "Exp");
    REQUIRE(e != nullptr);
    CHECK(e->self_cpu_us < e->total_cpu_us);
    double self_sum = 0;
    for (const prof::OpStats& r : p.by_op_type) {
        CHECK(r.self_cpu_us <= r.total_cpu_us);
        self_sum += r.self_cpu_us;
    }
    CHECK(self_sum <= p.wall_us);
    CHECK(p.op_count > 1);
}

TEST_CASE("op times add up to the wall time of a step made of ops", "[profiler]") {
    const tf::Tensor a = tf::random::normal({160, 160}, 0.0, 1.0, tf::float32, 3);
    const tf::Tensor scale = tf::constant(0.01f);  // made outside: a constant is no op
    // The best of three steps: on a loaded machine (or under ASan) a step can be preempted
    // between two ops, and that time belongs to no op.
    double best = 0;
    for (int attempt = 0; attempt < 3 && best < 0.95; ++attempt) {
        double step_us = 0;
        const prof::Profile p = prof::profile([&] {
            const auto t0 = std::chrono::steady_clock::now();
            // Every result stays alive until the step was timed: freeing them is no op's time.
            std::vector<tf::Tensor> ys{a};
            for (int i = 0; i < 30; ++i)
                ys.push_back(tf::matmul(ys.back(), a) * scale);
            step_us =
                std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0)
                    .count();
        });
        double self_sum = 0;
        for (const prof::OpStats& r : p.by_op_type)
            self_sum += r.self_cpu_us;
        CHECK(self_sum <= step_us);
        CHECK(row(p.by_op_type, "MatMul")->count == 30);
        CHECK(row(p.by_op_type, "Mul")->count == 30);
        best = std::max(best, self_sum / step_us);
    }
    CHECK(best >= 0.95);
}

TEST_CASE("the table and the JSON report the same rows", "[profiler]") {
    const tf::Tensor a = tf::ones({4, 4});
    const prof::Profile p = prof::profile([&] {
        for (int i = 0; i < 3; ++i)
            (void)tf::matmul(a, a);
    });
    const std::string table = p.table();
    CHECK_THAT(table, Contains("op type"));
    CHECK_THAT(table, Contains("self CPU"));
    CHECK_THAT(table, Contains("MatMul"));
    CHECK_THAT(table, Contains("384"));  // 3 * 2 * 4 * 4 * 4 FLOPs
    CHECK_THAT(p.table(prof::Profile::GroupBy::op_name), Contains("op name"));
    const json j = json::parse(p.json());
    REQUIRE(j["by_op_type"].size() == 1);
    CHECK(j["by_op_type"][0]["name"] == "MatMul");
    CHECK(j["by_op_type"][0]["count"] == 3);
    CHECK(j["by_op_type"][0]["flops"] == 384.0);
    CHECK(j["op_count"] == 3);
    CHECK(j["wall_us"].get<double>() > 0);
    const prof::Profile q = prof::profile([&] { (void)tf::nn::relu(a); });
    CHECK(json::parse(q.json())["by_op_type"][0]["flops"].is_null());
}

TEST_CASE("the trace file holds the step's spans, ops, framework spans and thread tracks",
          "[profiler]") {
    const std::string logdir = temp_dir("trace");
    tf::set_num_threads(2);
    tf::Variable w(tf::ones({4, 3}), {.name = "w"});
    tf::train::GradientDescentOptimizer opt(0.1);
    const tf::Tensor x = tf::ones({2, 4});
    const tf::Tensor big = tf::ones({1024, 1024});
    prof::experimental::start(logdir);
    for (int64_t step = 0; step < 2; ++step) {
        const prof::experimental::Trace train("train", step);
        std::vector<tf::train::GradAndVar> grads;
        {
            const prof::experimental::Trace inner("forward");
            tf::GradientTape tape;
            const tf::Tensor loss = tf::reduce_sum(tf::matmul(x, w.value()));
            grads.push_back({tape.gradient(loss, w), w});
        }
        opt.apply_gradients(grads);
    }
    (void)tf::reduce_sum(big);  // large enough for the pool's threads
    std::thread other([&] { (void)tf::matmul(x, w.value()); });
    other.join();
    prof::experimental::stop();

    const json trace = read_trace(logdir);
    // The run folder is TensorFlow's timestamp, the file the host name.
    const fs::path run = fs::directory_iterator(fs::path(logdir) / "plugins/profile")->path();
    CHECK(run.filename().string().size() == std::string("2026_01_31_23_59_59").size());
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    CHECK(fs::exists(run / (std::string(host) + ".trace.json.gz")));

    std::map<uint64_t, std::string> thread_names;
    for (const json& e : trace["traceEvents"]) {
        if (e["ph"] == "M" && e["name"] == "thread_name")
            thread_names[e["tid"].get<uint64_t>()] = e["args"]["name"];
    }
    std::set<uint64_t> tids;
    for (const json& e : trace["traceEvents"]) {
        if (e["ph"] != "X") continue;
        CHECK(e["pid"] == 1);
        CHECK(e["dur"].get<double>() >= 0);
        tids.insert(e["tid"].get<uint64_t>());
    }
    for (uint64_t tid : tids)
        CHECK(thread_names.count(tid) == 1);  // every track is named

    const std::vector<json> steps = complete_events(trace, "train");
    REQUIRE(steps.size() == 2);
    CHECK(steps[0]["args"]["step_num"] == 0);
    CHECK(steps[1]["args"]["step_num"] == 1);
    const std::vector<json> forward = complete_events(trace, "forward");
    REQUIRE(forward.size() == 2);
    CHECK(inside(forward[0], steps[0]));
    CHECK(inside(forward[1], steps[1]));
    CHECK_FALSE(forward[0]["args"].contains("step_num"));
    // Ops, the backward walk and the optimizer's updates, nested in their step.
    const std::vector<json> backward = complete_events(trace, "GradientTape backward");
    REQUIRE(backward.size() == 2);
    CHECK(inside(backward[0], forward[0]));
    const std::vector<json> applies = complete_events(trace, "GradientDescent.apply_gradients");
    REQUIRE(applies.size() == 2);
    CHECK(inside(applies[1], steps[1]));
    const std::vector<json> updates = complete_events(trace, "GradientDescent/update/w");
    REQUIRE(updates.size() == 2);
    CHECK(inside(updates[0], applies[0]));
    const std::vector<json> matmuls = complete_events(trace, "MatMul");
    REQUIRE(matmuls.size() >= 5);  // 2 forward, 2 in the backward walks' gradients, 1 other thread
    CHECK(matmuls[0]["cat"] == "op");
    CHECK(matmuls[0]["args"]["op_type"] == "MatMul");
    CHECK(matmuls[0]["args"]["flops"] == 2.0 * 2 * 3 * 4);
    CHECK(inside(matmuls[0], forward[0]));
    // The other thread's op is on its own track.
    const uint64_t main_tid = steps[0]["tid"];
    CHECK(std::any_of(matmuls.begin(), matmuls.end(), [&](const json& e) {
        return e["tid"].get<uint64_t>() != main_tid;
    }));
    // The reduction ran as chunks of the pool, inside its op.
    const std::vector<json> sums = complete_events(trace, "Sum");
    CHECK(std::any_of(sums.begin(), sums.end(), [](const json& e) { return e["cat"] == "chunk"; }));
    // The saved session's report is profile()'s.
    const prof::Profile p = prof::profile();
    CHECK(row(p.by_op_type, "MatMul")->count == static_cast<int64_t>(matmuls.size()));
    fs::remove_all(logdir);
}

TEST_CASE("start twice, stop without start and bad options raise TensorFlow's errors",
          "[profiler]") {
    const std::string logdir = temp_dir("errors");
    CHECK_THROWS_AS(prof::experimental::stop(), tf::errors::UnavailableError);
    CHECK_THROWS_WITH(prof::experimental::stop(),
                      "Cannot export profiling results. No profiler is running.");
    prof::experimental::start(logdir);
    CHECK_THROWS_AS(prof::experimental::start(logdir), tf::errors::AlreadyExistsError);
    CHECK_THROWS_WITH(prof::experimental::start(logdir), "Another profiler is running.");
    CHECK_THROWS_AS(prof::profile([] {}), tf::errors::AlreadyExistsError);
    prof::experimental::stop(/*save=*/false);  // no file
    CHECK_FALSE(fs::exists(logdir));
    CHECK_THROWS_AS(prof::experimental::stop(), tf::errors::UnavailableError);
    CHECK_THROWS_AS(prof::experimental::start(""), tf::errors::InvalidArgumentError);
    CHECK_THROWS_AS(prof::experimental::start(logdir, {.host_tracer_level = 4}),
                    tf::errors::InvalidArgumentError);
    CHECK_THROWS_AS(prof::experimental::start(logdir, {.device_tracer_level = -1}),
                    tf::errors::InvalidArgumentError);
    CHECK_THROWS_AS(prof::experimental::stop(), tf::errors::UnavailableError);  // none started
    // An exception from the profiled function ends its session.
    CHECK_THROWS_AS(prof::profile([] { throw tf::errors::InternalError("boom"); }),
                    tf::errors::InternalError);
    CHECK_NOTHROW(prof::profile([] {}));
    CHECK_FALSE(fs::exists(logdir));
}

TEST_CASE("host_tracer_level 1 records Trace spans only; no session records nothing",
          "[profiler]") {
    const tf::Tensor a = tf::ones({2, 2});
    {
        const prof::experimental::Trace outside("before any session");  // no session: ignored
        (void)tf::matmul(a, a);
    }
    const std::string logdir = temp_dir("level1");
    prof::experimental::start(logdir, {.host_tracer_level = 1});
    {
        const prof::experimental::Trace t("user span", 7);
        (void)tf::matmul(a, a);
    }
    prof::experimental::stop();
    const json trace = read_trace(logdir);
    CHECK(complete_events(trace, "user span").size() == 1);
    CHECK(complete_events(trace, "MatMul").empty());
    CHECK(complete_events(trace, "before any session").empty());
    CHECK(prof::profile().op_count == 0);
    fs::remove_all(logdir);
}

TEST_CASE("the thread pool's workers have tracks of their own", "[profiler]") {
    tf::set_num_threads(2);
    const tf::Tensor big = tf::ones({1024, 1024});
    // The caller takes the chunks of a worker that is slow to wake (a busy machine): sessions are
    // retried until a worker ran a chunk, a bounded number of times.
    bool worker_ran = false;
    for (int attempt = 0; attempt < 20 && !worker_ran; ++attempt) {
        const std::string logdir = temp_dir("pool" + std::to_string(attempt));
        prof::experimental::start(logdir);
        for (int i = 0; i < 10; ++i)
            (void)tf::reduce_sum(big);
        prof::experimental::stop();
        const json trace = read_trace(logdir);
        std::map<uint64_t, std::string> names;
        for (const json& e : trace["traceEvents"])
            if (e["ph"] == "M" && e["name"] == "thread_name")
                names[e["tid"].get<uint64_t>()] = e["args"]["name"];
        const std::vector<json> sums = complete_events(trace, "Sum");
        std::set<uint64_t> op_tids, chunk_tids;
        for (const json& e : sums)
            (e["cat"] == "op" ? op_tids : chunk_tids).insert(e["tid"].get<uint64_t>());
        REQUIRE(op_tids.size() == 1);  // the ops ran on this thread
        for (uint64_t tid : chunk_tids) {
            if (op_tids.count(tid) != 0) continue;
            CHECK_THAT(names[tid], Catch::StartsWith("tapeflow pool worker"));
            worker_ran = true;
        }
        fs::remove_all(logdir);
    }
    CHECK(worker_ran);
}
