// CPython's random.Random for integer seeds: MT19937 seeded by init_by_array with the seed's 32-bit
// words (least significant first), and randint(a, b) by rejection from getrandbits. TensorFlow 2's
// eager context keeps one random.Random(global_seed) and draws the op seed of every random op
// without its own seed from randint(0, 2**31 - 1), so tapeflow needs the same sequence.
#pragma once

#include <array>
#include <cstdint>

namespace tapeflow::random_detail {

class PythonRandom {
public:
    explicit PythonRandom(uint64_t seed = 0) {
        // init_genrand(19650218), then mix in the key words (Matsumoto and Nishimura's
        // init_by_array)
        state_[0] = 19650218U;
        for (uint32_t i = 1; i < kN; ++i) {
            state_[i] = 1812433253U * (state_[i - 1] ^ (state_[i - 1] >> 30)) + i;
        }
        const std::array<uint32_t, 2> key{static_cast<uint32_t>(seed),
                                          static_cast<uint32_t>(seed >> 32)};
        const uint32_t key_length = (seed >> 32) != 0 ? 2 : 1;
        uint32_t i = 1, j = 0;
        for (uint32_t k = kN; k > 0; --k) {
            state_[i] =
                (state_[i] ^ ((state_[i - 1] ^ (state_[i - 1] >> 30)) * 1664525U)) + key[j] + j;
            ++i;
            ++j;
            if (i >= kN) {
                state_[0] = state_[kN - 1];
                i = 1;
            }
            if (j >= key_length) j = 0;
        }
        for (uint32_t k = kN - 1; k > 0; --k) {
            state_[i] = (state_[i] ^ ((state_[i - 1] ^ (state_[i - 1] >> 30)) * 1566083941U)) - i;
            ++i;
            if (i >= kN) {
                state_[0] = state_[kN - 1];
                i = 1;
            }
        }
        state_[0] = 0x80000000U;
        index_ = kN;
    }

    /// The next 32-bit output (genrand_uint32).
    uint32_t next32() {
        if (index_ >= kN) twist();
        uint32_t y = state_[index_++];
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c5680U;
        y ^= (y << 15) & 0xefc60000U;
        return y ^ (y >> 18);
    }

    /// randint(0, 2**31 - 1): getrandbits(32) until the value is below 2**31.
    uint32_t randint_int31() {
        uint32_t r = next32();
        while (r >= 0x80000000U)
            r = next32();
        return r;
    }

private:
    static constexpr uint32_t kN = 624, kM = 397;

    void twist() {
        for (uint32_t k = 0; k < kN; ++k) {
            const uint32_t y = (state_[k] & 0x80000000U) | (state_[(k + 1) % kN] & 0x7fffffffU);
            state_[k] = state_[(k + kM) % kN] ^ (y >> 1) ^ ((y & 1U) != 0 ? 0x9908b0dfU : 0U);
        }
        index_ = 0;
    }

    std::array<uint32_t, kN> state_{};
    uint32_t index_ = kN;
};

}  // namespace tapeflow::random_detail
