// TFRecord framing, writing and checked reading (plain, GZIP or ZLIB through zlib's deflate and
// inflate streams). Errors name the file and the offset of the record, as TensorFlow's do.
#include "io/record_file.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <tapeflow/core/error.hpp>

#include "io/crc32c.hpp"
#include "io/file_util.hpp"

namespace tapeflow::io {
namespace {

constexpr std::size_t kHeaderSize = 12;
constexpr std::size_t kFooterSize = 4;
constexpr std::size_t kChunk = 1 << 16;

void put_u32(char* p, uint32_t v) {
    for (int i = 0; i < 4; ++i)
        p[i] = static_cast<char>((v >> (8 * i)) & 0xFF);
}
void put_u64(char* p, uint64_t v) {
    for (int i = 0; i < 8; ++i)
        p[i] = static_cast<char>((v >> (8 * i)) & 0xFF);
}
uint32_t get_u32(const unsigned char* p) {
    return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}
uint64_t get_u64(const unsigned char* p) {
    return uint64_t(get_u32(p)) | uint64_t(get_u32(p + 4)) << 32;
}

// zlib window bits: 15 = zlib (RFC 1950) wrapper, 15 + 16 = gzip wrapper.
int window_bits(Compression c) {
    return c == Compression::gzip ? 15 + 16 : 15;
}

[[noreturn]] void io_error(const std::string& what, const std::string& path) {
    throw_io_error(what, path, errno);
}

}  // namespace

Compression parse_compression(std::string_view name) {
    if (name.empty() || name == "NONE") return Compression::none;
    if (name == "GZIP") return Compression::gzip;
    if (name == "ZLIB") return Compression::zlib;
    throw errors::InvalidArgumentError(
        fmt::format("unknown compression type '{}' (expected \"\", \"GZIP\" or \"ZLIB\")", name));
}

void append_framed_record(std::string& out, std::string_view data) {
    char header[kHeaderSize];
    put_u64(header, data.size());
    put_u32(header + 8, mask_crc(crc32c_extend(0, header, 8)));
    char footer[kFooterSize];
    put_u32(footer, masked_crc32c(data));
    out.append(header, kHeaderSize).append(data).append(footer, kFooterSize);
}

// ---- writer ----

struct RecordFileWriter::Zip {
    z_stream stream{};
};

RecordFileWriter::RecordFileWriter(std::string path, Compression compression, bool exclusive)
    : path_(std::move(path)), compression_(compression) {
    const int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (exclusive ? O_EXCL : O_TRUNC);
    const int fd = ::open(path_.c_str(), flags, 0644);
    if (fd < 0) io_error("cannot create", path_);
    file_ = ::fdopen(fd, "wb");
    if (file_ == nullptr) {
        ::close(fd);
        io_error("cannot open", path_);
    }
    if (compression_ != Compression::none) {
        zip_ = std::make_unique<Zip>();
        if (deflateInit2(&zip_->stream,
                         Z_DEFAULT_COMPRESSION,
                         Z_DEFLATED,
                         window_bits(compression_),
                         8,
                         Z_DEFAULT_STRATEGY) != Z_OK) {
            std::fclose(file_);
            file_ = nullptr;
            throw errors::InternalError("zlib deflateInit2 failed for " + path_);
        }
    }
}

RecordFileWriter::~RecordFileWriter() {
    try {
        close();
    } catch (...) {  // a destructor must not throw; close() explicitly to see errors
    }
}

void RecordFileWriter::write_raw(const void* data, std::size_t n) {
    if (n > 0 && std::fwrite(data, 1, n, file_) != n) io_error("cannot write", path_);
}

void RecordFileWriter::deflate_some(const void* data, std::size_t n, int mode) {
    z_stream& z = zip_->stream;
    z.next_in = static_cast<Bytef*>(const_cast<void*>(data));
    z.avail_in = static_cast<uInt>(n);
    unsigned char out[kChunk];
    do {
        z.next_out = out;
        z.avail_out = sizeof out;
        const int rc = deflate(&z, mode);
        if (rc == Z_STREAM_ERROR) throw errors::InternalError("zlib deflate failed for " + path_);
        write_raw(out, sizeof out - z.avail_out);
    } while (z.avail_out == 0 || z.avail_in > 0);
}

void RecordFileWriter::append_framed(std::string_view framed) {
    if (file_ == nullptr) {
        throw errors::FailedPreconditionError("record file " + path_ + " is already closed");
    }
    if (zip_) {
        deflate_some(framed.data(), framed.size(), Z_NO_FLUSH);
    } else {
        write_raw(framed.data(), framed.size());
    }
}

void RecordFileWriter::append(std::string_view record) {
    scratch_.clear();
    append_framed_record(scratch_, record);
    append_framed(scratch_);
}

void RecordFileWriter::flush(bool sync) {
    if (file_ == nullptr) return;
    if (zip_) deflate_some(nullptr, 0, Z_SYNC_FLUSH);
    if (std::fflush(file_) != 0) io_error("cannot flush", path_);
    if (sync && ::fdatasync(::fileno(file_)) != 0 && errno != EINVAL)
        io_error("cannot sync", path_);
}

void RecordFileWriter::close() {
    if (file_ == nullptr) return;
    std::FILE* f = file_;
    try {
        if (zip_) {
            deflate_some(nullptr, 0, Z_FINISH);
            deflateEnd(&zip_->stream);
            zip_.reset();
        }
        flush(true);
    } catch (...) {
        std::fclose(f);
        file_ = nullptr;
        throw;
    }
    file_ = nullptr;
    if (std::fclose(f) != 0) io_error("cannot close", path_);
}

// ---- reader ----

struct RecordFileReader::Unzip {
    z_stream stream{};
    unsigned char in[kChunk];
    bool done = false;
};

RecordFileReader::RecordFileReader(std::string path, Compression compression)
    : path_(std::move(path)), compression_(compression) {
    file_ = std::fopen(path_.c_str(), "rb");
    if (file_ == nullptr) io_error("cannot open", path_);
    struct stat info {};
    if (::fstat(::fileno(file_), &info) == 0 && S_ISDIR(info.st_mode)) {  // fopen succeeds on one
        std::fclose(file_);
        file_ = nullptr;
        throw errors::InvalidArgumentError(fmt::format(
            "cannot read records from {}: it is a directory, not a record file", path_));
    }
    if (std::fseek(file_, 0, SEEK_END) == 0) {
        const long size = std::ftell(file_);
        file_size_ = size > 0 ? static_cast<uint64_t>(size) : 0;
        std::fseek(file_, 0, SEEK_SET);
    }
    if (compression_ != Compression::none) {
        unzip_ = std::make_unique<Unzip>();
        if (inflateInit2(&unzip_->stream, window_bits(compression_)) != Z_OK) {
            std::fclose(file_);
            throw errors::InternalError("zlib inflateInit2 failed for " + path_);
        }
    }
}

RecordFileReader::~RecordFileReader() {
    if (unzip_) inflateEnd(&unzip_->stream);
    if (file_ != nullptr) std::fclose(file_);
}

void RecordFileReader::fail(const std::string& what) const {
    throw errors::DataLossError(
        fmt::format("corrupted record at offset {} in {}: {}", record_offset_, path_, what));
}

void RecordFileReader::fail_torn(const std::string& what) {
    torn_tail_ = true;
    fail(what);
}

// Reads up to n bytes of the (uncompressed) stream; fewer only at its end.
std::size_t RecordFileReader::read(void* out, std::size_t n) {
    if (!unzip_) {
        const std::size_t got = std::fread(out, 1, n, file_);
        offset_ += got;
        return got;
    }
    z_stream& z = unzip_->stream;
    z.next_out = static_cast<Bytef*>(out);
    z.avail_out = static_cast<uInt>(n);
    while (z.avail_out > 0 && !unzip_->done) {
        if (z.avail_in == 0) {
            z.avail_in = static_cast<uInt>(std::fread(unzip_->in, 1, sizeof unzip_->in, file_));
            z.next_in = unzip_->in;
            if (z.avail_in == 0) break;  // compressed stream ends early: caller sees a short read
        }
        const int rc = inflate(&z, Z_NO_FLUSH);
        if (rc == Z_STREAM_END) {
            // More bytes after the end: the next member of concatenated streams (as gzip tools
            // read them), or garbage, which inflate then rejects. Never silently ignored.
            if (z.avail_in == 0) {
                z.avail_in = static_cast<uInt>(std::fread(unzip_->in, 1, sizeof unzip_->in, file_));
                z.next_in = unzip_->in;
            }
            if (z.avail_in == 0) {
                unzip_->done = true;
            } else {
                inflateReset(&z);
            }
        } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
            fail(fmt::format("corrupt {} stream ({})",
                             compression_ == Compression::gzip ? "GZIP" : "ZLIB",
                             z.msg != nullptr ? z.msg : "inflate failed"));
        }
    }
    const std::size_t got = n - z.avail_out;
    offset_ += got;
    return got;
}

