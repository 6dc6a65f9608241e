// Safetensors header encoding and validating decoding with nlohmann-json. Decoding trusts nothing:
// nesting depth and duplicate keys are checked while parsing, every size is overflow-checked, and
// the tensors must tile the data part exactly (as the reference implementation requires).
#include "train/checkpoint/safetensors.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <tapeflow/core/error.hpp>

namespace tapeflow::train::ckpt {
namespace {

using Json = nlohmann::json;

struct FileDType {
    std::string_view name;
    uint64_t size;
    std::optional<DType> dtype;
};

// Every dtype of the safetensors specification; the ones tapeflow has map to a DType.
constexpr std::array<FileDType, 15> kFileDTypes = {{
    {"BOOL", 1, DType::bool_},
    {"U8", 1, DType::uint8},
    {"I8", 1, std::nullopt},
    {"F8_E5M2", 1, std::nullopt},
    {"F8_E4M3", 1, std::nullopt},
    {"I16", 2, std::nullopt},
    {"U16", 2, std::nullopt},
    {"F16", 2, DType::float16},
    {"BF16", 2, DType::bfloat16},
    {"I32", 4, DType::int32},
    {"U32", 4, std::nullopt},
    {"F32", 4, DType::float32},
    {"F64", 8, DType::float64},
    {"I64", 8, DType::int64},
    {"U64", 8, std::nullopt},
}};

const FileDType* find_file_dtype(std::string_view name) {
    for (const FileDType& d : kFileDTypes) {
        if (d.name == name) return &d;
    }
    return nullptr;
}

constexpr std::string_view kCrcPrefix = "crc32c/";
constexpr int kMaxDepth = 3;  // root object > tensor object > shape / data_offsets array

// Thrown by the parser callback; turned into DataLossError.
struct Malformed {
    std::string what;
};

std::optional<uint32_t> parse_crc(std::string_view hex) {
    if (hex.size() != 8) return std::nullopt;
    uint32_t value = 0;
    for (const char c : hex) {
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return std::nullopt;
    }
    std::from_chars(hex.data(), hex.data() + hex.size(), value, 16);
    return value;
}

std::optional<int64_t> parse_integer(std::string_view text) {
    int64_t value = 0;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || ptr != text.data() + text.size() || text.empty()) return std::nullopt;
    return value;
}

Json parse_json(std::string_view text) {
    int depth = 0;
    std::vector<std::set<std::string>> keys;  // per open object: duplicate keys are an error
    const Json::parser_callback_t guard =
        [&](int /*nlohmann depth*/, Json::parse_event_t event, Json& parsed) {
            switch (event) {
                case Json::parse_event_t::object_start:
                case Json::parse_event_t::array_start:
                    if (++depth > kMaxDepth)
                        throw Malformed{"the header nests deeper than a safetensors header"};
                    if (event == Json::parse_event_t::object_start) keys.emplace_back();
                    break;
                case Json::parse_event_t::object_end:
                    keys.pop_back();
                    --depth;
                    break;
                case Json::parse_event_t::array_end:
                    --depth;
                    break;
                case Json::parse_event_t::key:
                    if (!keys.empty() && !keys.back().insert(parsed.get<std::string>()).second) {
                        throw Malformed{fmt::format("duplicate key '{}' in the header",
                                                    parsed.get<std::string>())};
                    }
                    break;
                case Json::parse_event_t::value:
                    break;
            }
            return true;
        };
    try {
        return Json::parse(text.begin(), text.end(), guard);
    } catch (const Json::exception& e) {
        throw Malformed{fmt::format("the header is not valid JSON ({})", e.what())};
    }
}

// Product of dims times the item size, or nullopt on overflow.
std::optional<uint64_t> byte_size(const std::vector<int64_t>& dims, uint64_t item) {
    uint64_t n = item;
    for (const int64_t d : dims) {
        if (__builtin_mul_overflow(n, static_cast<uint64_t>(d), &n)) return std::nullopt;
    }
    return n;
}

TensorEntry decode_tensor(const std::string& name, const Json& j, uint64_t data_size) {
    const auto bad = [&](const std::string& what) {
        return Malformed{fmt::format("tensor '{}': {}", name, what)};
    };
    if (!j.is_object()) throw bad("its entry is not a JSON object");
    for (const auto& [key, value] : j.items()) {
        if (key != "dtype" && key != "shape" && key != "data_offsets")
            throw bad(fmt::format("unknown field '{}'", key));
    }
    if (!j.contains("dtype") || !j["dtype"].is_string()) throw bad("no \"dtype\" string");
    if (!j.contains("shape") || !j["shape"].is_array()) throw bad("no \"shape\" array");
    if (!j.contains("data_offsets") || !j["data_offsets"].is_array() ||
        j["data_offsets"].size() != 2) {
        throw bad("no \"data_offsets\" pair");
    }
    TensorEntry e;
    e.name = name;
    e.file_dtype = j["dtype"].get<std::string>();
    const FileDType* fd = find_file_dtype(e.file_dtype);
    if (fd == nullptr) throw bad(fmt::format("unknown dtype '{}'", e.file_dtype));
    e.dtype = fd->dtype;
    std::vector<int64_t> dims;
    for (const Json& d : j["shape"]) {
        if (!d.is_number_unsigned() || d.get<uint64_t>() > (uint64_t{1} << 62)) {
            throw bad(
                fmt::format("shape {} is not a list of non-negative integers", j["shape"].dump()));
        }
        dims.push_back(static_cast<int64_t>(d.get<uint64_t>()));
    }
    for (const Json& o : j["data_offsets"]) {
        if (!o.is_number_unsigned())
            throw bad(fmt::format("data_offsets {} are not non-negative integers",
                                  j["data_offsets"].dump()));
    }
    e.begin = j["data_offsets"][0].get<uint64_t>();
    e.end = j["data_offsets"][1].get<uint64_t>();
    if (e.begin > e.end || e.end > data_size) {
        throw bad(fmt::format("data_offsets [{}, {}] lie outside the {} data bytes of the file",
                              e.begin,
                              e.end,
                              data_size));
    }
    const std::optional<uint64_t> need = byte_size(dims, fd->size);
    if (!need || *need != e.end - e.begin) {
        throw bad(fmt::format("data_offsets [{}, {}] hold {} bytes, but shape {} of {} needs {}",
                              e.begin,
                              e.end,
                              e.end - e.begin,
                              j["shape"].dump(),
                              e.file_dtype,
                              need ? fmt::format("{}", *need) : std::string("more than 2^64")));
    }
    e.shape = Shape(std::move(dims));
    return e;
}

// Tensors must cover [0, data_size) exactly, without overlaps or gaps.
void check_tiling(const std::vector<TensorEntry>& tensors, uint64_t data_size) {
    std::vector<const TensorEntry*> order;
    for (const TensorEntry& e : tensors)
        order.push_back(&e);
    std::sort(order.begin(), order.end(), [](const TensorEntry* a, const TensorEntry* b) {
        return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
    });
    uint64_t at = 0;
    const TensorEntry* previous = nullptr;
    for (const TensorEntry* e : order) {
        if (e->begin < at) {
            throw Malformed{
                fmt::format("tensor '{}' (bytes [{}, {}]) overlaps tensor '{}' (bytes [{}, {}])",
                            e->name,
                            e->begin,
                            e->end,
                            previous->name,
                            previous->begin,
                            previous->end)};
        }
        if (e->begin > at) {
            throw Malformed{fmt::format(
                "tensor '{}' starts at byte {}, leaving bytes [{}, {}] of the data unused",
                e->name,
                e->begin,
                at,
                e->begin)};
        }
        at = e->end;
        previous = e;
    }
    if (at != data_size) {
        throw Malformed{fmt::format(
            "the tensors end at byte {} of the data, but the file holds {} data bytes{}",
            at,
            data_size,
            previous ? fmt::format(" (last tensor: '{}')", previous->name) : "")};
    }
}

void decode_metadata(const Json& j, Header& h) {
    if (!j.is_object()) throw Malformed{"__metadata__ is not a JSON object"};
    for (const auto& [key, value] : j.items()) {
        if (!value.is_string())
            throw Malformed{fmt::format("__metadata__ entry '{}' is not a string", key)};
        h.metadata.emplace(key, value.get<std::string>());
    }
}

void check_metadata(Header& h) {
    bool tapeflow_file = false;
    if (auto it = h.metadata.find("format"); it != h.metadata.end()) {
        if (it->second == kFormat) {
            tapeflow_file = true;
        } else if (it->second.starts_with("tapeflow-checkpoint/")) {
            const std::optional<int64_t> version =
                parse_integer(std::string_view(it->second).substr(20));
            if (!version || *version < 1)
                throw Malformed{fmt::format("unknown format '{}'", it->second)};
            throw errors::UnimplementedError(
                fmt::format("checkpoint format '{}' is newer than this tapeflow reads ('{}')",
                            it->second,
                            kFormat));
        }
    }
    if (auto it = h.metadata.find("global_step"); it != h.metadata.end()) {
        h.global_step = parse_integer(it->second);
        if (!h.global_step)
            throw Malformed{
                fmt::format("__metadata__ global_step '{}' is not an integer", it->second)};
    }
    for (const auto& [key, value] : h.metadata) {
        if (!key.starts_with(kCrcPrefix)) continue;
        tapeflow_file = true;
        const std::string name = key.substr(kCrcPrefix.size());
        auto it =
            std::lower_bound(h.tensors.begin(),
                             h.tensors.end(),
                             name,
                             [](const TensorEntry& e, const std::string& n) { return e.name < n; });
        if (it == h.tensors.end() || it->name != name) {
            throw Malformed{
                fmt::format("__metadata__ has a CRC for tensor '{}', which the file lacks", name)};
        }
        it->crc = parse_crc(value);
        if (!it->crc)
            throw Malformed{
                fmt::format("tensor '{}': CRC '{}' is not 8 lower-case hex digits", name, value)};
    }
    if (!tapeflow_file) return;  // a foreign safetensors file: no CRCs to check
    for (const TensorEntry& e : h.tensors) {
        if (!e.crc)
            throw Malformed{fmt::format("tensor '{}' has no crc32c entry in __metadata__", e.name)};
    }
}

}  // namespace

