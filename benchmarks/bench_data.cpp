// tf::data throughput, in one run: (1) 1M small tf.train.Example records in TFRecord files read,
// parsed and batched by a pipeline, against a plain sequential TFRecordReader loop over the same
// files; (2) a prefetching pipeline hiding a map function's latency behind a training step.
//   build/benchmarks/bench_data [records=1000000] [dir=/tmp/tapeflow_bench_data]
#include <chrono>
#include <filesystem>
#include <thread>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kFiles = 4;
constexpr int64_t kBatch = 256;

double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Best of `runs` timings of f (which returns a checksum, printed so nothing is optimized away).
template <class F>
double best_of(int runs, F f, int64_t& check) {
    double best = 1e30;
    for (int i = 0; i < runs; ++i) {
        auto t0 = Clock::now();
        check = f();
        best = std::min(best, seconds_since(t0));
    }
    return best;
}

void busy_wait(std::chrono::microseconds d) {
    auto until = Clock::now() + d;
    while (Clock::now() < until) {
    }
}

}  // namespace

int main(int argc, char** argv) {
    const int64_t records = argc > 1 ? std::stoll(argv[1]) : 1000000;
    const std::filesystem::path dir =
        argc > 2 ? std::filesystem::path(argv[2])
                 : std::filesystem::temp_directory_path() / "tapeflow_bench_data";
    std::filesystem::create_directories(dir);

    std::vector<std::string> files;
    auto t0 = Clock::now();
    for (int f = 0; f < kFiles; ++f) {
        files.push_back((dir / fmt::format("part-{}.tfrecord", f)).string());
        tf::io::TFRecordWriter w(files.back());
        for (int64_t i = f; i < records; i += kFiles) {
            float v = static_cast<float>(i);
            w.write(tf::io::Example()
                        .add_float("x", {v, v + 1, v + 2, v + 3})
                        .add_int64("label", {i % 10})
                        .serialize());
        }
    }
    fmt::print("wrote {} records in {} files: {:.2f} s\n", records, kFiles, seconds_since(t0));

    int64_t check = 0;
    auto plain_read = [&] {
        int64_t bytes = 0;
        for (const auto& file : files) {
            tf::io::TFRecordReader r(file);
            while (auto rec = r.next())
                bytes += static_cast<int64_t>(rec->size());
        }
        return bytes;
    };

    const std::vector<tf::io::FixedLenFeature> spec{{"x", {4}}, {"label", {}, tf::int64}};
    auto vectorized = tf::data::TFRecordDataset(files).batch(kBatch).map(
        [&](const std::vector<std::string>& batch) { return tf::io::parse_example(batch, spec); });
    auto run = [](const tf::data::Dataset<std::vector<tf::Tensor>>& ds) {
        return [ds] {
            int64_t n = 0;
            for (const auto& batch : ds)
                n += batch[1].shape()[0];
            return n;
        };
    };
    // The plain read and the pipeline alternate, best of 5 each, so both see the same load.
    double plain = 1e30, fast = 1e30;
    for (int i = 0; i < 5; ++i) {
        plain = std::min(plain, best_of(1, plain_read, check));
        fast = std::min(fast, best_of(1, run(vectorized), check));
    }
    fmt::print("plain sequential read (TFRecordReader):      {:7.3f} s  {:6.2f} M records/s\n",
               plain,
               records / plain / 1e6);
    fmt::print(
        "read+parse+batch, batch -> map(parse_example): {:7.3f} s  {:6.2f} M records/s  "
        "{:.2f}x the plain read ({} records)\n",
        fast,
        records / fast / 1e6,
        plain / fast,
        check);
    auto parallel = tf::data::TFRecordDataset(files).batch(kBatch).map(
        [&](const std::vector<std::string>& batch) { return tf::io::parse_example(batch, spec); },
        2);
    const double fast_parallel = best_of(3, run(parallel), check);
    fmt::print("  same with map(..., num_parallel_calls=2):    {:7.3f} s  {:.2f}x the plain read\n",
               fast_parallel,
               plain / fast_parallel);
    const double fast_prefetch = best_of(3, run(vectorized.prefetch(2)), check);
    fmt::print("  same + prefetch(2):                          {:7.3f} s  {:.2f}x the plain read\n",
               fast_prefetch,
               plain / fast_prefetch);
    auto per_record =
        tf::data::TFRecordDataset(files)
            .map([](const std::string& r) {
                auto ex = tf::io::Example::parse(r);
                return std::vector<tf::Tensor>{tf::constant(ex.get_float("x"), {4}),
                                               tf::constant(ex.get_int64("label")[0])};
            })
            .batch(kBatch);
    const double slow = best_of(1, run(per_record), check);
    fmt::print(
        "read+parse+batch, map(Example::parse) -> batch: {:6.3f} s  {:6.2f} M records/s  "
        "{:.2f}x the plain read\n",
        slow,
        records / slow / 1e6,
        plain / slow);

    // Latency hiding: a map that waits 2 ms per batch (I/O or decoding latency), a training step
    // that computes for 2 ms. Without prefetch they add up; with prefetch the map runs meanwhile.
    const auto latency = std::chrono::microseconds(2000);
    auto slow_map = tf::data::TFRecordDataset(files)
                        .take(100 * kBatch)
                        .batch(kBatch)
                        .map([latency](const std::vector<std::string>& batch) {
                            std::this_thread::sleep_for(latency);
                            return static_cast<int64_t>(batch.size());
                        });
    auto train = [latency](const tf::data::Dataset<int64_t>& ds) {
        return [ds, latency] {
            int64_t n = 0;
            for (int64_t size : ds) {
                busy_wait(latency);
                n += size;
            }
            return n;
        };
    };
    const double map_only = best_of(
        3,
        [&] {
            int64_t n = 0;
            for (int64_t size : slow_map)
                n += size;
            return n;
        },
        check);
    const double train_only = best_of(
        3,
        [&] {
            for (int i = 0; i < 100; ++i)
                busy_wait(latency);
            return int64_t(0);
        },
        check);
    const double serial = best_of(3, train(slow_map), check);
    const double overlapped = best_of(3, train(slow_map.prefetch(2)), check);
    fmt::print(
        "100 steps: map alone {:.3f} s, training alone {:.3f} s; together without prefetch "
        "{:.3f} s, with prefetch(2) {:.3f} s (ideal {:.3f} s): {:.0f}% of the possible "
        "saving\n",
        map_only,
        train_only,
        serial,
        overlapped,
        std::max(map_only, train_only),
        100.0 * (serial - overlapped) / (serial - std::max(map_only, train_only)));
    std::filesystem::remove_all(dir);
    return 0;
}
