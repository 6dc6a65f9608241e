// Small filesystem helpers with tapeflow errors: directory creation and crash-safe whole-file
// writes (temp file + fsync + rename), reused by graph export and checkpoints.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace tapeflow::io {

/// Throws the error TensorFlow maps `err` (an errno value) to, with "<what> <path>: <strerror>":
/// NotFoundError (ENOENT), AlreadyExistsError (EEXIST), PermissionDeniedError (EACCES, EPERM,
/// EROFS), ResourceExhaustedError (ENOSPC, EDQUOT), FailedPreconditionError (ENOTDIR, EISDIR,
/// ENOTEMPTY), UnavailableError otherwise.
[[noreturn]] void throw_io_error(const std::string& what, const std::string& path, int err);

/// Creates `dir` and its missing parents; an error names the path (PermissionDeniedError, ...).
void make_dirs(const std::string& dir);

/// Writes `bytes` to `path` so that a crash leaves either the old file or the complete new one:
/// the bytes go to a temporary file in the same directory, which is fsynced, renamed over `path`,
/// and the directory is fsynced.
void write_file_atomically(const std::string& path, std::string_view bytes);
/// The same for a file made of several pieces, written in order straight from their memory (no
/// concatenated copy: checkpoints write tensors' bytes this way).
void write_file_atomically(const std::string& path, std::span<const std::string_view> pieces);

/// A file written in several appends and made durable at once: the bytes go to
/// "<path>.tmp.<pid>"; commit() fsyncs it, renames it over `path` and fsyncs the directory. A
/// writer destroyed before commit() removes its temporary file, so `path` keeps its old contents.
/// Large appends start the disk write-back as they go (the final fsync waits only for the tail).
class AtomicFileWriter {
public:
    explicit AtomicFileWriter(std::string path);
    ~AtomicFileWriter();
    AtomicFileWriter(const AtomicFileWriter&) = delete;
    AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

    void append(std::string_view bytes);
    /// Bytes appended so far.
    uint64_t size() const { return written_; }
    /// fsync, rename over the path, fsync of the directory; the writer is spent afterwards.
    void commit();
    /// fsync of the temporary file only (commit() then renames without a second wait).
    void sync();
    const std::string& path() const { return path_; }

private:
    void fail(const char* what, int err);  // closes, removes the temporary, throws
    std::string path_;
    std::string tmp_;
    int fd_ = -1;
    uint64_t written_ = 0;
    uint64_t flushed_ = 0;
    bool synced_ = false;
};

/// The whole contents of `path`; errors as throw_io_error's ("cannot read <path>: ...").
std::string read_whole_file(const std::string& path);

}  // namespace tapeflow::io
