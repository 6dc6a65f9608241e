// CRC-32C (Castagnoli), as TFRecord framing, TensorBoard event files and checkpoints use it: the
// SSE4.2 crc32 instruction when the CPU has it (checked once at run time), else a table fallback.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tapeflow::io {

/// CRC-32C of `n` bytes, continuing from `crc` (the CRC of the bytes before; 0 to start).
/// crc32c("123456789") == 0xE3069283.
uint32_t crc32c_extend(uint32_t crc, const void* data, std::size_t n);
inline uint32_t crc32c(std::string_view bytes) {
    return crc32c_extend(0, bytes.data(), bytes.size());
}

/// The table-driven implementation, always available (tests compare it with the hardware path).
uint32_t crc32c_extend_portable(uint32_t crc, const void* data, std::size_t n);
/// True when crc32c_extend uses the SSE4.2 instruction on this CPU.
bool crc32c_uses_hardware();

/// TFRecord's masked CRC: rotate right by 15 bits, add 0xA282EAD8 (so CRCs of CRCs stay useful).
inline uint32_t mask_crc(uint32_t crc) {
    return ((crc >> 15) | (crc << 17)) + 0xA282EAD8u;
}
inline uint32_t unmask_crc(uint32_t masked) {
    const uint32_t rot = masked - 0xA282EAD8u;
    return (rot >> 17) | (rot << 15);
}
inline uint32_t masked_crc32c(std::string_view bytes) {
    return mask_crc(crc32c(bytes));
}

}  // namespace tapeflow::io
