// TensorFlow's checkpoint format, tensor_bundle V2: "<prefix>.index" is a table (io/table.hpp)
// mapping "" to a BundleHeaderProto and each tensor's key to a BundleEntryProto (dtype, shape,
// shard, offset, size, masked CRC-32C), and "<prefix>.data-NNNNN-of-MMMMM" holds the tensors'
// bytes. The protos are encoded by hand here (field numbers from tensor_bundle.proto,
// tensor_shape.proto, versions.proto); nothing else in tapeflow sees them.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <tapeflow/core/dtype.hpp>
#include <tapeflow/core/shape.hpp>
#include <tapeflow/core/tensor.hpp>

#include "io/table.hpp"

namespace tapeflow::io {
class AtomicFileWriter;
}

namespace tapeflow::train::ckpt::bundle {

/// TensorFlow's DataType enum (types.proto), the values the bundle stores.
enum TfDType : int {
    DT_INVALID = 0,
    DT_FLOAT = 1,
    DT_DOUBLE = 2,
    DT_INT32 = 3,
    DT_UINT8 = 4,
    DT_INT16 = 5,
    DT_INT8 = 6,
    DT_STRING = 7,
    DT_INT64 = 9,
    DT_BOOL = 10,
    DT_BFLOAT16 = 14,
    DT_UINT16 = 17,
    DT_HALF = 19,
    DT_UINT32 = 22,
    DT_UINT64 = 23,
};

/// "float32", "int8", "string", ... (TensorFlow's names); "DataType(<n>)" for others.
std::string tf_dtype_name(int dtype);
/// The TF dtype of a tapeflow dtype.
int tf_dtype_of(DType dtype);
/// The tapeflow dtype a tensor of TF dtype `dtype` is read as: the same type, or int32 for int8
/// and int16 (widened exactly); nullopt for strings and types tapeflow lacks.
std::optional<DType> tapeflow_dtype_of(int dtype);
/// Bytes per element of a fixed-size TF dtype; 0 for strings and unknown types.
std::size_t tf_dtype_size(int dtype);

struct BundleEntry {
    int dtype = DT_INVALID;
    Shape shape;
    int32_t shard_id = 0;
    uint64_t offset = 0;
    uint64_t size = 0;
    uint32_t crc32c = 0;  // masked, as stored
    bool sliced = false;  // a partitioned variable's full-tensor entry (its slices are elsewhere)
};

struct BundleIndex {
    int32_t num_shards = 1;
    std::map<std::string, BundleEntry> entries;  // without the header entry ""
};

/// Parses an index file's bytes: DataLossError naming `file` for a malformed table or proto,
/// a missing header entry, a shard id out of range; UnimplementedError for a big-endian bundle or
/// one whose version this reader does not support.
BundleIndex parse_index(std::string_view bytes, const std::string& file);

/// "<prefix>.index" and "<prefix>.data-00000-of-00001".
std::string index_file_name(const std::string& prefix);
std::string data_file_name(const std::string& prefix, int shard, int num_shards);

/// The tensor of a fixed-size entry from its `bytes` (the entry's `size` bytes of its data file),
/// after checking the CRC and size: DataLossError naming `key` and `file`, UnimplementedError for
/// strings, slices and types tapeflow lacks.
Tensor decode_tensor(const std::string& key,
                     const BundleEntry& entry,
                     std::string_view bytes,
                     const std::string& file);
/// The elements of a string entry (varint64 lengths, masked CRC of the lengths, the bytes), each
/// checksum verified: DataLossError naming `key` and `file`.
std::vector<std::string> decode_strings(const std::string& key,
                                        const BundleEntry& entry,
                                        std::string_view bytes,
                                        const std::string& file);

struct BundleWriterOptions {
    /// Pads each tensor's start to a multiple of this (TF's BundleWriter::Options::data_alignment).
    int data_alignment = 1;
    /// TF 2.x writes the index uncompressed; Snappy (what TF 1.0 and 1.1 wrote) for tests.
    io::table::Compression index_compression = io::table::Compression::none;
    /// Table block parameters (TF's defaults); tests make them small to get many blocks.
    std::size_t block_size = 262144;
    int block_restart_interval = 16;
    /// Number of data files; TF's own writer makes 1 (more come from MergeBundles).
    int num_shards = 1;
};

/// Writes a bundle as TF 2.x's BundleWriter does: data in the order added, the index sorted by key
/// after the header entry. Each tensor's bytes are written to the data file's temporary file as it
/// is added (its CRC computed on the way; no copy is kept), so the writer holds only the index.
/// finish() fsyncs every file, then renames the data files and last the index over their names:
/// a crash leaves either no new index or a complete checkpoint. Tensors may live on any device
/// (copied to the host when added). A writer destroyed before finish() removes its temporaries.
///
///     BundleWriter writer("ckpt/model-100");
///     writer.add("dense/kernel/.ATTRIBUTES/VARIABLE_VALUE", kernel);
///     writer.finish();
class BundleWriter {
public:
    explicit BundleWriter(std::string prefix, BundleWriterOptions options = {});
    ~BundleWriter();
    BundleWriter(const BundleWriter&) = delete;
    BundleWriter& operator=(const BundleWriter&) = delete;
    /// InvalidArgumentError for "" or a key added before, or a shard out of range.
    void add(const std::string& key, const Tensor& value, int shard = 0);
    /// A string tensor (DT_STRING) of `shape`, elements row-major.
    void add_strings(const std::string& key,
                     const Shape& shape,
                     const std::vector<std::string>& values,
                     int shard = 0);
    /// A fixed-size tensor of any TF dtype (int8, uint16, ... that tapeflow lacks) from its
    /// little-endian bytes; InvalidArgumentError when their size disagrees with the shape.
    void add_bytes(const std::string& key,
                   int tf_dtype,
                   const Shape& shape,
                   std::string_view bytes,
                   int shard = 0);
    /// Writes the files; the writer is spent afterwards.
    void finish();

private:
    BundleEntry& new_entry(const std::string& key, int dtype, const Shape& shape, int shard);
    // Writes `bytes` at the end of the entry's shard, then the padding; the entry's CRC is `crc`
    // (unmasked) or, without one, computed chunk by chunk as the bytes are written.
    void append(BundleEntry& entry, std::string_view bytes, std::optional<uint32_t> crc);

    std::string prefix_;
    BundleWriterOptions options_;
    std::vector<std::unique_ptr<io::AtomicFileWriter>> shards_;
    std::map<std::string, BundleEntry> entries_;
    bool finished_ = false;
};

}  // namespace tapeflow::train::ckpt::bundle
