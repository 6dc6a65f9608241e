// NumPy's .npy format, as numpy/lib/format.py defines it: the magic "\x93NUMPY", a major and minor
// version byte, the header length (2 bytes little-endian in 1.0, 4 bytes in 2.0 and 3.0), then a
// Python dict literal {'descr': ..., 'fortran_order': ..., 'shape': (...)} padded with spaces and a
// newline so that the data starts at a multiple of 64 bytes. 3.0 is 2.0 with a UTF-8 header. The
// dict is parsed here as a literal (never evaluated); anything but those three keys is refused.
#include "io/npy.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <map>
#include <variant>
#include <vector>

#include <fmt/format.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/io.hpp>

#include "io/file_util.hpp"
#include "io/zip.hpp"

namespace tapeflow::io {
namespace {

constexpr std::string_view kMagic = "\x93NUMPY";
constexpr std::size_t kAlign = 64;
constexpr char kNativeOrder = std::endian::native == std::endian::little ? '<' : '>';

[[noreturn]] void corrupt(const std::string& name, const std::string& why) {
    throw errors::DataLossError(fmt::format("{}: not a valid .npy file: {}", name, why));
}

// ---- The header dict: a small parser of the Python literals NumPy writes ----

struct PyValue;
using PyTuple = std::vector<PyValue>;
struct PyValue {
    // A string, a bool, an integer, a tuple or list (`is_list` tells which), or None.
    std::variant<std::string, bool, int64_t, PyTuple, std::monostate> v;
    bool is_list = false;
};

class LiteralParser {
public:
    LiteralParser(std::string_view text, const std::string& name) : s_(text), name_(name) {}

