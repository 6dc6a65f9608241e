// Checkpoint cost (issues 7 and 9): Saver::save and Saver::restore of 100 MiB of float32 variables
// (25 x 1M), next to a plain buffered file copy of the same bytes (std::FILE fwrite without fsync,
// fread), the crash-safe minimum (io::write_file_atomically: temp file, fsync, rename), one read()
// per file, and LibTorch's torch::save / torch::load of the same tensors (no fsync). tapeflow_async
// is the time an asynchronous save (SaverOptions::async) blocks the caller. Files go to the system
// temp folder.
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

void BM_tapeflow_save(benchmark::State& state) {
    auto vars = make_variables();
    tf::train::Saver saver(vars, tf::train::SaverOptions{.max_to_keep = 1});
    const std::string path = folder() + "/model";
    int64_t step = 0;
    for (auto _ : state)
        saver.save(path, ++step);
    state.SetBytesProcessed(state.iterations() * kBytes);
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

void BM_limit_read(benchmark::State& state) {
    const std::string path = folder() + "/raw_read.bin";
    std::vector<char> bytes(kBytes, 1);
    tf::io::write_file_atomically(path, std::string_view(bytes.data(), bytes.size()));
    for (auto _ : state) {
        const int fd = ::open(path.c_str(), O_RDONLY);
        int64_t got = 0;
        while (got < kBytes) {
            const ssize_t n =
                ::read(fd, bytes.data() + got, static_cast<std::size_t>(kBytes - got));
            if (n <= 0) break;
            got += n;
        }
        ::close(fd);
        benchmark::DoNotOptimize(bytes.data());
    }
    state.SetBytesProcessed(state.iterations() * kBytes);
}

}  // namespace

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    benchmark::AddCustomContext("libtorch", torch_checkpoint_cases::available() ? "yes" : "no");
    const std::pair<const char*, void (*)(benchmark::State&)> cases[] = {
        {"checkpoint/save_100MiB/tapeflow", BM_tapeflow_save},
        {"checkpoint/save_100MiB/tapeflow_async", BM_tapeflow_save_async},
        {"checkpoint/save_100MiB/plain_fwrite", BM_plain_write},
        {"checkpoint/save_100MiB/limit_write_fsync", BM_limit_write},
        {"checkpoint/restore_100MiB/tapeflow", BM_tapeflow_restore},
        {"checkpoint/restore_100MiB/plain_fread", BM_plain_read},
        {"checkpoint/restore_100MiB/limit_read", BM_limit_read}};
    for (const auto& [name, fn] : cases)
        benchmark::RegisterBenchmark(name, fn)->UseRealTime()->Unit(benchmark::kMillisecond);
    torch_checkpoint_cases::register_save_restore("100MiB", kVariables, kElements, folder());
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    std::filesystem::remove_all(folder());
    return 0;
}
