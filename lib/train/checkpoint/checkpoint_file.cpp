// One checkpoint file: open + validate, read tensors with CRC checks, atomic streamed writes.
#include "train/checkpoint/checkpoint_file.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <tapeflow/core/error.hpp>

#include "io/crc32c.hpp"
#include "io/file_util.hpp"
#include "train/checkpoint/tensor_bundle.hpp"

namespace tapeflow::train::ckpt {
namespace {

constexpr std::string_view kSuffix = ".safetensors";

class FileSource : public ByteSource {
public:
    explicit FileSource(const std::string& file) : file_(file) {
        fd_ = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd_ < 0) {
            const int err = errno;
            if (err == ENOENT)
                throw errors::NotFoundError(fmt::format("Failed to find checkpoint file {}", file));
            throw errors::UnavailableError(
                fmt::format("cannot open checkpoint {}: {}", file, std::strerror(err)));
        }
        struct stat st {};
        if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
            ::close(fd_);
            throw errors::InvalidArgumentError(
                fmt::format("checkpoint {} is not a regular file", file));
        }
        size_ = static_cast<uint64_t>(st.st_size);
    }
    ~FileSource() override { ::close(fd_); }
    FileSource(const FileSource&) = delete;
    FileSource& operator=(const FileSource&) = delete;

    uint64_t size() const override { return size_; }
    void read(uint64_t offset, void* dst, std::size_t n) const override {
        auto* out = static_cast<char*>(dst);
        std::size_t done = 0;
        while (done < n) {
            const ssize_t got =
                ::pread(fd_, out + done, n - done, static_cast<off_t>(offset + done));
            if (got < 0 && errno == EINTR) continue;
            if (got < 0) {
                throw errors::UnavailableError(
                    fmt::format("cannot read checkpoint {}: {}", file_, std::strerror(errno)));
            }
            if (got == 0) {
                throw errors::DataLossError(
                    fmt::format("Corrupt checkpoint {}: the file ended at byte {} (truncated "
                                "while being read?)",
                                file_,
                                offset + done));
            }
            done += static_cast<std::size_t>(got);
        }
    }

private:
    std::string file_;
    int fd_ = -1;
    uint64_t size_ = 0;
};

class MemorySource : public ByteSource {
public:
    explicit MemorySource(std::string bytes) : bytes_(std::move(bytes)) {}
    uint64_t size() const override { return bytes_.size(); }
    void read(uint64_t offset, void* dst, std::size_t n) const override {
        if (offset > bytes_.size() || n > bytes_.size() - offset) {
            throw errors::DataLossError(fmt::format(
                "read of {} bytes at {} past the end of {} bytes", n, offset, bytes_.size()));
        }
        std::memcpy(dst, bytes_.data() + offset, n);
    }

private:
    std::string bytes_;
};

}  // namespace

std::unique_ptr<ByteSource> open_file_source(const std::string& file) {
    return std::make_unique<FileSource>(file);
}

CheckpointReader::CheckpointReader(std::unique_ptr<ByteSource> source, std::string file)
    : source_(std::move(source)), file_(std::move(file)) {
    const uint64_t size = source_->size();
    if (size < 8) {
        throw errors::DataLossError(
            fmt::format("Corrupt checkpoint {}: {} bytes is too short for a safetensors file "
                        "(8-byte header length)",
                        file_,
                        size));
    }
    unsigned char len_bytes[8];
    source_->read(0, len_bytes, 8);
    uint64_t n = 0;
    for (int i = 7; i >= 0; --i)
        n = (n << 8) | len_bytes[i];
    if (n > kMaxHeaderBytes) {
        throw errors::DataLossError(
            fmt::format("Corrupt checkpoint {}: header length {} exceeds the {}-byte limit",
                        file_,
                        n,
                        kMaxHeaderBytes));
    }
    if (n > size - 8) {
        throw errors::DataLossError(fmt::format(
            "Corrupt checkpoint {}: header length {} points past the end of the {}-byte file",
            file_,
            n,
            size));
    }
    std::string json(static_cast<std::size_t>(n), '\0');
    source_->read(8, json.data(), json.size());
    data_start_ = 8 + n;
    header_ = decode_header(json, size - data_start_, file_);
}

