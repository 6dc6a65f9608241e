// The safetensors container as tapeflow checkpoints use it: dtype names, and the JSON header
// (encode for saving; decode with full validation for reading). The only code that sees JSON.
// Layout: 8-byte little-endian header length N, N bytes of JSON (space-padded so the data starts
// 8-byte aligned), then the tensors' raw little-endian bytes, back to back.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <tapeflow/core/dtype.hpp>
#include <tapeflow/core/shape.hpp>

namespace tapeflow::train::ckpt {

inline constexpr std::string_view kFormat = "tapeflow-checkpoint/1";
/// Largest accepted header (the reference safetensors implementation's limit).
inline constexpr uint64_t kMaxHeaderBytes = 100'000'000;

/// "F32", "F64", "I32", "I64", "U8", "BOOL", "F16", "BF16".
std::string_view safetensors_dtype(DType dtype);

/// One tensor of a decoded header. `dtype` is empty for safetensors dtypes tapeflow lacks (I8,
/// I16, U16, U32, U64, F8_*): such a tensor is listed in errors but cannot be loaded.
struct TensorEntry {
    std::string name;
    std::string file_dtype;
    std::optional<DType> dtype;
    Shape shape;
    uint64_t begin = 0;  // offsets relative to the start of the data
    uint64_t end = 0;
    std::optional<uint32_t> crc;
};

struct Header {
    std::vector<TensorEntry> tensors;  // sorted by name
    std::map<std::string, std::string> metadata;
    std::optional<int64_t> global_step;
};

/// What encode_header needs of each tensor, in file order.
struct TensorInfo {
    std::string_view name;
    DType dtype;
    const Shape* shape;
    uint64_t nbytes;
    uint32_t crc;
};

/// The 8-byte length plus the padded JSON header for tensors stored in `tensors` order.
/// InvalidArgumentError for a name that is not valid UTF-8 or is "__metadata__".
std::string encode_header(const std::vector<TensorInfo>& tensors,
                          std::optional<int64_t> global_step);

/// Parses and validates a header (`json`: the N header bytes) of a file whose data part has
/// `data_size` bytes. DataLossError naming `file` and the offending tensor for anything malformed:
/// bad JSON, unknown fields or dtypes, offsets outside the data, overlapping or leaving gaps, sizes
/// that disagree with shape x dtype, bad or missing CRCs, an unknown format.
Header decode_header(std::string_view json, uint64_t data_size, const std::string& file);

}  // namespace tapeflow::train::ckpt
