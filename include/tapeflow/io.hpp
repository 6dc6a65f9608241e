// tf::io: TFRecord files (the record format of tf.data and TensorBoard) and tf.train.Example, the
// feature map most TFRecord data sets hold, and NumPy's .npy/.npz files. Written and read
// natively; no TensorFlow or NumPy needed.
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
#include <tapeflow/core/tensor.hpp>

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

// ---- NumPy's .npy and .npz files (docs/interchange.md) ----

/// Writes `tensor` as a .npy file (format 1.0; 2.0 when the header needs it), atomically, in the
/// host's byte order: np.load reads it. NumPy dtypes: float16 f2, float32 f4, float64 f8, int32
/// i4, int64 i8, uint8 u1, bool b1. bfloat16 has none: InvalidArgumentError (cast first). A GPU
/// tensor is copied to the host first.
void save_npy(const std::string& path, const Tensor& tensor);

/// Reads a .npy file (format 1.0, 2.0 or 3.0; little- or big-endian; C or Fortran order, which
/// becomes tapeflow's row-major layout). f2 f4 f8 i4 i8 u1 b1 load as their tapeflow dtype; i1,
/// i2 and u2 widen to int32, u4 to int64. Object arrays and pickles are refused, never loaded
/// (InvalidArgumentError), as are structured, complex, string and uint64 arrays. A malformed
/// header, or data shorter or longer than the header says: DataLossError naming the file.
Tensor load_npy(const std::string& path);

/// Writes the tensors as an .npz archive (a zip of "<name>.npy" members, as np.savez writes;
/// deflated as np.savez_compressed when `compressed`), atomically. ZIP64 past 4 GiB.
void save_npz(const std::string& path,
              const std::map<std::string, Tensor>& tensors,
              bool compressed = false);

/// The arrays of an .npz archive (np.savez or np.savez_compressed, or any zip of .npy members:
/// stored or deflated, ZIP64, data descriptors), keyed by member name without ".npy". A bad CRC,
/// a corrupt deflate stream or a broken archive: DataLossError naming the file and member.
std::map<std::string, Tensor> load_npz(const std::string& path);

}  // namespace tapeflow::io

TAPEFLOW_API_END
