// Host value types for the 16-bit float dtypes (IEEE binary16 and bfloat16).
// They only store bits and convert to and from float; arithmetic happens in float (as on the GPU,
// where these dtypes are storage formats with float32 accumulation).
#pragma once

#include <cstdint>

#include <tapeflow/core/export.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow {

/// IEEE 754 binary16 value (DType::float16). Conversions round to nearest even.
struct Half {
    uint16_t bits = 0;
    Half() = default;
    explicit Half(float value);
    explicit operator float() const;
    static Half from_bits(uint16_t b) {
        Half h;
        h.bits = b;
        return h;
    }
};

/// bfloat16 value (DType::bfloat16): the upper 16 bits of a float32, rounded to nearest even.
struct BFloat16 {
    uint16_t bits = 0;
    BFloat16() = default;
    explicit BFloat16(float value);
    explicit operator float() const;
    static BFloat16 from_bits(uint16_t b) {
        BFloat16 h;
        h.bits = b;
        return h;
    }
};

}  // namespace tapeflow

TAPEFLOW_API_END
