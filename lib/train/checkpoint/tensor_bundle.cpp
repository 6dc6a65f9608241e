// TensorFlow's tensor_bundle checkpoint format (see tensor_bundle.hpp), written from the format's
// description: the protos are hand-encoded with the field numbers of tensor_bundle.proto.
#include "train/checkpoint/tensor_bundle.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <tapeflow/core/error.hpp>

#include "io/crc32c.hpp"
#include "io/file_util.hpp"

namespace tapeflow::train::ckpt::bundle {
namespace {

using io::table::get_varint64;
using io::table::put_varint64;

constexpr int kVersion = 1;  // TF's kTensorBundleVersion: the producer we write and the consumer
                             // we are
constexpr uint64_t kMaxElements = uint64_t{1} << 48;

// Protobuf wire types.
constexpr int kVarint = 0;
constexpr int kFixed64 = 1;
constexpr int kBytes = 2;
constexpr int kFixed32 = 5;

// One field of a serialized message.
struct Field {
    int number = 0;
    int wire = 0;
    uint64_t value = 0;      // varint and fixed values
    std::string_view bytes;  // length-delimited values
};

// Calls fn(field) for each field of `msg`; false when it is malformed.
template <class Fn>
bool for_each_field(std::string_view msg, Fn&& fn) {
    std::size_t pos = 0;
    while (pos < msg.size()) {
        uint64_t tag = 0;
        if (!get_varint64(msg, pos, tag) || (tag >> 3) == 0 || (tag >> 3) > (1u << 29))
            return false;
        Field f;
        f.number = static_cast<int>(tag >> 3);
        f.wire = static_cast<int>(tag & 7);
        if (f.wire == kVarint) {
            if (!get_varint64(msg, pos, f.value)) return false;
        } else if (f.wire == kFixed64 || f.wire == kFixed32) {
            const std::size_t n = f.wire == kFixed64 ? 8 : 4;
            if (msg.size() - pos < n) return false;
            for (std::size_t i = n; i-- > 0;)
                f.value = (f.value << 8) | static_cast<uint8_t>(msg[pos + i]);
            pos += n;
        } else if (f.wire == kBytes) {
            uint64_t n = 0;
            if (!get_varint64(msg, pos, n) || n > msg.size() - pos) return false;
            f.bytes = msg.substr(pos, n);
            pos += n;
        } else {
            return false;  // groups are not used by these protos
        }
        if (!fn(f)) return false;
    }
    return true;
}

void put_tag(std::string& out, int number, int wire) {
    put_varint64(out, (static_cast<uint64_t>(number) << 3) | static_cast<uint64_t>(wire));
}
void put_varint_field(std::string& out, int number, uint64_t v) {
    if (v == 0) return;  // proto3: defaults are not serialized
    put_tag(out, number, kVarint);
    put_varint64(out, v);
}
void put_bytes_field(std::string& out, int number, std::string_view bytes) {
    put_tag(out, number, kBytes);
    put_varint64(out, bytes.size());
    out.append(bytes);
}

// TensorShapeProto { repeated Dim dim = 2 { int64 size = 1; string name = 2; }; bool
// unknown_rank = 3; }
std::string encode_shape(const Shape& shape) {
    std::string out;
    for (const int64_t d : shape.dims()) {
        std::string dim;
        put_varint_field(dim, 1, static_cast<uint64_t>(d));
        put_bytes_field(out, 2, dim);
    }
    return out;
}

bool decode_shape(std::string_view msg, Shape& shape) {
    std::vector<int64_t> dims;
    bool unknown_rank = false;
    uint64_t elements = 1;
    const bool ok = for_each_field(msg, [&](const Field& f) {
        if (f.number == 3 && f.wire == kVarint) unknown_rank = f.value != 0;
        if (f.number != 2) return true;
        if (f.wire != kBytes) return false;
        uint64_t size = 0;
        const bool dim_ok = for_each_field(f.bytes, [&](const Field& d) {
            if (d.number == 1) {
                if (d.wire != kVarint) return false;
                size = d.value;
            }
            return true;
        });
        // Negative (unknown) sizes and absurd element counts are not a stored tensor's.
        if (!dim_ok || size > kMaxElements || dims.size() >= 64) return false;
        elements =
            size == 0 ? 0 : (elements > kMaxElements / size ? kMaxElements + 1 : elements * size);
        dims.push_back(static_cast<int64_t>(size));
        return true;
    });
    if (!ok || unknown_rank || elements > kMaxElements) return false;
    shape = Shape(std::move(dims));
    return true;
}

std::string encode_entry(const BundleEntry& e) {
    std::string out;
    put_varint_field(out, 1, static_cast<uint64_t>(e.dtype));
    put_bytes_field(out, 2, encode_shape(e.shape));
    put_varint_field(out, 3, static_cast<uint64_t>(e.shard_id));
    put_varint_field(out, 4, e.offset);
    put_varint_field(out, 5, e.size);
    put_tag(out, 6, kFixed32);
    io::table::put_fixed32(out, e.crc32c);
    return out;
}

[[noreturn]] void entry_error(const std::string& key, const std::string& file, const char* what) {
    throw errors::DataLossError(
        fmt::format("Corrupt checkpoint index {}: {} in the entry for key '{}'", file, what, key));
}

BundleEntry decode_entry(const std::string& key, std::string_view msg, const std::string& file) {
    BundleEntry e;
    const bool ok = for_each_field(msg, [&](const Field& f) {
        switch (f.number) {
            case 1:
                if (f.wire != kVarint || f.value > 1000) return false;
                e.dtype = static_cast<int>(f.value);
                return true;
            case 2:
                return f.wire == kBytes && decode_shape(f.bytes, e.shape);
            case 3:
                if (f.wire != kVarint || f.value > 0x7fffffff) return false;
                e.shard_id = static_cast<int32_t>(f.value);
                return true;
            case 4:
            case 5:
                if (f.wire != kVarint || f.value > (uint64_t{1} << 62)) return false;
                (f.number == 4 ? e.offset : e.size) = f.value;
                return true;
            case 6:
                if (f.wire != kFixed32) return false;
                e.crc32c = static_cast<uint32_t>(f.value);
                return true;
            case 7:
                e.sliced = true;
                return f.wire == kBytes;
            default:
                return true;  // unknown fields are skipped, as protobuf does
        }
    });
    if (!ok) entry_error(key, file, "an unparseable BundleEntryProto");
    return e;
}

// BundleHeaderProto { int32 num_shards = 1; Endianness endianness = 2; VersionDef version = 3; }
// VersionDef { int32 producer = 1; int32 min_consumer = 2; repeated int32 bad_consumers = 3; }
int32_t decode_header(std::string_view msg, const std::string& file) {
    int64_t num_shards = 0;
    uint64_t endianness = 0;
    uint64_t min_consumer = 0;
    bool bad_consumer = false;
    const bool ok = for_each_field(msg, [&](const Field& f) {
        if (f.number == 1 && f.wire == kVarint) num_shards = static_cast<int64_t>(f.value);
        if (f.number == 2 && f.wire == kVarint) endianness = f.value;
        if (f.number != 3) return true;
        if (f.wire != kBytes) return false;
        return for_each_field(f.bytes, [&](const Field& v) {
            if (v.number == 2 && v.wire == kVarint) min_consumer = v.value;
            if (v.number == 3 && v.wire == kVarint && v.value == kVersion) bad_consumer = true;
            if (v.number == 3 && v.wire == kBytes) {  // packed
                std::size_t p = 0;
                uint64_t c = 0;
                while (p < v.bytes.size()) {
                    if (!get_varint64(v.bytes, p, c)) return false;
                    if (c == kVersion) bad_consumer = true;
                }
            }
            return true;
        });
    });
    if (!ok) {
        throw errors::DataLossError(
            fmt::format("Corrupt checkpoint index {}: unable to parse the header entry", file));
    }
    if (num_shards < 1 || num_shards > 100000) {
        throw errors::DataLossError(fmt::format(
            "Corrupt checkpoint index {}: the header gives {} shards", file, num_shards));
    }
    if (endianness != 0) {
        throw errors::UnimplementedError(
            fmt::format("checkpoint {} was written on a big-endian machine", file));
    }
    if (min_consumer > kVersion || bad_consumer) {
        throw errors::UnimplementedError(fmt::format(
            "checkpoint {} needs a newer reader (min_consumer {}, this reader is version {})",
            file,
            min_consumer,
            kVersion));
    }
    return static_cast<int32_t>(num_shards);
}

[[noreturn]] void data_error(const std::string& key,
                             const std::string& file,
                             const std::string& what) {
    throw errors::DataLossError(
        fmt::format("Corrupt checkpoint data {} for key '{}': {}", file, key, what));
}

void check_crc(const std::string& key,
               const BundleEntry& entry,
               uint32_t actual,
               const std::string& file) {
    if (io::mask_crc(actual) != entry.crc32c) {
        data_error(key,
                   file,
                   fmt::format("checksum does not match: stored {:08x} vs. calculated on the "
                               "restored bytes {:08x}",
                               entry.crc32c,
                               io::mask_crc(actual)));
    }
}

template <class From>
void widen_to_int32(const char* src, int32_t* dst, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
        From v;
        std::memcpy(&v, src + i * sizeof(From), sizeof(From));
        dst[i] = v;
    }
}

}  // namespace