    std::map<std::string, PyValue> dict() {
        expect('{');
        std::map<std::string, PyValue> out;
        while (!peek_is('}')) {
            PyValue key = value();
            auto* k = std::get_if<std::string>(&key.v);
            if (k == nullptr) fail("a key of the header dict is not a string");
            expect(':');
            if (!out.emplace(*k, value()).second) fail(fmt::format("key '{}' appears twice", *k));
            if (!peek_is(',')) break;
            ++pos_;
        }
        expect('}');
        skip_space();
        if (pos_ != s_.size()) fail("text after the header dict");
        return out;
    }

private:
    [[noreturn]] void fail(const std::string& why) const {
        corrupt(
            name_,
            fmt::format(
                "{} (header {:?}, at character {})", why, std::string(s_.substr(0, 200)), pos_));
    }
    void skip_space() {
        while (pos_ < s_.size() &&
               (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
            ++pos_;
    }
    bool peek_is(char c) {
        skip_space();
        return pos_ < s_.size() && s_[pos_] == c;
    }
    void expect(char c) {
        if (!peek_is(c)) fail(fmt::format("expected '{}'", c));
        ++pos_;
    }
    PyValue value() {
        skip_space();
        if (pos_ >= s_.size()) fail("the header dict ends early");
        const char c = s_[pos_];
        if (c == '\'' || c == '"') return {string(c)};
        if (c == '(' || c == '[') return sequence(c == '(' ? ')' : ']');
        if (c == '-' || (c >= '0' && c <= '9')) return {integer()};
        for (auto [word, val] :
             {std::pair<std::string_view, int>{"True", 1}, {"False", 0}, {"None", 2}}) {
            if (s_.substr(pos_, word.size()) == word) {
                pos_ += word.size();
                if (val == 2) return {std::monostate{}};
                return {val == 1};
            }
        }
        fail("unexpected text (only strings, integers, True, False, None and tuples are allowed)");
    }
    std::string string(char quote) {
        std::string out;
        for (++pos_; pos_ < s_.size() && s_[pos_] != quote; ++pos_) {
            if (s_[pos_] == '\\') fail("escapes in header strings are not supported");
            out += s_[pos_];
        }
        if (pos_ >= s_.size()) fail("unterminated string");
        ++pos_;
        return out;
    }
    int64_t integer() {
        const bool negative = s_[pos_] == '-';
        if (negative) ++pos_;
        if (pos_ >= s_.size() || s_[pos_] < '0' || s_[pos_] > '9') fail("bad integer");
        uint64_t v = 0;
        for (; pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9'; ++pos_) {
            v = v * 10 + static_cast<uint64_t>(s_[pos_] - '0');
            if (v > static_cast<uint64_t>(INT64_MAX)) fail("integer out of range");
        }
        if (pos_ < s_.size() && s_[pos_] == 'L') ++pos_;  // Python 2's long suffix
        return negative ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
    }
    PyValue sequence(char close) {
        PyValue out{PyTuple{}, close == ']'};
        auto& items = std::get<PyTuple>(out.v);
        ++pos_;
        while (!peek_is(close)) {
            if (++depth_ > 32) fail("nested too deeply");
            items.push_back(value());
            --depth_;
            if (!peek_is(',')) break;
            ++pos_;
        }
        expect(close);
        return out;
    }

    std::string_view s_;
    const std::string& name_;
    std::size_t pos_ = 0;
    int depth_ = 0;
};

// ---- dtypes ----

// How the elements of one NumPy dtype are stored and which tapeflow dtype holds them.
struct NpyType {
    char order = '<';  // '<' little, '>' big, '|' not applicable (one byte)
    char kind = 'f';   // 'f', 'i', 'u', 'b'
    int size = 4;      // bytes per element in the file
    DType dtype = DType::float32;
};

NpyType parse_descr(const PyValue& descr, const std::string& name) {
    const auto* s = std::get_if<std::string>(&descr.v);
    if (s == nullptr) {
        throw errors::InvalidArgumentError(fmt::format(
            "{}: structured NumPy dtypes (a 'descr' list of fields) are not supported; save each "
            "field as an array of its own",
            name));
    }
    const std::string& d = *s;
    auto unsupported = [&](std::string_view why) -> NpyType {
        throw errors::InvalidArgumentError(
            fmt::format("{}: NumPy dtype '{}' is not supported: {}", name, d, why));
    };
    if (d.size() < 2) unsupported("not a NumPy type string");
    NpyType t;
    std::size_t i = 0;
    if (d[0] == '<' || d[0] == '>' || d[0] == '|' || d[0] == '=') {
        t.order = d[0] == '=' ? kNativeOrder : d[0];
        i = 1;
    } else {
        t.order = kNativeOrder;
    }
    t.kind = d[i];
    if (t.kind == 'O')
        unsupported("object arrays hold pickled Python objects, which tapeflow never loads");
    if (t.kind == 'V') unsupported("void/structured dtypes have no tapeflow dtype");
    const std::string_view digits = std::string_view(d).substr(i + 1);
    if (digits.empty() || digits.size() > 2 ||
        !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
        unsupported("not a numeric NumPy type string");
    t.size = std::stoi(std::string(digits));
    const std::string key = fmt::format("{}{}", t.kind, t.size);
    static const std::map<std::string, DType, std::less<>> kTypes = {{"f2", DType::float16},
                                                                     {"f4", DType::float32},
                                                                     {"f8", DType::float64},
                                                                     {"i1", DType::int32},
                                                                     {"i2", DType::int32},
                                                                     {"i4", DType::int32},
                                                                     {"i8", DType::int64},
                                                                     {"u1", DType::uint8},
                                                                     {"u2", DType::int32},
                                                                     {"u4", DType::int64},
                                                                     {"b1", DType::bool_}};
    const auto it = kTypes.find(key);
    if (it == kTypes.end()) {
        if (key == "u8")
            unsupported("tapeflow has no uint64 dtype (int64 cannot hold every value)");
        unsupported("tapeflow holds f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 b1");
    }
    t.dtype = it->second;
    return t;
}

// Element `src` (t.size bytes, t.order) as a value of tapeflow's dtype at `dst`.
void convert(const char* src, std::size_t count, const NpyType& t, char* dst) {
    const bool swap = t.size > 1 && t.order != kNativeOrder;
    const std::size_t out_size = dtype_size(t.dtype);
    if (!swap && out_size == static_cast<std::size_t>(t.size) && t.kind != 'b') {
        std::memcpy(dst, src, count * out_size);
        return;
    }
    for (std::size_t n = 0; n < count; ++n, src += t.size, dst += out_size) {
        unsigned char b[8];
        std::memcpy(b, src, static_cast<std::size_t>(t.size));
        if (swap) std::reverse(b, b + t.size);
        if (t.kind == 'b') {
            *dst = static_cast<char>(b[0] != 0);
        } else if (out_size == static_cast<std::size_t>(t.size)) {
            std::memcpy(dst, b, out_size);
        } else if (t.dtype == DType::int32) {  // i1, i2, u2 widened
            int32_t v = 0;
            if (t.kind == 'i' && t.size == 1) v = static_cast<int8_t>(b[0]);
            if (t.kind == 'i' && t.size == 2) v = std::bit_cast<int16_t>(std::array{b[0], b[1]});
            if (t.kind == 'u') v = std::bit_cast<uint16_t>(std::array{b[0], b[1]});
            std::memcpy(dst, &v, 4);
        } else {  // u4 widened to int64
            const int64_t v = std::bit_cast<uint32_t>(std::array{b[0], b[1], b[2], b[3]});
            std::memcpy(dst, &v, 8);
        }
    }
}

// The bytes of a Fortran-ordered (column-major) array of `dims` rearranged into row-major order.
std::string fortran_to_c(std::string_view data,
                         const std::vector<int64_t>& dims,
                         std::size_t size) {
    std::string out(data.size(), '\0');
    const std::size_t rank = dims.size();
    if (data.empty() || rank < 2) return std::string(data);
    std::vector<int64_t> src_stride(rank);  // in elements, column-major
    int64_t s = 1;
    for (std::size_t k = 0; k < rank; ++k) {
        src_stride[k] = s;
        s *= dims[k];
    }
    std::vector<int64_t> index(rank, 0);
    const int64_t inner = dims[rank - 1];
    const std::size_t rows = data.size() / size / static_cast<std::size_t>(inner);
    char* dst = out.data();
    for (std::size_t r = 0; r < rows; ++r) {
        int64_t base = 0;
        for (std::size_t k = 0; k + 1 < rank; ++k)
            base += index[k] * src_stride[k];
        for (int64_t j = 0; j < inner; ++j, dst += size)
            std::memcpy(dst, data.data() + (base + j * src_stride[rank - 1]) * size, size);
        for (std::size_t k = rank - 1; k-- > 0;) {  // the next row's index, last axis fastest
            if (++index[k] < dims[k]) break;
            index[k] = 0;
        }
    }
    return out;
}

uint32_t read_le(std::string_view b, std::size_t at, int n) {
    uint32_t v = 0;
    for (int i = n - 1; i >= 0; --i)
        v = (v << 8) | static_cast<unsigned char>(b[at + static_cast<std::size_t>(i)]);
    return v;
}

std::string_view descr_of(DType dtype) {
    switch (dtype) {
        case DType::float16:
            return "f2";
        case DType::float32:
            return "f4";
        case DType::float64:
            return "f8";
        case DType::int32:
            return "i4";
        case DType::int64:
            return "i8";
        case DType::uint8:
            return "u1";
        case DType::bool_:
            return "b1";
        case DType::bfloat16:
            break;
    }
    throw errors::InvalidArgumentError(
        "save_npy: NumPy has no bfloat16 dtype; cast the tensor to float32 first");
}

}  // namespace

namespace npy {

std::string encode_header(const Tensor& t) {
    const std::string_view code = descr_of(t.dtype());
    const char order = code[1] == '1' ? '|' : kNativeOrder;
    const auto& dims = t.shape().dims();
    std::string shape = "(";
    for (std::size_t i = 0; i < dims.size(); ++i)
        shape += fmt::format("{}{}", i == 0 ? "" : ", ", dims[i]);
    shape += dims.size() == 1 ? ",)" : ")";
    std::string dict = fmt::format(
        "{{'descr': '{}{}', 'fortran_order': False, 'shape': {}, }}", order, code, shape);
    const bool v1 = dict.size() + 1 + kMagic.size() + 4 <= 65535;
    const std::size_t prefix = kMagic.size() + 2 + (v1 ? 2 : 4);
    const std::size_t total = (prefix + dict.size() + 1 + kAlign - 1) / kAlign * kAlign;
    dict.append(total - prefix - dict.size() - 1, ' ');
    dict += '\n';
    std::string out(kMagic);
    out += static_cast<char>(v1 ? 1 : 2);
    out += '\0';
    const std::size_t len = dict.size();
    for (int i = 0; i < (v1 ? 2 : 4); ++i)
        out += static_cast<char>((len >> (8 * i)) & 0xFF);
    return out + dict;
}

Tensor decode(std::string_view bytes, const std::string& name) {
    if (bytes.size() < kMagic.size() || bytes.substr(0, kMagic.size()) != kMagic) {
        if (!bytes.empty() && static_cast<unsigned char>(bytes[0]) == 0x80)
            corrupt(name, "it looks like a Python pickle, which tapeflow never loads");
        corrupt(name, "bad magic (expected \\x93NUMPY)");
    }
    if (bytes.size() < kMagic.size() + 4) corrupt(name, "truncated header");
    const int major = static_cast<unsigned char>(bytes[6]);
    const int minor = static_cast<unsigned char>(bytes[7]);
    if (major < 1 || major > 3 || minor != 0)
        corrupt(name, fmt::format("unknown format version {}.{}", major, minor));
    const int len_size = major == 1 ? 2 : 4;
    const std::size_t prefix = 8 + static_cast<std::size_t>(len_size);
    if (bytes.size() < prefix) corrupt(name, "truncated header");
    const std::size_t header_len = read_le(bytes, 8, len_size);
    if (header_len > bytes.size() - prefix)
        corrupt(name, fmt::format("the header says {} bytes, the file is shorter", header_len));
    std::string_view text = bytes.substr(prefix, header_len);
    if (major < 3 && std::any_of(text.begin(), text.end(), [](char c) { return c & 0x80; }))
        corrupt(name, "non-ASCII header in format 1.0/2.0");
    const auto dict = LiteralParser(text, name).dict();
    for (const auto& [key, value] : dict) {
        if (key != "descr" && key != "fortran_order" && key != "shape")
            corrupt(name, fmt::format("unexpected header key '{}'", key));
    }
    for (const char* key : {"descr", "fortran_order", "shape"}) {
        if (!dict.contains(key)) corrupt(name, fmt::format("the header has no '{}'", key));
    }
    const NpyType type = parse_descr(dict.at("descr"), name);
    const bool* fortran = std::get_if<bool>(&dict.at("fortran_order").v);
    if (fortran == nullptr) corrupt(name, "'fortran_order' is not True or False");
    const auto* shape_items = std::get_if<PyTuple>(&dict.at("shape").v);
    if (shape_items == nullptr || dict.at("shape").is_list) corrupt(name, "'shape' is not a tuple");
    std::vector<int64_t> dims;
    std::size_t count = 1;
    bool overflow = false;
    for (const PyValue& item : *shape_items) {
        const auto* d = std::get_if<int64_t>(&item.v);
        if (d == nullptr || *d < 0) corrupt(name, "'shape' holds something other than sizes >= 0");
        dims.push_back(*d);
        if (*d != 0 && count > SIZE_MAX / static_cast<std::size_t>(type.size) / *d) overflow = true;
        count *= static_cast<std::size_t>(*d);
    }
    if (std::find(dims.begin(), dims.end(), 0) != dims.end()) count = 0, overflow = false;
    const std::string_view data = bytes.substr(prefix + header_len);
    if (overflow || count * static_cast<std::size_t>(type.size) > data.size()) {
        throw errors::DataLossError(fmt::format(
            "{}: truncated .npy file: shape ({}) of {}-byte elements needs more than the {} data "
            "bytes present",
            name,
            fmt::join(dims, ", "),
            type.size,
            data.size()));
    }
    if (count * static_cast<std::size_t>(type.size) < data.size()) {
        throw errors::DataLossError(
            fmt::format("{}: .npy file has {} bytes after the data its header describes",
                        name,
                        data.size() - count * static_cast<std::size_t>(type.size)));
    }
    Tensor out = Tensor::empty(Shape(dims), type.dtype);
    if (count == 0) return out;
    std::string reordered;
    std::string_view src = data;
    if (*fortran && dims.size() > 1) {
        reordered = fortran_to_c(data, dims, static_cast<std::size_t>(type.size));
        src = reordered;
    }
    convert(src.data(), count, type, static_cast<char*>(out.mutable_raw_data()));
    return out;
}

}  // namespace npy

void save_npy(const std::string& path, const Tensor& tensor) {
    const Tensor host = tensor.cpu();
    const std::string header = npy::encode_header(host);
    const std::string_view pieces[] = {header,
                                       {static_cast<const char*>(host.raw_data()), host.nbytes()}};
    write_file_atomically(path, pieces);
}

Tensor load_npy(const std::string& path) {
    return npy::decode(read_whole_file(path), path);
}

void save_npz(const std::string& path,
              const std::map<std::string, Tensor>& tensors,
              bool compressed) {
    std::vector<Tensor> hosts;
    std::vector<std::string> headers;
    hosts.reserve(tensors.size());
    headers.reserve(tensors.size());
    std::vector<zip::MemberToWrite> members;
    for (const auto& [name, tensor] : tensors) {
        if (name.empty()) throw errors::InvalidArgumentError("save_npz: an array name is empty");
        const Tensor& host = hosts.emplace_back(tensor.cpu());
        const std::string& header = headers.emplace_back(npy::encode_header(host));
        members.push_back(
            {name + ".npy", {header, {static_cast<const char*>(host.raw_data()), host.nbytes()}}});
    }
    zip::write_archive(path, members, compressed);
}

std::map<std::string, Tensor> load_npz(const std::string& path) {
    std::map<std::string, Tensor> out;
    for (zip::Member& m : zip::read_archive(read_whole_file(path), path)) {
        const std::string what = fmt::format("{}: member '{}'", path, m.name);
        if (!m.name.ends_with(".npy")) {
            throw errors::InvalidArgumentError(
                fmt::format("{} is not a .npy array (np.savez writes only .npy members)", what));
        }
        std::string key = m.name.substr(0, m.name.size() - 4);
        Tensor t = npy::decode(m.bytes, what);
        m.bytes = std::string();
        if (!out.emplace(std::move(key), std::move(t)).second)
            throw errors::DataLossError(fmt::format("{} appears twice", what));
    }
    return out;
}

}  // namespace tapeflow::io
