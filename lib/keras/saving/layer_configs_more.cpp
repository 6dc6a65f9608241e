// get_config() and the registry's factories of the recurrent, reshaping, merging, preprocessing,
// extra convolution / pooling and extra normalization layers, with Keras 3's keys (as
// layer_configs.cpp does for the core layers). Initializers are named by the layer's Keras
// default (the weights travel in model.weights.h5).
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/keras/layers/convolutional.hpp>
#include <tapeflow/keras/layers/merging.hpp>
#include <tapeflow/keras/layers/normalization.hpp>
#include <tapeflow/keras/layers/preprocessing.hpp>
#include <tapeflow/keras/layers/recurrent.hpp>
#include <tapeflow/keras/layers/reshaping.hpp>
#include <tapeflow/keras/saving.hpp>

#include "keras/saving/archive.hpp"
#include "keras/saving/config_helpers.hpp"

namespace tapeflow::keras {

namespace {

using namespace saving_detail;  // NOLINT(google-build-using-namespace): the shared helpers

Config orthogonal() {
    return initializer("Orthogonal", Config(Config::Object{{"seed", Config()}, {"gain", 1.0}}));
}

// A JSON list of ints as written (-1 stays -1, unlike Config::shape's null).
Config int_list(const std::vector<int64_t>& v) {
    Config out = Config::array();
    for (const int64_t x : v)
        out.push_back(x);
    return out;
}

Config seed_config(const std::optional<uint64_t>& seed) {
    return seed ? Config(static_cast<int64_t>(*seed)) : Config();
}

void set_nulls(Config& c, std::initializer_list<const char*> keys) {
    for (const char* k : keys)
        c.set(k, Config());
}

// ---- reading configs ----

std::string activation_of(const Config& c, const char* key, const std::string& fallback) {
    const Config a = c.get(key, Config(fallback));
    if (a.is_null()) return "";
    if (a.is_string()) return a.as_string() == "linear" ? "" : a.as_string();
    throw errors::UnimplementedError(
        fmt::format("layer \"{}\": only activations given by name can be loaded, got {}",
                    name_option(c),
                    a.dump()));
}

bool bool_or(const Config& c, const char* key, bool fallback) {
    return c.get(key, Config(fallback)).as_bool();
}

double double_or(const Config& c, const char* key, double fallback) {
    return c.get(key, Config(fallback)).as_double();
}

std::string string_or(const Config& c, const char* key, const std::string& fallback) {
    const Config v = c.get(key, Config(fallback));
    return v.is_null() ? fallback : v.as_string();
}

// An int or a list of ints (Keras' tuples) as a vector.
std::vector<int64_t> int_values(const Config& v) {
    if (v.is_int()) return {v.as_int()};
    std::vector<int64_t> out;
    for (const Config& x : v.as_array())
        out.push_back(x.as_int());
    return out;
}

Ints ints_or(const Config& c, const char* key, Ints fallback) {
    const Config v = c.get(key, Config());
    return v.is_null() ? fallback : Ints(int_values(v));
}

int64_t first_or(const Config& c, const char* key, int64_t fallback) {
    const Config v = c.get(key, Config());
    return v.is_null() ? fallback : int_values(v).at(0);
}

std::string data_format_of(const Config& c) {
    return string_or(c, "data_format", "channels_last");
}

// Keras' 2-D padding / cropping: an int, (h, w) or ((top, bottom), (left, right)).
layers::Sides2D sides_of(const Config& v) {
    if (v.is_int()) return {v.as_int()};
    const auto& a = v.as_array();
    if (a.size() == 2 && a[0].is_array()) {
        const auto tb = int_values(a[0]), lr = int_values(a[1]);
        return {std::pair<int64_t, int64_t>{tb.at(0), tb.at(1)},
                std::pair<int64_t, int64_t>{lr.at(0), lr.at(1)}};
    }
    const auto hw = int_values(v);
    if (hw.size() != 2)
        throw errors::InvalidArgumentError(fmt::format(
            "a 2-D padding / cropping config needs 1, 2 or 2x2 ints, got {}", v.dump()));
    return {hw[0], hw[1]};
}

Config sides_config(const std::vector<int64_t>& s) {
    Config out = Config::array();
    out.push_back(int_list({s[0], s[1]}));
    out.push_back(int_list({s[2], s[3]}));
    return out;
}

std::shared_ptr<layers::Recurrent> recurrent_of(const Config& serialized,
                                                const std::string& owner) {
    auto layer = std::dynamic_pointer_cast<layers::Recurrent>(saving::make_layer(serialized));
    if (!layer)
        throw errors::UnimplementedError(fmt::format(
            "layer \"{}\" (Bidirectional): only SimpleRNN, LSTM and GRU can be wrapped, got {}",
            owner,
            serialized["class_name"].as_string()));
    return layer;
}

}  // namespace

namespace layers {

// ---- recurrent ----

Config Recurrent::get_config() const {
    Config c = Layer::get_config();
    c.set("return_sequences", options_.return_sequences);
    c.set("return_state", options_.return_state);
    c.set("go_backwards", options_.go_backwards);
    c.set("stateful", options_.stateful);
    c.set("unroll", options_.unroll);
    c.set("zero_output_for_mask", options_.zero_output_for_mask);
    c.set("units", units_);
    c.set("activation", activation_name(options_.activation));
    if (kind_ != Kind::simple)
        c.set("recurrent_activation", activation_name(options_.recurrent_activation));
    c.set("use_bias", options_.use_bias);
    c.set("kernel_initializer", glorot_uniform());
    c.set("recurrent_initializer", orthogonal());
    c.set("bias_initializer", initializer("Zeros"));
    if (kind_ == Kind::lstm) c.set("unit_forget_bias", options_.unit_forget_bias);
    set_nulls(c,
              {"kernel_regularizer",
               "recurrent_regularizer",
               "bias_regularizer",
               "activity_regularizer",
               "kernel_constraint",
               "recurrent_constraint",
               "bias_constraint"});
    c.set("dropout", options_.dropout);
    c.set("recurrent_dropout", options_.recurrent_dropout);
    if (kind_ == Kind::gru) c.set("reset_after", options_.reset_after);
    c.set("seed", seed_config(options_.seed));
    return c;
}

Config Bidirectional::get_config() const {
    Config c = Layer::get_config();
    c.set("merge_mode", merge_mode_ == "none" ? Config() : Config(merge_mode_));
    c.set("layer", saving::serialize_layer(*forward_));
    c.set("backward_layer", saving::serialize_layer(*backward_));
    return c;
}

Config TimeDistributed::get_config() const {
    Config c = Layer::get_config();
    c.set("layer", saving::serialize_layer(*layer_));
    return c;
}

// ---- reshaping ----

Config Reshape::get_config() const {
    Config c = Layer::get_config();
    c.set("target_shape", int_list(target_shape_));
    return c;
}

Config Permute::get_config() const {
    Config c = Layer::get_config();
    c.set("dims", int_list(dims_));
    return c;
}

Config RepeatVector::get_config() const {
    Config c = Layer::get_config();
    c.set("n", n_);
    return c;
}

Config ZeroPadding2D::get_config() const {
    Config c = Layer::get_config();
    c.set("padding", sides_config(sides_));
    c.set("data_format", options_.data_format);
    return c;
}

Config Cropping2D::get_config() const {
    Config c = Layer::get_config();
    c.set("cropping", sides_config(sides_));
    c.set("data_format", options_.data_format);
    return c;
}

Config UpSampling2D::get_config() const {
    Config c = Layer::get_config();
    c.set("size", int_list(size_));
    c.set("data_format", options_.data_format);
    c.set("interpolation", options_.interpolation);
    return c;
}

// ---- merging ----

Config Concatenate::get_config() const {
    Config c = Layer::get_config();
    c.set("axis", options_.axis);
    return c;
}

Config Dot::get_config() const {
    Config c = Layer::get_config();
    c.set("axes", axes_.size() == 1 ? Config(axes_[0]) : int_list(axes_));
    c.set("normalize", options_.normalize);
    return c;
}

// ---- preprocessing ----

Config Rescaling::get_config() const {
    Config c = Layer::get_config();
    c.set("scale", scale_);
    c.set("offset", options_.offset);
    return c;
}

Config Normalization::get_config() const {
    Config c = Layer::get_config();
    c.set("axis", options_.axis.empty() ? Config() : int_list(options_.axis));
    c.set("invert", options_.invert);
    const auto stats = [](const std::optional<std::vector<double>>& v) {
        if (!v) return Config();
        if (v->size() == 1) return Config((*v)[0]);
        Config out = Config::array();
        for (const double x : *v)
            out.push_back(x);
        return out;
    };
    c.set("mean", stats(options_.mean));
    c.set("variance", stats(options_.variance));
    return c;
}

Config RandomFlip::get_config() const {
    Config c = Layer::get_config();
    c.set("seed", seed_config(options_.seed));
    c.set("mode", options_.mode);
    c.set("data_format", "channels_last");
    return c;
}

Config RandomCrop::get_config() const {
    Config c = Layer::get_config();
    c.set("height", height_);
    c.set("width", width_);
    c.set("seed", seed_config(options_.seed));
    c.set("data_format", "channels_last");
    return c;
}

Config Resizing::get_config() const {
    Config c = Layer::get_config();
    c.set("height", height_);
    c.set("width", width_);
    c.set("interpolation", options_.interpolation);
    c.set("crop_to_aspect_ratio", options_.crop_to_aspect_ratio);
    c.set("pad_to_aspect_ratio", options_.pad_to_aspect_ratio);
    c.set("fill_mode", options_.fill_mode);
    c.set("fill_value", options_.fill_value);
    c.set("antialias", options_.antialias);
    c.set("data_format", "channels_last");
    return c;
}

// ---- convolution and pooling ----

Config Conv2DTranspose::get_config() const {
    Config c = Layer::get_config();
    c.set("filters", filters_);
    c.set("kernel_size", int_list(kernel_size_));
    c.set("strides", int_list(strides_));
    c.set("padding", lower(padding_));
    c.set("output_padding", output_padding_ ? int_list(*output_padding_) : Config());
    c.set("data_format", "channels_last");
    c.set("dilation_rate", int_list(dilation_));
    c.set("activation", activation_name(options_.activation));
    c.set("use_bias", options_.use_bias);
    c.set("kernel_initializer", glorot_uniform());
    c.set("bias_initializer", initializer("Zeros"));
    set_nulls(c,
              {"kernel_regularizer",
               "bias_regularizer",
               "activity_regularizer",
               "kernel_constraint",
               "bias_constraint"});
    return c;
}

Config DepthwiseConv2D::get_config() const {
    Config c = Layer::get_config();
    c.set("depth_multiplier", options_.depth_multiplier);
    c.set("kernel_size", int_list(kernel_size_));
    c.set("strides", int_list(pair(options_.strides)));
    c.set("padding", lower(padding_));
    c.set("data_format", "channels_last");
    c.set("dilation_rate", int_list(pair(options_.dilation_rate)));
    c.set("activation", activation_name(options_.activation));
    c.set("use_bias", options_.use_bias);
    c.set("depthwise_initializer", glorot_uniform());
    c.set("bias_initializer", initializer("Zeros"));
    set_nulls(c,
              {"depthwise_regularizer",
               "bias_regularizer",
               "activity_regularizer",
               "depthwise_constraint",
               "bias_constraint"});
    return c;
}

Config SeparableConv2D::get_config() const {
    Config c = Layer::get_config();
    c.set("depth_multiplier", options_.depth_multiplier);
    c.set("filters", filters_);
    c.set("kernel_size", int_list(kernel_size_));
    c.set("strides", int_list(pair(options_.strides)));
    c.set("padding", lower(padding_));
    c.set("data_format", "channels_last");
    c.set("dilation_rate", int_list(pair(options_.dilation_rate)));
    c.set("activation", activation_name(options_.activation));
    c.set("use_bias", options_.use_bias);
    c.set("depthwise_initializer", glorot_uniform());
    c.set("pointwise_initializer", glorot_uniform());
    c.set("bias_initializer", initializer("Zeros"));
    set_nulls(c,
              {"depthwise_regularizer",
               "pointwise_regularizer",
               "bias_regularizer",
               "activity_regularizer",
               "depthwise_constraint",
               "pointwise_constraint",
               "bias_constraint"});
    return c;
}

namespace {
Config pooling1d_config(Config c,
                        int64_t pool,
                        int64_t strides,
                        const std::string& padding,
                        const std::string& data_format) {
    c.set("pool_size", int_list({pool}));
    c.set("padding", lower(padding));
    c.set("strides", int_list({strides}));
    c.set("data_format", data_format);
    return c;
}
Config global_pooling_config(Config c, const GlobalPoolingOptions& o) {
    c.set("data_format", o.data_format);
    c.set("keepdims", o.keepdims);
    return c;
}
}  // namespace

Config MaxPooling1D::get_config() const {
    return pooling1d_config(
        Layer::get_config(), pool_size_, strides_, padding_, options_.data_format);
}
Config AveragePooling1D::get_config() const {
    return pooling1d_config(
        Layer::get_config(), pool_size_, strides_, padding_, options_.data_format);
}
Config GlobalMaxPooling2D::get_config() const {
    return global_pooling_config(Layer::get_config(), options_);
}
Config GlobalAveragePooling1D::get_config() const {
    return global_pooling_config(Layer::get_config(), options_);
}

// ---- normalization ----

Config GroupNormalization::get_config() const {
    Config c = Layer::get_config();
    c.set("groups", options_.groups);
    c.set("axis", options_.axis);
    c.set("epsilon", options_.epsilon);
    c.set("center", options_.center);
    c.set("scale", options_.scale);
    c.set("beta_initializer", initializer("Zeros"));
    c.set("gamma_initializer", initializer("Ones"));
    set_nulls(c, {"beta_regularizer", "gamma_regularizer", "beta_constraint", "gamma_constraint"});
    return c;
}

Config UnitNormalization::get_config() const {
    Config c = Layer::get_config();
    const auto& axes = options_.axis.list();
    c.set("axis", axes.size() == 1 ? Config(axes[0]) : int_list(axes));
    return c;
}

}  // namespace layers

// ---- the factories ----

namespace saving {

void register_more_layers(std::map<std::string, LayerFactory>& f) {
    using namespace layers;  // NOLINT(google-build-using-namespace): the table reads as Keras'
    const auto rnn_options = [](const Config& c) {
        return RNNOptions{
            .activation = activation_of(c, "activation", "tanh"),
            .recurrent_activation = activation_of(c, "recurrent_activation", "sigmoid"),
            .use_bias = bool_or(c, "use_bias", true),
            .unit_forget_bias = bool_or(c, "unit_forget_bias", true),
            .dropout = double_or(c, "dropout", 0.0),
            .recurrent_dropout = double_or(c, "recurrent_dropout", 0.0),
            .return_sequences = bool_or(c, "return_sequences", false),
            .return_state = bool_or(c, "return_state", false),
            .go_backwards = bool_or(c, "go_backwards", false),
            .stateful = bool_or(c, "stateful", false),
            .unroll = bool_or(c, "unroll", false),
            .reset_after = bool_or(c, "reset_after", true),
            .zero_output_for_mask = bool_or(c, "zero_output_for_mask", false),
            .seed = seed_option(c),
            .name = name_option(c),
            .dtype = dtype_option(c)};
    };
    f["SimpleRNN"] = [rnn_options](const Config& c) {
        return std::make_shared<SimpleRNN>(c["units"].as_int(), rnn_options(c));
    };
    f["LSTM"] = [rnn_options](const Config& c) {
        return std::make_shared<LSTM>(c["units"].as_int(), rnn_options(c));
    };
    f["GRU"] = [rnn_options](const Config& c) {
        return std::make_shared<GRU>(c["units"].as_int(), rnn_options(c));
    };
    f["Bidirectional"] = [](const Config& c) {
        const Config mode = c.get("merge_mode", Config("concat"));
        const Config backward = c.get("backward_layer", Config());
        return std::make_shared<Bidirectional>(
            recurrent_of(c["layer"], name_option(c)),
            mode.is_null() ? "none" : mode.as_string(),
            backward.is_null() ? nullptr : recurrent_of(backward, name_option(c)),
            name_option(c));
    };
    f["TimeDistributed"] = [](const Config& c) {
        return std::make_shared<TimeDistributed>(make_layer(c["layer"]), name_option(c));
    };

    f["Reshape"] = [](const Config& c) {
        return std::make_shared<Reshape>(int_values(c["target_shape"]),
                                         ReshapeOptions{.name = name_option(c)});
    };
    f["Permute"] = [](const Config& c) {
        return std::make_shared<Permute>(int_values(c["dims"]),
                                         PermuteOptions{.name = name_option(c)});
    };
    f["RepeatVector"] = [](const Config& c) {
        return std::make_shared<RepeatVector>(c["n"].as_int(),
                                              RepeatVectorOptions{.name = name_option(c)});
    };
    f["ZeroPadding2D"] = [](const Config& c) {
        return std::make_shared<ZeroPadding2D>(
            ZeroPadding2DOptions{.padding = sides_of(c.get("padding", Config(1))),
                                 .data_format = data_format_of(c),
                                 .name = name_option(c)});
    };
    f["Cropping2D"] = [](const Config& c) {
        return std::make_shared<Cropping2D>(
            Cropping2DOptions{.cropping = sides_of(c.get("cropping", Config(0))),
                              .data_format = data_format_of(c),
                              .name = name_option(c)});
    };
    f["UpSampling2D"] = [](const Config& c) {
        return std::make_shared<UpSampling2D>(
            UpSampling2DOptions{.size = ints_or(c, "size", 2),
                                .data_format = data_format_of(c),
                                .interpolation = string_or(c, "interpolation", "nearest"),
                                .name = name_option(c)});
    };

    f["Add"] = [](const Config& c) {
        return std::make_shared<Add>(MergeOptions{name_option(c)});
    };
    f["Subtract"] = [](const Config& c) {
        return std::make_shared<Subtract>(MergeOptions{name_option(c)});
    };
    f["Multiply"] = [](const Config& c) {
        return std::make_shared<Multiply>(MergeOptions{name_option(c)});
    };
    f["Average"] = [](const Config& c) {
        return std::make_shared<Average>(MergeOptions{name_option(c)});
    };
    f["Maximum"] = [](const Config& c) {
        return std::make_shared<Maximum>(MergeOptions{name_option(c)});
    };
    f["Minimum"] = [](const Config& c) {
        return std::make_shared<Minimum>(MergeOptions{name_option(c)});
    };
    f["Concatenate"] = [](const Config& c) {
        return std::make_shared<Concatenate>(
            ConcatenateOptions{.axis = c.get("axis", Config(-1)).as_int(), .name = name_option(c)});
    };
    f["Dot"] = [](const Config& c) {
        return std::make_shared<Dot>(
            Ints(int_values(c["axes"])),
            DotOptions{.normalize = bool_or(c, "normalize", false), .name = name_option(c)});
    };

    f["Rescaling"] = [](const Config& c) {
        return std::make_shared<Rescaling>(c["scale"].as_double(),
                                           RescalingOptions{.offset = double_or(c, "offset", 0.0),
                                                            .name = name_option(c),
                                                            .dtype = dtype_option(c)});
    };
    f["Normalization"] = [](const Config& c) {
        const auto stats = [](const Config& v) -> std::optional<std::vector<double>> {
            if (v.is_null()) return std::nullopt;
            if (v.is_number()) return std::vector<double>{v.as_double()};
            std::vector<double> out;
            for (const Config& x : v.as_array())
                out.push_back(x.as_double());
            return out;
        };
        const Config axis = c.get("axis", Config(-1));
        return std::make_shared<Normalization>(
            NormalizationOptions{.axis = axis.is_null() ? std::vector<int64_t>{} : int_values(axis),
                                 .mean = stats(c.get("mean", Config())),
                                 .variance = stats(c.get("variance", Config())),
                                 .invert = bool_or(c, "invert", false),
                                 .name = name_option(c),
                                 .dtype = dtype_option(c)});
    };
    f["RandomFlip"] = [](const Config& c) {
        return std::make_shared<RandomFlip>(
            RandomFlipOptions{.mode = string_or(c, "mode", "horizontal_and_vertical"),
                              .seed = seed_option(c),
                              .name = name_option(c)});
    };
    f["RandomCrop"] = [](const Config& c) {
        return std::make_shared<RandomCrop>(
            c["height"].as_int(),
            c["width"].as_int(),
            RandomCropOptions{.seed = seed_option(c), .name = name_option(c)});
    };
    f["Resizing"] = [](const Config& c) {
        return std::make_shared<Resizing>(
            c["height"].as_int(),
            c["width"].as_int(),
            ResizingOptions{.interpolation = string_or(c, "interpolation", "bilinear"),
                            .crop_to_aspect_ratio = bool_or(c, "crop_to_aspect_ratio", false),
                            .pad_to_aspect_ratio = bool_or(c, "pad_to_aspect_ratio", false),
                            .fill_mode = string_or(c, "fill_mode", "constant"),
                            .fill_value = double_or(c, "fill_value", 0.0),
                            .antialias = bool_or(c, "antialias", false),
                            .name = name_option(c)});
    };

    f["Conv2DTranspose"] = [](const Config& c) {
        const Config op = c.get("output_padding", Config());
        return std::make_shared<Conv2DTranspose>(
            c["filters"].as_int(),
            Ints(int_values(c["kernel_size"])),
            Conv2DTransposeOptions{
                .strides = ints_or(c, "strides", 1),
                .padding = string_or(c, "padding", "valid"),
                .output_padding =
                    op.is_null() ? std::nullopt : std::optional<Ints>(Ints(int_values(op))),
                .dilation_rate = ints_or(c, "dilation_rate", 1),
                .activation = activation_of(c, "activation", "linear"),
                .use_bias = bool_or(c, "use_bias", true),
                .name = name_option(c),
                .dtype = dtype_option(c)});
    };
    f["DepthwiseConv2D"] = [](const Config& c) {
        return std::make_shared<DepthwiseConv2D>(
            Ints(int_values(c["kernel_size"])),
            DepthwiseConv2DOptions{.strides = ints_or(c, "strides", 1),
                                   .padding = string_or(c, "padding", "valid"),
                                   .depth_multiplier = first_or(c, "depth_multiplier", 1),
                                   .dilation_rate = ints_or(c, "dilation_rate", 1),
                                   .activation = activation_of(c, "activation", "linear"),
                                   .use_bias = bool_or(c, "use_bias", true),
                                   .name = name_option(c),
                                   .dtype = dtype_option(c)});
    };
    f["SeparableConv2D"] = [](const Config& c) {
        return std::make_shared<SeparableConv2D>(
            c["filters"].as_int(),
            Ints(int_values(c["kernel_size"])),
            SeparableConv2DOptions{.strides = ints_or(c, "strides", 1),
                                   .padding = string_or(c, "padding", "valid"),
                                   .dilation_rate = ints_or(c, "dilation_rate", 1),
                                   .depth_multiplier = first_or(c, "depth_multiplier", 1),
                                   .activation = activation_of(c, "activation", "linear"),
                                   .use_bias = bool_or(c, "use_bias", true),
                                   .name = name_option(c),
                                   .dtype = dtype_option(c)});
    };
    const auto pooling1d = [](const Config& c) {
        const Config s = c.get("strides", Config());
        return Pooling1DOptions{
            .strides = s.is_null() ? std::nullopt : std::optional<int64_t>(int_values(s).at(0)),
            .padding = string_or(c, "padding", "valid"),
            .data_format = data_format_of(c),
            .name = name_option(c)};
    };
    f["MaxPooling1D"] = [pooling1d](const Config& c) {
        return std::make_shared<MaxPooling1D>(first_or(c, "pool_size", 2), pooling1d(c));
    };
    f["AveragePooling1D"] = [pooling1d](const Config& c) {
        return std::make_shared<AveragePooling1D>(first_or(c, "pool_size", 2), pooling1d(c));
    };
    const auto global = [](const Config& c) {
        return GlobalPoolingOptions{.data_format = data_format_of(c),
                                    .keepdims = bool_or(c, "keepdims", false),
                                    .name = name_option(c)};
    };
    f["GlobalMaxPooling2D"] = [global](const Config& c) {
        return std::make_shared<GlobalMaxPooling2D>(global(c));
    };
    f["GlobalAveragePooling1D"] = [global](const Config& c) {
        return std::make_shared<GlobalAveragePooling1D>(global(c));
    };

    f["GroupNormalization"] = [](const Config& c) {
        return std::make_shared<GroupNormalization>(
            GroupNormalizationOptions{.groups = first_or(c, "groups", 32),
                                      .axis = first_or(c, "axis", -1),
                                      .epsilon = double_or(c, "epsilon", 1e-3),
                                      .center = bool_or(c, "center", true),
                                      .scale = bool_or(c, "scale", true),
                                      .name = name_option(c),
                                      .dtype = dtype_option(c)});
    };
    f["UnitNormalization"] = [](const Config& c) {
        const Config axis = c.get("axis", Config(-1));
        return std::make_shared<UnitNormalization>(UnitNormalizationOptions{
            .axis = axis.is_int() ? Axes(axis.as_int()) : Axes(int_values(axis)),
            .name = name_option(c)});
    };
}

}  // namespace saving

}  // namespace tapeflow::keras