std::shared_ptr<CheckpointReader> CheckpointReader::open(const std::string& file) {
    return std::shared_ptr<CheckpointReader>(
        new CheckpointReader(std::make_unique<FileSource>(file), file));
}

std::shared_ptr<CheckpointReader> CheckpointReader::from_bytes(std::string bytes,
                                                               const std::string& label) {
    return std::shared_ptr<CheckpointReader>(
        new CheckpointReader(std::make_unique<MemorySource>(std::move(bytes)), label));
}

std::shared_ptr<CheckpointReader> CheckpointReader::open_any(const std::string& path) {
    const std::string prefix = checkpoint_prefix(path);
    std::error_code ec;
    if (path.ends_with(kSuffix) || !std::filesystem::exists(bundle::index_file_name(prefix), ec)) {
        const std::string file = checkpoint_file_name(prefix);
        if (!std::filesystem::exists(file, ec)) {
            throw errors::NotFoundError(
                fmt::format("Failed to find any matching files for {} (neither {} nor {})",
                            path,
                            bundle::index_file_name(prefix),
                            file));
        }
        return open(file);
    }
    std::shared_ptr<CheckpointReader> r(new CheckpointReader());
    r->bundle_ = std::make_shared<const train::CheckpointReader>(prefix);
    r->file_ = bundle::index_file_name(prefix);
    const auto dtypes = r->bundle_->get_variable_to_dtype_map();
    for (const auto& [key, shape] : r->bundle_->get_variable_to_shape_map()) {
        TensorEntry e;
        e.name = key;
        e.file_dtype = r->bundle_->dtype_name(key);
        if (const auto it = dtypes.find(key); it != dtypes.end()) e.dtype = it->second;
        e.shape = shape;
        r->header_.tensors.push_back(std::move(e));  // the map's order: sorted by key
    }
    // TF1's Saver keeps the step in the global_step variable, not in metadata.
    if (const auto it = dtypes.find("global_step");
        it != dtypes.end() && (it->second == DType::int64 || it->second == DType::int32)) {
        const Tensor step = r->bundle_->get_tensor("global_step");
        if (step.num_elements() == 1)
            r->header_.global_step = step.cast(DType::int64).item<int64_t>();
    }
    return r;
}

const TensorEntry* CheckpointReader::find(std::string_view name) const {
    auto it = std::lower_bound(header_.tensors.begin(),
                               header_.tensors.end(),
                               name,
                               [](const TensorEntry& e, std::string_view n) { return e.name < n; });
    return it != header_.tensors.end() && it->name == name ? &*it : nullptr;
}

