// tf::io: TFRecord files (the record format of tf.data and TensorBoard) and tf.train.Example, the
// feature map most TFRecord data sets hold. Written and read natively; no TensorFlow needed.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <tapeflow/core/export.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow::io {

/// Writes a TFRecord file: each record framed by its length and masked CRC-32C.
///
///     tf::io::TFRecordWriter w("train.tfrecord");        // or ("train.tfrecord.gz", "GZIP")
///     w.write(tf::io::Example().add_int64("label", {3}).serialize());
///     w.close();
///
/// The file is created (or truncated) at construction. `compression_type` is "" (none), "GZIP" or
/// "ZLIB" (TensorFlow's names); a compressed file needs the same type to be read back.
class TFRecordWriter {
public:
    explicit TFRecordWriter(std::string path, std::string_view compression_type = "");
    ~TFRecordWriter();
    TFRecordWriter(TFRecordWriter&&) noexcept;
    TFRecordWriter& operator=(TFRecordWriter&&) noexcept;

    /// Appends one record. After close(): FailedPreconditionError.
    void write(std::string_view record);
    /// Blocks until everything written so far is on disk.
    void flush();
    /// Flushes and closes; further close() calls do nothing. The destructor closes too.
    void close();
    const std::string& path() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

/// Reads a TFRecord file record by record, checking every length and CRC.
///
///     tf::io::TFRecordReader r("train.tfrecord");
///     while (auto record = r.next()) use(tf::io::Example::parse(*record));
///
/// A bad length or CRC, or a truncated record, raises errors::DataLossError naming the file and
/// the record's offset; a missing file raises errors::NotFoundError.
class TFRecordReader {
public:
    explicit TFRecordReader(std::string path, std::string_view compression_type = "");
    ~TFRecordReader();
    TFRecordReader(TFRecordReader&&) noexcept;
    TFRecordReader& operator=(TFRecordReader&&) noexcept;

    /// The next record, or nullopt at the end of the file.
    std::optional<std::string> next();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

/// Every record of a TFRecord file (TensorFlow's tf.compat.v1.io.tf_record_iterator).
std::vector<std::string> read_tfrecords(const std::string& path,
                                        std::string_view compression_type = "");

/// tf.train.Example: a map from feature name to an int64, float or bytes list.
///
///     auto bytes = tf::io::Example().add_int64("label", {3}).add_float("x", {0.5f}).serialize();
///     auto ex = tf::io::Example::parse(bytes);
///     ex.get_int64("label");   // {3}
///
/// Adding a name twice replaces the earlier feature. serialize() is deterministic (features in
/// name order). parse() raises DataLossError on bytes that are not an Example.
class Example {
public:
    using Feature =
        std::variant<std::vector<int64_t>, std::vector<float>, std::vector<std::string>>;

    Example& add_int64(std::string_view name, std::vector<int64_t> values);
    Example& add_float(std::string_view name, std::vector<float> values);
    Example& add_bytes(std::string_view name, std::vector<std::string> values);

    std::string serialize() const;
    static Example parse(std::string_view bytes);

    /// The feature's values. NotFoundError when absent; InvalidArgumentError when it holds another
    /// kind of list (the message names the kind it holds).
    std::vector<int64_t> get_int64(std::string_view name) const;
    std::vector<float> get_float(std::string_view name) const;
    std::vector<std::string> get_bytes(std::string_view name) const;

    bool has(std::string_view name) const { return features_.find(name) != features_.end(); }
    std::vector<std::string> names() const;
    const std::map<std::string, Feature, std::less<>>& features() const { return features_; }

private:
    std::map<std::string, Feature, std::less<>> features_;
};

}  // namespace tapeflow::io

TAPEFLOW_API_END
