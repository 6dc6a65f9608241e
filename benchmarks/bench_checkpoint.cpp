// Checkpoint save/restore speed against a plain buffered file copy of the same bytes, in one run:
// 100 MB of float32 variables saved with tf::train::Saver (CRC32C, temporary file, fsync, rename,
// state file) and restored (read, CRC check, assign), vs std::FILE fwrite/fread of the same bytes
// (without and with fsync). Prints best-of-N times and the ratios (goal: >= 0.5x).
//   build/benchmarks/bench_checkpoint [megabytes=100] [runs=5] [dir=/tmp/tapeflow_bench_checkpoint]
#include <chrono>
#include <cstdio>
#include <filesystem>

#include <unistd.h>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;
using Clock = std::chrono::steady_clock;

namespace {

template <class F>
double best_of(int runs, F f) {
    double best = 1e30;
    for (int i = 0; i < runs; ++i) {
        const auto t0 = Clock::now();
        f();
        best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
    }
    return best;
}

void plain_write(const std::string& path, const std::vector<tf::Variable>& vars, bool sync) {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    for (const tf::Variable& v : vars) {
        const tf::Tensor t = v.value();
        std::fwrite(t.raw_data(), 1, t.nbytes(), f);
    }
    std::fflush(f);
    if (sync) ::fsync(::fileno(f));
    std::fclose(f);
}

void plain_read(const std::string& path, std::vector<tf::Tensor>& into) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    for (tf::Tensor& t : into) {
        if (std::fread(t.mutable_raw_data(), 1, t.nbytes(), f) != t.nbytes()) std::abort();
    }
    std::fclose(f);
}

}  // namespace

int main(int argc, char** argv) {
    const int64_t megabytes = argc > 1 ? std::stoll(argv[1]) : 100;
    const int runs = argc > 2 ? std::stoi(argv[2]) : 5;
    const std::filesystem::path dir = argc > 3 ? std::filesystem::path(argv[3])
                                               : std::filesystem::temp_directory_path() / "tapeflow_bench_checkpoint";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);

    // 25 variables of 1M floats (4 MB each) = 100 MB, plus the global step.
    constexpr int64_t kElements = 1 << 20;
    const int64_t count = std::max<int64_t>(1, (megabytes * 1000 * 1000 + kElements * 2) / (kElements * 4));
    std::vector<tf::Variable> vars;
    for (int64_t i = 0; i < count; ++i) {
        vars.emplace_back(tf::random::uniform({kElements}), tf::VariableOptions{.name = fmt::format("layer{}/w", i)});
    }
    const double mb = static_cast<double>(count * kElements * 4) / 1e6;
    std::vector<tf::Tensor> buffers;
    for (const tf::Variable& v : vars) buffers.push_back(tf::Tensor::empty(v.shape(), v.dtype()));

    tf::train::Saver saver(vars, tf::train::SaverOptions{.max_to_keep = 1});
    const std::string plain = (dir / "plain.bin").string();
    const double t_write = best_of(runs, [&] { plain_write(plain, vars, false); });
    const double t_write_sync = best_of(runs, [&] { plain_write(plain, vars, true); });
    int64_t step = 0;
    const double t_save = best_of(runs, [&] { saver.save((dir / "model.ckpt").string(), ++step); });
    const double t_read = best_of(runs, [&] { plain_read(plain, buffers); });
    const std::string latest = *tf::train::latest_checkpoint(dir.string());
    const double t_restore = best_of(runs, [&] { saver.restore(latest); });

    std::printf("bench_checkpoint: %.1f MB in %lld variables, best of %d (page cache warm)\n", mb,
                static_cast<long long>(count), runs);
    std::printf("  plain fwrite            %7.1f ms  %7.0f MB/s\n", t_write * 1e3, mb / t_write);
    std::printf("  plain fwrite + fsync    %7.1f ms  %7.0f MB/s\n", t_write_sync * 1e3, mb / t_write_sync);
    std::printf("  Saver.save              %7.1f ms  %7.0f MB/s   %.2fx plain, %.2fx plain+fsync\n", t_save * 1e3,
                mb / t_save, t_write / t_save, t_write_sync / t_save);
    std::printf("  plain fread             %7.1f ms  %7.0f MB/s\n", t_read * 1e3, mb / t_read);
    std::printf("  Saver.restore           %7.1f ms  %7.0f MB/s   %.2fx plain\n", t_restore * 1e3, mb / t_restore,
                t_read / t_restore);
    std::filesystem::remove_all(dir);
    return 0;
}