namespace {

// The TF dtypes the bundle reader knows: name, bytes per element (0: variable), and the
// tapeflow dtype they are read as (int8 and int16 widened to int32).
struct TypeInfo {
    int tf;
    const char* name;
    std::size_t size;
    std::optional<DType> dtype;
};
constexpr TypeInfo kTypes[] = {
    {DT_FLOAT, "float32", 4, DType::float32},
    {DT_DOUBLE, "float64", 8, DType::float64},
    {DT_INT32, "int32", 4, DType::int32},
    {DT_UINT8, "uint8", 1, DType::uint8},
    {DT_INT16, "int16", 2, DType::int32},
    {DT_INT8, "int8", 1, DType::int32},
    {DT_STRING, "string", 0, std::nullopt},
    {DT_INT64, "int64", 8, DType::int64},
    {DT_BOOL, "bool", 1, DType::bool_},
    {DT_BFLOAT16, "bfloat16", 2, DType::bfloat16},
    {DT_UINT16, "uint16", 2, std::nullopt},
    {DT_HALF, "float16", 2, DType::float16},
    {DT_UINT32, "uint32", 4, std::nullopt},
    {DT_UINT64, "uint64", 8, std::nullopt},
};

const TypeInfo* type_info(int dtype) {
    for (const TypeInfo& t : kTypes) {
        if (t.tf == dtype) return &t;
    }
    return nullptr;
}

}  // namespace

