// The process the summary kill test kills: writes scalar "loss" = step / 2 for step 0, 1, 2, ...
// into a SummaryWriter in `dir`, flushing every 25 steps and then printing the last flushed step
// on stdout (one line per flush), until it is killed or reaches `last_step`.
// Usage: kill_summary_child <dir> <last_step>
#include <cstdio>
#include <cstdlib>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s <dir> <last_step>\n", argv[0]);
        return 2;
    }
    const int64_t last_step = std::atoll(argv[2]);
    auto writer = tf::summary::create_file_writer(argv[1], {.max_queue = 7, .flush_millis = 5});
    for (int64_t step = 0; step <= last_step; ++step) {
        writer.scalar("loss", 0.5 * static_cast<double>(step), step);
        if (step % 25 == 24) {
            writer.flush();  // returns once the events are in the file
            std::printf("%lld\n", static_cast<long long>(step));
            std::fflush(stdout);
        }
    }
    writer.close();
    return 0;
}
