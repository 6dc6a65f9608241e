// The threaded uses of tapeflow in one suite, the one the ThreadSanitizer build runs
// (scripts/test.sh --sanitize): gradient tapes in several threads, one SummaryWriter shared by
// several threads, a tf::data parallel map while another thread checkpoints, and one variable
// updated from several threads. Each case also checks its results, so it runs in every build.
#include <atomic>
#include <filesystem>
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