std::string tf_dtype_name(int dtype) {
    const TypeInfo* t = type_info(dtype);
    return t != nullptr ? std::string(t->name) : fmt::format("DataType({})", dtype);
}

int tf_dtype_of(DType dtype) {
    for (const TypeInfo& t : kTypes) {
        // The tapeflow dtype's own TF type (int32 also stands for the widened int8 and int16).
        if (t.dtype == dtype && t.name == dtype_name(dtype)) return t.tf;
    }
    return DT_INVALID;
}

std::optional<DType> tapeflow_dtype_of(int dtype) {
    const TypeInfo* t = type_info(dtype);
    return t != nullptr ? t->dtype : std::nullopt;
}

std::size_t tf_dtype_size(int dtype) {
    const TypeInfo* t = type_info(dtype);
    return t != nullptr ? t->size : 0;
}

BundleIndex parse_index(std::string_view bytes, const std::string& file) {
    const auto rows = io::table::read_table(bytes, file);
    if (rows.empty() || !rows.front().first.empty()) {
        throw errors::DataLossError(
            fmt::format("Corrupt checkpoint index {}: no header entry", file));
    }
    BundleIndex index;
    index.num_shards = decode_header(rows.front().second, file);
    for (std::size_t i = 1; i < rows.size(); ++i) {
        const std::string& key = rows[i].first;
        BundleEntry e = decode_entry(key, rows[i].second, file);
        if (!e.sliced && (e.shard_id < 0 || e.shard_id >= index.num_shards))
            entry_error(key, file, "a shard id out of range");
        index.entries.emplace(key, std::move(e));
    }
    return index;
}

std::string index_file_name(const std::string& prefix) {
    return prefix + ".index";
}

std::string data_file_name(const std::string& prefix, int shard, int num_shards) {
    return fmt::format("{}.data-{:05d}-of-{:05d}", prefix, shard, num_shards);
}

