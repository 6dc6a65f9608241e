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
#include <tapeflow/train/checkpoint_reader.hpp>

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

/// One checkpoint in either format: a safetensors file, or a TensorFlow bundle (read through
/// tf::train::CheckpointReader; its entries listed here with TF's dtype names as file_dtype).
class CheckpointReader {
public:
    /// Opens and validates the safetensors `file`: NotFoundError when missing, DataLossError when
    /// malformed.
    static std::shared_ptr<CheckpointReader> open(const std::string& file);
    /// The checkpoint `path` names, in the format its files say: "<path>.index" (TensorFlow's),
    /// else "<path>.safetensors" (or `path` itself when it ends so). NotFoundError naming the path
    /// when neither exists.
    static std::shared_ptr<CheckpointReader> open_any(const std::string& path);
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
    /// A TensorFlow bundle: variables are saved there under their TF1 keys (checkpoint_key).
    bool is_bundle() const { return bundle_ != nullptr; }

private:
    CheckpointReader(std::unique_ptr<ByteSource> source, std::string file);
    CheckpointReader() = default;
    std::shared_ptr<const train::CheckpointReader> bundle_;
    std::unique_ptr<ByteSource> source_;
    std::string file_;
    uint64_t data_start_ = 0;
    Header header_;
};

/// "<prefix>.safetensors" unless `path` already ends with ".safetensors".
std::string checkpoint_file_name(const std::string& path);
/// `path` without a ".safetensors" or ".index" ending.
std::string checkpoint_prefix(const std::string& path);
/// Whether the checkpoint `prefix` exists in either format (its ".index" or ".safetensors").
bool checkpoint_exists(const std::string& prefix);
/// Deletes the checkpoint `prefix`'s files in both formats (index, data shards, safetensors).
void remove_checkpoint(const std::string& prefix);

/// Writes `tensors` (CPU or device; in this order) atomically as the checkpoint `prefix`: a
/// safetensors file "<prefix>.safetensors" (with the global step in its metadata), or TensorFlow's
/// "<prefix>.index" + "<prefix>.data-00000-of-00001" (data first, index last).
void write_checkpoint(const std::string& prefix,
                      const std::vector<std::pair<std::string, Tensor>>& tensors,
                      std::optional<int64_t> global_step,
                      CheckpointFormat format);

}  // namespace tapeflow::train::ckpt