std::string_view safetensors_dtype(DType dtype) {
    for (const FileDType& d : kFileDTypes) {
        if (d.dtype == dtype) return d.name;
    }
    throw errors::UnimplementedError(
        fmt::format("dtype {} has no safetensors equivalent", dtype_name(dtype)));
}

std::string encode_header(const std::vector<TensorInfo>& tensors,
                          std::optional<int64_t> global_step) {
    Json root = Json::object();
    Json metadata = Json::object();
    metadata["format"] = kFormat;
    if (global_step) metadata["global_step"] = fmt::format("{}", *global_step);
    uint64_t at = 0;
    for (const TensorInfo& t : tensors) {
        const std::string name(t.name);
        if (name == "__metadata__") {
            throw errors::InvalidArgumentError(
                "a checkpoint cannot hold a tensor named '__metadata__'");
        }
        if (root.contains(name))
            throw errors::InvalidArgumentError(fmt::format("two tensors are named '{}'", name));
        root[name] = {{"dtype", std::string(safetensors_dtype(t.dtype))},
                      {"shape", t.shape->dims()},
                      {"data_offsets", {at, at + t.nbytes}}};
        metadata[std::string(kCrcPrefix) + name] = fmt::format("{:08x}", t.crc);
        at += t.nbytes;
    }
    root["__metadata__"] = std::move(metadata);
    std::string json;
    try {
        json = root.dump();
    } catch (const Json::exception& e) {
        throw errors::InvalidArgumentError(
            fmt::format("cannot write the checkpoint header: {}", e.what()));
    }
    json.append((8 - json.size() % 8) % 8, ' ');  // the data starts 8-byte aligned
    std::string out(8, '\0');
    uint64_t n = json.size();
    for (int i = 0; i < 8; ++i)
        out[static_cast<std::size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xff);
    return out + json;
}

