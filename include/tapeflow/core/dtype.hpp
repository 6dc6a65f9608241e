// DType: the element types a Tensor can hold, their names, sizes and categories.
// Host value types for the 16-bit floats live in half.hpp; the C++ type <-> DType map is here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include <tapeflow/core/export.hpp>
#include <tapeflow/core/fmt_support.hpp>
#include <tapeflow/core/half.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow {

/// Element type of a tensor. The numbering is tapeflow's own (not TensorFlow's DataType enum).
enum class DType : uint8_t { float32, float64, int32, int64, uint8, bool_, float16, bfloat16 };

inline constexpr DType float32 = DType::float32;
inline constexpr DType float64 = DType::float64;
inline constexpr DType int32 = DType::int32;
inline constexpr DType int64 = DType::int64;
inline constexpr DType uint8 = DType::uint8;
inline constexpr DType bool_ = DType::bool_;
inline constexpr DType float16 = DType::float16;
inline constexpr DType bfloat16 = DType::bfloat16;

/// Number of dtypes, for tables indexed by DType.
inline constexpr int kNumDTypes = 8;

/// "float32", "float64", "int32", "int64", "uint8", "bool", "float16", "bfloat16" (TensorFlow's
/// names).
std::string_view dtype_name(DType dtype);
/// Bytes per element.
std::size_t dtype_size(DType dtype);
/// float16, bfloat16, float32, float64.
bool is_floating(DType dtype);
/// int32, int64, uint8 (bool is not an integer type, as in TensorFlow).
bool is_integer(DType dtype);
/// Parses a dtype name ("float32", "float", "double", "int64", "bool", "half", ...);
/// throws InvalidArgumentError for anything else.
DType parse_dtype(std::string_view name);

/// The C++ value type stored for each DType, and the DType of each C++ arithmetic type.
template <class T>
struct dtype_of;
template <>
struct dtype_of<float> {
    static constexpr DType value = DType::float32;
};
template <>
struct dtype_of<double> {
    static constexpr DType value = DType::float64;
};
template <>
struct dtype_of<int32_t> {
    static constexpr DType value = DType::int32;
};
template <>
struct dtype_of<int64_t> {
    static constexpr DType value = DType::int64;
};
template <>
struct dtype_of<uint8_t> {
    static constexpr DType value = DType::uint8;
};
template <>
struct dtype_of<bool> {
    static constexpr DType value = DType::bool_;
};
template <>
struct dtype_of<Half> {
    static constexpr DType value = DType::float16;
};
template <>
struct dtype_of<BFloat16> {
    static constexpr DType value = DType::bfloat16;
};
// `long long` is a distinct type from int64_t (= long) on LP64 Linux; 64-bit either way.
template <>
struct dtype_of<long long> {
    static constexpr DType value = DType::int64;
};
template <>
struct dtype_of<int16_t> {
    static constexpr DType value = DType::int32;
};
template <>
struct dtype_of<int8_t> {
    static constexpr DType value = DType::int32;
};

template <class T>
inline constexpr DType dtype_of_v = dtype_of<std::remove_cvref_t<T>>::value;

/// A C++ type that maps to a DType (usable with constant(), item(), to_vector()).
template <class T>
concept ScalarType = requires {
    dtype_of<std::remove_cvref_t<T>>::value;
};

}  // namespace tapeflow

template <>
struct fmt::formatter<tapeflow::DType> : tapeflow::detail::StrFormatter {
    template <class Ctx>
    auto format(const tapeflow::DType& v, Ctx& ctx) const {
        return write(tapeflow::dtype_name(v), ctx);
    }
};

TAPEFLOW_API_END
