// Checkpoint cost (issues 7, 9 and 27): Saver::save and Saver::restore of 100 MiB of float32
// variables (25 x 1M) in TensorFlow's format (the default: "tapeflow") and as safetensors, next to
// a plain buffered file copy of the same bytes (std::FILE fwrite without fsync, fread), the
// crash-safe minimum (io::write_file_atomically: temp file, fsync, rename), one read() per file,
// and LibTorch's torch::save / torch::load of the same tensors (no fsync). tapeflow_async is the
// time an asynchronous save (SaverOptions::async) blocks the caller. The 100M-parameter rows
// (save_100M_params/..., restore_100M_params/...: 100 x 1M float32, 400 MB) compare the two
// formats with the disk limits of the same bytes. Files go to the system temp folder.
//   build/benchmarks/bench_checkpoint --benchmark_format=json > ckpt.json && benchmarks/compare.py
//   ckpt.json
#include <cstdio>
#include <filesystem>
#include <utility>
#include <vector>

#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <tapeflow/tapeflow.hpp>

#include "io/file_util.hpp"
#include "torch_checkpoint_cases.hpp"

namespace tf = tapeflow;

namespace {

constexpr int kVariables = 25;
constexpr int64_t kElements = int64_t{1} << 20;
constexpr int64_t kBytes = kVariables * kElements * 4;

std::string folder() {
    const auto dir = std::filesystem::temp_directory_path() / "tapeflow_bench_checkpoint";
    std::filesystem::create_directories(dir);
    return dir.string();
}

std::vector<tf::Variable> make_variables() {
    std::vector<tf::Variable> vars;
    for (int i = 0; i < kVariables; ++i)
        vars.emplace_back(tf::random::uniform({kElements}, 0, 1, tf::float32, i),
                          tf::VariableOptions{.name = fmt::format("layer{}/kernel", i)});
    return vars;
}

// The read limit: a file of `size` bytes read with one read() loop per iteration.
void limit_read(benchmark::State& state, const std::string& path, int64_t size) {
    std::vector<char> bytes(static_cast<std::size_t>(size), 1);
    tf::io::write_file_atomically(path, std::string_view(bytes.data(), bytes.size()));
    for (auto _ : state) {
        const int fd = ::open(path.c_str(), O_RDONLY);
        int64_t got = 0;
        while (got < size) {
            const ssize_t n = ::read(fd, bytes.data() + got, static_cast<std::size_t>(size - got));
            if (n <= 0) break;
            got += n;
        }
        ::close(fd);
        benchmark::DoNotOptimize(bytes.data());
    }
}

std::vector<tf::Variable> make_variables(int count) {
    std::vector<tf::Variable> vars;
    for (int i = 0; i < count; ++i)
        vars.emplace_back(tf::random::uniform({kElements}, 0, 1, tf::float32, i),
                          tf::VariableOptions{.name = fmt::format("big{}/kernel", i)});
    return vars;
}

void BM_tapeflow_save(benchmark::State& state) {
    auto vars = make_variables();
    tf::train::Saver saver(vars, tf::train::SaverOptions{.max_to_keep = 1});
    const std::string path = folder() + "/model";
    int64_t step = 0;
    for (auto _ : state)
        saver.save(path, ++step);
    state.SetBytesProcessed(state.iterations() * kBytes);
}

void BM_safetensors_save(benchmark::State& state) {
    auto vars = make_variables();
    tf::train::Saver saver(vars,
                           {.max_to_keep = 1, .format = tf::train::CheckpointFormat::safetensors});
    const std::string path = folder() + "/model_st";
    int64_t step = 0;
    for (auto _ : state)
        saver.save(path, ++step);
    state.SetBytesProcessed(state.iterations() * kBytes);
}

// 100M parameters: a save in `format` against the durable write of the same bytes
// (state.range(0): 0 TensorFlow, 1 safetensors, 2 the limit: io::write_file_atomically).
constexpr int kBigVariables = 100;
constexpr int64_t kBigBytes = kBigVariables * kElements * 4;

void BM_big_save(benchmark::State& state) {
    auto vars = make_variables(kBigVariables);
    const int mode = static_cast<int>(state.range(0));
    if (mode == 2) {
        std::vector<std::string_view> pieces;
        for (const auto& v : vars)
            pieces.emplace_back(static_cast<const char*>(v.value().raw_data()), kElements * 4);
        for (auto _ : state)
            tf::io::write_file_atomically(folder() + "/big_raw.bin", pieces);
    } else {
        const auto format = mode == 0 ? tf::train::CheckpointFormat::tensorflow
                                      : tf::train::CheckpointFormat::safetensors;
        tf::train::Saver saver(vars, {.max_to_keep = 1, .format = format});
        int64_t step = 0;
        for (auto _ : state)
            saver.save(folder() + "/big", ++step);
    }
    state.SetBytesProcessed(state.iterations() * kBigBytes);
}

void BM_big_restore(benchmark::State& state) {
    auto vars = make_variables(kBigVariables);
    const int mode = static_cast<int>(state.range(0));
    if (mode == 2) {  // one read() loop over a file of the same size
        limit_read(state, folder() + "/big_raw_read.bin", kBigBytes);
    } else {
        const auto format = mode == 0 ? tf::train::CheckpointFormat::tensorflow
                                      : tf::train::CheckpointFormat::safetensors;
        tf::train::Saver saver(vars, {.max_to_keep = 1, .format = format});
        const std::string prefix = saver.save(folder() + "/big_restore");
        for (auto _ : state)
            saver.restore(prefix);
    }
    state.SetBytesProcessed(state.iterations() * kBigBytes);
}

// SaverOptions::async: the time save() blocks the caller (a host copy of the values); the
// background write (fsync included) is waited for outside the timed region.
void BM_tapeflow_save_async(benchmark::State& state) {
    auto vars = make_variables();
    tf::train::Saver saver(vars, tf::train::SaverOptions{.max_to_keep = 1, .async = true});
    const std::string path = folder() + "/model_async";
    int64_t step = 0;
    for (auto _ : state) {
        saver.save(path, ++step);
        state.PauseTiming();
        saver.wait();
        state.ResumeTiming();
    }
    state.SetBytesProcessed(state.iterations() * kBytes);
}

void BM_limit_write(benchmark::State& state) {
    auto vars = make_variables();
    std::vector<std::string_view> pieces;
    for (const auto& v : vars)
        pieces.emplace_back(static_cast<const char*>(v.value().raw_data()), kElements * 4);
    const std::string path = folder() + "/raw.bin";
    for (auto _ : state)
        tf::io::write_file_atomically(path, pieces);
    state.SetBytesProcessed(state.iterations() * kBytes);
}

// The reference: a plain buffered copy of the same bytes (no fsync, no rename).
void BM_plain_write(benchmark::State& state) {
    auto vars = make_variables();
    const std::string path = folder() + "/plain.bin";
    for (auto _ : state) {
        std::FILE* f = std::fopen(path.c_str(), "wb");
        for (const auto& v : vars)
            std::fwrite(v.value().raw_data(), 1, kElements * 4, f);
        std::fclose(f);
    }
    state.SetBytesProcessed(state.iterations() * kBytes);
}

void BM_plain_read(benchmark::State& state) {
    auto vars = make_variables();
    const std::string path = folder() + "/plain_read.bin";
    std::FILE* out = std::fopen(path.c_str(), "wb");
    for (const auto& v : vars)
        std::fwrite(v.value().raw_data(), 1, kElements * 4, out);
    std::fclose(out);
    std::vector<char> bytes(kBytes);
    for (auto _ : state) {
        std::FILE* f = std::fopen(path.c_str(), "rb");
        benchmark::DoNotOptimize(std::fread(bytes.data(), 1, bytes.size(), f));
        std::fclose(f);
    }
    state.SetBytesProcessed(state.iterations() * kBytes);
}

void BM_tapeflow_restore(benchmark::State& state) {
    auto vars = make_variables();
    tf::train::Saver saver(vars, tf::train::SaverOptions{.max_to_keep = 1});
    const std::string prefix = saver.save(folder() + "/restore");
    for (auto _ : state)
        saver.restore(prefix);  // reads, checks names, shapes, dtypes and CRCs
    state.SetBytesProcessed(state.iterations() * kBytes);
}

void BM_safetensors_restore(benchmark::State& state) {
    auto vars = make_variables();
    tf::train::Saver saver(vars,
                           {.max_to_keep = 1, .format = tf::train::CheckpointFormat::safetensors});
    const std::string prefix = saver.save(folder() + "/restore_st");
    for (auto _ : state)
        saver.restore(prefix);
    state.SetBytesProcessed(state.iterations() * kBytes);
}

void BM_limit_read(benchmark::State& state) {
    limit_read(state, folder() + "/raw_read.bin", kBytes);
    state.SetBytesProcessed(state.iterations() * kBytes);
}

}  // namespace

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    benchmark::AddCustomContext("libtorch", torch_checkpoint_cases::available() ? "yes" : "no");
    const std::pair<const char*, void (*)(benchmark::State&)> cases[] = {
        {"checkpoint/save_100MiB/tapeflow", BM_tapeflow_save},
        {"checkpoint/save_100MiB/tapeflow_async", BM_tapeflow_save_async},
        {"checkpoint/save_100MiB/safetensors", BM_safetensors_save},
        {"checkpoint/save_100MiB/plain_fwrite", BM_plain_write},
        {"checkpoint/save_100MiB/limit_write_fsync", BM_limit_write},
        {"checkpoint/restore_100MiB/tapeflow", BM_tapeflow_restore},
        {"checkpoint/restore_100MiB/safetensors", BM_safetensors_restore},
        {"checkpoint/restore_100MiB/plain_fread", BM_plain_read},
        {"checkpoint/restore_100MiB/limit_read", BM_limit_read}};
    for (const auto& [name, fn] : cases)
        benchmark::RegisterBenchmark(name, fn)->UseRealTime()->Unit(benchmark::kMillisecond);
    // 100M parameters: 0 TensorFlow's format, 1 safetensors, 2 the disk limit; medians of 5.
    const char* const big[] = {"tensorflow", "safetensors", "limit"};
    const std::pair<const char*, void (*)(benchmark::State&)> big_cases[] = {
        {"save", BM_big_save}, {"restore", BM_big_restore}};
    for (int mode = 0; mode < 3; ++mode) {
        for (const auto& [kind, fn] : big_cases) {
            benchmark::RegisterBenchmark(
                fmt::format("checkpoint/{}_100M_params/{}", kind, big[mode]).c_str(), fn)
                ->Arg(mode)
                ->Iterations(1)
                ->Repetitions(5)
                ->ReportAggregatesOnly(true)
                ->UseRealTime()
                ->Unit(benchmark::kMillisecond);
        }
    }
    torch_checkpoint_cases::register_save_restore("100MiB", kVariables, kElements, folder());
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    std::filesystem::remove_all(folder());
    return 0;
}
