// tf.image.resize: the taps of kernels/shared/image_plan.hpp applied along height, then width, as
// gathers times weights (the gradient scatters back through gather's). float64 stays float64,
// every other dtype computes in float32 ("nearest" keeps the dtype: it only gathers).
#include <cmath>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include <tapeflow/core/device.hpp>
#include <tapeflow/core/error.hpp>
#include <tapeflow/image.hpp>
#include <tapeflow/ops/array.hpp>
#include <tapeflow/ops/creation.hpp>
#include <tapeflow/ops/math.hpp>

#include "core/sizes.hpp"
#include "kernels/shared/image_plan.hpp"

namespace tapeflow::image {

namespace {

// The taps applied along `axis` of a rank-4 x: sum over k of gather(x, index_k) * weight_k.
Tensor apply_taps(const Tensor& x, int64_t axis, const image_plan::Taps& taps) {
    const auto out = static_cast<std::size_t>(taps.out);
    std::vector<int64_t> weight_shape(static_cast<std::size_t>(x.rank()), 1);
    weight_shape[static_cast<std::size_t>(axis)] = taps.out;
    Tensor sum;
    for (int64_t k = 0; k < taps.width; ++k) {
        std::vector<int64_t> index(out);
        std::vector<double> weight(out);
        bool any = false, ones = true;
        for (std::size_t o = 0; o < out; ++o) {
            index[o] = taps.index[o * static_cast<std::size_t>(taps.width) + k];
            weight[o] = taps.weight[o * static_cast<std::size_t>(taps.width) + k];
            any = any || weight[o] != 0;
            ones = ones && weight[o] == 1;
        }
        if (!any) continue;
        Tensor term = gather(x, constant(index, Shape{taps.out}, DType::int64), axis);
        if (!ones) term = term * constant(weight, Shape(weight_shape), x.dtype());
        sum = sum.defined() ? sum + term : term;
    }
    if (!sum.defined()) {  // every weight 0 (cannot happen for a non-empty input): zeros
        std::vector<int64_t> dims = x.shape().dims();
        dims[static_cast<std::size_t>(axis)] = taps.out;
        return zeros(Shape(dims), x.dtype());
    }
    return sum;
}

image_plan::Taps taps_for(const std::string& method, bool antialias, int64_t in, int64_t out) {
    using image_plan::Kernel;
    if (method == "bilinear")
        return antialias ? image_plan::scale_and_translate(in, out, Kernel::triangle, true)
                         : image_plan::bilinear(in, out);
    if (method == "nearest") return image_plan::nearest(in, out);
    if (method == "bicubic")
        return antialias ? image_plan::scale_and_translate(in, out, Kernel::keys_cubic, true)
                         : image_plan::bicubic(in, out);
    if (method == "area") return image_plan::area(in, out);
    if (method == "lanczos3")
        return image_plan::scale_and_translate(in, out, Kernel::lanczos3, antialias);
    if (method == "lanczos5")
        return image_plan::scale_and_translate(in, out, Kernel::lanczos5, antialias);
    if (method == "gaussian")
        return image_plan::scale_and_translate(in, out, Kernel::gaussian, antialias);
    if (method == "mitchellcubic")
        return image_plan::scale_and_translate(in, out, Kernel::mitchell_cubic, antialias);
    throw errors::InvalidArgumentError(fmt::format(
        "tf.image.resize: Resize method is not implemented: \"{}\" (use \"bilinear\", "
        "\"nearest\", \"bicubic\", \"area\", \"lanczos3\", \"lanczos5\", \"gaussian\" or "
        "\"mitchellcubic\")",
        method));
}

}  // namespace

Tensor resize(const Tensor& images,
              Ints size,
              std::string method,
              bool preserve_aspect_ratio,
              bool antialias) {
    if (!images.defined())
        throw errors::InvalidArgumentError("tf.image.resize: images is an undefined tensor");
    if (images.rank() != 3 && images.rank() != 4)
        throw errors::InvalidArgumentError(fmt::format(
            "tf.image.resize: 'images' must have either 3 or 4 dimensions, got shape {}",
            images.shape().debug_string()));
    const auto& hw = size.values();
    if (hw.size() != 2 || hw[0] <= 0 || hw[1] <= 0)
        throw errors::InvalidArgumentError(fmt::format(
            "tf.image.resize: 'size' must be 2 positive integers (new_height, new_width), got {} "
            "value(s){}",
            hw.size(),
            hw.size() == 2 ? fmt::format(" [{}, {}]", hw[0], hw[1]) : std::string()));
    if (hw[0] > std::numeric_limits<int32_t>::max() || hw[1] > std::numeric_limits<int32_t>::max())
        throw errors::InvalidArgumentError(fmt::format(
            "tf.image.resize: 'size' values must fit in int32 (TensorFlow's size tensor), got "
            "[{}, {}]",
            hw[0],
            hw[1]));
    const Tensor x = images.rank() == 4 ? images : expand_dims(images, 0);
    const int64_t height = x.shape()[1], width = x.shape()[2];
    if (height == 0 || width == 0)
        throw errors::InvalidArgumentError(
            fmt::format("tf.image.resize: input image must be of non-zero size, got shape {}",
                        images.shape().debug_string()));
    if (images.dtype() == DType::bool_)
        throw errors::InvalidArgumentError("tf.image.resize: bool images cannot be resized");
    int64_t new_height = hw[0], new_width = hw[1];
    if (preserve_aspect_ratio) {  // in float32, as TensorFlow
        const float factor = std::min(static_cast<float>(new_height) / static_cast<float>(height),
                                      static_cast<float>(new_width) / static_cast<float>(width));
        new_height = static_cast<int64_t>(std::nearbyint(factor * static_cast<float>(height)));
        new_width = static_cast<int64_t>(std::nearbyint(factor * static_cast<float>(width)));
    }
    const DType out_dtype =
        method == "nearest" || x.dtype() == DType::float64 ? x.dtype() : DType::float32;
    // An output no allocator can hold fails before the taps (host tables as long as the output's
    // sides) are made: InvalidArgumentError on overflow, else ResourceExhaustedError.
    const char* op = method == "nearest" ? "ResizeNearestNeighbor" : "ResizeBilinear";
    const Shape out_shape = op_shape({x.shape()[0], new_height, new_width, x.shape()[3]}, op);
    checked_nbytes(out_shape, out_dtype, x.device());
    // The taps' index and weight tensors go where the images are.
    std::optional<DeviceScope> on_device;
    if (images.device() != default_device()) on_device.emplace(images.device());
    Tensor y = oom_as_error(op, [&] {
        const image_plan::Taps rows = taps_for(method, antialias, height, new_height);
        const image_plan::Taps cols = taps_for(method, antialias, width, new_width);
        const Tensor in = x.dtype() == out_dtype ? x : cast(x, out_dtype);
        return apply_taps(apply_taps(in, 1, rows), 2, cols);
    });
    return images.rank() == 4 ? y : squeeze(y, Axes(int64_t{0}));
}

}  // namespace tapeflow::image
