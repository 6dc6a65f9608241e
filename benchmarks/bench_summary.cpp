// Cost of summaries on the training thread (the I/O runs on the writer thread), and end-to-end
// throughput including the writer thread's serialization and disk writes.
// Run: build/benchmarks/bench_summary   (the bound: BM_ScalarSummary <= 2 us per call)
#include <filesystem>

#include <benchmark/benchmark.h>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;

namespace {

std::string logdir(const char* name) {
    const auto dir = std::filesystem::temp_directory_path() / "tapeflow_bench_summary" / name;
    std::filesystem::remove_all(dir);
    return dir.string();
}

}  // namespace

// One writer.scalar(tag, double, step) call with TF's defaults (max_queue 10, flush 120 s).
static void BM_ScalarSummary(benchmark::State& state) {
    auto writer = tf::summary::create_file_writer(logdir("scalar"));
    int64_t step = 0;
    for (auto _ : state)
        benchmark::DoNotOptimize(writer.scalar("train/loss", 0.25, step++));
    writer.close();  // after the timed loop: not counted
}
BENCHMARK(BM_ScalarSummary);

// The free function through the thread's default writer (as_default), as training loops use it.
static void BM_ScalarSummaryDefaultWriter(benchmark::State& state) {
    auto writer = tf::summary::create_file_writer(logdir("default"));
    auto scope = writer.as_default();
    int64_t step = 0;
    for (auto _ : state)
        benchmark::DoNotOptimize(tf::summary::scalar("train/loss", 0.25, step++));
    writer.close();  // after the timed loop: not counted
}
BENCHMARK(BM_ScalarSummaryDefaultWriter);

// Skipped by record_if(false): the cost of a summary call that writes nothing.
static void BM_ScalarSummaryNotRecorded(benchmark::State& state) {
    auto writer = tf::summary::create_file_writer(logdir("off"));
    auto off = tf::summary::record_if(false);
    for (auto _ : state)
        benchmark::DoNotOptimize(writer.scalar("train/loss", 0.25, 0));
}
BENCHMARK(BM_ScalarSummaryNotRecorded);

// End to end: 1000 scalars then flush() (serialization, framing, write and fdatasync included).
static void BM_ScalarSummaryFlushed1000(benchmark::State& state) {
    auto writer = tf::summary::create_file_writer(logdir("flushed"));
    int64_t step = 0;
    for (auto _ : state) {
        for (int i = 0; i < 1000; ++i)
            writer.scalar("train/loss", 0.25, step++);
        writer.flush();
    }
    state.SetItemsProcessed(state.iterations() * 1000);
}
BENCHMARK(BM_ScalarSummaryFlushed1000)->Unit(benchmark::kMillisecond)->UseRealTime();

static void BM_HistogramSummary(benchmark::State& state) {
    auto writer = tf::summary::create_file_writer(logdir("histogram"));
    auto values = tf::random::normal({state.range(0)}, 0, 1, tf::float32, 1);
    for (auto _ : state)
        benchmark::DoNotOptimize(writer.histogram("w", values, 0));
    state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_HistogramSummary)->Arg(1 << 10)->Arg(1 << 20);

// PNG encoding happens on the calling thread (as in TF): a 3-image batch of 64x64 RGB.
static void BM_ImageSummary(benchmark::State& state) {
    auto writer = tf::summary::create_file_writer(logdir("image"));
    auto images = tf::random::uniform({3, 64, 64, 3}, 0, 1, tf::float32, 1);
    for (auto _ : state)
        benchmark::DoNotOptimize(writer.image("img", images, 0));
}
BENCHMARK(BM_ImageSummary)->Unit(benchmark::kMicrosecond);

// TFRecord writing of 1 KiB records (framing + CRC32C + buffered write), then one flush.
static void BM_TFRecordWrite1KiB(benchmark::State& state) {
    const std::string path = logdir("tfrecord") + ".tfrecord";
    tf::io::TFRecordWriter writer(path);
    const std::string record(1024, 'x');
    for (auto _ : state)
        writer.write(record);
    writer.flush();
    state.SetBytesProcessed(state.iterations() * 1024);
}
BENCHMARK(BM_TFRecordWrite1KiB);

BENCHMARK_MAIN();
