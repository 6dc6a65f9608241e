// The payload encoders of the summary kinds: TF2 histogram bucketing, PNG (libpng) and 16-bit PCM
// WAV (TensorFlow's encode_wav layout). Internal to libtapeflow; tests include it for edge cases.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tapeflow::summary {

/// TF2 (TensorBoard >= 2.8) histogram buckets as k rows (left, right, count), row-major.
/// k == 0: no rows; no values: k rows of zeros; all values equal to v: k rows (v, v, 0) with the
/// count n in the last; else equal-width buckets between min and max, the last one closed.
std::vector<double> histogram_buckets(const std::vector<double>& values, int k);

/// A complete PNG file of an 8-bit image, rows of width*channels bytes (channels 1..4: gray,
/// gray+alpha, RGB, RGBA).
std::string encode_png(const uint8_t* pixels, int height, int width, int channels);

/// A 44-byte-header PCM WAV file: samples [frames, channels] in [-1, 1] become int16 (x * 32768,
/// rounded, clamped), as TensorFlow's encode_wav writes them.
std::string encode_wav(const float* samples, int64_t frames, int channels, int sample_rate);

}  // namespace tapeflow::summary
