// TensorFlow's random distributions (random_distributions.h) as functions of a Philox position,
// shared by the CPU kernels and the CUDA kernels so that both give TensorFlow's CPU numbers.
//
// Outputs come in groups: group g is made from block g of the op's stream (4 floats, 4 int32,
// 2 doubles or 2 int64 per block), except truncated_normal, whose group g draws words from its own
// region that starts 256 blocks per 4 outputs in. The 16-bit floats are computed in float and
// rounded as TensorFlow's Eigen::half and bfloat16 arithmetic rounds (every operation in float, the
// result rounded to nearest even).
#pragma once

#include <cmath>
#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

#include "core/hd.hpp"
#include "kernels/shared/exact_math.hpp"
#include "kernels/shared/float_math.hpp"
#include "kernels/shared/philox.hpp"

namespace tapeflow::philox {

enum class Dist : uint8_t { uniform, normal, truncated_normal };
/// The floating formats: float32 and float64 compute in their own type, float16 and bfloat16 in
/// float, rounded to their precision after each operation.
enum class Format : uint8_t { f32, f64, f16, bf16 };

/// Outputs per group: 2 for the 8-byte types, 4 otherwise.
TAPEFLOW_HD constexpr int group_size(bool eight_bytes) {
    return eight_bytes ? 2 : 4;
}

/// Blocks each truncated_normal group owns (TensorFlow reserves 256 words per output).
TAPEFLOW_HD constexpr uint64_t truncated_group_blocks(int group) {
    return static_cast<uint64_t>(group) * 256 / 4;
}

/// x rounded to `format` (nearest even), as a float (16-bit values are exact floats).
TAPEFLOW_HD inline float round_to(Format format, float x) {
    if (format != Format::f16 && format != Format::bf16) return x;
    const uint32_t bits = exact::float_bits(x);
    const uint32_t sign = bits & 0x80000000U;
    uint32_t magnitude = bits ^ sign;
    if (magnitude >= 0x7f800000U) return x;  // inf and NaN stay
    if (format == Format::bf16) {
        magnitude = (magnitude + 0x7fffU + ((magnitude >> 16) & 1)) & 0xffff0000U;
        return exact::float_from_bits(sign | magnitude);
    }
    const float a = exact::float_from_bits(magnitude);
    float rounded = 0;
    if (a >= 65520.0f) {  // past the largest half (65504) by half an ulp or more: infinity
        rounded = INFINITY;
    } else if (a < 0x1p-14f) {  // subnormal halfs: multiples of 2^-24
        rounded = ::rintf(a * 0x1p24f) * 0x1p-24f;
    } else {  // keep 11 significant bits
        magnitude = (magnitude + 0x0fffU + ((magnitude >> 13) & 1)) & ~0x1fffU;
        rounded = exact::float_from_bits(magnitude);
    }
    return sign != 0 ? -rounded : rounded;
}

// ---- Uniform [0, 1) from random bits (random_distributions_utils.h)

/// 23 random mantissa bits under exponent 0, minus 1.
TAPEFLOW_HD inline float uint32_to_float(uint32_t x) {
    return exact::float_from_bits((127U << 23) | (x & 0x7fffffU)) - 1.0f;
}

/// 52 random mantissa bits (20 of x0, all of x1) under exponent 0, minus 1.
TAPEFLOW_HD inline double uint64_to_double(uint32_t x0, uint32_t x1) {
    const uint64_t mantissa = (static_cast<uint64_t>(x0 & 0xfffffU) << 32) | x1;
    return exact::from_bits((uint64_t{1023} << 52) | mantissa) - 1.0;
}

/// Uniform [0, 1) in a 16-bit format: the low 10 (half) or 7 (bfloat16) bits as the mantissa.
TAPEFLOW_HD inline float uint16_to_unit(Format format, uint32_t x) {
    return format == Format::f16 ? static_cast<float>(x & 0x3ffU) * 0x1p-10f
                                 : static_cast<float>(x & 0x7fU) * 0x1p-7f;
}

// ---- Box-Muller

/// BoxMullerFloat: u1 = max(uniform(x0), 1e-7), v1 = float(2 pi uniform(x1)), r = sqrt(-2 log u1);
/// returns (r sin v1, r cos v1), with glibc's logf and sincosf.
TAPEFLOW_HD inline void box_muller_float(uint32_t x0, uint32_t x1, float& f0, float& f1) {
    constexpr float kEpsilon = 1.0e-7f;
    constexpr double kTwoPi = 2 * 3.14159265358979323846;
    float u1 = uint32_to_float(x0);
    if (u1 < kEpsilon) u1 = kEpsilon;
    const auto v1 =
        static_cast<float>(exact::mul(kTwoPi, static_cast<double>(uint32_to_float(x1))));
#if defined(__CUDA_ARCH__)
    const float r = __fsqrt_rn(exact::mul(-2.0f, exact::logf_tf(u1)));
#else
    const float r = std::sqrt(exact::mul(-2.0f, exact::logf_tf(u1)));
#endif
    float s = 0, c = 0;
    exact::sincosf_tf(v1, s, c);
    f0 = exact::mul(s, r);
    f1 = exact::mul(c, r);
}

// ---- The groups

/// The affine step of the Python wrappers, in the output's arithmetic: rnd * scale + shift
/// (uniform: scale = maxval - minval, shift = minval; normals: stddev and mean), each rounded to
/// the format.
TAPEFLOW_HD inline float affine(Format format, float rnd, float scale, float shift) {
    return round_to(format, round_to(format, exact::mul(rnd, scale)) + shift);
}
TAPEFLOW_HD inline double affine(Format, double rnd, double scale, double shift) {
    return exact::mul(rnd, scale) + shift;
}

/// TensorFlow's BoxMullerDouble from four words (two 52-bit uniforms), host only. Its log and
/// sincos are the C library's, as TensorFlow's kernel calls them on Linux: glibc's double log and
/// sin/cos are not correctly rounded, so only glibc itself gives TensorFlow's bits. A CUDA device
/// has no bit-identical versions, so the CUDA kernels draw float64 normals through this function
/// on the host (cuda/ops_cuda.cpp) and CPU == GPU still holds.
inline void box_muller_double(
    uint32_t x0, uint32_t x1, uint32_t x2, uint32_t x3, double& d0, double& d1) {
    constexpr double kEpsilon = 1.0e-7;
    double u1 = uint64_to_double(x0, x1);
    if (u1 < kEpsilon) u1 = kEpsilon;
    const double v1 = exact::mul(2 * 3.14159265358979323846, uint64_to_double(x2, x3));
    const double r = std::sqrt(exact::mul(-2.0, std::log(u1)));
    double s = 0, c = 0;
#if defined(__GLIBC__)
    ::sincos(v1, &s, &c);
#else
    s = std::sin(v1);  // TensorFlow's path off Linux
    c = std::cos(v1);
#endif
    d0 = exact::mul(s, r);
    d1 = exact::mul(c, r);
}

/// Group `group` of float64 uniforms after the affine step: the float64 draw the CUDA kernel makes
/// on the device.
TAPEFLOW_HD inline void uniform_double_group(
    const Generator& base, uint64_t group, double scale, double shift, double* out) {
    Generator gen = base;
    gen.skip(group);
    const Block b = gen.next();
    out[0] = affine(Format::f64, uint64_to_double(b.v[0], b.v[1]), scale, shift);
    out[1] = affine(Format::f64, uint64_to_double(b.v[2], b.v[3]), scale, shift);
}

/// Group `group` of a float distribution (C = float for f32/f16/bf16, double for f64) after the
/// affine step: writes group_size values to out.
template <class C>
TAPEFLOW_HD void sample_group(
    Dist dist, Format format, const Generator& base, uint64_t group, C scale, C shift, C* out) {
    constexpr bool kDouble = sizeof(C) == 8;
    constexpr int kGroup = group_size(kDouble);
    if constexpr (kDouble) {
        if (dist == Dist::uniform) return uniform_double_group(base, group, scale, shift, out);
    }
    C raw[4] = {};
    if (dist == Dist::truncated_normal) {
        // Pairs of normals until kGroup fall strictly inside (-2, 2), in order; TensorFlow loops
        // the same way (each pair keeps at least one with probability 0.998, so this ends).
        WordStream words{base};
        words.gen.skip(group * truncated_group_blocks(kGroup));
        int kept = 0;
        while (kept < kGroup) {
            C pair[2];
            if constexpr (kDouble) {
                const uint32_t x0 = words.next(), x1 = words.next(), x2 = words.next();
                box_muller_double(x0, x1, x2, words.next(), pair[0], pair[1]);
            } else {
                const uint32_t x0 = words.next();
                box_muller_float(x0, words.next(), pair[0], pair[1]);
            }
            for (int j = 0; j < 2 && kept < kGroup; ++j) {
                if (::fabs(pair[j]) < C(2)) raw[kept++] = pair[j];
            }
        }
    } else {
        Generator gen = base;
        gen.skip(group);
        const Block b = gen.next();
        if constexpr (kDouble) {
            box_muller_double(b.v[0], b.v[1], b.v[2], b.v[3], raw[0], raw[1]);
        } else if (dist == Dist::uniform) {
            for (int j = 0; j < 4; ++j) {
                raw[j] = format == Format::f32 ? uint32_to_float(b.v[j])
                                               : uint16_to_unit(format, b.v[j]);
            }
        } else {
            box_muller_float(b.v[0], b.v[1], raw[0], raw[1]);
            box_muller_float(b.v[2], b.v[3], raw[2], raw[3]);
        }
    }
    for (int j = 0; j < kGroup; ++j) {
        C value = raw[j];
        if constexpr (!kDouble) value = round_to(format, value);
        out[j] = affine(format, value, scale, shift);
    }
}

/// Group `group` of uniform integers in [lo, lo + range): int32 from one word, int64 from two
/// (low word first), reduced modulo the range (TensorFlow's UniformDistribution<int32/int64>).
template <class I>
TAPEFLOW_HD void uniform_int_group(
    const Generator& base, uint64_t group, I lo, uint64_t range, I* out) {
    Generator gen = base;
    gen.skip(group);
    const Block b = gen.next();
    if constexpr (sizeof(I) == 8) {
        for (int j = 0; j < 2; ++j) {
            const uint64_t bits = b.v[2 * j] | (static_cast<uint64_t>(b.v[2 * j + 1]) << 32);
            out[j] = static_cast<I>(static_cast<uint64_t>(lo) + bits % range);
        }
    } else {
        for (int j = 0; j < 4; ++j) {
            out[j] =
                static_cast<I>(static_cast<uint32_t>(lo) + b.v[j] % static_cast<uint32_t>(range));
        }
    }
}

/// The affine constants of a float distribution in the output's format, as TensorFlow's Python
/// wrappers compute them: parameters converted to the dtype, maxval - minval in its arithmetic.
struct Affine {
    double scale, shift;
};

inline Affine affine_constants(Dist dist, Format format, double p0, double p1) {
    if (format == Format::f64) {
        return dist == Dist::uniform ? Affine{p1 - p0, p0} : Affine{p1, p0};
    }
    const float a = round_to(format, static_cast<float>(p0));
    const float b = round_to(format, static_cast<float>(p1));
    if (dist == Dist::uniform) return Affine{round_to(format, b - a), a};
    return Affine{b, a};  // normals: p0 = mean, p1 = stddev
}

/// random_shuffle's permutation of `rows` rows (TensorFlow's RandomShuffle): forward Fisher-Yates,
/// row i swapped with i + word % (rows - i), one word of the stream per step. A tensor with at most
/// one element or one row stays as it is and draws nothing. Host only: the CUDA kernel moves the
/// rows by this permutation.
inline std::vector<int64_t> shuffle_permutation(const Generator& gen,
                                                int64_t rows,
                                                int64_t elements) {
    std::vector<int64_t> perm(static_cast<std::size_t>(rows));
    std::iota(perm.begin(), perm.end(), int64_t{0});
    if (elements <= 1 || rows <= 1) return perm;
    WordStream words{gen};
    for (int64_t i = 0; i + 1 < rows; ++i) {
        const int64_t j = i + words.next() % static_cast<uint32_t>(rows - i);
        std::swap(perm[static_cast<std::size_t>(i)], perm[static_cast<std::size_t>(j)]);
    }
    return perm;
}

}  // namespace tapeflow::philox
