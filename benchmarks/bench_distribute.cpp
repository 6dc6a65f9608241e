// Distributed benchmarks (issue 11), a plain main because every rank must run the same code:
//   mpirun -np 2 build/benchmarks/bench_distribute     all_reduce bandwidth, tapeflow vs
//        MPI_Allreduce called directly (1 MB..256 MB), and the medium MLP's synchronous step with
//        DistributedOptimizer on half the global batch per process
//   build/benchmarks/bench_distribute                  the same MLP step, one process, whole batch
//                                                      (OMP_NUM_THREADS=1: on one core, the fair
//                                                      baseline for one core per process)
// Timings are medians of interleaved repetitions (tapeflow, direct, tapeflow, ...), so a burst of
// load from other processes hits both sides alike. Results: docs/performance.md.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include <mpi.h>
#include <omp.h>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;
namespace td = tapeflow::distribute;

namespace {

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

void bench_all_reduce() {
    for (int64_t mb : {1, 4, 16, 64, 256}) {
        const int64_t n = mb * (1 << 20) / 4;
        const tf::Tensor x = tf::ones({n});
        std::vector<float> send(static_cast<std::size_t>(n), 1.f),
            recv(static_cast<std::size_t>(n));
        const int reps = mb >= 64 ? 5 : mb >= 16 ? 11 : 31;
        std::vector<double> ours, direct;
        td::all_reduce(x);  // warm-up: allocator cache, connections
        MPI_Allreduce(
            send.data(), recv.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        for (int r = 0; r < reps; ++r) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t = MPI_Wtime();
            const tf::Tensor y = td::all_reduce(x);
            ours.push_back(MPI_Wtime() - t);
            MPI_Barrier(MPI_COMM_WORLD);
            t = MPI_Wtime();
            MPI_Allreduce(
                send.data(), recv.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            direct.push_back(MPI_Wtime() - t);
        }
        const double a = median(ours), b = median(direct);
        if (td::rank() == 0) {
            std::printf(
                "all_reduce %4lld MB x %d procs: tapeflow %8.2f ms (%6.2f GB/s)  MPI_Allreduce "
                "%8.2f ms "
                "(%6.2f GB/s)  tapeflow/direct speed %.2fx\n",
                static_cast<long long>(mb),
                td::size(),
                a * 1e3,
                mb / 1024.0 / a,
                b * 1e3,
                mb / 1024.0 / b,
                b / a);
        }
    }
}

struct Dense {
    tf::Variable w, b;
    Dense(int64_t in, int64_t out)
        : w(tf::random::normal({in, out}, 0, 1.0 / std::sqrt(static_cast<double>(in)))),
          b(tf::zeros({out})) {}
    tf::Tensor operator()(const tf::Tensor& x) const {
        return tf::nn::bias_add(tf::matmul(x, w), b);
    }
};

// The medium MLP of bench_train.cpp: 784 -> 512 -> 512 -> 10, softmax cross-entropy, Adam; global
// batch 128 split evenly over the processes.
void bench_mlp(bool reduce) {
    constexpr int64_t kGlobalBatch = 128;
    const int64_t batch = kGlobalBatch / td::size();
    tf::random::set_seed(1);
    Dense l1{784, 512}, l2{512, 512}, l3{512, 10};
    const tf::Tensor x = tf::random::uniform({batch, 784});
    const tf::Tensor labels = tf::cast(tf::random::uniform({batch}, 0, 10), tf::int32);
    auto inner = std::make_shared<tf::train::AdamOptimizer>(0.001);
    std::shared_ptr<tf::train::Optimizer> opt = inner;
    if (reduce && td::size() > 1) opt = std::make_shared<td::DistributedOptimizer>(inner);
    auto step = [&] {
        opt->minimize([&] {
            const tf::Tensor logits = l3(tf::nn::relu(l2(tf::nn::relu(l1(x)))));
            return tf::reduce_mean(
                tf::nn::sparse_softmax_cross_entropy_with_logits(labels, logits));
        });
    };
    for (int i = 0; i < 5; ++i)
        step();
    std::vector<double> times;
    for (int r = 0; r < 7; ++r) {
        td::barrier();
        const auto t = std::chrono::steady_clock::now();
        for (int i = 0; i < 10; ++i)
            step();
        times.push_back(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count() / 10);
    }
    if (td::rank() == 0) {
        std::printf(
            "mlp step, global batch %lld on %d process(es) x %d thread(s)%s: %.2f ms per step\n",
            static_cast<long long>(kGlobalBatch),
            td::size(),
            omp_get_max_threads(),
            reduce ? "" : ", gradients NOT reduced (compute only)",
            median(times) * 1e3);
    }
}

}  // namespace

int main(int argc, char** argv) {
    td::init(&argc, &argv);
    // The processes of one machine share its cores (unless OMP_NUM_THREADS says otherwise).
    if (std::getenv("OMP_NUM_THREADS") == nullptr) {
        const int cores = static_cast<int>(std::thread::hardware_concurrency());
        omp_set_num_threads(std::max(1, cores / td::size()));
    }
    if (td::size() > 1) bench_all_reduce();
    bench_mlp(true);
    if (td::size() > 1) bench_mlp(false);
    td::finalize();
    return 0;
}
