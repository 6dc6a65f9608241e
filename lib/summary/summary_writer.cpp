// The public tf::summary API: SummaryWriter handles, the per-thread default writer and record_if,
// the free functions, and summary_iterator.
#include <chrono>

#include <fmt/format.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/core/logging.hpp>
#include <tapeflow/distribute.hpp>
#include <tapeflow/summary.hpp>

#include "function/trace_hooks.hpp"
#include "io/record_file.hpp"
#include "summary/event_proto.hpp"
#include "summary/event_writer.hpp"
#include "summary/graph_def.hpp"
#include "summary/values.hpp"

namespace tapeflow::summary {
namespace {

// Per thread, as in TensorFlow 2 (its summary state is thread-local).
thread_local std::shared_ptr<SummaryWriter::Impl> t_default_writer;
thread_local bool t_record = true;

double now_wall_time() {
    // Microsecond resolution, as TF's NowMicros() / 1e6.
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(
        std::chrono::system_clock::now().time_since_epoch());
    return static_cast<double>(us.count()) / 1e6;
}

bool write_value(SummaryWriter::Impl& w, int64_t step, SummaryValue value) {
    Event e;
    e.wall_time = now_wall_time();
    e.step = step;
    e.values.push_back(std::move(value));
    return w.enqueue(std::move(e));
}

// Runs `fn(writer)` on this thread's default writer; false when there is none.
template <class Fn>
bool with_default(Fn&& fn) {
    if (!t_default_writer) return false;
    return fn(SummaryWriter(t_default_writer));
}

}  // namespace

// ---- scopes ----

DefaultWriterScope::DefaultWriterScope(const SummaryWriter& writer)
    : previous_(std::static_pointer_cast<void>(t_default_writer)) {
    t_default_writer = writer.impl();
}
DefaultWriterScope::~DefaultWriterScope() {
    t_default_writer = std::static_pointer_cast<SummaryWriter::Impl>(previous_);
}

RecordIf::RecordIf(bool condition) : previous_(t_record) {
    t_record = condition;
}
RecordIf::~RecordIf() {
    t_record = previous_;
}

RecordIf record_if(bool condition) {
    return RecordIf(condition);
}
bool should_record_summaries() {
    return t_record;
}

// ---- the writer ----

SummaryWriter create_file_writer(std::string logdir, WriterOptions options) {
    // Under mpirun every process runs this line: by default only the chief writes (one loss curve,
    // not one per process), the others get a writer that writes nothing.
    const bool inert = !options.every_process && !distribute::is_chief();
    return SummaryWriter(std::make_shared<SummaryWriter::Impl>(logdir, std::move(options), inert));
}

SummaryWriter::Impl& SummaryWriter::checked() const {
    if (!impl_) {
        throw errors::FailedPreconditionError(
            "this SummaryWriter is empty; create one with tf::summary::create_file_writer");
    }
    return *impl_;
}

bool SummaryWriter::scalar(std::string_view tag, double value, int64_t step) {
    Impl& w = checked();
    if (!t_record) return false;
    return write_value(w, step, scalar_value(scoped_tag(tag), value));
}

namespace {
// Inside a tf::function trace a summary is a host step: every replay writes its own values.
template <class Write>
bool traced_summary(const SummaryWriter& writer, std::vector<Tensor> inputs, Write write) {
    if (!function_detail::tracing()) [[likely]]
        return false;
    function_detail::host_step("WriteSummary",
                               std::move(inputs),
                               [writer, write](std::span<const Tensor> in) { write(writer, in); });
    return true;
}

int64_t step_of(const Variable& step) {
    const Tensor v = step.value();
    return v.dtype() == DType::int32 ? v.item<int32_t>() : v.item<int64_t>();
}
}  // namespace

bool SummaryWriter::scalar(std::string_view tag, const Tensor& value, int64_t step) {
    if (traced_summary(*this, {value}, [tag = std::string(tag), step](SummaryWriter w, auto in) {
            w.scalar(tag, in[0], step);
        }))
        return true;
    Impl& w = checked();
    if (!t_record) return false;
    return write_value(w, step, scalar_value(scoped_tag(tag), value));
}

bool SummaryWriter::histogram(std::string_view tag,
                              const Tensor& values,
                              int64_t step,
                              int buckets) {
    if (traced_summary(
            *this, {values}, [tag = std::string(tag), step, buckets](SummaryWriter w, auto in) {
                w.histogram(tag, in[0], step, buckets);
            }))
        return true;
    Impl& w = checked();
    if (!t_record) return false;
    return write_value(w, step, histogram_value(scoped_tag(tag), values, buckets));
}

bool SummaryWriter::image(std::string_view tag,
                          const Tensor& images,
                          int64_t step,
                          int max_outputs) {
    if (traced_summary(
            *this, {images}, [tag = std::string(tag), step, max_outputs](SummaryWriter w, auto in) {
                w.image(tag, in[0], step, max_outputs);
            }))
        return true;
    Impl& w = checked();
    if (!t_record) return false;
    return write_value(w, step, image_value(scoped_tag(tag), images, max_outputs));
}

bool SummaryWriter::audio(
    std::string_view tag, const Tensor& audio, double sample_rate, int64_t step, int max_outputs) {
    Impl& w = checked();
    if (!t_record) return false;
    return write_value(w, step, audio_value(scoped_tag(tag), audio, sample_rate, max_outputs));
}

bool SummaryWriter::scalar(std::string_view tag, const Tensor& value, const Variable& step) {
    if (traced_summary(*this, {value}, [tag = std::string(tag), step](SummaryWriter w, auto in) {
            w.scalar(tag, in[0], step);
        }))
        return true;
    return scalar(tag, value, step_of(step));
}

bool SummaryWriter::histogram(std::string_view tag,
                              const Tensor& values,
                              const Variable& step,
                              int buckets) {
    if (traced_summary(
            *this, {values}, [tag = std::string(tag), step, buckets](SummaryWriter w, auto in) {
                w.histogram(tag, in[0], step, buckets);
            }))
        return true;
    return histogram(tag, values, step_of(step), buckets);
}

bool SummaryWriter::text(std::string_view tag, std::string_view text, int64_t step) {
    Impl& w = checked();
    if (!t_record) return false;
    return write_value(w, step, text_value(scoped_tag(tag), text));
}

void SummaryWriter::graph(const Graph& graph) {
    Impl& w = checked();
    if (!t_record) return;
    Event e;
    e.wall_time = now_wall_time();
    e.graph_def = serialize_graph_def(graph);
    w.enqueue(std::move(e));
}

void SummaryWriter::add_event(const Event& event) {
    Impl& w = checked();
    Event e = event;
    if (e.wall_time == 0) e.wall_time = now_wall_time();
    w.enqueue(std::move(e));
}

void SummaryWriter::flush() {
    checked().flush();
}
void SummaryWriter::close() {
    checked().close();
}
std::string SummaryWriter::path() const {
    return checked().path;
}

// ---- free functions on the default writer ----

bool scalar(std::string_view tag, double value, int64_t step) {
    return with_default([&](SummaryWriter w) { return w.scalar(tag, value, step); });
}
bool scalar(std::string_view tag, const Tensor& value, int64_t step) {
    return with_default([&](SummaryWriter w) { return w.scalar(tag, value, step); });
}
bool histogram(std::string_view tag, const Tensor& values, int64_t step, int buckets) {
    return with_default([&](SummaryWriter w) { return w.histogram(tag, values, step, buckets); });
}
bool image(std::string_view tag, const Tensor& images, int64_t step, int max_outputs) {
    return with_default([&](SummaryWriter w) { return w.image(tag, images, step, max_outputs); });
}
bool audio(
    std::string_view tag, const Tensor& audio, double sample_rate, int64_t step, int max_outputs) {
    return with_default(
        [&](SummaryWriter w) { return w.audio(tag, audio, sample_rate, step, max_outputs); });
}
bool scalar(std::string_view tag, const Tensor& value, const Variable& step) {
    return with_default([&](SummaryWriter w) { return w.scalar(tag, value, step); });
}
bool histogram(std::string_view tag, const Tensor& values, const Variable& step, int buckets) {
    return with_default([&](SummaryWriter w) { return w.histogram(tag, values, step, buckets); });
}
bool text(std::string_view tag, std::string_view text, int64_t step) {
    return with_default([&](SummaryWriter w) { return w.text(tag, text, step); });
}
void flush() {
    with_default([](SummaryWriter w) {
        w.flush();
        return true;
    });
}

// ---- reading back ----

std::vector<Event> summary_iterator(const std::string& path, TornTail torn_tail) {
    io::RecordFileReader reader(path, io::Compression::none);
    std::vector<Event> events;
    try {
        while (auto record = reader.next()) {
            events.push_back(
                parse_event(*record, fmt::format("offset {} in {}", reader.record_offset(), path)));
        }
    } catch (const errors::DataLossError& e) {
        if (!reader.torn_tail() || torn_tail == TornTail::raise) throw;
        logging::warn(
            "summary_iterator: {} (the file is still being written, or its writer was "
            "killed); returning the {} complete events before it",
            e.message(),
            events.size());
    }
    return events;
}

}  // namespace tapeflow::summary
