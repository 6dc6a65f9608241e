// CRC-32C: slicing-by-8 tables for the portable path; on x86-64 the SSE4.2 crc32 instruction (8
// bytes per instruction), compiled with a target attribute so it works whatever -march is.
#include "io/crc32c.hpp"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace tapeflow::io {
namespace {

constexpr uint32_t kPoly = 0x82F63B78u;  // reflected Castagnoli polynomial

using Tables = std::array<std::array<uint32_t, 256>, 8>;

constexpr Tables make_tables() {
    Tables t{};
    for (uint32_t i = 0; i < 256; ++i) {
        uint32_t c = i;
        for (int k = 0; k < 8; ++k)
            c = (c & 1) ? (c >> 1) ^ kPoly : c >> 1;
        t[0][i] = c;
    }
    for (std::size_t s = 1; s < 8; ++s) {
        for (uint32_t i = 0; i < 256; ++i)
            t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xFF];
    }
    return t;
}

constexpr Tables kTables = make_tables();

#if defined(__x86_64__)
// Three independent crc32 streams over adjacent blocks hide the instruction's 3-cycle latency
// (about 3x the throughput of one stream); the block CRCs are combined by "appending zeros" with
// precomputed GF(2) operators (Mark Adler's crc32c.c technique).
constexpr std::size_t kLongBlock = 8192;
constexpr std::size_t kShortBlock = 256;
using ShiftTable = std::array<std::array<uint32_t, 256>, 4>;

uint32_t gf2_times(const uint32_t* mat, uint32_t vec) {
    uint32_t sum = 0;
    for (; vec != 0; vec >>= 1, ++mat) {
        if (vec & 1) sum ^= *mat;
    }
    return sum;
}

void gf2_square(uint32_t* square, const uint32_t* mat) {
    for (int n = 0; n < 32; ++n)
        square[n] = gf2_times(mat, mat[n]);
}

// The operator appending `len` zero bytes (len a power of two) to a raw CRC register.
ShiftTable make_shift_table(std::size_t len) {
    uint32_t odd[32], even[32];
    odd[0] = kPoly;
    for (int n = 1; n < 32; ++n)
        odd[n] = uint32_t{1} << (n - 1);
    gf2_square(even, odd);  // 2 zero bits
    gf2_square(odd, even);  // 4 zero bits
    const uint32_t* op = nullptr;
    for (;;) {
        gf2_square(even, odd);  // 8, 32, ... bits
        len >>= 1;
        if (len == 0) {
            op = even;
            break;
        }
        gf2_square(odd, even);
        len >>= 1;
        if (len == 0) {
            op = odd;
            break;
        }
    }
    ShiftTable t{};
    for (uint32_t n = 0; n < 256; ++n) {
        for (int k = 0; k < 4; ++k)
            t[static_cast<std::size_t>(k)][n] = gf2_times(op, n << (8 * k));
    }
    return t;
}

uint32_t shift(const ShiftTable& t, uint32_t crc) {
    return t[0][crc & 0xff] ^ t[1][(crc >> 8) & 0xff] ^ t[2][(crc >> 16) & 0xff] ^ t[3][crc >> 24];
}

__attribute__((target("sse4.2"))) uint64_t crc_word(uint64_t crc, const unsigned char* p) {
    uint64_t word;
    std::memcpy(&word, p, 8);  // unaligned-safe
    return _mm_crc32_u64(crc, word);
}

// Three streams over blocks of `block` bytes while at least 3 blocks remain.
__attribute__((target("sse4.2"))) uint64_t three_way(
    uint64_t c0, const unsigned char*& p, std::size_t& n, std::size_t block, const ShiftTable& t) {
    while (n >= 3 * block) {
        uint64_t c1 = 0, c2 = 0;
        for (const unsigned char* end = p + block; p < end; p += 8) {
            c0 = crc_word(c0, p);
            c1 = crc_word(c1, p + block);
            c2 = crc_word(c2, p + 2 * block);
        }
        c0 = shift(t, static_cast<uint32_t>(c0)) ^ c1;
        c0 = shift(t, static_cast<uint32_t>(c0)) ^ c2;
        p += 2 * block;
        n -= 3 * block;
    }
    return c0;
}

__attribute__((target("sse4.2"))) uint32_t extend_sse42(uint32_t crc,
                                                        const unsigned char* p,
                                                        std::size_t n) {
    static const ShiftTable long_shift = make_shift_table(kLongBlock);
    static const ShiftTable short_shift = make_shift_table(kShortBlock);
    uint64_t c = static_cast<uint32_t>(~crc);
    c = three_way(c, p, n, kLongBlock, long_shift);
    c = three_way(c, p, n, kShortBlock, short_shift);
    for (; n >= 8; n -= 8, p += 8)
        c = crc_word(c, p);
    auto c32 = static_cast<uint32_t>(c);
    for (; n > 0; --n, ++p)
        c32 = _mm_crc32_u8(c32, *p);
    return ~c32;
}

bool cpu_has_sse42() {
    __builtin_cpu_init();
    return __builtin_cpu_supports("sse4.2");
}
#endif

}  // namespace

uint32_t crc32c_extend_portable(uint32_t crc, const void* data, std::size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    uint32_t c = ~crc;
    for (; n >= 8; n -= 8, p += 8) {
        // Little-endian word load; both halves of the 8-byte block go through their own table.
        const uint32_t lo =
            (uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24) ^
            c;
        c = kTables[7][lo & 0xFF] ^ kTables[6][(lo >> 8) & 0xFF] ^ kTables[5][(lo >> 16) & 0xFF] ^
            kTables[4][lo >> 24] ^ kTables[3][p[4]] ^ kTables[2][p[5]] ^ kTables[1][p[6]] ^
            kTables[0][p[7]];
    }
    for (; n > 0; --n, ++p)
        c = (c >> 8) ^ kTables[0][(c ^ *p) & 0xFF];
    return ~c;
}

bool crc32c_uses_hardware() {
#if defined(__x86_64__)
    static const bool has = cpu_has_sse42();
    return has;
#else
    return false;
#endif
}

uint32_t crc32c_extend(uint32_t crc, const void* data, std::size_t n) {
#if defined(__x86_64__)
    if (crc32c_uses_hardware())
        return extend_sse42(crc, static_cast<const unsigned char*>(data), n);
#endif
    return crc32c_extend_portable(crc, data, n);
}

}  // namespace tapeflow::io
