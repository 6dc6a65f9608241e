// tf::summary: TensorBoard event files written natively (scalars, histograms, images, audio, text,
// graphs), read back with summary_iterator; tf::train::write_graph saves a GraphDef to disk. The
// bytes follow TensorFlow 2's writers (docs/tensorboard.md), so unmodified TensorBoard reads them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <tapeflow/autograd/graph.hpp>
#include <tapeflow/autograd/variable.hpp>
#include <tapeflow/core/export.hpp>
#include <tapeflow/core/tensor.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow::summary {

/// Options of create_file_writer (TensorFlow's defaults). The writer thread writes the queued
/// events once `max_queue` are pending, at least every `flush_millis`, and on flush()/close().
/// `filename_suffix` replaces the default ".v2" at the end of the file name.
struct WriterOptions {
    int max_queue = 10;
    int flush_millis = 120000;
    std::string filename_suffix = "";
    /// Under mpirun only the chief process (tf::distribute::is_chief()) writes: the writers of the
    /// others create no file and write nothing (their calls return false). True: every process
    /// writes its own file (give each its own logdir or filename_suffix).
    bool every_process = false;
};

/// One Summary.Value of an event, decoded. `kind` is "scalar", "histogram", "image", "audio",
/// "text" or "other" (from the plugin name). Numeric payloads are in `tensor` (a scalar's value
/// also in `scalar_value`; a histogram's [k,3] float64 rows (left, right, count)); string payloads
/// in `strings` (image: width, height, then the PNG files; audio: the WAV files; text: the text).
struct SummaryValue {
    std::string tag;
    std::string kind;
    double scalar_value = 0;
    Tensor tensor;
    std::vector<std::string> strings;
    std::string plugin_name;
};

/// One record of an event file. `file_version` is set on the first event of a file
/// ("brain.Event:2"), `graph_def` holds the serialized GraphDef of a graph event.
struct Event {
    double wall_time = 0;
    int64_t step = 0;
    std::string file_version;
    std::string graph_def;
    std::vector<SummaryValue> values;
    /// A SessionLog event's status: 1 START (TensorBoard then drops the run's data past this step,
    /// left by a job that was restarted), 2 STOP, 3 CHECKPOINT; 0 for other events.
    int session_log_status = 0;
};

class SummaryWriter;

/// RAII: while alive, the free functions of this thread write to the writer (TF's `as_default`).
class [[nodiscard]] DefaultWriterScope {
public:
    explicit DefaultWriterScope(const SummaryWriter& writer);
    ~DefaultWriterScope();
    DefaultWriterScope(const DefaultWriterScope&) = delete;
    DefaultWriterScope& operator=(const DefaultWriterScope&) = delete;

private:
    std::shared_ptr<void> previous_;
};

/// RAII: while alive, summaries of this thread are written only if `condition` (TF's record_if).
class [[nodiscard]] RecordIf {
public:
    explicit RecordIf(bool condition);
    ~RecordIf();
    RecordIf(const RecordIf&) = delete;
    RecordIf& operator=(const RecordIf&) = delete;

private:
    bool previous_;
};

/// Writes one events.out.tfevents.* file. Copies are handles to the same writer; it closes when the
/// last handle goes away. The calls only queue the event: a background thread serializes and writes
/// it, so a scalar costs the training thread about a microsecond. All members are thread-safe.
/// The summary calls return false (and write nothing) inside record_if(false).
///
///     auto writer = tf::summary::create_file_writer("logs/run1");
///     writer.scalar("loss", 0.25, step);
///     auto scope = writer.as_default();  tf::summary::histogram("w", w, step);
class SummaryWriter {
public:
    /// An empty handle; every call raises FailedPreconditionError. Use create_file_writer.
    SummaryWriter() = default;

