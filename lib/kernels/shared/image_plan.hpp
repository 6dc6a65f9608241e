// The geometry of tf.image's resize methods, one axis at a time: for each output position, the
// input positions it reads and their weights ("taps"). Every TF2 method is separable, so an image
// is resized by applying the taps of the height axis, then those of the width axis. Coordinates
// are computed in float, as TensorFlow's kernels compute them, so the chosen input positions are
// TensorFlow's (resize_bilinear_op.cc, resize_nearest_neighbor_op.cc, resize_bicubic_op.cc,
// resize_area_op.cc, scale_and_translate_op.cc with sampling_kernels.h). Host code only: the
// tf::image ops apply the taps with gather / multiply / add, which carry the gradients.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

namespace tapeflow::image_plan {

/// out x width taps, row-major: output o reads index[o * width + k] with weight[o * width + k]
/// (unused taps have weight 0 and index 0).
struct Taps {
    int64_t out = 0;
    int64_t width = 0;
    std::vector<int64_t> index;
    std::vector<double> weight;
};

inline Taps make_taps(int64_t out, int64_t width) {
    Taps t;
    t.out = out;
    t.width = width;
    t.index.assign(static_cast<std::size_t>(out * width), 0);
    t.weight.assign(static_cast<std::size_t>(out * width), 0.0);
    return t;
}

/// TensorFlow's CalculateResizeScale without align_corners: in / out, in float.
inline float resize_scale(int64_t in, int64_t out) {
    return static_cast<float>(in) / static_cast<float>(out);
}

/// ResizeBilinear, half_pixel_centers: x = (o + 0.5) scale - 0.5, lower = max(floor(x), 0),
/// upper = min(ceil(x), in - 1), weights (1 - lerp, lerp) with lerp = x - floor(x).
inline Taps bilinear(int64_t in, int64_t out) {
    Taps t = make_taps(out, 2);
    const float scale = resize_scale(in, out);
    for (int64_t o = 0; o < out; ++o) {
        const float x = (static_cast<float>(o) + 0.5f) * scale - 0.5f;
        const float xf = std::floor(x);
        const int64_t lower = std::max<int64_t>(static_cast<int64_t>(xf), 0);
        const int64_t upper = std::min<int64_t>(static_cast<int64_t>(std::ceil(x)), in - 1);
        const float lerp = x - xf;
        t.index[o * 2] = lower;
        t.weight[o * 2] = 1.0 - static_cast<double>(lerp);
        t.index[o * 2 + 1] = upper;
        t.weight[o * 2 + 1] = static_cast<double>(lerp);
    }
    return t;
}

/// ResizeNearestNeighbor, half_pixel_centers: min(floor((o + 0.5) scale), in - 1).
inline Taps nearest(int64_t in, int64_t out) {
    Taps t = make_taps(out, 1);
    const float scale = resize_scale(in, out);
    for (int64_t o = 0; o < out; ++o) {
        const float x = (static_cast<float>(o) + 0.5f) * scale;
        t.index[o] = std::clamp<int64_t>(static_cast<int64_t>(std::floor(x)), 0, in - 1);
        t.weight[o] = 1.0;
    }
    return t;
}

/// Keys' cubic convolution kernel with a = -0.5 (TF2's bicubic), |x| < 2.
inline double keys_cubic(double x) {
    x = std::abs(x);
    if (x >= 2) return 0;
    if (x >= 1) return ((-0.5 * x + 2.5) * x - 4.0) * x + 2.0;
    return ((1.5 * x - 2.5) * x) * x + 1.0;
}

/// ResizeBicubic, half_pixel_centers: the four neighbours of floor(x) with Keys' weights, the
/// fraction quantized to 1/1024 (TensorFlow's coefficient table); neighbours outside the image
/// get weight 0 and the rest are renormalized to sum 1.
inline Taps bicubic(int64_t in, int64_t out) {
    constexpr int64_t kTableSize = 1024;
    Taps t = make_taps(out, 4);
    const float scale = resize_scale(in, out);
    for (int64_t o = 0; o < out; ++o) {
        const float x = (static_cast<float>(o) + 0.5f) * scale - 0.5f;
        const int64_t loc = static_cast<int64_t>(std::floor(x));
        const float delta = x - static_cast<float>(loc);
        const double frac =
            static_cast<double>(std::lrint(delta * kTableSize)) / static_cast<double>(kTableSize);
        const double w[4] = {
            keys_cubic(frac + 1), keys_cubic(frac), keys_cubic(1 - frac), keys_cubic(2 - frac)};
        double sum = 0;
        for (int64_t k = 0; k < 4; ++k) {
            const int64_t src = loc - 1 + k;
            const bool inside = src >= 0 && src < in;
            t.index[o * 4 + k] = std::clamp<int64_t>(src, 0, in - 1);
            t.weight[o * 4 + k] = inside ? w[k] : 0.0;
            sum += t.weight[o * 4 + k];
        }
        if (std::abs(sum) > 0)
            for (int64_t k = 0; k < 4; ++k)
                t.weight[o * 4 + k] /= sum;
    }
    return t;
}

/// ResizeArea: output o averages the input interval [o scale, (o + 1) scale), each input cell
/// weighted by its overlap (cells past the edge clamp to the last one), divided by scale.
inline Taps area(int64_t in, int64_t out) {
    const float scale = resize_scale(in, out);
    int64_t width = 1;
    for (int64_t o = 0; o < out; ++o) {
        const float y0 = static_cast<float>(o) * scale, y1 = static_cast<float>(o + 1) * scale;
        width = std::max<int64_t>(
            width, static_cast<int64_t>(std::ceil(y1)) - static_cast<int64_t>(std::floor(y0)));
    }
    Taps t = make_taps(out, width);
    for (int64_t o = 0; o < out; ++o) {
        const float y0 = static_cast<float>(o) * scale, y1 = static_cast<float>(o + 1) * scale;
        const int64_t start = static_cast<int64_t>(std::floor(y0));
        const int64_t end = static_cast<int64_t>(std::ceil(y1));
        for (int64_t i = start, k = 0; i < end; ++i, ++k) {
            const float overlap =
                std::min(static_cast<float>(i + 1), y1) - std::max(static_cast<float>(i), y0);
            t.index[o * width + k] = std::min(i, in - 1);
            t.weight[o * width + k] = static_cast<double>(overlap) / static_cast<double>(scale);
        }
    }
    return t;
}

/// The sampling kernels of ScaleAndTranslate (sampling_kernels.h), of |x|.
enum class Kernel { triangle, keys_cubic, mitchell_cubic, lanczos3, lanczos5, gaussian };

inline float kernel_radius(Kernel k) {
    switch (k) {
        case Kernel::triangle:
            return 1.0f;
        case Kernel::keys_cubic:
        case Kernel::mitchell_cubic:
            return 2.0f;
        case Kernel::lanczos3:
            return 3.0f;
        case Kernel::lanczos5:
            return 5.0f;
        case Kernel::gaussian:
            return 1.5f;
    }
    return 1.0f;
}

inline float kernel_value(Kernel k, float x) {
    x = std::abs(x);
    switch (k) {
        case Kernel::triangle:
            return x >= 1.0f ? 0.0f : 1.0f - x;
        case Kernel::keys_cubic:
            return static_cast<float>(keys_cubic(x));
        case Kernel::mitchell_cubic:
            if (x >= 2.0f) return 0.0f;
            if (x >= 1.0f)
                return (((-7.0f / 18.0f) * x + 2.0f) * x - 10.0f / 3.0f) * x + 16.0f / 9.0f;
            return (((7.0f / 6.0f) * x - 2.0f) * x) * x + 8.0f / 9.0f;
        case Kernel::lanczos3:
        case Kernel::lanczos5: {
            const float radius = kernel_radius(k);
            if (x > radius) return 0.0f;
            const float px = x * 3.14159265359f;
            if (px < 1e-3f) return 1.0f;
            return radius * std::sin(px) * std::sin(px / radius) / (px * px);
        }
        case Kernel::gaussian: {
            const float radius = 1.5f, sigma = radius / 3.0f;
            if (x >= radius) return 0.0f;
            return std::exp(-x * x / (2.0f * sigma * sigma));
        }
    }
    return 0.0f;
}

/// ScaleAndTranslate's spans (translation 0, scale = out / in in float): output o samples the
/// input at (o + 0.5) / scale; the kernel is widened by 1 / scale when antialiasing a
/// downscale; weights are normalized to sum 1.
inline Taps scale_and_translate(int64_t in, int64_t out, Kernel kernel, bool antialias) {
    const float scale = static_cast<float>(out) / static_cast<float>(in);
    const float inv_scale = 1.0f / scale;
    const float kernel_scale = antialias ? std::max(inv_scale, 1.0f) : 1.0f;
    const float radius = kernel_radius(kernel) * kernel_scale;
    const int64_t span = std::min<int64_t>(2 * static_cast<int64_t>(std::ceil(radius)) + 1, in);
    Taps t = make_taps(out, span);
    for (int64_t o = 0; o < out; ++o) {
        const float sample = (static_cast<float>(o) + 0.5f) * inv_scale;
        if (sample < 0 || sample > static_cast<float>(in)) continue;  // an empty span
        int64_t start = static_cast<int64_t>(std::ceil(sample - radius - 0.5f));
        int64_t end = static_cast<int64_t>(std::floor(sample + radius - 0.5f));
        start = std::clamp<int64_t>(start, 0, in - 1);
        end = std::clamp<int64_t>(end, 0, in - 1) + 1;
        float total = 0;
        std::vector<float> weights;
        for (int64_t s = start; s < end; ++s) {
            const float pos = static_cast<float>(s) + 0.5f - sample;
            weights.push_back(kernel_value(kernel, pos / kernel_scale));
            total += weights.back();
        }
        const bool normalize = std::abs(total) >= 1000.0f * std::numeric_limits<float>::min();
        for (int64_t s = start, k = 0; s < end && k < span; ++s, ++k) {
            t.index[o * span + k] = s;
            t.weight[o * span + k] =
                normalize ? static_cast<double>(weights[k]) / static_cast<double>(total)
                          : static_cast<double>(weights[k]);
        }
    }
    return t;
}

}  // namespace tapeflow::image_plan
