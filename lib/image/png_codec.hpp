// PNG decoding through libpng into memory (compiled into the static part that sees libpng's
// headers; image/png_image.cpp wraps it as tf::image::decode_png).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tapeflow::image::detail {

struct DecodedPng {
    int64_t height = 0, width = 0, channels = 0;
    std::vector<uint8_t> pixels;  // row-major [height, width, channels]
};

/// Decodes `contents` to 8-bit pixels with `channels` (0: the file's) channels. Throws
/// InvalidArgumentError with libpng's message for data that is not a valid PNG.
DecodedPng decode_png(const std::string& contents, int channels);

}  // namespace tapeflow::image::detail
