// Reshape, Permute, RepeatVector, ZeroPadding2D, Cropping2D and UpSampling2D on reshape /
// transpose / tile / pad / slice / tf::image::resize.
#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/image.hpp>
#include <tapeflow/keras/layers/reshaping.hpp>
#include <tapeflow/ops/array.hpp>
#include <tapeflow/ops/creation.hpp>

namespace tapeflow::keras::layers {

namespace {

std::string list_text(const std::vector<int64_t>& v) {
    return fmt::format("({})", fmt::join(v, ", "));
}

// [N, C, H, W] <-> [N, H, W, C] around fn, for the channels_first 2-D layers.
template <class Fn>
Tensor channels_last_call(const Tensor& x, bool channels_first, Fn&& fn) {
    if (!channels_first) return fn(x);
    return transpose(fn(transpose(x, {0, 2, 3, 1})), {0, 3, 1, 2});
}

}  // namespace

bool detail::channels_first(const std::string& data_format, const std::string& layer) {
    if (data_format == "channels_last") return false;
    if (data_format == "channels_first") return true;
    throw errors::InvalidArgumentError(fmt::format(
        "layer \"{}\": data_format must be \"channels_last\" or \"channels_first\", got \"{}\"",
        layer,
        data_format));
}

std::vector<int64_t> Sides2D::sides(const std::string& layer, const char* what) const {
    std::vector<int64_t> s;
    if (values_.size() == 1 && !pairs_) {
        s.assign(4, values_[0]);
    } else if (values_.size() == 2 && !pairs_) {
        s = {values_[0], values_[0], values_[1], values_[1]};
    } else if (values_.size() == 4 && pairs_) {
        s = values_;
    } else {
        throw errors::InvalidArgumentError(fmt::format(
            "layer \"{}\": `{}` should be an int, a tuple of 2 ints (symmetric_height, "
            "symmetric_width) or a tuple of 2 tuples of 2 ints ((top, bottom), (left, right)); "
            "got {} value(s)",
            layer,
            what,
            values_.size()));
    }
    if (std::any_of(s.begin(), s.end(), [](int64_t v) { return v < 0; }))
        throw errors::InvalidArgumentError(fmt::format(
            "layer \"{}\": `{}` values must be non-negative, got {}", layer, what, list_text(s)));
    return s;
}

// ---- Reshape ----

Reshape::Reshape(std::vector<int64_t> target_shape, ReshapeOptions options)
    : Layer(options.name, "Reshape"),
      target_shape_(std::move(target_shape)),
      options_(std::move(options)) {
    const auto unknown = std::count(target_shape_.begin(), target_shape_.end(), int64_t{-1});
    if (unknown > 1 || std::any_of(target_shape_.begin(), target_shape_.end(), [](int64_t d) {
            return d < -1 || d == 0;
        }))
        throw errors::InvalidArgumentError(fmt::format(
            "layer \"{}\" (Reshape): target_shape must hold positive sizes and at most one -1, "
            "got {}",
            name(),
            list_text(target_shape_)));
}

Tensor Reshape::call(const Tensor& x, bool) {
    if (x.rank() < 1)
        throw errors::InvalidArgumentError(
            fmt::format("layer \"{}\" (Reshape) needs a batch dimension, got a scalar", name()));
    const int64_t elements = x.shape().num_elements() / std::max<int64_t>(x.shape()[0], 1);
    int64_t known = 1;
    for (int64_t d : target_shape_)
        if (d != -1) known *= d;
    const bool has_unknown =
        std::find(target_shape_.begin(), target_shape_.end(), -1) != target_shape_.end();
    if (x.shape()[0] > 0 &&
        (has_unknown ? (known == 0 || elements % known != 0) : known != elements))
        throw errors::InvalidArgumentError(fmt::format(
            "layer \"{}\" (Reshape): the input of shape {} has {} values per example, which "
            "cannot be reshaped to target_shape {}",
            name(),
            shape_text(x.shape()),
            elements,
            list_text(target_shape_)));
    std::vector<int64_t> dims{x.shape()[0]};
    for (int64_t d : target_shape_)
        dims.push_back(d == -1 ? (known == 0 ? 0 : elements / known) : d);
    return reshape(x, Shape(dims));
}

// ---- Permute ----

Permute::Permute(std::vector<int64_t> dims, PermuteOptions options)
    : Layer(options.name, "Permute"), dims_(std::move(dims)), options_(std::move(options)) {
    std::vector<int64_t> sorted = dims_;
    std::sort(sorted.begin(), sorted.end());
    for (std::size_t i = 0; i < sorted.size(); ++i)
        if (sorted[i] != static_cast<int64_t>(i) + 1)
            throw errors::InvalidArgumentError(fmt::format(
                "layer \"{}\" (Permute): Invalid permutation argument `dims`: it should hold "
                "1..{} once each (1-based, the batch axis excluded), got {}",
                name(),
                dims_.size(),
                list_text(dims_)));
    set_input_spec({.ndim = static_cast<int64_t>(dims_.size()) + 1});
}

Tensor Permute::call(const Tensor& x, bool) {
    std::vector<int64_t> perm{0};
    perm.insert(perm.end(), dims_.begin(), dims_.end());
    return transpose(x, perm);
}

// ---- RepeatVector ----

RepeatVector::RepeatVector(int64_t n, RepeatVectorOptions options)
    : Layer(options.name, "RepeatVector"), n_(n), options_(std::move(options)) {
    if (n < 0)
        throw errors::InvalidArgumentError(fmt::format(
            "layer \"{}\" (RepeatVector): n must be a non-negative integer, got {}", name(), n));
    set_input_spec({.ndim = 2});
}

Tensor RepeatVector::call(const Tensor& x, bool) {
    return tile(expand_dims(x, 1), {1, n_, 1});
}

// ---- ZeroPadding2D ----

ZeroPadding2D::ZeroPadding2D(ZeroPadding2DOptions options)
    : Layer(options.name, "ZeroPadding2D"), options_(std::move(options)) {
    sides_ = options_.padding.sides(name(), "padding");
    channels_first_ = detail::channels_first(options_.data_format, name());
    set_input_spec({.ndim = 4});
}

Tensor ZeroPadding2D::call(const Tensor& x, bool) {
    const std::pair<int64_t, int64_t> h{sides_[0], sides_[1]}, w{sides_[2], sides_[3]};
    if (channels_first_) return pad(x, {{0, 0}, {0, 0}, h, w});
    return pad(x, {{0, 0}, h, w, {0, 0}});
}

// ---- Cropping2D ----

Cropping2D::Cropping2D(Cropping2DOptions options)
    : Layer(options.name, "Cropping2D"), options_(std::move(options)) {
    sides_ = options_.cropping.sides(name(), "cropping");
    channels_first_ = detail::channels_first(options_.data_format, name());
    set_input_spec({.ndim = 4});
}

Tensor Cropping2D::call(const Tensor& x, bool) {
    const int64_t h_axis = channels_first_ ? 2 : 1;
    const int64_t h = x.shape()[h_axis], w = x.shape()[h_axis + 1];
    if (sides_[0] + sides_[1] >= h || sides_[2] + sides_[3] >= w)
        throw errors::InvalidArgumentError(fmt::format(
            "layer \"{}\" (Cropping2D): cropping (({}, {}), ({}, {})) leaves nothing of an input "
            "of shape {}",
            name(),
            sides_[0],
            sides_[1],
            sides_[2],
            sides_[3],
            shape_text(x.shape())));
    std::vector<int64_t> begin(4, 0), size(4, -1);
    begin[h_axis] = sides_[0];
    begin[h_axis + 1] = sides_[2];
    size[h_axis] = h - sides_[0] - sides_[1];
    size[h_axis + 1] = w - sides_[2] - sides_[3];
    return slice(x, begin, size);
}

// ---- UpSampling2D ----

UpSampling2D::UpSampling2D(UpSampling2DOptions options)
    : Layer(options.name, "UpSampling2D"), options_(std::move(options)) {
    const auto& v = options_.size.values();
    if ((v.size() != 1 && v.size() != 2) ||
        std::any_of(v.begin(), v.end(), [](int64_t s) { return s <= 0; }))
        throw errors::InvalidArgumentError(fmt::format(
            "layer \"{}\" (UpSampling2D): size must be one or two positive integers, got {}",
            name(),
            list_text(v)));
    size_ = v.size() == 1 ? std::vector<int64_t>{v[0], v[0]} : v;
    std::transform(options_.interpolation.begin(),
                   options_.interpolation.end(),
                   options_.interpolation.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    static const char* const kMethods[] = {"nearest",
                                           "bilinear",
                                           "bicubic",
                                           "area",
                                           "lanczos3",
                                           "lanczos5",
                                           "gaussian",
                                           "mitchellcubic"};
    if (std::none_of(std::begin(kMethods), std::end(kMethods), [&](const char* m) {
            return options_.interpolation == m;
        }))
        throw errors::InvalidArgumentError(
            fmt::format("layer \"{}\" (UpSampling2D): unknown interpolation \"{}\"; use "
                        "\"nearest\", \"bilinear\", \"bicubic\", \"area\", \"lanczos3\", "
                        "\"lanczos5\", \"gaussian\" or \"mitchellcubic\"",
                        name(),
                        options_.interpolation));
    channels_first_ = detail::channels_first(options_.data_format, name());
    set_input_spec({.ndim = 4});
}

Tensor UpSampling2D::call(const Tensor& x, bool) {
    return channels_last_call(x, channels_first_, [&](const Tensor& in) {
        const Shape& s = in.shape();
        if (options_.interpolation == "nearest") {
            // Each row, then each column, repeated (Keras' ops.repeat): a tile of a new axis.
            Tensor y = tile(expand_dims(in, 2), {1, 1, size_[0], 1, 1});
            y = reshape(y, Shape{s[0], s[1] * size_[0], s[2], s[3]});
            y = tile(expand_dims(y, 3), {1, 1, 1, size_[1], 1});
            return reshape(y, Shape{s[0], s[1] * size_[0], s[2] * size_[1], s[3]});
        }
        Tensor y =
            image::resize(in, Ints{s[1] * size_[0], s[2] * size_[1]}, options_.interpolation);
        return y.dtype() == in.dtype() ? y : cast(y, in.dtype());
    });
}

}  // namespace tapeflow::keras::layers