Tensor decode_tensor(const std::string& key,
                     const BundleEntry& entry,
                     std::string_view bytes,
                     const std::string& file) {
    if (entry.sliced) {
        throw errors::UnimplementedError(
            fmt::format("key '{}' of {} is a partitioned (sliced) variable, which is not supported",
                        key,
                        file));
    }
    const auto dtype = tapeflow_dtype_of(entry.dtype);
    if (!dtype) {
        throw errors::UnimplementedError(
            fmt::format("key '{}' of {} has dtype {}, which tapeflow cannot hold{}",
                        key,
                        file,
                        tf_dtype_name(entry.dtype),
                        entry.dtype == DT_STRING ? " (read it with get_tensor_bytes)" : ""));
    }
    const auto n = static_cast<uint64_t>(entry.shape.num_elements());
    const std::size_t elem = tf_dtype_size(entry.dtype);
    if (entry.size != n * elem || bytes.size() != entry.size) {
        data_error(key,
                   file,
                   fmt::format("invalid size {} for {} elements of {}",
                               entry.size,
                               n,
                               tf_dtype_name(entry.dtype)));
    }
    check_crc(key, entry, io::crc32c(bytes), file);
    Tensor t = Tensor::empty(entry.shape, *dtype);
    auto* dst = static_cast<char*>(t.mutable_raw_data());
    if (entry.dtype == DT_INT8) {
        widen_to_int32<int8_t>(bytes.data(), reinterpret_cast<int32_t*>(dst), n);
    } else if (entry.dtype == DT_INT16) {
        widen_to_int32<int16_t>(bytes.data(), reinterpret_cast<int32_t*>(dst), n);
    } else if (entry.dtype == DT_BOOL) {
        for (std::size_t i = 0; i < n; ++i)
            dst[i] = bytes[i] != 0 ? 1 : 0;
    } else if (n > 0) {
        std::memcpy(dst, bytes.data(), bytes.size());
    }
    return t;
}

std::vector<std::string> decode_strings(const std::string& key,
                                        const BundleEntry& entry,
                                        std::string_view bytes,
                                        const std::string& file) {
    if (entry.dtype != DT_STRING) {
        throw errors::InvalidArgumentError(fmt::format(
            "key '{}' of {} has dtype {}, not string", key, file, tf_dtype_name(entry.dtype)));
    }
    if (bytes.size() != entry.size) data_error(key, file, "the data file is too short");
    const auto n = static_cast<uint64_t>(entry.shape.num_elements());
    std::vector<std::string> out;
    if (entry.size == 0) {  // TF's reader accepts no bytes at all for an empty tensor
        if (n != 0) data_error(key, file, fmt::format("no bytes for {} strings", n));
        return out;
    }
    if (n > bytes.size()) data_error(key, file, "more strings than bytes");
    std::vector<uint64_t> lengths(n);
    std::size_t pos = 0;
    uint32_t crc = 0;
    for (uint64_t i = 0; i < n; ++i) {
        if (!get_varint64(bytes, pos, lengths[i])) data_error(key, file, "a bad string length");
        if (lengths[i] <= UINT32_MAX) {
            const auto len32 = static_cast<uint32_t>(lengths[i]);
            crc = io::crc32c_extend(crc, &len32, sizeof len32);
        } else {
            crc = io::crc32c_extend(crc, &lengths[i], sizeof(uint64_t));
        }
    }
    if (bytes.size() - pos < 4) data_error(key, file, "no checksum of the string lengths");
    const char* stored = bytes.data() + pos;
    if (io::unmask_crc(io::table::get_fixed32(stored)) != crc)
        data_error(key, file, "the checksum of the string lengths does not match");
    crc = io::crc32c_extend(crc, stored, 4);
    pos += 4;
    out.reserve(n);
    for (uint64_t i = 0; i < n; ++i) {
        if (lengths[i] > bytes.size() - pos) data_error(key, file, "a string past the entry's end");
        out.emplace_back(bytes.substr(pos, lengths[i]));
        crc = io::crc32c_extend(crc, out.back().data(), out.back().size());
        pos += lengths[i];
    }
    if (pos != bytes.size()) data_error(key, file, "bytes left after the strings");
    check_crc(key, entry, crc, file);
    return out;
}

BundleWriter::BundleWriter(std::string prefix, BundleWriterOptions options)
    : prefix_(std::move(prefix)), options_(options) {
    if (options_.num_shards < 1 || options_.data_alignment < 1 || options_.block_size < 1 ||
        options_.block_restart_interval < 1) {
        throw errors::InvalidArgumentError("BundleWriter: bad options");
    }
    for (int s = 0; s < options_.num_shards; ++s) {
        shards_.push_back(std::make_unique<io::AtomicFileWriter>(
            data_file_name(prefix_, s, options_.num_shards)));
    }
}

BundleWriter::~BundleWriter() = default;

BundleEntry& BundleWriter::new_entry(const std::string& key,
                                     int dtype,
                                     const Shape& shape,
                                     int shard) {
    if (finished_) throw errors::FailedPreconditionError("BundleWriter is closed");
    if (key.empty()) throw errors::InvalidArgumentError("a bundle key must not be empty");
    if (shard < 0 || shard >= options_.num_shards)
        throw errors::InvalidArgumentError(fmt::format("shard {} out of range", shard));
    auto [it, inserted] = entries_.try_emplace(key);
    if (!inserted) throw errors::InvalidArgumentError(fmt::format("Adding duplicate key: {}", key));
    it->second.dtype = dtype;
    it->second.shape = shape;
    it->second.shard_id = shard;
    return it->second;
}