    bool scalar(std::string_view tag, double value, int64_t step);
    /// A one-element numeric tensor; float64 stays float64, other dtypes become float32 (as TF).
    bool scalar(std::string_view tag, const Tensor& value, int64_t step);
    /// TF2 bucketing into `buckets` equal-width buckets ([k,3] float64 rows); finite values only.
    bool histogram(std::string_view tag, const Tensor& values, int64_t step, int buckets = 30);
    /// [N,H,W,C] with C in {1,2,3,4}; float in [0,1] (scaled by 255.5 and clamped) or uint8.
    /// The first `max_outputs` images are PNG-encoded.
    bool image(std::string_view tag, const Tensor& images, int64_t step, int max_outputs = 3);
    /// With the step a Variable holds when the summary is written (a global step, an optimizer's
    /// iterations): inside a tf::function every replay writes with the step of its own call.
    bool scalar(std::string_view tag, const Tensor& value, const Variable& step);
    bool histogram(std::string_view tag,
                   const Tensor& values,
                   const Variable& step,
                   int buckets = 30);
    /// [N,T,C] float in [-1,1] (clamped); the first `max_outputs` clips become 16-bit WAV files.
    bool audio(std::string_view tag,
               const Tensor& audio,
               double sample_rate,
               int64_t step,
               int max_outputs = 3);
    /// Markdown text; must be valid UTF-8 (InvalidArgumentError otherwise: TensorBoard fails on
    /// invalid UTF-8).
    bool text(std::string_view tag, std::string_view text, int64_t step);
    /// The graph (tape.graph()) for TensorBoard's graph tab: an Event with graph_def at step 0.
    void graph(const Graph& graph);
    /// Writes `event` as given (wall_time 0 means now). Values are encoded by `kind` as above;
    /// "other" values keep their plugin_name and carry `tensor` or else `strings`.
    void add_event(const Event& event);
    /// Blocks until everything queued so far is written and on disk.
    void flush();
    /// Flushes, stops the writer thread and closes the file; later summary calls raise
    /// FailedPreconditionError. Calling close() again does nothing.
    void close();
    /// The events.out.tfevents.* file this writer writes.
    std::string path() const;
    /// Makes this writer the default of the calling thread for the scope's lifetime.
    [[nodiscard]] DefaultWriterScope as_default() const { return DefaultWriterScope(*this); }

    /// Internal: the shared writer state (lib/summary/event_writer.hpp).
    struct Impl;
    explicit SummaryWriter(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
    const std::shared_ptr<Impl>& impl() const { return impl_; }

private:
    Impl& checked() const;
    std::shared_ptr<Impl> impl_;
};

/// Creates `logdir` (and missing parents) and a new event file in it, named as TensorFlow 2 names
/// them: events.out.tfevents.<10-digit seconds>.<host>.<pid>.<n>.v2. Its first record is the
/// "brain.Event:2" file-version event.
SummaryWriter create_file_writer(std::string logdir, WriterOptions options = {});

// Free functions: write to this thread's default writer (as_default); false when there is none.
bool scalar(std::string_view tag, double value, int64_t step);
bool scalar(std::string_view tag, const Tensor& value, int64_t step);
bool histogram(std::string_view tag, const Tensor& values, int64_t step, int buckets = 30);
bool image(std::string_view tag, const Tensor& images, int64_t step, int max_outputs = 3);
bool scalar(std::string_view tag, const Tensor& value, const Variable& step);
bool histogram(std::string_view tag, const Tensor& values, const Variable& step, int buckets = 30);
bool audio(std::string_view tag,
           const Tensor& audio,
           double sample_rate,
           int64_t step,
           int max_outputs = 3);
bool text(std::string_view tag, std::string_view text, int64_t step);
/// Flushes the default writer, if any.
void flush();

/// RAII: summaries of this thread are recorded only while `condition` holds (nesting restores).
[[nodiscard]] RecordIf record_if(bool condition);
/// Whether this thread currently records summaries (false inside record_if(false)).
bool should_record_summaries();

/// What summary_iterator does with a last record cut short by the end of the file, which a writer
/// still writing, or killed mid-write, leaves: `skip` returns every complete event before it and
/// logs a warning naming the file and the offset (TensorBoard reads such a file the same way, as
/// one still being written); `raise` throws DataLossError.
enum class TornTail { skip, raise };

/// Every event of an event file, the first (file_version) included. A corrupt record (bad CRC,
/// undecodable event) raises DataLossError naming the file and offset; a torn last record is
/// handled as `torn_tail` says; a missing file raises NotFoundError.
std::vector<Event> summary_iterator(const std::string& path, TornTail torn_tail = TornTail::skip);

}  // namespace tapeflow::summary

namespace tapeflow::train {

/// Writes the GraphDef of `graph` to `logdir`/`name` (creating `logdir`): protobuf text format
/// (pbtxt) when `as_text`, else binary. Atomic: a temporary file is synced and renamed into place.
void write_graph(const Graph& graph,
                 const std::string& logdir,
                 const std::string& name,
                 bool as_text = true);

}  // namespace tapeflow::train

TAPEFLOW_API_END
