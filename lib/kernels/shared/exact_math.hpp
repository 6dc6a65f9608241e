// Arithmetic that gives the same bits on the host and on a CUDA device, for the random generators
// (seeded numbers must not depend on the device). g++ contracts a * b + c into an fma even with
// -std=c++20 (C++ has no ISO fp-contract mode in GCC) and nvcc does by default, so every product
// of the generators goes through exact::mul (device: __dmul_rn, never fused; host: a register
// barrier).
#pragma once

#include <cstdint>
#include <cstring>

#include "core/hd.hpp"

namespace tapeflow::exact {

/// a * b rounded once, never fused with a neighbouring addition.
TAPEFLOW_HD inline double mul(double a, double b) {
#if defined(__CUDA_ARCH__)
    return __dmul_rn(a, b);
#else
    double p = a * b;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    __asm__("" : "+x"(p));  // p must exist as a rounded double: no fma can absorb the product
#else
    volatile double keep = p;
    p = keep;
#endif
    return p;
#endif
}

/// float version of mul (the float32 uniform draws compute in float).
TAPEFLOW_HD inline float mul(float a, float b) {
#if defined(__CUDA_ARCH__)
    return __fmul_rn(a, b);
#else
    float p = a * b;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    __asm__("" : "+x"(p));
#else
    volatile float keep = p;
    p = keep;
#endif
    return p;
#endif
}

TAPEFLOW_HD inline double from_bits(uint64_t bits) {
#if defined(__CUDA_ARCH__)
    return __longlong_as_double(static_cast<long long>(bits));
#else
    double x = 0;
    std::memcpy(&x, &bits, sizeof x);
    return x;
#endif
}

}  // namespace tapeflow::exact
