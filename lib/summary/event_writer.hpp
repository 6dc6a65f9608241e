// SummaryWriter::Impl: one event file and the background thread that writes it. Callers only move
// an Event into the queue; the thread serializes, frames and writes batches, flushing once
// max_queue events are pending, every flush_millis, and on flush()/close().
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <tapeflow/summary.hpp>

#include "io/record_file.hpp"

namespace tapeflow::summary {

struct SummaryWriter::Impl {
    /// Creates the file named after `now_seconds` and writes its brain.Event:2 record; with `inert`
    /// (a process that does not write summaries) no file and no thread.
    Impl(const std::string& logdir, WriterOptions options, bool inert = false);
    ~Impl();

    /// Queues one event (false, and nothing, when inert); wakes the thread only when max_queue
    /// events are pending.
    bool enqueue(Event event);
    /// Blocks until every event queued before the call is written and synced.
    void flush();
    void close();
    /// Rethrows an error the writer thread hit (disk full, ...); FailedPrecondition once closed.
    void check_open();

    const bool inert;
    const std::string path;  // empty when inert
    const WriterOptions options;

private:
    void run();

    std::unique_ptr<io::RecordFileWriter> file_;  // null when inert
    std::mutex mu_;
    std::mutex join_mu_;
    std::condition_variable wake_;    // the writer thread waits on it
    std::condition_variable synced_;  // flush() callers wait on it
    std::vector<Event> queue_;
    uint64_t enqueued_ = 0;        // events queued so far
    uint64_t sync_requested_ = 0;  // flush up to this many events
    uint64_t synced_count_ = 0;    // events known to be on disk
    bool closing_ = false;
    bool closed_ = false;
    std::exception_ptr error_;
    std::thread thread_;
};

/// events.out.tfevents.<10-digit seconds>.<host>.<pid>.<n><suffix or ".v2">
std::string event_file_name(int64_t seconds, const std::string& filename_suffix);

}  // namespace tapeflow::summary
