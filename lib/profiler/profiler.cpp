// The public tf::profiler functions: start / stop write the trace file, profile() reports.
#include <ctime>
#include <exception>
#include <mutex>
#include <optional>

#include <fmt/format.h>
#include <unistd.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/profiler.hpp>

#include "io/deflate.hpp"
#include "io/file_util.hpp"
#include "profiler/collector.hpp"
#include "profiler/gpu_markers.hpp"
#include "profiler/hooks.hpp"
#include "profiler/report.hpp"
#include "profiler/trace_json.hpp"

namespace tapeflow::profiler {
namespace {

// What start() was given, for stop() (guarded by g_mutex, with g_last_profile).
struct Pending {
    std::string logdir;
    std::string run;  // TensorFlow's run name: the start's local time
};

std::mutex g_mutex;
std::optional<Pending> g_pending;
std::optional<Profile> g_last_profile;

std::string run_name_now() {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    localtime_r(&t, &tm);
    return fmt::format("{:04}_{:02}_{:02}_{:02}_{:02}_{:02}",
                       tm.tm_year + 1900,
                       tm.tm_mon + 1,
                       tm.tm_mday,
                       tm.tm_hour,
                       tm.tm_min,
                       tm.tm_sec);
}

// The host name as a file name (a '/' would open a folder).
std::string host_name() {
    char buf[256] = {};
    if (::gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0') return "localhost";
    std::string name(buf);
    for (char& c : name)
        if (c == '/') c = '_';
    return name;
}

detail::SessionResult finish_session() {
    detail::SessionResult result = detail::end_session();
    detail::resolve_gpu_events(result);
    return result;
}

}  // namespace

namespace experimental {

void start(const std::string& logdir, ProfilerOptions options) {
    if (logdir.empty())
        throw errors::InvalidArgumentError("profiler.start: logdir must not be empty");
    const std::lock_guard lock(g_mutex);
    detail::begin_session(options);  // AlreadyExistsError while one runs
    g_pending = Pending{logdir, run_name_now()};
}

void stop(bool save) {
    const std::lock_guard lock(g_mutex);
    if (!g_pending) {
        throw errors::UnavailableError("Cannot export profiling results. No profiler is running.");
    }
    const Pending pending = std::move(*g_pending);
    g_pending.reset();
    const detail::SessionResult result = finish_session();
    if (!save) return;
    const std::string dir = pending.logdir + "/plugins/profile/" + pending.run;
    io::make_dirs(dir);
    const std::string json = detail::trace_json(result);
    io::write_file_atomically(dir + "/" + host_name() + ".trace.json.gz",
                              io::deflate_pieces({json}, io::DeflateFraming::gzip));
    g_last_profile = detail::build_profile(result);
}

Trace::Trace(std::string name, std::optional<int64_t> step_num)
    : name_(std::move(name)), step_num_(step_num) {
    if (detail::host_level() >= 1) [[unlikely]] {
        session_ = detail::session_id();
        start_ns_ = detail::now_ns();
    }
}

Trace::~Trace() {
    if (start_ns_ >= 0) [[unlikely]] {
        detail::record_span(std::move(name_), start_ns_, session_, step_num_.value_or(-1));
    }
}

}  // namespace experimental

Profile profile(const std::function<void()>& fn, experimental::ProfilerOptions options) {
    {
        const std::lock_guard lock(g_mutex);
        detail::begin_session(options);
    }
    try {
        fn();
    } catch (...) {
        finish_session();
        throw;
    }
    return detail::build_profile(finish_session());
}

Profile profile() {
    const std::lock_guard lock(g_mutex);
    if (!g_last_profile) {
        throw errors::FailedPreconditionError(
            "profiler.profile: no profiling session was saved yet; call "
            "profiler::experimental::start(logdir) and stop() first, or profile(fn)");
    }
    return *g_last_profile;
}

}  // namespace tapeflow::profiler
