// Keras' preprocessing layers (keras/src/layers/preprocessing/): Rescaling, Normalization (with
// adapt), RandomFlip, RandomCrop and Resizing. Images are channels last ([N, H, W, C] or
// [H, W, C]). The random layers act only when called with training = true (identity otherwise)
// and draw from their seed as Dropout does (a new draw per call, reproducible per run).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <tapeflow/core/export.hpp>
#include <tapeflow/keras/layer.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow::keras::layers {

struct RescalingOptions {
    double offset = 0.0;
    std::string name = "";
    std::string dtype = "";
};

/// x * scale + offset, in the compute dtype (integer inputs become float32; float64 stays).
class Rescaling : public Layer {
public:
    explicit Rescaling(double scale, RescalingOptions options = {});
    Config get_config() const override;
    Tensor call(const Tensor& x, bool training) override;

private:
    double scale_;
    RescalingOptions options_;
};

struct NormalizationOptions {
    /// The axes that keep their own mean and variance (Keras' default -1: one per feature);
    /// empty: one mean and variance over everything (Keras' axis=None).
    std::vector<int64_t> axis = {-1};
    /// Given statistics (both or neither): one value, or one per element of the kept axes.
    std::optional<std::vector<double>> mean = std::nullopt;
    std::optional<std::vector<double>> variance = std::nullopt;
    bool invert = false;  // mean + x * std instead of (x - mean) / std
    std::string name = "";
    std::string dtype = "";
};

/// (x - mean) / max(sqrt(variance), 1e-7) with the statistics given or learnt by adapt(). Without
/// given ones the layer has non-trainable weights "mean" (zeros), "variance" (ones) and "count"
/// (int64), which adapt() sets.
class Normalization : public Layer {
public:
    explicit Normalization(NormalizationOptions options = {});
    Config get_config() const override;
    /// The mean and (biased) variance of `data` over every axis but the kept ones.
    void adapt(const Tensor& data);
    /// The same over several batches, merged as Keras merges them (weighted by element count).
    void adapt(const std::vector<Tensor>& batches);
    void build(const Shape& input_shape) override;
    Tensor call(const Tensor& x, bool training) override;
    /// The statistics in the broadcast shape (undefined before build).
    Tensor mean() const;
    Tensor variance() const;

protected:
    bool autocast_weights() const override { return false; }

private:
    void build_for(const Tensor& data);
    NormalizationOptions options_;
    std::vector<int64_t> keep_, reduce_, broadcast_;
    Variable adapt_mean_, adapt_variance_, count_;
    Tensor given_mean_, given_variance_;
    Shape build_shape_;
};

struct RandomFlipOptions {
    std::string mode = "horizontal_and_vertical";  // or "horizontal", "vertical"
    std::optional<uint64_t> seed = std::nullopt;
    std::string name = "";
};

/// Training: each image flipped with probability 1/2 (one draw per image, used for both flips in
/// "horizontal_and_vertical", as Keras).
class RandomFlip : public Layer {
public:
    explicit RandomFlip(RandomFlipOptions options = {});
    Config get_config() const override;
    Tensor call(const Tensor& x, bool training) override;

private:
    RandomFlipOptions options_;
    uint64_t calls_ = 0;
};

struct RandomCropOptions {
    std::optional<uint64_t> seed = std::nullopt;
    std::string name = "";
};

/// Training: a height x width block at a random offset (one per batch, as Keras) when the input
/// is larger in both; otherwise the largest central crop of the target's aspect ratio resized
/// (bilinear) to height x width. Inference: the input unchanged (Keras 3).
class RandomCrop : public Layer {
public:
    RandomCrop(int64_t height, int64_t width, RandomCropOptions options = {});
    Config get_config() const override;
    Tensor call(const Tensor& x, bool training) override;

private:
    int64_t height_, width_;
    RandomCropOptions options_;
    uint64_t calls_ = 0;
};

struct ResizingOptions {
    std::string interpolation = "bilinear";  // any tf::image::resize method
    bool crop_to_aspect_ratio = false;
    bool pad_to_aspect_ratio = false;
    std::string fill_mode = "constant";
    double fill_value = 0.0;
    bool antialias = false;
    std::string name = "";
};

/// tf::image::resize to height x width, after a central crop (crop_to_aspect_ratio) or a
/// symmetric fill_value pad (pad_to_aspect_ratio) to the target's aspect ratio. Integer images
/// come back rounded and saturated to their dtype (Keras 3).
class Resizing : public Layer {
public:
    Resizing(int64_t height, int64_t width, ResizingOptions options = {});
    Config get_config() const override;
    Tensor call(const Tensor& x, bool training) override;

private:
    int64_t height_, width_;
    ResizingOptions options_;
};

}  // namespace tapeflow::keras::layers

TAPEFLOW_API_END
