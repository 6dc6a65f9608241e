// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011), laid out
// as TensorFlow's PhiloxRandom: a 64-bit key and a 128-bit counter; each block of four 32-bit words
// is f(key, counter), and the counter then moves on by one. Blocks are pure functions of their
// position, so any thread (CPU or GPU) can start anywhere with skip().
#pragma once

#include <cstdint>

#include "core/hd.hpp"

namespace tapeflow::philox {

struct Block {
    uint32_t v[4];
};

struct Key {
    uint32_t k[2];
};

TAPEFLOW_HD inline void mulhilo(uint32_t a, uint32_t b, uint32_t& hi, uint32_t& lo) {
    const uint64_t product = static_cast<uint64_t>(a) * b;
    hi = static_cast<uint32_t>(product >> 32);
    lo = static_cast<uint32_t>(product);
}

/// The 10-round Philox4x32 bijection of `counter` under `key`.
TAPEFLOW_HD inline Block generate(Key key, Block counter) {
    constexpr uint32_t kMul0 = 0xD2511F53U, kMul1 = 0xCD9E8D57U;
    constexpr uint32_t kWeyl0 = 0x9E3779B9U, kWeyl1 = 0xBB67AE85U;
    for (int round = 0; round < 10; ++round) {
        uint32_t hi0, lo0, hi1, lo1;
        mulhilo(kMul0, counter.v[0], hi0, lo0);
        mulhilo(kMul1, counter.v[2], hi1, lo1);
        counter = Block{{hi1 ^ counter.v[1] ^ key.k[0], lo1, hi0 ^ counter.v[3] ^ key.k[1], lo0}};
        key.k[0] += kWeyl0;
        key.k[1] += kWeyl1;
    }
    return counter;
}

/// A position in a Philox stream (TensorFlow's PhiloxRandom).
struct Generator {
    Key key;
    Block counter;

    /// TensorFlow's PhiloxRandom(seed, seed2): the key is `seed`, the counter starts at
    /// (0, 0, seed2) (GuardedPhiloxRandom, the generator of every stateful random kernel).
    TAPEFLOW_HD static Generator from_seeds(uint64_t seed, uint64_t seed2) {
        return Generator{
            Key{{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)}},
            Block{{0, 0, static_cast<uint32_t>(seed2), static_cast<uint32_t>(seed2 >> 32)}}};
    }

    /// Moves the 128-bit counter on by `blocks`.
    TAPEFLOW_HD void skip(uint64_t blocks) {
        const auto lo = static_cast<uint32_t>(blocks);
        auto hi = static_cast<uint32_t>(blocks >> 32);
        counter.v[0] += lo;
        if (counter.v[0] < lo) ++hi;
        counter.v[1] += hi;
        if (counter.v[1] < hi && ++counter.v[2] == 0) ++counter.v[3];
    }

    TAPEFLOW_HD Block next() {
        const Block block = generate(key, counter);
        skip(1);
        return block;
    }
};

/// One 32-bit word at a time from a generator (TensorFlow's SingleSampleAdapter).
struct WordStream {
    Generator gen;
    Block block{};
    int used = 4;

    TAPEFLOW_HD uint32_t next() {
        if (used == 4) {
            block = gen.next();
            used = 0;
        }
        return block.v[used++];
    }
};

}  // namespace tapeflow::philox
