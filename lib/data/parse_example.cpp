// tf::io::parse_example: a direct reader of the Example wire format (Example.features ->
// map<string, Feature> -> float_list / int64_list), writing values straight into the batch
// tensors. Roughly ten times faster than Example::parse + tensors + stack for small records,
// which is what lets a parsing pipeline keep up with the reader (benchmarks/bench_data.cpp).
#include <cstring>
#include <string_view>

#include <fmt/core.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/data/parse_example.hpp>
#include <tapeflow/ops/array.hpp>

namespace tapeflow::io {
namespace {

struct Malformed {};  // thrown inside the decoder, turned into InvalidArgumentError per record

class Wire {
public:
    explicit Wire(std::string_view bytes)
        : p_(reinterpret_cast<const uint8_t*>(bytes.data())), end_(p_ + bytes.size()) {}
    bool done() const { return p_ >= end_; }

    uint64_t varint() {
        if (p_ < end_ && *p_ < 0x80) [[likely]]
            return *p_++;  // tags and small lengths: one byte, inlined
        return varint_long();
    }
    [[gnu::noinline]] uint64_t varint_long() {
        uint64_t v = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            if (p_ >= end_) throw Malformed{};
            const uint8_t b = *p_++;
            v |= static_cast<uint64_t>(b & 0x7f) << shift;
            if (!(b & 0x80)) return v;
        }
        throw Malformed{};
    }
    std::string_view bytes() {
        const uint64_t n = varint();
        if (n > static_cast<uint64_t>(end_ - p_)) throw Malformed{};
        std::string_view out(reinterpret_cast<const char*>(p_), static_cast<std::size_t>(n));
        p_ += n;
        return out;
    }
    float fixed32_float() {
        if (end_ - p_ < 4) throw Malformed{};
        float f;
        std::memcpy(&f, p_, 4);  // little-endian on every platform tapeflow builds for
        p_ += 4;
        return f;
    }
    void skip(uint32_t wire_type) {
        switch (wire_type) {
            case 0:
                varint();
                return;
            case 1:
                advance(8);
                return;
            case 2:
                bytes();
                return;
            case 5:
                advance(4);
                return;
            default:
                throw Malformed{};  // groups are not used by Example
        }
    }

private:
    void advance(std::ptrdiff_t n) {
        if (end_ - p_ < n) throw Malformed{};
        p_ += n;
    }
    const uint8_t* p_;
    const uint8_t* end_;
};

// The Feature message of each requested name (the last one wins, as protobuf maps do).
void find_features(std::string_view example,
                   const std::vector<std::string_view>& names,
                   std::vector<std::string_view>& found,
                   std::vector<char>& present) {
    Wire ex(example);
    while (!ex.done()) {
        const uint64_t tag = ex.varint();
        if (tag != 0x0a) {  // Example.features = 1
            ex.skip(static_cast<uint32_t>(tag & 7));
            continue;
        }
        Wire fs(ex.bytes());
        while (!fs.done()) {
            const uint64_t ftag = fs.varint();
            if (ftag != 0x0a) {  // Features.feature = 1 (map entries)
                fs.skip(static_cast<uint32_t>(ftag & 7));
                continue;
            }
            Wire entry(fs.bytes());
            std::string_view key, value;
            while (!entry.done()) {
                const uint64_t etag = entry.varint();
                if (etag == 0x0a)
                    key = entry.bytes();
                else if (etag == 0x12)
                    value = entry.bytes();
                else
                    entry.skip(static_cast<uint32_t>(etag & 7));
            }
            for (std::size_t i = 0; i < names.size(); ++i)
                if (names[i] == key) {
                    found[i] = value;
                    present[i] = 1;
                }
        }
    }
}

// Decodes one Feature into out[0..count); returns the number of values it holds (or -1 when it
// holds another kind of list). Writes only up to `count` values.
template <class T>
int64_t decode_values(std::string_view feature, T* out, int64_t count) {
    constexpr uint64_t kList = std::is_same_v<T, float> ? 0x12 : 0x1a;  // float_list / int64_list
    Wire f(feature);
    int64_t n = 0;
    bool kind_seen = false, other_kind = false;
    auto put = [&](T v) {
        if (n < count) out[n] = v;
        ++n;
    };
    while (!f.done()) {
        const uint64_t tag = f.varint();
        if (tag != kList) {
            if ((tag >> 3) >= 1 && (tag >> 3) <= 3) other_kind = true;
            f.skip(static_cast<uint32_t>(tag & 7));
            continue;
        }
        kind_seen = true;
        Wire list(f.bytes());
        while (!list.done()) {
            const uint64_t vtag = list.varint();
            if constexpr (std::is_same_v<T, float>) {
                if (vtag == 0x0a) {  // packed
                    Wire packed(list.bytes());
                    while (!packed.done())
                        put(packed.fixed32_float());
                } else if (vtag == 0x0d) {
                    put(list.fixed32_float());
                } else {
                    list.skip(static_cast<uint32_t>(vtag & 7));
                }
            } else {
                if (vtag == 0x0a) {
                    Wire packed(list.bytes());
                    while (!packed.done())
                        put(static_cast<int64_t>(packed.varint()));
                } else if (vtag == 0x08) {
                    put(static_cast<int64_t>(list.varint()));
                } else {
                    list.skip(static_cast<uint32_t>(vtag & 7));
                }
            }
        }
    }
    if (!kind_seen && other_kind) return -1;
    return n;
}

template <class T>
void fill_default(T* out, int64_t count, const FixedLenFeature& spec) {
    const auto& d = *spec.default_value;
    for (int64_t i = 0; i < count; ++i)
        out[i] = static_cast<T>(d.size() == 1 ? d[0] : d[static_cast<std::size_t>(i)]);
}

}  // namespace

