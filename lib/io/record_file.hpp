// TFRecord files at the byte level: framing (length, masked CRCs), a writer that appends whole
// records (optionally through a GZIP or ZLIB stream) and a reader that checks every CRC. Shared by
// tf::io::TFRecordWriter/Reader, the TensorBoard event writer and summary_iterator.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace tapeflow::io {

enum class Compression { none, gzip, zlib };

/// "" / "NONE" -> none, "GZIP" -> gzip, "ZLIB" -> zlib; anything else is InvalidArgumentError.
Compression parse_compression(std::string_view name);

/// Appends one framed record (12-byte header, data, 4-byte footer) to `out`.
void append_framed_record(std::string& out, std::string_view data);

/// Writes framed records to a file. Each append() hands the whole record to the file in one call,
/// so a crash leaves at worst a truncated last record, which readers report as truncated.
class RecordFileWriter {
public:
    /// `exclusive`: fail (AlreadyExistsError) instead of overwriting an existing file.
    RecordFileWriter(std::string path, Compression compression, bool exclusive = false);
    ~RecordFileWriter();
    RecordFileWriter(const RecordFileWriter&) = delete;
    RecordFileWriter& operator=(const RecordFileWriter&) = delete;

    void append(std::string_view record);
    /// Appends bytes that are already framed (one or more whole records).
    void append_framed(std::string_view framed);
    /// Pushes everything to the OS and, with `sync`, to the disk (fdatasync).
    void flush(bool sync = true);
    void close();
    bool closed() const { return file_ == nullptr; }
    const std::string& path() const { return path_; }

private:
    void write_raw(const void* data, std::size_t n);
    void deflate_some(const void* data, std::size_t n, int mode);

    std::string path_;
    Compression compression_;
    std::FILE* file_ = nullptr;
    struct Zip;
    std::unique_ptr<Zip> zip_;
    std::string scratch_;
};

/// Reads framed records back; every length and CRC is checked. A bad length or CRC, a truncated
/// record or a corrupt compressed stream raises DataLossError naming the file and the offset (in
/// the uncompressed stream) of the record.
class RecordFileReader {
public:
    RecordFileReader(std::string path, Compression compression);
    ~RecordFileReader();
    RecordFileReader(const RecordFileReader&) = delete;
    RecordFileReader& operator=(const RecordFileReader&) = delete;

    /// The next record's data, or nullopt at a clean end of file.
    std::optional<std::string> next();
    /// Offset of the record that next() returned last.
    uint64_t record_offset() const { return record_offset_; }
    /// Whether the last DataLossError was a record cut short by the end of the file (what a
    /// writer that is still writing, or was killed mid-append, leaves), not a corrupt one.
    bool torn_tail() const { return torn_tail_; }
    const std::string& path() const { return path_; }

private:
    std::size_t read(void* out, std::size_t n);
    [[noreturn]] void fail(const std::string& what) const;
    [[noreturn]] void fail_torn(const std::string& what);

    std::string path_;
    Compression compression_;
    std::FILE* file_ = nullptr;
    struct Unzip;
    std::unique_ptr<Unzip> unzip_;
    uint64_t offset_ = 0;  // bytes consumed so far (uncompressed)
    uint64_t record_offset_ = 0;
    uint64_t file_size_ = 0;  // for plain files: rejects lengths past the end before allocating
    bool torn_tail_ = false;
};

}  // namespace tapeflow::io
