// make_dirs and write_file_atomically on POSIX calls, errors mapped to tapeflow's error types.
#include "io/file_util.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <tapeflow/core/error.hpp>

namespace tapeflow::io {

void throw_io_error(const std::string& what, const std::string& path, int err) {
    const std::string msg = fmt::format("{} {}: {}", what, path, std::strerror(err));
    switch (err) {
        case ENOENT:
            throw errors::NotFoundError(msg);
        case EEXIST:
            throw errors::AlreadyExistsError(msg);
        case EACCES:
        case EPERM:
        case EROFS:
            throw errors::PermissionDeniedError(msg);
        case ENOSPC:
        case EDQUOT:
            throw errors::ResourceExhaustedError(msg);
        case ENOTDIR:
        case EISDIR:
        case ENOTEMPTY:
            throw errors::FailedPreconditionError(msg);
        default:
            throw errors::UnavailableError(msg);
    }
}

void make_dirs(const std::string& dir) {
    if (dir.empty()) return;
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw_io_error("cannot create directory", dir, ec.value());
    if (!std::filesystem::is_directory(dir, ec)) {
        throw errors::FailedPreconditionError(fmt::format("{} exists and is not a directory", dir));
    }
}

std::string read_whole_file(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw_io_error("cannot open", path, errno);
    std::string out;
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
        out.reserve(static_cast<std::size_t>(st.st_size));
    char buf[1 << 16];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            const int err = errno;
            ::close(fd);
            throw_io_error("cannot read", path, err);
        }
        if (n == 0) break;
        out.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fd);
    return out;
}

void write_file_atomically(const std::string& path, std::string_view bytes) {
    write_file_atomically(path, std::span<const std::string_view>(&bytes, 1));
}

void write_file_atomically(const std::string& path, std::span<const std::string_view> pieces) {
    AtomicFileWriter out(path);
    for (const std::string_view bytes : pieces)
        out.append(bytes);
    out.commit();
}

AtomicFileWriter::AtomicFileWriter(std::string path)
    : path_(std::move(path)), tmp_(fmt::format("{}.tmp.{}", path_, ::getpid())) {
    fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) throw_io_error("cannot create", tmp_, errno);
}

AtomicFileWriter::~AtomicFileWriter() {
    if (fd_ >= 0) {
        ::close(fd_);
        ::unlink(tmp_.c_str());
    }
}

void AtomicFileWriter::fail(const char* what, int err) {
    ::close(fd_);
    fd_ = -1;
    ::unlink(tmp_.c_str());
    throw_io_error(what, tmp_, err);
}

void AtomicFileWriter::append(std::string_view bytes) {
    if (fd_ < 0) throw errors::FailedPreconditionError(fmt::format("{} is closed", tmp_));
    // Large files: start the write-back of every kWriteBack bytes while writing the next ones, so
    // the final fsync waits for the disk only for the tail (Linux sync_file_range; a hint only).
    constexpr std::size_t kWriteBack = std::size_t{8} << 20;
    std::size_t done = 0;
    while (done < bytes.size()) {
        const std::size_t len = std::min(bytes.size() - done, kWriteBack);
        const ssize_t n = ::write(fd_, bytes.data() + done, len);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) fail("cannot write", errno);
        done += static_cast<std::size_t>(n);
        written_ += static_cast<uint64_t>(n);
#if defined(__linux__)
        if (written_ - flushed_ >= kWriteBack) {
            ::sync_file_range(fd_,
                              static_cast<off_t>(flushed_),
                              static_cast<off_t>(written_ - flushed_),
                              SYNC_FILE_RANGE_WRITE);
            flushed_ = written_;
        }
#endif
    }
    synced_ = false;
}

void AtomicFileWriter::sync() {
    if (fd_ < 0) throw errors::FailedPreconditionError(fmt::format("{} is closed", tmp_));
    if (::fsync(fd_) != 0) fail("cannot sync", errno);
    synced_ = true;
}

void AtomicFileWriter::commit() {
    if (!synced_) sync();
    const int fd = std::exchange(fd_, -1);
    if (::close(fd) != 0) {
        const int err = errno;
        ::unlink(tmp_.c_str());
        throw_io_error("cannot sync", tmp_, err);
    }
    if (::rename(tmp_.c_str(), path_.c_str()) != 0) {
        const int err = errno;
        ::unlink(tmp_.c_str());
        throw_io_error("cannot rename into", path_, err);
    }
    // Make the rename itself durable.
    const std::string dir = std::filesystem::path(path_).parent_path().string();
    const int dfd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        ::fsync(dfd);
        ::close(dfd);
    }
}

}  // namespace tapeflow::io