std::vector<Tensor> parse_example(const std::vector<std::string>& serialized,
                                  const std::vector<FixedLenFeature>& features) {
    const auto batch = static_cast<int64_t>(serialized.size());
    std::vector<Tensor> out;
    std::vector<char*> base;
    std::vector<std::string_view> names;  // per feature, hoisted out of the record loop
    std::vector<int64_t> counts;
    for (const FixedLenFeature& spec : features) {
        if (spec.dtype != DType::float32 && spec.dtype != DType::int64)
            throw errors::InvalidArgumentError(fmt::format(
                "parse_example: feature '{}' has dtype {}; float32 and int64 are supported",
                spec.name,
                dtype_name(spec.dtype)));
        const int64_t count = spec.shape.num_elements();
        if (spec.default_value && spec.default_value->size() != 1 &&
            static_cast<int64_t>(spec.default_value->size()) != count)
            throw errors::InvalidArgumentError(fmt::format(
                "parse_example: the default of feature '{}' has {} values; its shape {} needs {}",
                spec.name,
                spec.default_value->size(),
                spec.shape.debug_string(),
                count));
        std::vector<int64_t> dims{batch};
        dims.insert(dims.end(), spec.shape.dims().begin(), spec.shape.dims().end());
        out.push_back(Tensor::empty(Shape(dims), spec.dtype));
        base.push_back(static_cast<char*>(out.back().mutable_raw_data()));
        names.push_back(spec.name);
        counts.push_back(count);
    }
    std::vector<std::string_view> found(features.size());
    std::vector<char> present(features.size());
    for (int64_t r = 0; r < batch; ++r) {
        std::fill(present.begin(), present.end(), 0);
        try {
            find_features(serialized[static_cast<std::size_t>(r)], names, found, present);
        } catch (const Malformed&) {
            throw errors::InvalidArgumentError(fmt::format(
                "Could not parse example input (record {} of the batch is not a tf.train.Example)",
                r));
        }
        for (std::size_t i = 0; i < features.size(); ++i) {
            const FixedLenFeature& spec = features[i];
            const int64_t count = counts[i];
            const bool is_float = spec.dtype == DType::float32;
            char* dst = base[i] + r * count * (is_float ? 4 : 8);
            if (!present[i]) {
                if (!spec.default_value)
                    throw errors::InvalidArgumentError(fmt::format(
                        "Feature: {} (data type: {}) is required but could not be found "
                        "(record {} of the batch).",
                        spec.name,
                        dtype_name(spec.dtype),
                        r));
                if (is_float)
                    fill_default(reinterpret_cast<float*>(dst), count, spec);
                else
                    fill_default(reinterpret_cast<int64_t*>(dst), count, spec);
                continue;
            }
            int64_t n = 0;
            try {
                n = is_float ? decode_values(found[i], reinterpret_cast<float*>(dst), count)
                             : decode_values(found[i], reinterpret_cast<int64_t*>(dst), count);
            } catch (const Malformed&) {
                throw errors::InvalidArgumentError(
                    fmt::format("Could not parse example input (key {} of record {} of the batch)",
                                spec.name,
                                r));
            }
            if (n == -1)
                throw errors::InvalidArgumentError(
                    fmt::format("Key: {}, Index: {}. Data types don't match. Expected type: {}",
                                spec.name,
                                r,
                                dtype_name(spec.dtype)));
            if (n != count)
                throw errors::InvalidArgumentError(fmt::format(
                    "Key: {}, Index: {}. Number of {} values != expected. Values size: {} but "
                    "output shape: {}",
                    spec.name,
                    r,
                    is_float ? "float" : "int64",
                    n,
                    spec.shape.debug_string()));
        }
    }
    return out;
}

std::vector<Tensor> parse_single_example(const std::string& serialized,
                                         const std::vector<FixedLenFeature>& features) {
    std::vector<Tensor> out = parse_example({serialized}, features);
    for (std::size_t i = 0; i < out.size(); ++i)
        out[i] = reshape(out[i], features[i].shape);
    return out;
}

}  // namespace tapeflow::io
