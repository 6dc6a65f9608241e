// tf::image::decode_png / encode_png: tensors around the libpng code of image/png_codec.cpp and
// summary/png.cpp (the static part that sees libpng's headers).
#include <fmt/format.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/image.hpp>
#include <tapeflow/ops/creation.hpp>

#include "image/png_codec.hpp"
#include "summary/encoders.hpp"

namespace tapeflow::image {

Tensor decode_png(const std::string& contents, int channels) {
    const detail::DecodedPng png = detail::decode_png(contents, channels);
    return tapeflow::detail::make_constant(png.pixels.data(),
                                           DType::uint8,
                                           png.pixels.size(),
                                           Shape{png.height, png.width, png.channels},
                                           std::nullopt);
}

std::string encode_png(const Tensor& image) {
    if (!image.defined() || image.dtype() != DType::uint8 || image.rank() != 3 ||
        image.shape()[2] < 1 || image.shape()[2] > 4)
        throw errors::InvalidArgumentError(fmt::format(
            "tf.io.encode_png: image must be a uint8 tensor [height, width, channels] with 1 to "
            "4 channels, got {}",
            image.defined()
                ? fmt::format("{} {}", dtype_name(image.dtype()), image.shape().debug_string())
                : std::string("an undefined tensor")));
    const std::vector<uint8_t> pixels = image.to_vector<uint8_t>();
    return summary::encode_png(pixels.data(),
                               static_cast<int>(image.shape()[0]),
                               static_cast<int>(image.shape()[1]),
                               static_cast<int>(image.shape()[2]));
}

}  // namespace tapeflow::image
