// Float <-> 16-bit float conversions. float16 uses the compiler's _Float16 (GCC >= 12 on x86-64 and
// AArch64), which rounds to nearest even and handles subnormals, inf and NaN; bfloat16 is the top
// half of a float32 with round-to-nearest-even on the dropped bits.
#include <bit>
#include <cmath>
#include <cstdint>

#include <tapeflow/core/half.hpp>

// The library is built for the baseline x86-64, where _Float16 converts in software (libgcc);
// x86-64-v3 CPUs have F16C, one instruction each way, picked at load (an ifunc). Not under
// ThreadSanitizer: GCC instruments the ifunc's resolver, which the dynamic loader runs before the
// TSan runtime is set up, and every program crashed at load (scripts/sanitize.sh).
#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__)
#define TAPEFLOW_F16C_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define TAPEFLOW_F16C_CLONES
#endif

namespace tapeflow {
namespace {

TAPEFLOW_F16C_CLONES uint16_t half_bits(float value) {
    return std::bit_cast<uint16_t>(static_cast<_Float16>(value));
}

TAPEFLOW_F16C_CLONES float half_value(uint16_t bits) {
    return static_cast<float>(std::bit_cast<_Float16>(bits));
}

}  // namespace

Half::Half(float value) : bits(half_bits(value)) {}

Half::operator float() const {
    return half_value(bits);
}

BFloat16::BFloat16(float value) {
    const auto u = std::bit_cast<uint32_t>(value);
    if (std::isnan(value)) {
        bits = static_cast<uint16_t>((u >> 16) | 0x0040U);  // keep it a (quiet) NaN
        return;
    }
    const uint32_t rounding = 0x7FFFU + ((u >> 16) & 1U);
    bits = static_cast<uint16_t>((u + rounding) >> 16);
}

BFloat16::operator float() const {
    return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

}  // namespace tapeflow
