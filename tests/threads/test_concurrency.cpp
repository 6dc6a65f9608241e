// The threaded uses of tapeflow in one suite, the one the ThreadSanitizer build runs
// (scripts/test.sh --sanitize): gradient tapes in several threads, one SummaryWriter shared by
// several threads, a tf::data parallel map while another thread checkpoints, and one variable
// updated from several threads. Each case also checks its results, so it runs in every build.
#include <atomic>
#include <filesystem>
#include <optional>
#include <set>
#include <thread>

#include <catch2/catch.hpp>
#include <unistd.h>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;
namespace fs = std::filesystem;

namespace {

constexpr int kThreads = 4;

std::string temp_dir(const std::string& name) {
    const fs::path dir = fs::temp_directory_path() /
                         ("tapeflow_concurrency_" + name + "_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir.string();
}

template <class F>
void in_threads(int n, F f) {
    std::vector<std::thread> threads;
    for (int t = 0; t < n; ++t)
        threads.emplace_back(f, t);
    for (auto& th : threads)
        th.join();
}

}  // namespace

TEST_CASE("gradient tapes in several threads, over one shared variable", "[concurrency]") {
    tf::Variable w(tf::constant({1.0, 2.0, 3.0}), {.name = "shared_w"});
    std::atomic<int> wrong{0};
    in_threads(kThreads, [&](int t) {
        const double scale = t + 1;
        for (int i = 0; i < 50; ++i) {
            tf::GradientTape tape;
            const tf::Tensor loss = tf::reduce_sum(tf::square(w * tf::constant(scale)));
            const tf::Tensor g = tape.gradient(loss, w);  // 2 * scale^2 * w
            const auto v = g.to_vector<double>();
            if (v != std::vector<double>{2 * scale * scale, 4 * scale * scale, 6 * scale * scale}) {
                ++wrong;
            }
        }
    });
    CHECK(wrong == 0);
}

TEST_CASE("one variable updated from several threads loses no update", "[concurrency]") {
    tf::Variable counter(tf::constant(0.0), {.name = "shared_counter"});
    in_threads(kThreads, [&](int) {
        for (int i = 0; i < 200; ++i)
            counter.assign_add(tf::constant(1.0));
    });
    CHECK(counter.read_value().item<double>() == kThreads * 200);
}

TEST_CASE("variables created and freed in several threads get unique names", "[concurrency]") {
    std::vector<std::vector<tf::Variable>> kept(kThreads);  // all stay alive until the check
    in_threads(kThreads, [&](int t) {
        std::vector<tf::Variable>& keep = kept[static_cast<std::size_t>(t)];
        for (int i = 0; i < 100; ++i) {
            keep.emplace_back(tf::constant(1.f), tf::VariableOptions{.name = "threaded"});
            if (i % 3 == 0) keep.erase(keep.begin());  // frees a name another thread may take
        }
    });
    std::set<std::string> all;
    std::size_t count = 0;
    for (const auto& list : kept) {
        for (const auto& v : list)
            all.insert(v.name());
        count += list.size();
    }
    CHECK(count == kThreads * 66);
    CHECK(all.size() == count);  // the live ones are pairwise distinct
}

TEST_CASE("one summary writer written from several threads", "[concurrency][summary]") {
    auto w = tf::summary::create_file_writer(temp_dir("writer"), {.max_queue = 5});
    in_threads(kThreads, [&](int t) {
        auto scope = w.as_default();
        for (int i = 0; i < 100; ++i) {
            tf::summary::scalar(fmt::format("t{}", t), i, i);
            if (i % 25 == 0) tf::summary::histogram("h", tf::constant({1.0, 2.0, double(i)}), i);
            if (i == 50) w.flush();
        }
    });
    w.close();
    CHECK(tf::summary::summary_iterator(w.path()).size() == 1 + kThreads * (100 + 4));
}

TEST_CASE("a parallel map runs while another thread trains and checkpoints",
          "[concurrency][data]") {
    const std::string dir = temp_dir("ckpt");
    tf::Variable v(tf::zeros({8}), {.name = "ckpt_v"});
    tf::train::Saver saver({v}, {.max_to_keep = 2});
    std::atomic<bool> done{false};
    std::thread trainer([&] {
        for (int64_t step = 1; !done; ++step) {
            v.assign_add(tf::ones({8}));
            saver.save(dir + "/model", step);
        }
    });
    std::vector<int64_t> items(400);
    for (std::size_t i = 0; i < items.size(); ++i)
        items[i] = static_cast<int64_t>(i);
    const auto squares = tf::data::from_vector(items).map(
        [](const int64_t& i) { return tf::square(tf::constant(static_cast<double>(i))); }, 4);
    double sum = 0;
    for (const tf::Tensor& t : squares)
        sum += t.item<double>();
    done = true;
    trainer.join();
    CHECK(sum == 399.0 * 400 * 799 / 6);
    const std::optional<std::string> last = tf::train::latest_checkpoint(dir);
    REQUIRE(last.has_value());
    tf::Variable restored(tf::zeros({8}), {.name = "ckpt_v"});
    tf::train::Saver({{"ckpt_v", restored}}).restore(*last);
    const double value = restored.read_value().to_vector<double>()[0];
    CHECK(value >= 1);
    CHECK(restored.read_value().to_vector<double>() == std::vector<double>(8, value));
}

namespace {

constexpr int kSteps = 5000;  // per thread: 1-element variables keep it short under TSan
constexpr int64_t kTotal = int64_t{kThreads} * kSteps;

// kSteps applies of the constant gradient `g` to `w` in each of kThreads threads, all through `opt`
// (and the step variable `step` when given).
void apply_in_threads(tf::train::Optimizer& opt,
                      const tf::Variable& w,
                      double g,
                      std::optional<tf::Variable> step = {}) {
    in_threads(kThreads, [&](int) {
        const tf::Tensor grad = tf::constant({g});
        for (int i = 0; i < kSteps; ++i)
            opt.apply_gradients({{grad, w}}, step);
    });
}

}  // namespace

TEST_CASE("a TF1 optimizer shared by threads counts every step, with use_locking",
          "[concurrency][optimizer]") {
    // SGD with a constant gradient: the updates commute, so the result is the serial one, and
    // 20000 * 0.5 * 2 = 20000 is exact.
    tf::Variable w(tf::constant({20000.0}), {.name = "shared_sgd_w"});
    tf::Variable step(tf::constant(int64_t{0}), {.name = "shared_sgd_step", .trainable = false});
    tf::train::GradientDescentOptimizer opt(0.5, {.use_locking = true});
    apply_in_threads(opt, w, 2.0, step);
    CHECK(opt.iterations() == kTotal);
    CHECK(step.read_value().item<int64_t>() == kTotal);
    CHECK(w.read_value().to_vector<double>() == std::vector<double>{0.0});
}

TEST_CASE("a TF1 optimizer shared by threads without use_locking still counts every step",
          "[concurrency][optimizer]") {
    // Hogwild is allowed to race on the values, never on the counters or the slots.
    tf::Variable w(tf::constant({1.0}), {.name = "shared_hogwild_w"});
    tf::train::MomentumOptimizer opt(1e-3, 0.9, {.use_locking = false});
    apply_in_threads(opt, w, 1.0);
    CHECK(opt.iterations() == kTotal);
    CHECK(opt.get_slot_names() == std::vector<std::string>{"momentum"});
    CHECK(opt.variables().size() == 1);
}

TEST_CASE("a TF1 Adam shared by threads creates its slots once and matches a serial run",
          "[concurrency][optimizer]") {
    tf::Variable w(tf::constant({1.0}), {.name = "shared_adam_w"});
    tf::train::AdamOptimizer opt(1e-3, {.use_locking = true});
    apply_in_threads(opt, w, 0.5);
    CHECK(opt.iterations() == kTotal);
    CHECK(opt.get_slot_names() == std::vector<std::string>{"m", "v"});
    CHECK(opt.variables().size() == 4);  // m, v, beta1_power, beta2_power
    // Every step sees the same gradient and steps are whole: the serial run gives the same bits.
    tf::Variable serial(tf::constant({1.0}), {.name = "serial_adam_w"});
    tf::train::AdamOptimizer reference(1e-3);
    const tf::Tensor grad = tf::constant({0.5});
    for (int64_t i = 0; i < kTotal; ++i)
        reference.apply_gradients({{grad, serial}});
    CHECK(w.read_value().to_vector<double>() == serial.read_value().to_vector<double>());
    CHECK(opt.get_slot(w, "m")->read_value().to_vector<double>() ==
          reference.get_slot(serial, "m")->read_value().to_vector<double>());
}

TEST_CASE("a Keras optimizer shared by threads counts every step in its iteration variable",
          "[concurrency][optimizer]") {
    tf::Variable w(tf::constant({1.0}), {.name = "shared_keras_w"});
    tf::keras::optimizers::Adam opt({.learning_rate = 1e-3, .use_ema = true});
    apply_in_threads(opt, w, 0.5);
    CHECK(opt.iterations() == kTotal);
    // "average": the EMA of the weights (use_ema), created once too.
    CHECK(opt.get_slot_names() == std::vector<std::string>{"average", "momentum", "velocity"});
    CHECK(opt.variables().size() == 4);  // the three slots and the iteration counter
}

TEST_CASE("the global step and an ExponentialMovingAverage shared by threads",
          "[concurrency][optimizer]") {
    // Every thread asks for the global step at once: they get the one variable.
    std::vector<int64_t> ids(kThreads);
    in_threads(kThreads, [&](int t) { ids[t] = tf::train::get_or_create_global_step().id(); });
    CHECK(std::set<int64_t>(ids.begin(), ids.end()).size() == 1);
    const tf::Variable step = tf::train::get_or_create_global_step();
    const int64_t start = step.read_value().item<int64_t>();

    tf::Variable w(tf::constant({1.0}), {.name = "shared_ema_w"});
    tf::train::GradientDescentOptimizer opt(1e-3);
    tf::train::ExponentialMovingAverage ema(0.99, {.num_updates = step});
    in_threads(kThreads, [&](int) {
        const tf::Tensor grad = tf::constant({1.0});
        for (int i = 0; i < kSteps; ++i) {
            opt.apply_gradients({{grad, w}}, step);
            ema.apply({w});  // the first calls race to create the shadow
        }
    });
    CHECK(step.read_value().item<int64_t>() == start + kTotal);
    CHECK(opt.iterations() == kTotal);
    REQUIRE(ema.average(w));
    CHECK(ema.average(w)->name() == "shared_ema_w/ExponentialMovingAverage");
    int shadows = 0;
    for (const tf::Variable& v : tf::global_variables())
        shadows += v.name().rfind("shared_ema_w/", 0) == 0 ? 1 : 0;
    CHECK(shadows == 1);
}