std::optional<std::string> RecordFileReader::next() {
    record_offset_ = offset_;
    unsigned char header[kHeaderSize];
    const std::size_t got = read(header, kHeaderSize);
    if (got == 0) {
        // A compressed stream must end with its trailer (checksum and size), or data was lost.
        if (unzip_ && !unzip_->done) fail("truncated compressed stream (no end marker)");
        return std::nullopt;
    }
    if (got < kHeaderSize) fail_torn(fmt::format("truncated record header ({} of 12 bytes)", got));
    if (mask_crc(crc32c_extend(0, header, 8)) != get_u32(header + 8)) fail("length CRC mismatch");
    const uint64_t length = get_u64(header);
    if (!unzip_ && length > file_size_ - std::min(file_size_, offset_)) {
        fail_torn(fmt::format("truncated record: length {} runs past the end of the file", length));
    }
    std::string data;
    // Grow chunk by chunk: a compressed stream's length cannot be checked up front, and a length
    // that passed its CRC by chance must not allocate gigabytes before the short read shows.
    while (data.size() < length) {
        const std::size_t want =
            static_cast<std::size_t>(std::min<uint64_t>(length - data.size(), 1 << 20));
        const std::size_t old = data.size();
        data.resize(old + want);
        const std::size_t n = read(data.data() + old, want);
        if (n < want) {
            fail_torn(fmt::format("truncated record: {} of {} data bytes", old + n, length));
        }
    }
    unsigned char footer[kFooterSize];
    if (read(footer, kFooterSize) < kFooterSize) fail_torn("truncated record: missing data CRC");
    if (masked_crc32c(data) != get_u32(footer)) fail("data CRC mismatch");
    return data;
}

}  // namespace tapeflow::io
