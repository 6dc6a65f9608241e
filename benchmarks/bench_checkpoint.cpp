// Checkpoint cost (issue 9's suite): Saver::save and Saver::restore of 64 MiB of float32 variables
// (16 x 1M), next to the machine's limits measured the same way (the same bytes written with
// io::write_file_atomically: temp file, fsync, rename, what a crash-safe save must do at least;
// read back with one read() per file) and LibTorch's torch::save / torch::load of the same
// tensors (no fsync). Files go to the system temp folder.
//   build/benchmarks/bench_checkpoint --benchmark_format=json > ckpt.json && benchmarks/compare.py
//   ckpt.json
#include <filesystem>

#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <tapeflow/tapeflow.hpp>

#include "io/file_util.hpp"
#include "torch_checkpoint_cases.hpp"

namespace tf = tapeflow;

namespace {

constexpr int kVariables = 16;
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
    benchmark::RegisterBenchmark("checkpoint/save_64MiB/tapeflow", BM_tapeflow_save)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark("checkpoint/save_64MiB/limit_write_fsync", BM_limit_write)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark("checkpoint/restore_64MiB/tapeflow", BM_tapeflow_restore)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark("checkpoint/restore_64MiB/limit_read", BM_limit_read)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
    torch_checkpoint_cases::register_save_restore("64MiB", kVariables, kElements, folder());
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    std::filesystem::remove_all(folder());
    return 0;
}
