// tf.image's flips, crops, standardization, brightness / contrast and convert_image_dtype, written
// with public ops (strided_slice, slice, reductions), so each has its gradient from theirs.
#include <cmath>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include <tapeflow/core/device.hpp>
#include <tapeflow/core/error.hpp>
#include <tapeflow/image.hpp>
#include <tapeflow/ops/array.hpp>
#include <tapeflow/ops/clip.hpp>
#include <tapeflow/ops/creation.hpp>
#include <tapeflow/ops/math.hpp>
#include <tapeflow/random.hpp>

namespace tapeflow::image {

namespace {

void require_image(const Tensor& image, const char* op, bool rank3_or_4 = true) {
    if (!image.defined())
        throw errors::InvalidArgumentError(fmt::format("tf.image.{}: undefined tensor", op));
    if (rank3_or_4 ? (image.rank() != 3 && image.rank() != 4) : image.rank() < 3)
        throw errors::InvalidArgumentError(fmt::format(
            "tf.image.{}: 'image' must {}, got shape {}",
            op,
            rank3_or_4 ? "have either 3 or 4 dimensions" : "be at least three-dimensional",
            image.shape().debug_string()));
}

// x reversed along `axis` (a strided slice with stride -1 over the whole axis).
Tensor reverse_axis(const Tensor& x, int64_t axis) {
    const auto rank = static_cast<std::size_t>(x.rank());
    std::vector<int64_t> begin(rank, 0), end(rank, 0), strides(rank, 1);
    strides[static_cast<std::size_t>(axis)] = -1;
    const int64_t all = (int64_t{1} << x.rank()) - 1;
    return strided_slice(x, begin, end, strides, all, all);
}

// The dtype the float computations run in: float64 stays, everything else float32.
DType compute_dtype(DType dtype) {
    return dtype == DType::float64 ? DType::float64 : DType::float32;
}

Tensor random_flip(const Tensor& image,
                   int64_t axis,
                   std::optional<uint64_t> seed,
                   const char* op) {
    require_image(image, op);
    const bool batch = image.rank() == 4;
    const Tensor flipped = reverse_axis(image, batch ? axis + 1 : axis);
    // One uniform draw per image, made where the image is; < 0.5 flips (TensorFlow rounds the
    // draw per batch item).
    std::optional<DeviceScope> on_device;
    if (image.device() != default_device()) on_device.emplace(image.device());
    const Tensor u = random::uniform(
        batch ? Shape{image.shape()[0], 1, 1, 1} : Shape{}, 0, 1, DType::float32, seed);
    Tensor flip = less(u, scalar_like(u, 0.5));
    if (!batch) flip = reshape(flip, Shape{1, 1, 1});
    return where(broadcast_to(flip, image.shape()), flipped, image);
}

int64_t max_of(DType dtype) {
    switch (dtype) {
        case DType::uint8:
            return std::numeric_limits<uint8_t>::max();
        case DType::int32:
            return std::numeric_limits<int32_t>::max();
        case DType::int64:
            return std::numeric_limits<int64_t>::max();
        default:
            return 0;
    }
}
int64_t min_of(DType dtype) {
    switch (dtype) {
        case DType::int32:
            return std::numeric_limits<int32_t>::min();
        case DType::int64:
            return std::numeric_limits<int64_t>::min();
        default:
            return 0;
    }
}

// The largest value of the float dtype `in` that is <= v (a clip bound that casts safely).
double float_bound_below(int64_t v, DType in) {
    const auto exact = static_cast<long double>(v);
    if (in == DType::float64) {
        double d = static_cast<double>(v);
        while (static_cast<long double>(d) > exact)
            d = std::nextafter(d, 0.0);
        return d;
    }
    float f = static_cast<float>(v);
    while (static_cast<long double>(f) > exact)
        f = std::nextafter(f, 0.0f);
    return static_cast<double>(f);
}

// TensorFlow's saturate_cast: clip to the target's range (as the source can hold it), then cast.
Tensor saturate_cast(const Tensor& x, DType dtype) {
    if (!is_integer(dtype)) return cast(x, dtype);
    const double hi = static_cast<double>(max_of(dtype));
    const double lo = static_cast<double>(min_of(dtype));
    if (is_floating(x.dtype())) {
        // float16 / bfloat16 values clip in float32 (their range is wider than uint8's only).
        const Tensor f = x.dtype() == DType::float64 ? x : cast(x, DType::float32);
        const double top = float_bound_below(max_of(dtype), f.dtype());
        return cast(clip_by_value(f, lo, top), dtype);
    }
    if (max_of(x.dtype()) > max_of(dtype) || min_of(x.dtype()) < min_of(dtype))
        return cast(clip_by_value(x, lo, hi), dtype);
    return cast(x, dtype);
}

}  // namespace

Tensor flip_left_right(const Tensor& image) {
    require_image(image, "flip_left_right");
    return reverse_axis(image, image.rank() - 2);
}

Tensor flip_up_down(const Tensor& image) {
    require_image(image, "flip_up_down");
    return reverse_axis(image, image.rank() - 3);
}

Tensor random_flip_left_right(const Tensor& image, std::optional<uint64_t> seed) {
    return random_flip(image, 1, seed, "random_flip_left_right");
}

Tensor random_flip_up_down(const Tensor& image, std::optional<uint64_t> seed) {
    return random_flip(image, 0, seed, "random_flip_up_down");
}

Tensor central_crop(const Tensor& image, double central_fraction) {
    require_image(image, "central_crop");
    if (!(central_fraction > 0.0 && central_fraction <= 1.0))
        throw errors::InvalidArgumentError(
            fmt::format("tf.image.central_crop: central_fraction must be within (0, 1], got {}",
                        central_fraction));
    if (central_fraction == 1.0) return image;
    const int64_t h_axis = image.rank() - 3;
    const int64_t h = image.shape()[h_axis], w = image.shape()[h_axis + 1];
    const auto start = [&](int64_t n) {
        const double d = static_cast<double>(n);
        return static_cast<int64_t>((d - d * central_fraction) / 2);
    };
    const int64_t h0 = start(h), w0 = start(w);
    std::vector<int64_t> begin(static_cast<std::size_t>(image.rank()), 0);
    std::vector<int64_t> size(static_cast<std::size_t>(image.rank()), -1);
    begin[static_cast<std::size_t>(h_axis)] = h0;
    begin[static_cast<std::size_t>(h_axis + 1)] = w0;
    size[static_cast<std::size_t>(h_axis)] = h - 2 * h0;
    size[static_cast<std::size_t>(h_axis + 1)] = w - 2 * w0;
    return slice(image, begin, size);
}

Tensor random_crop(const Tensor& value, Ints size, std::optional<uint64_t> seed) {
    if (!value.defined())
        throw errors::InvalidArgumentError("tf.image.random_crop: undefined tensor");
    const std::vector<int64_t>& target = size.values();
    const Shape& shape = value.shape();
    bool fits = static_cast<int64_t>(target.size()) == value.rank();
    for (std::size_t i = 0; fits && i < target.size(); ++i)
        fits = target[i] >= 0 && target[i] <= shape[static_cast<int64_t>(i)];
    if (!fits)
        throw errors::InvalidArgumentError(fmt::format(
            "tf.image.random_crop: Need value.shape >= size, got value shape {} and size [{}] "
            "(one non-negative size per dimension)",
            shape.debug_string(),
            fmt::join(target, ",")));
    // TensorFlow: offset = uniform int32 in [0, int32 max) modulo (shape - size + 1). The crop is
    // gathers of offset + range(size) along the cropped axes, so no value is read on the host
    // (the op can be traced by tf::function) and the gradient scatters back through them.
    std::optional<DeviceScope> on_device;
    if (value.device() != default_device()) on_device.emplace(value.device());
    const Tensor draws = random::uniform(Shape{value.rank()},
                                         0,
                                         static_cast<double>(std::numeric_limits<int32_t>::max()),
                                         DType::int32,
                                         seed);
    std::vector<int32_t> limits(target.size());
    for (std::size_t i = 0; i < target.size(); ++i)
        limits[i] = static_cast<int32_t>(shape[static_cast<int64_t>(i)] - target[i] + 1);
    const Tensor offsets = floormod(draws, constant(limits, Shape{value.rank()}, DType::int32));
    Tensor out = value;
    for (std::size_t i = 0; i < target.size(); ++i) {
        const auto axis = static_cast<int64_t>(i);
        if (target[i] == shape[axis]) continue;  // the whole axis: offset 0
        const Tensor start = reshape(slice(offsets, {axis}, {1}), Shape{});
        out = gather(out, range(0, target[i], 1, DType::int32) + start, axis);
    }
    return out;
}

Tensor per_image_standardization(const Tensor& image) {
    require_image(image, "per_image_standardization", false);
    const Tensor x = cast(image, compute_dtype(image.dtype()));
    const int64_t r = x.rank();
    const Shape& s = x.shape();
    const double pixels = static_cast<double>(s[r - 1] * s[r - 2] * s[r - 3]);
    const Axes axes(std::vector<int64_t>{-1, -2, -3});
    const Tensor mean = reduce_mean(x, axes, true);
    const Tensor stddev = reduce_std(x, axes, true);
    const Tensor adjusted = maximum(stddev, scalar_like(stddev, 1.0 / std::sqrt(pixels)));
    return (x - mean) / adjusted;
}

Tensor adjust_brightness(const Tensor& image, double delta) {
    if (!image.defined())
        throw errors::InvalidArgumentError("tf.image.adjust_brightness: undefined tensor");
    if (is_floating(image.dtype())) return image + scalar_like(image, delta);
    const Tensor f = convert_image_dtype(image, DType::float32);
    return convert_image_dtype(f + scalar_like(f, delta), image.dtype(), true);
}

Tensor adjust_contrast(const Tensor& images, double contrast_factor) {
    require_image(images, "adjust_contrast", false);
    const bool native = is_floating(images.dtype());
    const Tensor f = native ? images : convert_image_dtype(images, DType::float32);
    const Tensor mean = reduce_mean(f, Axes(std::vector<int64_t>{-3, -2}), true);
    const Tensor out = (f - mean) * scalar_like(f, contrast_factor) + mean;
    return native ? out : convert_image_dtype(out, images.dtype(), true);
}

Tensor convert_image_dtype(const Tensor& image, DType dtype, bool saturate) {
    if (!image.defined())
        throw errors::InvalidArgumentError("tf.image.convert_image_dtype: undefined tensor");
    const DType from = image.dtype();
    const auto image_type = [](DType d) {
        return is_floating(d) || is_integer(d);
    };
    if (!image_type(from) || !image_type(dtype))
        throw errors::InvalidArgumentError(fmt::format(
            "tf.image.convert_image_dtype: image dtype must be either floating point or integer, "
            "got {} -> {}",
            dtype_name(from),
            dtype_name(dtype)));
    if (from == dtype) return image;
    if (is_integer(from) && is_integer(dtype)) {
        const auto in_range = static_cast<uint64_t>(max_of(from)) + 1;
        const auto out_range = static_cast<uint64_t>(max_of(dtype)) + 1;
        if (in_range > out_range) {  // scale down first, then cast
            const Tensor scaled = floordiv(
                image,
                tapeflow::detail::int_operand(image, static_cast<int64_t>(in_range / out_range)));
            return saturate ? saturate_cast(scaled, dtype) : cast(scaled, dtype);
        }
        const Tensor c = saturate ? saturate_cast(image, dtype) : cast(image, dtype);
        return c * tapeflow::detail::int_operand(c, static_cast<int64_t>(out_range / in_range));
    }
    if (is_floating(from) && is_floating(dtype)) return cast(image, dtype);
    if (is_integer(from)) {
        const Tensor c = cast(image, dtype);
        return c * scalar_like(c, 1.0 / static_cast<double>(max_of(from)));
    }
    const Tensor scaled = image * scalar_like(image, static_cast<double>(max_of(dtype)) + 0.5);
    return saturate ? saturate_cast(scaled, dtype) : cast(scaled, dtype);
}

}  // namespace tapeflow::image
