// A process killed mid-run must make the others fail with UnavailableError, not hang. Run by
// tests/distribute/run_fault.sh under `mpirun --enable-recovery` (so the survivors keep running):
//   distribute_fault collective   rank 1 SIGKILLs itself during an all_reduce loop
//   distribute_fault ps           worker task 1 SIGKILLs itself mid-training (needs 3 processes)
// Each survivor that sees the error prints "FAULT-DETECTED rank <r> (<seconds> s): <message>".
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>

#include <unistd.h>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;
namespace td = tapeflow::distribute;

namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void report(const tf::errors::OpError& e, Clock::time_point since) {
    const double seconds = std::chrono::duration<double>(Clock::now() - since).count();
    std::printf("FAULT-DETECTED rank %d (%.1f s): %s: %s\n",
                td::rank(),
                seconds,
                tf::errors::code_name(e.code()),
                e.what());
    std::fflush(stdout);
    std::_Exit(0);  // MPI cannot finish with a dead peer
}

void collective() {
    Clock::time_point last = Clock::now();
    try {
        for (int step = 0; step < 1000; ++step) {
            if (td::rank() == 1 && step == 5) std::raise(SIGKILL);
            last = Clock::now();
            td::all_reduce(tf::ones({1000}));
        }
    } catch (const tf::errors::UnavailableError& e) {
        report(e, last);
    }
    std::printf("rank %d: no error\n", td::rank());
}

void parameter_server() {
    auto strategy = td::ParameterServerStrategy::from_mpi(1);
    auto w = strategy.create_variable(tf::ones({4}), {.name = "w"});
    tf::train::GradientDescentOptimizer opt(0.01);
    strategy.register_optimizer(opt);
    Clock::time_point last = Clock::now();
    try {
        if (strategy.is_ps()) {
            strategy.run_server();
            std::printf("ps: run_server returned\n");
            return;
        }
        for (int step = 0; step < 20; ++step) {
            if (strategy.task_index() == 1 && step == 3) std::raise(SIGKILL);
            strategy.apply_gradients(opt, {{tf::ones({4}), w}});
            strategy.pull({w});
        }
        strategy.finish();
        last = Clock::now();
        td::barrier();  // the dead worker never arrives
    } catch (const tf::errors::UnavailableError& e) {
        report(e, last);
    }
    std::printf("rank %d: no error\n", td::rank());
}

}  // namespace

int main(int argc, char** argv) {
    td::init(&argc, &argv);
    if (!td::mpi_built()) {
        std::printf("tapeflow was built without MPI\n");
        return 77;
    }
    if (argc > 1 && std::strcmp(argv[1], "ps") == 0) {
        parameter_server();
    } else {
        collective();
    }
    td::finalize();
    return 0;
}