Tensor CheckpointReader::read(const TensorEntry& entry) const {
    if (bundle_) return bundle_->get_tensor(entry.name);
    if (!entry.dtype) {
        throw errors::UnimplementedError(fmt::format(
            "checkpoint {}: tensor '{}' has safetensors dtype {}, which tapeflow has no dtype for",
            file_,
            entry.name,
            entry.file_dtype));
    }
    Tensor t = Tensor::empty(entry.shape, *entry.dtype);
    const std::size_t n = static_cast<std::size_t>(entry.end - entry.begin);
    if (n == 0) return t;
    // Chunks: each one's CRC is computed while it is still in cache.
    constexpr std::size_t kChunk = std::size_t{1} << 20;
    auto* dst = static_cast<char*>(t.mutable_raw_data());
    uint32_t crc = 0;
    for (std::size_t done = 0; done < n; done += kChunk) {
        const std::size_t len = std::min(kChunk, n - done);
        source_->read(data_start_ + entry.begin + done, dst + done, len);
        if (entry.crc) crc = io::crc32c_extend(crc, dst + done, len);
    }
    if (entry.crc) {
        if (crc != *entry.crc) {
            throw errors::DataLossError(
                fmt::format("Corrupt checkpoint {}: tensor '{}' fails its CRC check (stored "
                            "{:08x}, computed {:08x})",
                            file_,
                            entry.name,
                            *entry.crc,
                            crc));
        }
    }
    if (*entry.dtype == DType::bool_) {
        // Only 0 and 1 are bools (safetensors' BOOL is one byte each); anything else is corruption.
        const auto* bytes = static_cast<const unsigned char*>(t.raw_data());
        for (std::size_t i = 0; i < n; ++i) {
            if (bytes[i] > 1) {
                throw errors::DataLossError(
                    fmt::format("Corrupt checkpoint {}: bool tensor '{}' holds byte {} at "
                                "element {}",
                                file_,
                                entry.name,
                                bytes[i],
                                i));
            }
        }
    }
    return t;
}

std::string checkpoint_file_name(const std::string& path) {
    return path.ends_with(kSuffix) ? path : path + std::string(kSuffix);
}

std::string checkpoint_prefix(const std::string& path) {
    constexpr std::string_view kIndex = ".index";
    if (path.ends_with(kSuffix)) return path.substr(0, path.size() - kSuffix.size());
    if (path.ends_with(kIndex)) return path.substr(0, path.size() - kIndex.size());
    return path;
}

bool checkpoint_exists(const std::string& prefix) {
    std::error_code ec;
    return std::filesystem::exists(bundle::index_file_name(prefix), ec) ||
           std::filesystem::exists(checkpoint_file_name(prefix), ec);
}

void remove_checkpoint(const std::string& prefix) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::remove(checkpoint_file_name(prefix), ec);
    fs::remove(bundle::index_file_name(prefix), ec);  // first: the rest is then no checkpoint
    const fs::path p(prefix);
    const std::string data = p.filename().string() + ".data-";
    for (const auto& entry :
         fs::directory_iterator(p.has_parent_path() ? p.parent_path() : ".", ec)) {
        const std::string name = entry.path().filename().string();
        if (name.starts_with(data) && name.find("-of-") != std::string::npos)
            fs::remove(entry.path(), ec);
    }
}

namespace {

void write_bundle(const std::string& prefix,
                  const std::vector<std::pair<std::string, Tensor>>& tensors) {
    bundle::BundleWriter writer(prefix);
    for (const auto& [key, t] : tensors)
        writer.add(key, t);
    writer.finish();
}

}  // namespace

void write_checkpoint(const std::string& prefix,
                      const std::vector<std::pair<std::string, Tensor>>& tensors,
                      std::optional<int64_t> global_step,
                      CheckpointFormat format) {
    if (format == CheckpointFormat::tensorflow) {
        write_bundle(prefix, tensors);
        return;
    }
    const std::string file = checkpoint_file_name(prefix);
    std::vector<Tensor> host;
    host.reserve(tensors.size());
    std::vector<TensorInfo> infos;
    infos.reserve(tensors.size());
    for (const auto& [name, t] : tensors) {
        host.push_back(t.device().is_cpu() ? t : t.cpu());
        const Tensor& h = host.back();
        infos.push_back({name,
                         h.dtype(),
                         &h.shape(),
                         h.nbytes(),
                         io::crc32c_extend(0, h.raw_data(), h.nbytes())});
    }
    const std::string header = encode_header(infos, global_step);
    std::vector<std::string_view> pieces;
    pieces.reserve(host.size() + 1);
    pieces.emplace_back(header);
    for (const Tensor& h : host)
        pieces.emplace_back(static_cast<const char*>(h.raw_data()), h.nbytes());
    io::write_file_atomically(file, pieces);
}

}  // namespace tapeflow::train::ckpt
