// Keras' reshaping layers (keras/src/layers/reshaping/): Reshape, Permute, RepeatVector,
// ZeroPadding2D, Cropping2D and UpSampling2D. Shapes never include the batch dimension in the
// arguments (Keras' rule); the 2-D layers take data_format "channels_last" (default, [N, H, W, C])
// or "channels_first" ([N, C, H, W]). No weights; gradients are those of the ops used.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include <tapeflow/core/export.hpp>
#include <tapeflow/keras/layer.hpp>
#include <tapeflow/ops/nn.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow::keras::layers {

/// Keras' 2-D padding / cropping argument: one int (all four sides), two ints (symmetric height,
/// symmetric width) or two pairs ((top, bottom), (left, right)).
class Sides2D {
public:
    Sides2D(int64_t all) : values_{all} {}  // NOLINT: implicit by design
    Sides2D(std::initializer_list<int64_t> hw) : values_(hw) {}
    Sides2D(std::initializer_list<std::pair<int64_t, int64_t>> sides) {
        for (const auto& [a, b] : sides) {
            values_.push_back(a);
            values_.push_back(b);
        }
        pairs_ = true;
    }
    /// (top, bottom, left, right); InvalidArgumentError naming `layer` when the form is wrong or
    /// a value is negative.
    std::vector<int64_t> sides(const std::string& layer, const char* what) const;

private:
    std::vector<int64_t> values_;
    bool pairs_ = false;
};

struct ReshapeOptions {
    std::string name = "";
};

/// [B, ...] -> [B] + target_shape; target_shape may hold one -1 (inferred). A size that does not
/// fit raises InvalidArgumentError naming the layer and both shapes.
class Reshape : public Layer {
public:
    explicit Reshape(std::vector<int64_t> target_shape, ReshapeOptions options = {});
    Config get_config() const override;
    Tensor call(const Tensor& x, bool training) override;
    const std::vector<int64_t>& target_shape() const { return target_shape_; }

private:
    std::vector<int64_t> target_shape_;
    ReshapeOptions options_;
};

struct PermuteOptions {
    std::string name = "";
};

/// Permutes the non-batch axes: dims lists 1..rank-1 once each (1-based, Keras' rule), output
/// axis i + 1 is input axis dims[i].
class Permute : public Layer {
public:
    explicit Permute(std::vector<int64_t> dims, PermuteOptions options = {});
    Config get_config() const override;
    Tensor call(const Tensor& x, bool training) override;

private:
    std::vector<int64_t> dims_;
    PermuteOptions options_;
};

struct RepeatVectorOptions {
    std::string name = "";
};

/// [B, F] -> [B, n, F]: the input repeated n times along a new axis 1.
class RepeatVector : public Layer {
public:
    explicit RepeatVector(int64_t n, RepeatVectorOptions options = {});
    Config get_config() const override;
    Tensor call(const Tensor& x, bool training) override;

private:
    int64_t n_;
    RepeatVectorOptions options_;
};

struct ZeroPadding2DOptions {
    Sides2D padding = 1;
    std::string data_format = "channels_last";
    std::string name = "";
};

/// Zeros around the height and width axes.
class ZeroPadding2D : public Layer {
public:
    explicit ZeroPadding2D(ZeroPadding2DOptions options = {});
    Config get_config() const override;
    Tensor call(const Tensor& x, bool training) override;

private:
    ZeroPadding2DOptions options_;
    std::vector<int64_t> sides_;  // top, bottom, left, right
    bool channels_first_ = false;
};

struct Cropping2DOptions {
    Sides2D cropping = 0;
    std::string data_format = "channels_last";
    std::string name = "";
};

/// Removes rows / columns at the borders; cropping as much as the size or more raises
/// InvalidArgumentError naming the layer and the shape.
class Cropping2D : public Layer {
public:
    explicit Cropping2D(Cropping2DOptions options = {});
    Config get_config() const override;
    Tensor call(const Tensor& x, bool training) override;

private:
    Cropping2DOptions options_;
    std::vector<int64_t> sides_;
    bool channels_first_ = false;
};

struct UpSampling2DOptions {
    Ints size = 2;  // (rows, cols), or one value for both
    std::string data_format = "channels_last";
    std::string interpolation = "nearest";  // or any tf::image::resize method ("bilinear", ...)
    std::string name = "";
};

/// Repeats rows size[0] times and columns size[1] times ("nearest"), or resizes to
/// (H size[0], W size[1]) with tf::image::resize's method and half-pixel rules (Keras 3).
class UpSampling2D : public Layer {
public:
    explicit UpSampling2D(UpSampling2DOptions options = {});
    Config get_config() const override;
    Tensor call(const Tensor& x, bool training) override;

private:
    UpSampling2DOptions options_;
    std::vector<int64_t> size_;
    bool channels_first_ = false;
};

namespace detail {
/// "channels_last" -> false, "channels_first" -> true; anything else: InvalidArgumentError
/// naming the layer.
bool channels_first(const std::string& data_format, const std::string& layer);
}  // namespace detail

}  // namespace tapeflow::keras::layers

TAPEFLOW_API_END