Header decode_header(std::string_view json, uint64_t data_size, const std::string& file) {
    try {
        if (json.empty() || json.front() != '{')
            throw Malformed{"the header does not start with '{'"};
        // nlohmann's lexer stops at a NUL byte as if the input ended: reject NULs outright (JSON
        // strings escape them), so "{...}\0garbage" cannot pass.
        if (const std::size_t nul = json.find('\0'); nul != std::string_view::npos) {
            throw Malformed{fmt::format("the header has a NUL byte at offset {}", nul)};
        }
        const Json root = parse_json(json);
        if (!root.is_object()) throw Malformed{"the header is not a JSON object"};
        Header h;
        for (const auto& [key, value] : root.items()) {
            if (key == "__metadata__") {
                decode_metadata(value, h);
            } else {
                h.tensors.push_back(decode_tensor(key, value, data_size));
            }
        }
        std::sort(h.tensors.begin(),
                  h.tensors.end(),
                  [](const TensorEntry& a, const TensorEntry& b) { return a.name < b.name; });
        check_tiling(h.tensors, data_size);
        check_metadata(h);
        return h;
    } catch (const Malformed& m) {
        throw errors::DataLossError(fmt::format("Corrupt checkpoint {}: {}", file, m.what));
    }
}

}  // namespace tapeflow::train::ckpt
