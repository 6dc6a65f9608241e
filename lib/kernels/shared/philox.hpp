// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011): a
// counter-based generator. Output block = f(key, counter), so element i of a random tensor is a
// pure function of (seeds, call number, i): identical for any thread count and on CPU and GPU. Also
// the distribution transforms shared by the CPU and CUDA kernels.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/hd.hpp"
#include "kernels/shared/exact_math.hpp"

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

/// One random stream: a key from the seeds, and the call number of this seed pair (successive
/// calls with the same seeds get disjoint streams). `substream` separates independent draws for the
/// same element (the retries of truncated_normal).
struct Stream {
    Key key;
    uint64_t call;

    TAPEFLOW_HD Block block(uint64_t index, uint32_t substream = 0) const {
        return generate(key, Block{{static_cast<uint32_t>(index), static_cast<uint32_t>(index >> 32),
                                    static_cast<uint32_t>(call),
                                    static_cast<uint32_t>(call >> 32) ^ (substream << 16)}});
    }
};

/// Uniform float in [0, 1) from the top 24 bits (every value is a multiple of 2^-24).
TAPEFLOW_HD inline float unit_float(uint32_t bits) {
    return static_cast<float>(bits >> 8) * (1.0f / 16777216.0f);
}

/// Uniform double in [0, 1) from 53 bits of two words.
TAPEFLOW_HD inline double unit_double(uint32_t hi, uint32_t lo) {
    const uint64_t bits = (static_cast<uint64_t>(hi) << 21) ^ (lo >> 11);
    return static_cast<double>(bits & ((uint64_t{1} << 53) - 1)) * (1.0 / 9007199254740992.0);
}

/// Box-Muller: two independent standard normals from two uniforms in [0, 1), with the log, sin and
/// cos of exact_math.hpp, so host and device give the same bits (the libm functions differ by
/// ulps).
TAPEFLOW_HD inline void box_muller(double u1, double u2, double& z0, double& z1) {
    // 1 - u1 is in (0, 1]: log is finite
    const double radius = exact::sqrt(exact::mul(-2.0, exact::log(1.0 - u1)));
    double s = 0, c = 0;
    exact::sincos_turns(u2, s, c);
    z0 = exact::mul(radius, c);
    z1 = exact::mul(radius, s);
}

/// a + b * x with the product rounded on its own (no fma on either device): the affine step of
/// every distribution, shared so that CPU and CUDA kernels round alike.
TAPEFLOW_HD inline double affine(double a, double b, double x) { return a + exact::mul(b, x); }
TAPEFLOW_HD inline float affine(float a, float b, float x) { return a + exact::mul(b, x); }

// ---- Element i of each distribution: pure functions of (stream, i), used by CPU and CUDA kernels.

/// Uniform double in [0, 1) for element i (two elements per block).
TAPEFLOW_HD inline double uniform_double_at(const Stream& s, uint64_t i) {
    const Block b = s.block(i / 2);
    const unsigned lane = static_cast<unsigned>(i % 2) * 2;
    return unit_double(b.v[lane], b.v[lane + 1]);
}

/// Uniform float in [0, 1) for element i (four elements per block).
TAPEFLOW_HD inline float uniform_float_at(const Stream& s, uint64_t i) {
    return unit_float(s.block(i / 4).v[i % 4]);
}

/// Uniform integer in [0, range) for element i: 32 random bits when the range fits in 32 bits,
/// else 64, reduced modulo the range (as TensorFlow's RandomUniformInt does).
TAPEFLOW_HD inline uint64_t uniform_int_at(const Stream& s, uint64_t i, uint64_t range) {
    const Block b = s.block(i / 2);
    const unsigned lane = static_cast<unsigned>(i % 2) * 2;
    const uint64_t bits = range <= 0xFFFFFFFFULL
                              ? b.v[lane]
                              : (static_cast<uint64_t>(b.v[lane]) << 32) | b.v[lane + 1];
    return bits % range;
}

/// Standard normal for element i (one Box-Muller pair per block).
TAPEFLOW_HD inline double normal_at(const Stream& s, uint64_t i) {
    const Block b = s.block(i / 2);
    double z0 = 0, z1 = 0;
    box_muller(unit_double(b.v[0], b.v[1]), unit_double(b.v[2], b.v[3]), z0, z1);
    return i % 2 == 0 ? z0 : z1;
}

/// Standard normal restricted to [-2, 2] for element i: draws from its own substreams until a value
/// falls inside (each try accepts with probability 0.95^2 per pair, so 64 tries never run out in
/// practice; the fallback 0 keeps the function total).
TAPEFLOW_HD inline double truncated_normal_at(const Stream& s, uint64_t i) {
    for (uint32_t attempt = 1; attempt <= 64; ++attempt) {
        const Block b = s.block(i, attempt);
        double z0 = 0, z1 = 0;
        box_muller(unit_double(b.v[0], b.v[1]), unit_double(b.v[2], b.v[3]), z0, z1);
        if (::fabs(z0) <= 2.0) return z0;
        if (::fabs(z1) <= 2.0) return z1;
    }
    return 0.0;
}

/// random_shuffle's permutation of `rows` rows: Fisher-Yates, the swap partner of row i drawn from
/// element i of the stream (a function of the stream and the row count only, so the CUDA kernel
/// draws it on the host too).
inline void shuffle_permutation(const Stream& s, int64_t rows, int64_t* perm) {
    for (int64_t i = 0; i < rows; ++i) perm[i] = i;
    for (int64_t i = rows - 1; i > 0; --i) {
        const auto j = static_cast<int64_t>(
            uniform_int_at(s, static_cast<uint64_t>(i), static_cast<uint64_t>(i) + 1));
        const int64_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
}

}  // namespace tapeflow::philox