void BundleWriter::append(BundleEntry& entry, std::string_view bytes, std::optional<uint32_t> crc) {
    io::AtomicFileWriter& out = *shards_[entry.shard_id];
    entry.offset = out.size();
    entry.size = bytes.size();
    // Chunks: each one's CRC is computed while it is in cache, then it goes to the file.
    constexpr std::size_t kChunk = std::size_t{4} << 20;
    uint32_t computed = 0;
    for (std::size_t done = 0; done < bytes.size(); done += kChunk) {
        const std::string_view chunk = bytes.substr(done, kChunk);
        if (!crc) computed = io::crc32c_extend(computed, chunk.data(), chunk.size());
        out.append(chunk);
    }
    entry.crc32c = io::mask_crc(crc.value_or(computed));
    const uint64_t over = out.size() % static_cast<uint64_t>(options_.data_alignment);
    if (over != 0) out.append(std::string(options_.data_alignment - over, '\0'));
}

void BundleWriter::add(const std::string& key, const Tensor& value, int shard) {
    const Tensor host = value.device().is_cpu() ? value : value.cpu();
    add_bytes(key,
              tf_dtype_of(host.dtype()),
              host.shape(),
              std::string_view(static_cast<const char*>(host.raw_data()), host.nbytes()),
              shard);
}

void BundleWriter::add_bytes(
    const std::string& key, int tf_dtype, const Shape& shape, std::string_view bytes, int shard) {
    const std::size_t elem = tf_dtype_size(tf_dtype);
    if (elem == 0 || bytes.size() != static_cast<uint64_t>(shape.num_elements()) * elem) {
        throw errors::InvalidArgumentError(
            fmt::format("{} bytes for key '{}' of dtype {} and {} elements",
                        bytes.size(),
                        key,
                        tf_dtype_name(tf_dtype),
                        shape.num_elements()));
    }
    append(new_entry(key, tf_dtype, shape, shard), bytes, std::nullopt);
}

void BundleWriter::add_strings(const std::string& key,
                               const Shape& shape,
                               const std::vector<std::string>& values,
                               int shard) {
    if (static_cast<uint64_t>(shape.num_elements()) != values.size()) {
        throw errors::InvalidArgumentError(fmt::format("{} strings for key '{}' of shape ({})",
                                                       values.size(),
                                                       key,
                                                       fmt::join(shape.dims(), ", ")));
    }
    BundleEntry& entry = new_entry(key, DT_STRING, shape, shard);
    // [varint64 length]... [masked CRC of the lengths as uint32 (uint64 when larger)] [bytes]...;
    // the entry's CRC covers those lengths, the length checksum and the bytes.
    std::string bytes;
    uint32_t crc = 0;
    for (const std::string& s : values) {
        put_varint64(bytes, s.size());
        const uint64_t len = s.size();
        if (len <= UINT32_MAX) {
            const auto len32 = static_cast<uint32_t>(len);
            crc = io::crc32c_extend(crc, &len32, sizeof len32);
        } else {
            crc = io::crc32c_extend(crc, &len, sizeof len);
        }
    }
    std::string length_crc;
    io::table::put_fixed32(length_crc, io::mask_crc(crc));
    crc = io::crc32c_extend(crc, length_crc.data(), length_crc.size());
    bytes += length_crc;
    for (const std::string& s : values) {
        bytes += s;
        crc = io::crc32c_extend(crc, s.data(), s.size());
    }
    append(entry, bytes, crc);
}

void BundleWriter::finish() {
    if (finished_) throw errors::FailedPreconditionError("BundleWriter is closed");
    finished_ = true;
    io::table::TableBuilder table(
        {options_.block_size, options_.block_restart_interval, options_.index_compression});
    std::string header;
    put_varint_field(header, 1, static_cast<uint64_t>(options_.num_shards));
    std::string version;
    put_varint_field(version, 1, kVersion);
    put_bytes_field(header, 3, version);
    table.add("", header);
    for (const auto& [key, entry] : entries_)
        table.add(key, encode_entry(entry));
    io::AtomicFileWriter index(index_file_name(prefix_));
    index.append(table.finish());
    // Everything durable under temporary names first; then the data files, and the index last.
    for (const auto& shard : shards_)
        shard->sync();
    index.sync();
    for (const auto& shard : shards_)
        shard->commit();
    index.commit();
}

}  // namespace tapeflow::train::ckpt::bundle
