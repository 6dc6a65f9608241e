// Reading and writing one checkpoint file. The reader validates the whole header on open (bounded
// header length, offsets inside the file) and reads each tensor straight into a new tensor's
// buffer, checking its CRC; the writer streams the tensors' own bytes (no per-element work).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <tapeflow/core/tensor.hpp>

#include "train/checkpoint/safetensors.hpp"

namespace tapeflow::train::ckpt {

/// Where a reader gets bytes: a file (pread) or memory (the fuzzer).
class ByteSource {
public:
    virtual ~ByteSource() = default;
    virtual uint64_t size() const = 0;
    /// Reads exactly n bytes at `offset` (DataLossError when the source is shorter).
    virtual void read(uint64_t offset, void* dst, std::size_t n) const = 0;
};

/// A regular file read with pread: NotFoundError when it is missing, InvalidArgumentError when
/// it is not a regular file; reads past its end are DataLossErrors naming it.
std::unique_ptr<ByteSource> open_file_source(const std::string& file);

class CheckpointReader {
public:
    /// Opens and validates `file`: NotFoundError when missing, DataLossError when malformed.
    static std::shared_ptr<CheckpointReader> open(const std::string& file);
    /// The same over bytes in memory; `label` names them in errors.
    static std::shared_ptr<CheckpointReader> from_bytes(std::string bytes,
                                                        const std::string& label);

    const std::string& file() const { return file_; }
    const Header& header() const { return header_; }
    /// The entry named `name`, or nullptr.
    const TensorEntry* find(std::string_view name) const;
    /// The tensor of an entry (CPU), CRC-checked: DataLossError on a mismatch, UnimplementedError
    /// for a dtype tapeflow lacks.
    Tensor read(const TensorEntry& entry) const;

private:
    CheckpointReader(std::unique_ptr<ByteSource> source, std::string file);
    std::unique_ptr<ByteSource> source_;
    std::string file_;
    uint64_t data_start_ = 0;
    Header header_;
};

/// "<prefix>.safetensors" unless `path` already ends with ".safetensors".
std::string checkpoint_file_name(const std::string& path);
/// `path` without a ".safetensors" ending.
std::string checkpoint_prefix(const std::string& path);

/// Writes `tensors` (CPU or device; in this order) atomically to `file`.
void write_checkpoint(const std::string& file,
                      const std::vector<std::pair<std::string, Tensor>>& tensors,
                      std::optional<int64_t> global_step);

}  // namespace tapeflow::train::ckpt
