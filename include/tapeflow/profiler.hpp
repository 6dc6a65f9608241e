// tf::profiler: TensorFlow 2's programmatic profiler (start / stop / Trace) writing a trace that
// Perfetto, chrome://tracing and TensorBoard's profile plugin open, and tfprof-style tables of
// where the time of a program went, per op type and per op name (docs/profiler.md).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <tapeflow/core/export.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow::profiler {

namespace experimental {

/// TensorFlow's tf.profiler.experimental.ProfilerOptions.
/// host_tracer_level: 0 records nothing on the host; 1 only Trace spans; 2 (default) also every
/// op, the tape's backward walks, the optimizers' updates and the thread pool's chunks.
/// device_tracer_level: 0 no GPU timing; 1 (default) the kernels of ops on a CUDA device timed
/// with CUDA events on the device's stream. python_tracer_level is accepted for TensorFlow's
/// signature and ignored (there is no Python). Levels outside [0, 3] / [0, 1] raise
/// InvalidArgumentError.
struct ProfilerOptions {
    int host_tracer_level = 2;
    int python_tracer_level = 0;
    int device_tracer_level = 1;
};

/// Starts collecting. The trace goes to <logdir>/plugins/profile/<run>/<host>.trace.json.gz when
/// stop() is called, <run> being the local start time as YYYY_MM_DD_HH_MM_SS (TensorFlow's run
/// names). AlreadyExistsError "Another profiler is running." while a session (this one or
/// profile()'s) is active; InvalidArgumentError for an empty logdir.
void start(const std::string& logdir, ProfilerOptions options = {});

/// Stops the session; with `save`, writes its trace file (atomically) and keeps its report for
/// profile(). UnavailableError "Cannot export profiling results. No profiler is running." without
/// an active start().
void stop(bool save = true);

/// A named span on the calling thread's track while the object lives; spans nest. A step_num
/// marks a training step (TensorFlow's tf.profiler.experimental.Trace("train", step_num=n)). Costs
/// one relaxed atomic load when no profiler runs.
class [[nodiscard]] Trace {
public:
    explicit Trace(std::string name, std::optional<int64_t> step_num = {});
    ~Trace();
    Trace(const Trace&) = delete;
    Trace& operator=(const Trace&) = delete;

private:
    std::string name_;
    std::optional<int64_t> step_num_;
    int64_t start_ns_ = -1;  // -1: no profiler ran at construction
    uint64_t session_ = 0;
};

}  // namespace experimental

/// One row of a report: the ops of one type ("MatMul") or one name ("dense/MatMul": the name scope
/// the op ran under, then its type).
struct OpStats {
    std::string name;
    int64_t count = 0;         // calls
    double total_cpu_us = 0;   // host time from the call's start to its end, summed over calls
    double self_cpu_us = 0;    // total minus the time of the ops it ran inside itself
    double gpu_us = 0;         // kernel time on GPU streams (CUDA events); 0 on the CPU
    double flops = 0;          // floating-point operations (MatMul, BatchMatMulV2, convolutions)
    bool flops_known = false;  // false: no FLOPs formula for this op type
    int64_t output_bytes = 0;  // bytes of the outputs the calls allocated (views count none)
    int64_t peak_bytes = 0;    // most tensor memory in use on the op's device at the end of a call
};

/// A tfprof-style report of one profiling session.
class Profile {
public:
    enum class GroupBy { op_type, op_name };

    /// Rows sorted by self time, largest first (ties by name).
    std::vector<OpStats> by_op_type;
    std::vector<OpStats> by_op_name;
    double wall_us = 0;      // the session's duration
    int64_t op_count = 0;    // ops run
    int64_t peak_bytes = 0;  // most tensor memory in use at the end of any op (any device)

    /// The rows of `group` as an aligned text table, with a total line; max_rows 0: all rows.
    std::string table(GroupBy group = GroupBy::op_type, std::size_t max_rows = 0) const;
    /// The whole report as JSON: {"wall_us", "op_count", "peak_bytes", "by_op_type": [...],
    /// "by_op_name": [...]}, each row with the fields of OpStats (flops null when unknown).
    std::string json() const;
};

/// Runs `fn` under a profiling session that writes no file, and returns its report.
/// AlreadyExistsError while another session is active.
Profile profile(const std::function<void()>& fn, experimental::ProfilerOptions options = {});

/// The report of the last session that experimental::stop() saved. FailedPreconditionError when
/// none was saved yet.
Profile profile();

}  // namespace tapeflow::profiler

TAPEFLOW_API_END
