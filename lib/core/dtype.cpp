// DType names, sizes and categories.
#include <array>
#include <cctype>
#include <string>

#include <fmt/format.h>

#include <tapeflow/core/dtype.hpp>
#include <tapeflow/core/error.hpp>

namespace tapeflow {
namespace {

struct DTypeInfo {
    std::string_view name;
    std::size_t size;
    bool floating;
    bool integer;
};

constexpr std::array<DTypeInfo, kNumDTypes> kInfo{{
    {"float32", 4, true, false},
    {"float64", 8, true, false},
    {"int32", 4, false, true},
    {"int64", 8, false, true},
    {"uint8", 1, false, true},
    {"bool", 1, false, false},
    {"float16", 2, true, false},
    {"bfloat16", 2, true, false},
}};

const DTypeInfo& info(DType d) {
    const auto i = static_cast<std::size_t>(d);
    if (i >= kInfo.size()) {
        throw errors::InvalidArgumentError(fmt::format("invalid DType value {}", i));
    }
    return kInfo[i];
}

}  // namespace

std::string_view dtype_name(DType dtype) {
    return info(dtype).name;
}

std::size_t dtype_size(DType dtype) {
    return info(dtype).size;
}

bool is_floating(DType dtype) {
    return info(dtype).floating;
}

bool is_integer(DType dtype) {
    return info(dtype).integer;
}

DType parse_dtype(std::string_view name) {
    std::string lower(name);
    for (char& c : lower)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower.starts_with("tf.")) lower.erase(0, 3);
    for (std::size_t i = 0; i < kInfo.size(); ++i) {
        if (kInfo[i].name == lower) return static_cast<DType>(i);
    }
    struct Alias {
        std::string_view name;
        DType dtype;
    };
    static constexpr Alias kAliases[] = {
        {"float", DType::float32},
        {"double", DType::float64},
        {"half", DType::float16},
        {"int", DType::int32},
        {"long", DType::int64},
        {"bool_", DType::bool_},
        {"f32", DType::float32},
        {"f64", DType::float64},
        {"i32", DType::int32},
        {"i64", DType::int64},
        {"f16", DType::float16},
        {"bf16", DType::bfloat16},
    };
    for (const auto& alias : kAliases) {
        if (alias.name == lower) return alias.dtype;
    }
    throw errors::InvalidArgumentError(fmt::format(
        "unknown dtype '{}': expected one of float32, float64, int32, int64, uint8, bool, float16, "
        "bfloat16",
        name));
}

}  // namespace tapeflow
