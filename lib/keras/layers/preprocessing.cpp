// Rescaling, Normalization, RandomFlip, RandomCrop and Resizing on public ops and tf::image.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/image.hpp>
#include <tapeflow/keras/initializers.hpp>
#include <tapeflow/keras/layers/preprocessing.hpp>
#include <tapeflow/ops/array.hpp>
#include <tapeflow/ops/clip.hpp>
#include <tapeflow/ops/creation.hpp>
#include <tapeflow/ops/math.hpp>
#include <tapeflow/random.hpp>

namespace tapeflow::keras::layers {

namespace {

// Integer and bool inputs computed in float32 (Keras casts to the compute dtype); floats keep
// theirs (a float64 input computes in float64, as every layer here follows its input).
Tensor as_float(const Tensor& x) {
    return is_floating(x.dtype()) ? x : cast(x, DType::float32);
}

void require_image(const Tensor& x, const std::string& layer, const char* cls) {
    if (x.rank() != 3 && x.rank() != 4)
        throw errors::InvalidArgumentError(fmt::format(
            "layer \"{}\" ({}) expects images [batch, height, width, channels] or [height, width, "
            "channels], got shape {}",
            layer,
            cls,
            x.shape().debug_string()));
}

}  // namespace

// ---- Rescaling ----

Rescaling::Rescaling(double scale, RescalingOptions options)
    : Layer(options.name, "Rescaling"), scale_(scale), options_(std::move(options)) {
    use_dtype_option(options_.dtype);
}

Tensor Rescaling::call(const Tensor& x, bool) {
    const Tensor f = as_float(x);
    return f * scalar_like(f, scale_) + scalar_like(f, options_.offset);
}

// ---- Normalization ----

Normalization::Normalization(NormalizationOptions options)
    : Layer(options.name, "Normalization"), options_(std::move(options)) {
    use_dtype_option(options_.dtype);
    if (options_.mean.has_value() != options_.variance.has_value())
        throw errors::InvalidArgumentError(fmt::format(
            "layer \"{}\" (Normalization): When setting values directly, both `mean` and "
            "`variance` must be set",
            name()));
    if (options_.mean && options_.mean->size() != options_.variance->size())
        throw errors::InvalidArgumentError(fmt::format(
            "layer \"{}\" (Normalization): `mean` and `variance` must have the same size, got {} "
            "and {}",
            name(),
            options_.mean->size(),
            options_.variance->size()));
}

void Normalization::build(const Shape& s) {
    const int64_t rank = s.rank();
    keep_.clear();
    for (int64_t a : options_.axis) {
        if (a < -rank || a >= rank)
            throw errors::InvalidArgumentError(fmt::format(
                "layer \"{}\" (Normalization): All `axis` values must be in the range [-ndim, "
                "ndim). Received inputs with ndim={}, while axis=({})",
                name(),
                rank,
                fmt::join(options_.axis, ", ")));
        keep_.push_back(a < 0 ? a + rank : a);
    }
    std::sort(keep_.begin(), keep_.end());
    keep_.erase(std::unique(keep_.begin(), keep_.end()), keep_.end());
    reduce_.clear();
    broadcast_.assign(static_cast<std::size_t>(rank), 1);
    std::vector<int64_t> stats;
    for (int64_t d = 0; d < rank; ++d) {
        if (std::find(keep_.begin(), keep_.end(), d) != keep_.end()) {
            broadcast_[d] = s[d];
            stats.push_back(s[d]);
        } else {
            reduce_.push_back(d);
        }
    }
    build_shape_ = s;
    const DType dtype = variable_dtype();
    if (options_.mean) {
        const Shape stat_shape(stats);
        const auto n = static_cast<std::size_t>(stat_shape.num_elements());
        if (options_.mean->size() != 1 && options_.mean->size() != n)
            throw errors::InvalidArgumentError(fmt::format(
                "layer \"{}\" (Normalization): `mean` needs 1 or {} values for inputs of shape {} "
                "and axis ({}), got {}",
                name(),
                n,
                s.debug_string(),
                fmt::join(options_.axis, ", "),
                options_.mean->size()));
        const Shape shape = options_.mean->size() == 1 ? Shape{} : Shape(broadcast_);
        given_mean_ = constant(*options_.mean, shape, dtype);
        given_variance_ = constant(*options_.variance, shape, dtype);
        set_input_spec({.ndim = rank});
        return;
    }
    adapt_mean_ = add_weight("mean", Shape(stats), initializers::zeros(), dtype, false);
    adapt_variance_ = add_weight("variance", Shape(stats), initializers::ones(), dtype, false);
    count_ = add_weight("count", Shape{}, initializers::zeros(), DType::int64, false);
    InputSpec spec{.ndim = rank};
    for (int64_t d : keep_)
        spec.axes.emplace_back(d, s[d]);
    set_input_spec(std::move(spec));
}

void Normalization::build_for(const Tensor& data) {
    if (built()) {
        check_input(data, input_spec());
        return;
    }
    const auto scope = name_scope();
    choose_variable_dtype(data);
    build(data.shape());
    set_built(data.shape());  // Keras' adapt builds the layer (its build_config)
}

void Normalization::adapt(const Tensor& data) {
    adapt(std::vector<Tensor>{data});
}

void Normalization::adapt(const std::vector<Tensor>& batches) {
    if (batches.empty())
        throw errors::InvalidArgumentError(
            fmt::format("layer \"{}\" (Normalization): adapt() received no batches", name()));
    if (options_.mean)
        throw errors::InvalidArgumentError(fmt::format(
            "layer \"{}\" (Normalization): adapt() cannot be used with a `mean` and `variance` "
            "given at construction",
            name()));
    Tensor total_mean, total_var;
    double total_count = 0;
    for (const Tensor& raw : batches) {
        if (!raw.defined())
            throw errors::InvalidArgumentError(fmt::format(
                "layer \"{}\" (Normalization): adapt() received an undefined tensor", name()));
        build_for(cast_input(as_float(raw)));
        const Tensor batch = cast(raw, variable_dtype());
        const Axes axes(reduce_);
        const Tensor batch_mean = reduce_mean(batch, axes);
        const Tensor batch_var = reduce_variance(batch, axes);
        double count = 1;
        for (int64_t d : reduce_)
            count *= static_cast<double>(batch.shape()[d]);
        if (reduce_.empty()) count = 1;
        total_count += count;
        if (!total_mean.defined()) {
            total_mean = batch_mean;
            total_var = batch_var;
            continue;
        }
        // Keras' merge: weights by count, the lack-of-fit sum of squares for the variance.
        const double w = count / total_count, keep = 1.0 - w;
        const Tensor mean = total_mean * keep + batch_mean * w;
        total_var = (total_var + square(total_mean - mean)) * keep +
                    (batch_var + square(batch_mean - mean)) * w;
        total_mean = mean;
    }
    adapt_mean_.assign(reshape(total_mean, adapt_mean_.shape()));
    adapt_variance_.assign(reshape(total_var, adapt_variance_.shape()));
    count_.assign(constant(static_cast<int64_t>(total_count)));
}

Tensor Normalization::mean() const {
    if (given_mean_.defined()) return given_mean_;
    return adapt_mean_.defined() ? reshape(adapt_mean_.value(), Shape(broadcast_)) : Tensor();
}

Tensor Normalization::variance() const {
    if (given_variance_.defined()) return given_variance_;
    return adapt_variance_.defined() ? reshape(adapt_variance_.value(), Shape(broadcast_))
                                     : Tensor();
}

Tensor Normalization::call(const Tensor& input, bool) {
    Tensor x = as_float(input);
    Tensor m = mean(), v = variance();
    if (m.dtype() != x.dtype()) {
        m = cast(m, x.dtype());
        v = cast(v, x.dtype());
    }
    const Tensor std = maximum(sqrt(v), scalar_like(v, 1e-7));
    return options_.invert ? m + x * std : (x - m) / std;
}

// ---- RandomFlip ----

RandomFlip::RandomFlip(RandomFlipOptions options)
    : Layer(options.name, "RandomFlip"), options_(std::move(options)) {
    if (options_.mode != "horizontal" && options_.mode != "vertical" &&
        options_.mode != "horizontal_and_vertical")
        throw errors::InvalidArgumentError(fmt::format(
            "layer \"{}\" (RandomFlip): RandomFlip layer {} received an unknown mode=\"{}\"; use "
            "\"horizontal\", \"vertical\" or \"horizontal_and_vertical\"",
            name(),
            name(),
            options_.mode));
}

Tensor RandomFlip::call(const Tensor& x, bool training) {
    require_image(x, name(), "RandomFlip");
    if (!training) return x;
    const bool batch = x.rank() == 4;
    const Tensor u = random::uniform(batch ? Shape{x.shape()[0], 1, 1, 1} : Shape{1, 1, 1},
                                     0,
                                     1,
                                     DType::float32,
                                     detail::next_seed(options_.seed, calls_));
    const Tensor flips = broadcast_to(less_equal(u, scalar_like(u, 0.5)), x.shape());
    Tensor y = x;
    if (options_.mode != "vertical") y = where(flips, image::flip_left_right(y), y);
    if (options_.mode != "horizontal") y = where(flips, image::flip_up_down(y), y);
    return y;
}

// ---- RandomCrop ----

namespace {

// Keras' crop to the target's aspect ratio: the largest central window, sizes truncated.
std::vector<int64_t> aspect_window(int64_t h, int64_t w, int64_t th, int64_t tw) {
    int64_t ch = static_cast<int64_t>(static_cast<float>(w * th) / static_cast<float>(tw));
    ch = std::max<int64_t>(std::min(h, ch), 1);
    int64_t cw = static_cast<int64_t>(static_cast<float>(h * tw) / static_cast<float>(th));
    cw = std::max<int64_t>(std::min(w, cw), 1);
    return {static_cast<int64_t>(static_cast<float>(h - ch) / 2),
            static_cast<int64_t>(static_cast<float>(w - cw) / 2),
            ch,
            cw};
}

// The [h0, h0 + ch) x [w0, w0 + cw) window of images of rank 3 or 4.
Tensor window(const Tensor& x, int64_t h0, int64_t w0, int64_t ch, int64_t cw) {
    const int64_t h_axis = x.rank() - 3;
    std::vector<int64_t> begin(static_cast<std::size_t>(x.rank()), 0);
    std::vector<int64_t> size(static_cast<std::size_t>(x.rank()), -1);
    begin[h_axis] = h0;
    begin[h_axis + 1] = w0;
    size[h_axis] = ch;
    size[h_axis + 1] = cw;
    return slice(x, begin, size);
}

}  // namespace

RandomCrop::RandomCrop(int64_t height, int64_t width, RandomCropOptions options)
    : Layer(options.name, "RandomCrop"),
      height_(height),
      width_(width),
      options_(std::move(options)) {
    if (height <= 0 || width <= 0)
        throw errors::InvalidArgumentError(fmt::format(
            "layer \"{}\" (RandomCrop): height and width must be positive, got {} and {}",
            name(),
            height,
            width));
}

Tensor RandomCrop::call(const Tensor& x, bool training) {
    require_image(x, name(), "RandomCrop");
    if (!training) return x;
    const int64_t h_axis = x.rank() - 3;
    const int64_t h = x.shape()[h_axis], w = x.shape()[h_axis + 1];
    Tensor y;
    if (h > height_ && w > width_) {
        // Keras: one offset per batch, floor(u * (room + 1)); gathers of offset + range keep the
        // draw on the device (no host read: the layer can run inside a tf::function).
        const Tensor u = random::uniform(
            Shape{2}, 0, 1, DType::float32, detail::next_seed(options_.seed, calls_));
        const auto crop_axis = [&](const Tensor& in, int64_t k, int64_t size, int64_t room) {
            const Tensor draw = reshape(slice(u, {k}, {1}), Shape{});
            const Tensor scaled =
                cast(floor(draw * scalar_like(draw, static_cast<double>(room + 1))), DType::int32);
            const Tensor start = minimum(scaled, scalar_like(scaled, static_cast<double>(room)));
            return gather(in, range(0, size, 1, DType::int32) + start, h_axis + k);
        };
        y = crop_axis(crop_axis(x, 0, height_, h - height_), 1, width_, w - width_);
    } else {
        const std::vector<int64_t> box = aspect_window(h, w, height_, width_);
        y = window(x, box[0], box[1], box[2], box[3]);
    }
    if (y.shape()[h_axis] != height_ || y.shape()[h_axis + 1] != width_) {
        y = image::resize(y, Ints{height_, width_}, "bilinear");
    }
    return y.dtype() == x.dtype() || !is_floating(x.dtype()) ? y : cast(y, x.dtype());
}

// ---- Resizing ----

Resizing::Resizing(int64_t height, int64_t width, ResizingOptions options)
    : Layer(options.name, "Resizing"),
      height_(height),
      width_(width),
      options_(std::move(options)) {
    if (height <= 0 || width <= 0)
        throw errors::InvalidArgumentError(
            fmt::format("layer \"{}\" (Resizing): height and width must be positive, got {} and {}",
                        name(),
                        height,
                        width));
    if (options_.crop_to_aspect_ratio && options_.pad_to_aspect_ratio)
        throw errors::InvalidArgumentError(fmt::format(
            "layer \"{}\" (Resizing): Only one of `pad_to_aspect_ratio` & `crop_to_aspect_ratio` "
            "can be `True`",
            name()));
    if (options_.fill_mode != "constant")
        throw errors::InvalidArgumentError(fmt::format(
            "layer \"{}\" (Resizing): Invalid value for argument `fill_mode`. Only 'constant' is "
            "supported. Received: fill_mode={}",
            name(),
            options_.fill_mode));
}

Tensor Resizing::call(const Tensor& x, bool) {
    require_image(x, name(), "Resizing");
    const int64_t h_axis = x.rank() - 3;
    const int64_t h = x.shape()[h_axis], w = x.shape()[h_axis + 1];
    Tensor in = x;
    if (options_.crop_to_aspect_ratio) {
        const std::vector<int64_t> box = aspect_window(h, w, height_, width_);
        in = window(x, box[0], box[1], box[2], box[3]);
    } else if (options_.pad_to_aspect_ratio) {
        // Keras: the same number of fill rows (columns) above and below (left and right).
        const int64_t ph = std::max(
            h, static_cast<int64_t>(static_cast<float>(w * height_) / static_cast<float>(width_)));
        const int64_t pw = std::max(
            w, static_cast<int64_t>(static_cast<float>(h * width_) / static_cast<float>(height_)));
        const int64_t top = static_cast<int64_t>(static_cast<float>(ph - h) / 2);
        const int64_t left = static_cast<int64_t>(static_cast<float>(pw - w) / 2);
        std::vector<std::pair<int64_t, int64_t>> pads(static_cast<std::size_t>(x.rank()), {0, 0});
        pads[h_axis] = {top, top};
        pads[h_axis + 1] = {left, left};
        in = pad(x, pads, "CONSTANT", options_.fill_value);
    }
    Tensor y =
        image::resize(in, Ints{height_, width_}, options_.interpolation, false, options_.antialias);
    if (y.dtype() == x.dtype()) return y;
    if (is_integer(x.dtype())) {
        const double lo = x.dtype() == DType::uint8   ? 0.0
                          : x.dtype() == DType::int32 ? -2147483648.0
                                                      : -9.2233720368547758e18;
        const double hi = x.dtype() == DType::uint8   ? 255.0
                          : x.dtype() == DType::int32 ? 2147483520.0
                                                      : 9.2233715e18;
        return cast(clip_by_value(round(y), lo, hi), x.dtype());
    }
    return cast(y, x.dtype());
}

}  // namespace tapeflow::keras::layers
