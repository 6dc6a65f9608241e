// tf::logging: a process-wide level (initialised from TAPEFLOW_MIN_LOG_LEVEL, else from
// TensorFlow's TF_CPP_MIN_LOG_LEVEL, so a ported script's environment keeps working) and a stderr
// sink with TensorFlow's glog-style line prefix.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <mutex>

#include <unistd.h>

#include <tapeflow/core/logging.hpp>

namespace tapeflow::logging {
namespace {

int initial_level() {
    const char* env = std::getenv("TAPEFLOW_MIN_LOG_LEVEL");
    if (env == nullptr || *env == '\0') env = std::getenv("TF_CPP_MIN_LOG_LEVEL");
    if (env == nullptr || *env == '\0') return INFO;
    switch (std::atoi(env)) {
        case 0:
            return INFO;
        case 1:
            return WARN;
        case 2:
            return ERROR;
        case 3:
            return FATAL;
        default:
            return INFO;
    }
}

std::atomic<int>& level() {
    static std::atomic<int> value{initial_level()};
    return value;
}

std::atomic<Sink>& sink() {
    static std::atomic<Sink> value{nullptr};
    return value;
}

char level_letter(Level l) {
    if (l >= FATAL) return 'F';
    if (l >= ERROR) return 'E';
    if (l >= WARN) return 'W';
    if (l >= INFO) return 'I';
    return 'D';
}

void stderr_sink(Level l, std::string_view message) {
    using namespace std::chrono;
    const auto now = system_clock::now();
    const std::time_t secs = system_clock::to_time_t(now);
    const auto micros = duration_cast<microseconds>(now.time_since_epoch()).count() % 1000000;
    std::tm tm{};
    localtime_r(&secs, &tm);
    const std::string line = fmt::format("{}{:02}{:02} {:02}:{:02}:{:02}.{:06} {} tapeflow] {}\n",
                                         level_letter(l),
                                         tm.tm_mon + 1,
                                         tm.tm_mday,
                                         tm.tm_hour,
                                         tm.tm_min,
                                         tm.tm_sec,
                                         micros,
                                         static_cast<long>(getpid()),
                                         message);
    static std::mutex mutex;
    const std::lock_guard lock(mutex);
    std::fputs(line.c_str(), stderr);
}

}  // namespace

void set_verbosity(int new_level) {
    level().store(new_level);
}

int get_verbosity() {
    return level().load(std::memory_order_relaxed);
}

void set_sink(Sink new_sink) {
    sink().store(new_sink);
}

void log(Level l, std::string_view message) {
    if (l < get_verbosity()) return;
    Sink s = sink().load();
    (s != nullptr ? s : stderr_sink)(l, message);
}

}  // namespace tapeflow::logging
