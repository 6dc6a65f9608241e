// tf::image: TF2's image ops on [batch, height, width, channels] or [height, width, channels]
// tensors (channels last): resize with TF2's half-pixel rules, flips, crops, standardization,
// brightness / contrast, dtype conversion with TensorFlow's scaling, and PNG decode / encode.
// Errors are InvalidArgumentError naming the op and what is wrong.
//
// Dtypes: resize (except "nearest"), per_image_standardization and adjust_contrast compute in
// float32 and return float32, as TensorFlow does, with one difference: float64 images stay float64
// (TensorFlow's kernels return float32 for them too), so the ops can be checked in float64.
// "nearest", flips and crops keep the dtype.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <tapeflow/core/export.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/ops/nn.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow::image {

/// tf.image.resize: images [N, H, W, C] or [H, W, C] to size (new_height, new_width), both > 0.
/// method: "bilinear" (default), "nearest", "bicubic" (Keys' cubic, a = -0.5), "area",
/// "lanczos3", "lanczos5", "gaussian", "mitchellcubic"; TF2's half-pixel centers (no
/// align_corners). antialias widens the bilinear / bicubic kernel when downscaling (TensorFlow's
/// ScaleAndTranslate with the triangle / Keys kernel; no effect on "nearest" and "area").
/// preserve_aspect_ratio: the largest size within `size` with the image's aspect ratio (rounded
/// in float, as TensorFlow). Gradients for every method but "nearest"'s integer dtypes: the
/// resize is gathers times weights, so its gradient scatters back (ResizeBilinearGrad's values).
Tensor resize(const Tensor& images,
              Ints size,
              std::string method = "bilinear",
              bool preserve_aspect_ratio = false,
              bool antialias = false);

/// Reverses the width axis (rank 3 or 4); the gradient is the same flip.
Tensor flip_left_right(const Tensor& image);
/// Reverses the height axis (rank 3 or 4); the gradient is the same flip.
Tensor flip_up_down(const Tensor& image);
/// Flips each image left-right with probability 1/2 (one draw for [H, W, C], one per image for
/// [N, H, W, C]); the seed follows tf::random's rules.
Tensor random_flip_left_right(const Tensor& image, std::optional<uint64_t> seed = {});
/// Flips each image up-down with probability 1/2, as random_flip_left_right.
Tensor random_flip_up_down(const Tensor& image, std::optional<uint64_t> seed = {});

/// The central `central_fraction` in (0, 1] of the height and width: the crop starts at
/// int((size - size * fraction) / 2) and keeps size - 2 * start (TensorFlow's rounding).
Tensor central_crop(const Tensor& image, double central_fraction);
/// A block of `size` (one entry per dimension of value, each <= the dimension) at a random
/// offset, uniform over the valid offsets (TensorFlow's random_crop). Gradient: slice's.
Tensor random_crop(const Tensor& value, Ints size, std::optional<uint64_t> seed = {});

/// (x - mean) / max(stddev, 1 / sqrt(H W C)) over each image's last three axes (rank >= 3).
Tensor per_image_standardization(const Tensor& image);
/// image + delta; integer images go through float32 and back with saturation (TensorFlow's).
Tensor adjust_brightness(const Tensor& image, double delta);
/// (x - mean) * contrast_factor + mean, the mean per image and channel over height and width;
/// integer images go through float32 and back with saturation.
Tensor adjust_contrast(const Tensor& images, double contrast_factor);

/// tf.image.convert_image_dtype: integers represent [0, MAX] of their type, floats [0, 1).
/// int -> float: cast then times 1 / MAX; float -> int: times (MAX + 0.5) then cast (saturated
/// to the type's range when `saturate`); int -> int: shifts by the ratio of (MAX + 1)s (a floor
/// division going down); float -> float: cast. bool: InvalidArgumentError.
Tensor convert_image_dtype(const Tensor& image, DType dtype, bool saturate = false);

/// tf.io.decode_png / tf.image.decode_png: uint8 [H, W, C]. channels: 0 (the file's: 1 gray, 2
/// gray + alpha, 3 RGB, 4 RGBA; a palette expands to RGB or RGBA), 1, 3 or 4 (converted;
/// libpng's RGB -> gray weights). 16-bit files are reduced to 8 bits. Corrupt data:
/// InvalidArgumentError with libpng's message.
Tensor decode_png(const std::string& contents, int channels = 0);
/// tf.io.encode_png / tf.image.encode_png: a uint8 [H, W, C] tensor, C in 1..4, to PNG bytes.
std::string encode_png(const Tensor& image);

}  // namespace tapeflow::image

TAPEFLOW_API_END
