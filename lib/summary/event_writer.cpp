// The background event writer: batches of queued events are serialized and framed into one buffer
// and written with one call, so each record lands whole; flush() waits for fdatasync.
#include "summary/event_writer.hpp"

#include <atomic>
#include <climits>

#include <fmt/format.h>
#include <unistd.h>

#include <tapeflow/core/error.hpp>

#include "io/file_util.hpp"
#include "summary/event_proto.hpp"

namespace tapeflow::summary {
namespace {

std::atomic<uint64_t> g_writer_counter{0};

std::string host_name() {
    char buf[HOST_NAME_MAX + 1] = {};
    if (::gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0') return "localhost";
    return buf;
}

int64_t now_seconds() {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

std::string make_path(const std::string& logdir, const WriterOptions& options) {
    if (options.max_queue < 0 || options.flush_millis < 0) {
        throw errors::InvalidArgumentError(
            fmt::format("WriterOptions need max_queue >= 0 and flush_millis >= 0, got {} and {}",
                        options.max_queue,
                        options.flush_millis));
    }
    io::make_dirs(logdir);
    return (logdir.empty() ? std::string(".") : logdir) + "/" +
           event_file_name(now_seconds(), options.filename_suffix);
}

}  // namespace

std::string event_file_name(int64_t seconds, const std::string& filename_suffix) {
    return fmt::format("events.out.tfevents.{:010d}.{}.{}.{}{}",
                       seconds,
                       host_name(),
                       ::getpid(),
                       g_writer_counter++,
                       filename_suffix.empty() ? ".v2" : filename_suffix);
}

SummaryWriter::Impl::Impl(const std::string& logdir, WriterOptions opts, bool inert_writer)
    : inert(inert_writer), path(inert ? "" : make_path(logdir, opts)), options(std::move(opts)) {
    if (inert) {
        closed_ = true;
        return;
    }
    file_ = std::make_unique<io::RecordFileWriter>(path, io::Compression::none, /*exclusive=*/true);
    // The seconds in the name are the first event's wall time (TF's EventsWriter::Init).
    const std::string stamp = path.substr(path.find("tfevents.") + 9, 10);
    Event first;
    first.wall_time = static_cast<double>(std::stoll(stamp));
    first.file_version = "brain.Event:2";
    file_->append(serialize_event(first));
    file_->flush(false);
    thread_ = std::thread([this] { run(); });
}

SummaryWriter::Impl::~Impl() {
    try {
        close();
    } catch (...) {  // the last handle went away; errors were reported by explicit close() if any
    }
}

void SummaryWriter::Impl::check_open() {
    if (error_) std::rethrow_exception(error_);
    if (closing_) {
        throw errors::FailedPreconditionError("summary writer for " + path + " is closed");
    }
}

bool SummaryWriter::Impl::enqueue(Event event) {
    if (inert) return false;
    std::unique_lock lock(mu_);
    check_open();
    queue_.push_back(std::move(event));
    ++enqueued_;
    if (queue_.size() >= static_cast<std::size_t>(options.max_queue)) {
        lock.unlock();
        wake_.notify_one();
    }
    return true;
}

void SummaryWriter::Impl::flush() {
    std::unique_lock lock(mu_);
    if (closed_) {
        if (error_) std::rethrow_exception(error_);
        return;
    }
    const uint64_t target = enqueued_;
    sync_requested_ = std::max(sync_requested_, target);
    wake_.notify_one();
    synced_.wait(lock, [&] { return synced_count_ >= target || error_ || closed_; });
    if (error_) std::rethrow_exception(error_);
}

void SummaryWriter::Impl::close() {
    {
        std::unique_lock lock(mu_);
        if (!closing_) {
            closing_ = true;
            wake_.notify_one();
        }
    }
    {
        std::lock_guard join_lock(join_mu_);  // two threads closing at once must not both join
        if (thread_.joinable()) thread_.join();
    }
    std::unique_lock lock(mu_);
    if (error_) std::rethrow_exception(error_);
}

void SummaryWriter::Impl::run() {
    using clock = std::chrono::steady_clock;
    const auto period = std::chrono::milliseconds(std::max(options.flush_millis, 1));
    auto next_flush = clock::now() + period;
    std::vector<Event> batch;
    std::string buffer;
    std::unique_lock lock(mu_);
    for (;;) {
        wake_.wait_until(lock, next_flush, [&] {
            return closing_ || sync_requested_ > synced_count_ ||
                   queue_.size() >= static_cast<std::size_t>(std::max(options.max_queue, 1));
        });
        batch.swap(queue_);
        const uint64_t upto = enqueued_;
        const bool sync = closing_ || sync_requested_ > synced_count_;
        const bool closing = closing_;
        lock.unlock();
        try {
            buffer.clear();
            for (const Event& e : batch)
                io::append_framed_record(buffer, serialize_event(e));
            batch.clear();
            file_->append_framed(buffer);
            if (closing) {
                file_->close();
            } else {
                file_->flush(sync);  // fflush always (TensorBoard reads live); fdatasync on request
            }
        } catch (...) {
            lock.lock();
            error_ = std::current_exception();
            closed_ = true;
            synced_.notify_all();
            try {
                file_->close();
            } catch (...) {
            }
            return;
        }
        next_flush = clock::now() + period;
        lock.lock();
        if (sync) {
            synced_count_ = upto;
            synced_.notify_all();
        }
        if (closing) {
            closed_ = true;
            synced_.notify_all();
            return;
        }
    }
}

}  // namespace tapeflow::summary
