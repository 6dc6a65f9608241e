// The random ops' attributes as the kernels of both devices read them: the generator position
// (TensorFlow's seed pair plus the blocks earlier calls reserved), the output format, and the
// parameters of the affine step. lib/ops/random_ops.cpp writes them.
#pragma once

#include <cstdint>

#include <tapeflow/core/dtype.hpp>

#include "kernels/shared/distributions.hpp"
#include "ops/attrs.hpp"

namespace tapeflow::random_attrs {

inline philox::Generator generator(const Attrs& attrs) {
    philox::Generator gen =
        philox::Generator::from_seeds(static_cast<uint64_t>(attrs.get<int64_t>("seed")),
                                      static_cast<uint64_t>(attrs.get<int64_t>("seed2")));
    gen.skip(static_cast<uint64_t>(attrs.get<int64_t>("offset")));
    return gen;
}

inline philox::Format format(DType dtype) {
    switch (dtype) {
        case DType::float64:
            return philox::Format::f64;
        case DType::float16:
            return philox::Format::f16;
        case DType::bfloat16:
            return philox::Format::bf16;
        default:
            return philox::Format::f32;
    }
}

/// uniform: (minval, maxval); the normals: (mean, stddev).
inline philox::Affine affine(const Attrs& attrs, philox::Dist dist, philox::Format format) {
    const bool uniform = dist == philox::Dist::uniform;
    return philox::affine_constants(dist,
                                    format,
                                    attrs.get<double>(uniform ? "minval" : "mean"),
                                    attrs.get<double>(uniform ? "maxval" : "stddev"));
}

struct IntRange {
    int64_t lo;
    uint64_t range;
};

/// Integer uniform bounds [minval, maxval) as lo and the unsigned width.
inline IntRange int_range(const Attrs& attrs) {
    const auto lo = static_cast<int64_t>(attrs.get<double>("minval"));
    const auto hi = static_cast<int64_t>(attrs.get<double>("maxval"));
    return IntRange{lo, static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo)};
}

}  // namespace tapeflow::random_attrs
