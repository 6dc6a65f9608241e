// get_config() of the built-in layers with Keras 3's keys, and the registry that rebuilds them
// (from_config). Initializers cannot be read back from a tf::Initializer, so configs name the
// layer's Keras default initializer for each slot (the weights themselves travel in
// model.weights.h5); a layer rebuilt from its config uses those defaults.
#include <algorithm>
#include <cctype>
#include <map>
#include <mutex>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/keras/functional.hpp>
#include <tapeflow/keras/layers/attention.hpp>
#include <tapeflow/keras/layers/convolutional.hpp>
#include <tapeflow/keras/layers/core.hpp>
#include <tapeflow/keras/layers/normalization.hpp>
#include <tapeflow/keras/saving.hpp>
#include <tapeflow/ops/creation.hpp>

#include "keras/saving/archive.hpp"
#include "keras/saving/config_helpers.hpp"

namespace tapeflow::keras {

namespace {

using namespace saving_detail;  // NOLINT(google-build-using-namespace): the shared helpers

Config ints(const std::vector<int64_t>& v) {
    return Config::shape(v);
}

// The layer options' dtype from a config: a DTypePolicy object or a dtype name; "float32" (the
// default policy) is left to the global policy, so a layer follows its inputs as before saving.

int64_t int_or(const Config& c, std::string_view key, int64_t fallback) {
    const Config& v = c.get(key, Config());
    return v.is_null() ? fallback : v.as_int();
}

Ints ints_option(const Config& c, std::string_view key, Ints fallback) {
    const Config& v = c.get(key, Config());
    if (v.is_null()) return fallback;
    return Ints(v.as_shape());
}

struct Registry {
    std::mutex mutex;
    std::map<std::string, saving::LayerFactory> factories;
};

Registry& registry();

}  // namespace

// ---- get_config ----

Config layers::Layer::get_config() const {
    Config config;
    config.set("name", name());
    config.set("trainable", true);
    config.set(
        "dtype",
        keras_object(
            "keras", "DTypePolicy", Config(Config::Object{{"name", dtype_policy().name()}})));
    return config;
}

namespace layers {

Config Dense::get_config() const {
    Config c = Layer::get_config();
    c.set("units", units_);
    c.set("activation", activation_name(options_.activation));
    c.set("use_bias", options_.use_bias);
    c.set("kernel_initializer", glorot_uniform());
    c.set("bias_initializer", initializer("Zeros"));
    c.set("kernel_regularizer", Config());
    c.set("bias_regularizer", Config());
    c.set("kernel_constraint", Config());
    c.set("bias_constraint", Config());
    c.set("quantization_config", Config());
    return c;
}

Config Activation::get_config() const {
    Config c = Layer::get_config();
    c.set("activation", activation_name(activation_name_));
    return c;
}

Config Dropout::get_config() const {
    Config c = Layer::get_config();
    c.set("rate", rate_);
    c.set("seed", seed_ ? Config(static_cast<int64_t>(*seed_)) : Config());
    c.set("noise_shape", Config());
    return c;
}

Config Flatten::get_config() const {
    Config c = Layer::get_config();
    c.set("data_format", "channels_last");
    return c;
}

Config Embedding::get_config() const {
    Config c = Layer::get_config();
    c.set("input_dim", input_dim_);
    c.set("output_dim", output_dim_);
    c.set("embeddings_initializer",
          initializer(
              "RandomUniform",
              Config(Config::Object{{"seed", Config()}, {"minval", -0.05}, {"maxval", 0.05}})));
    c.set("embeddings_regularizer", Config());
    c.set("activity_regularizer", Config());
    c.set("embeddings_constraint", Config());
    c.set("mask_zero", false);
    c.set("quantization_config", Config());
    return c;
}

namespace {
void conv_common(Config& c, const std::string& padding) {
    c.set("padding", lower(padding));
    c.set("data_format", "channels_last");
}
void conv_tail(Config& c, const std::string& activation, bool use_bias) {
    c.set("groups", 1);
    c.set("activation", activation_name(activation));
    c.set("use_bias", use_bias);
    c.set("kernel_initializer", glorot_uniform());
    c.set("bias_initializer", initializer("Zeros"));
    c.set("kernel_regularizer", Config());
    c.set("bias_regularizer", Config());
    c.set("activity_regularizer", Config());
    c.set("kernel_constraint", Config());
    c.set("bias_constraint", Config());
}
}  // namespace

Config Conv2D::get_config() const {
    Config c = Layer::get_config();
    c.set("filters", filters_);
    c.set("kernel_size", ints(kernel_size_));
    c.set("strides", ints(pair(options_.strides)));
    conv_common(c, padding_);
    c.set("dilation_rate", ints(pair(options_.dilation_rate)));
    conv_tail(c, options_.activation, options_.use_bias);
    return c;
}

Config Conv1D::get_config() const {
    Config c = Layer::get_config();
    c.set("filters", filters_);
    c.set("kernel_size", ints({kernel_size_}));
    c.set("strides", ints({stride_}));
    conv_common(c, padding_);
    c.set("dilation_rate", ints({dilation_}));
    conv_tail(c, options_.activation, options_.use_bias);
    return c;
}

namespace {
Config pooling_config(Config c, const Ints& pool, const Ints& strides, const std::string& padding) {
    c.set("pool_size", ints(pair(pool)));
    c.set("padding", lower(padding));
    c.set("strides", ints(pair(strides)));
    c.set("data_format", "channels_last");
    return c;
}
}  // namespace

Config MaxPooling2D::get_config() const {
    return pooling_config(Layer::get_config(), pool_size_, strides_, padding_);
}
Config AveragePooling2D::get_config() const {
    return pooling_config(Layer::get_config(), pool_size_, strides_, padding_);
}

Config GlobalAveragePooling2D::get_config() const {
    Config c = Layer::get_config();
    c.set("data_format", "channels_last");
    c.set("keepdims", false);
    return c;
}

Config BatchNormalization::get_config() const {
    Config c = Layer::get_config();
    c.set("axis", options_.axis);
    c.set("momentum", options_.momentum);
    c.set("epsilon", options_.epsilon);
    c.set("center", options_.center);
    c.set("scale", options_.scale);
    c.set("beta_initializer", initializer("Zeros"));
    c.set("gamma_initializer", initializer("Ones"));
    c.set("moving_mean_initializer", initializer("Zeros"));
    c.set("moving_variance_initializer", initializer("Ones"));
    c.set("beta_regularizer", Config());
    c.set("gamma_regularizer", Config());
    c.set("beta_constraint", Config());
    c.set("gamma_constraint", Config());
    c.set("synchronized", false);
    c.set("renorm", false);
    c.set("renorm_clipping", Config());
    c.set("renorm_momentum", 0.99);
    return c;
}

Config LayerNormalization::get_config() const {
    Config c = Layer::get_config();
    const auto& axes = options_.axis.list();
    c.set("axis", axes.size() == 1 ? Config(axes[0]) : ints(axes));
    c.set("epsilon", options_.epsilon);
    c.set("center", options_.center);
    c.set("scale", options_.scale);
    c.set("rms_scaling", false);
    c.set("beta_initializer", initializer("Zeros"));
    c.set("gamma_initializer", initializer("Ones"));
    c.set("beta_regularizer", Config());
    c.set("gamma_regularizer", Config());
    c.set("beta_constraint", Config());
    c.set("gamma_constraint", Config());
    return c;
}

Config MultiHeadAttention::get_config() const {
    Config c = Layer::get_config();
    c.set("num_heads", num_heads_);
    c.set("key_dim", key_dim_);
    c.set("value_dim", value_dim_);
    c.set("dropout", options_.dropout);
    c.set("use_bias", options_.use_bias);
    c.set("use_gate", false);
    c.set("output_shape", Config());
    c.set("attention_axes", Config());
    c.set("sliding_window", Config());
    c.set("kernel_initializer", glorot_uniform());
    c.set("bias_initializer", initializer("Zeros"));
    c.set("kernel_regularizer", Config());
    c.set("bias_regularizer", Config());
    c.set("activity_regularizer", Config());
    c.set("kernel_constraint", Config());
    c.set("bias_constraint", Config());
    c.set("seed", options_.seed ? Config(static_cast<int64_t>(*options_.seed)) : Config());
    return c;
}

}  // namespace layers

Config InputLayer::get_config() const {
    Config c;
    c.set("batch_shape", Config::shape(batch_shape_.dims()));
    c.set("dtype", std::string(dtype_name(dtype_)));
    c.set("sparse", false);
    c.set("ragged", false);
    c.set("name", name());
    c.set("optional", false);
    return c;
}

// ---- the registry ----

namespace {

std::shared_ptr<layers::Layer> dense_from(const Config& c) {
    return std::make_shared<layers::Dense>(
        c["units"].as_int(),
        layers::DenseOptions{.activation = c.get("activation", Config("")).as_string(),
                             .use_bias = c.get("use_bias", Config(true)).as_bool(),
                             .name = name_option(c),
                             .dtype = dtype_option(c)});
}

std::string activation_of(const Config& c) {
    const Config& a = c.get("activation", Config("linear"));
    if (a.is_string()) return a.as_string() == "linear" ? "" : a.as_string();
    throw errors::UnimplementedError(
        fmt::format("layer \"{}\": only activations given by name can be loaded, got {}",
                    name_option(c),
                    a.dump()));
}

layers::Conv2DOptions conv_options(const Config& c) {
    return layers::Conv2DOptions{.strides = ints_option(c, "strides", 1),
                                 .padding = c.get("padding", Config("valid")).as_string(),
                                 .dilation_rate = ints_option(c, "dilation_rate", 1),
                                 .activation = activation_of(c),
                                 .use_bias = c.get("use_bias", Config(true)).as_bool(),
                                 .name = name_option(c),
                                 .dtype = dtype_option(c)};
}

void check_channels_last(const Config& c) {
    const Config& f = c.get("data_format", Config("channels_last"));
    if (!f.is_null() && f.as_string() != "channels_last")
        throw errors::UnimplementedError(
            fmt::format("layer \"{}\": data_format \"{}\" (tapeflow's layers are channels_last)",
                        name_option(c),
                        f.as_string()));
}

std::optional<Ints> strides_option(const Config& c) {
    const Config& v = c.get("strides", Config());
    if (v.is_null()) return std::nullopt;
    return Ints(v.as_shape());
}

void register_builtins(std::map<std::string, saving::LayerFactory>& f) {
    using namespace layers;  // NOLINT(google-build-using-namespace): the table reads as Keras'
    f["Dense"] = dense_from;
    f["Activation"] = [](const Config& c) {
        return std::make_shared<Activation>(activation_of(c), name_option(c));
    };
    f["Dropout"] = [](const Config& c) {
        return std::make_shared<Dropout>(c["rate"].as_double(), seed_option(c), name_option(c));
    };
    f["Flatten"] = [](const Config& c) {
        check_channels_last(c);
        return std::make_shared<Flatten>(name_option(c));
    };
    f["Embedding"] = [](const Config& c) {
        if (c.get("mask_zero", Config(false)).as_bool())
            throw errors::UnimplementedError(fmt::format(
                "layer \"{}\": Embedding(mask_zero=True) is not supported", name_option(c)));
        return std::make_shared<Embedding>(
            c["input_dim"].as_int(),
            c["output_dim"].as_int(),
            EmbeddingOptions{.name = name_option(c), .dtype = dtype_option(c)});
    };
    f["Conv2D"] = [](const Config& c) {
        check_channels_last(c);
        return std::make_shared<Conv2D>(
            c["filters"].as_int(), Ints(c["kernel_size"].as_shape()), conv_options(c));
    };
    f["Conv1D"] = [](const Config& c) {
        check_channels_last(c);
        return std::make_shared<Conv1D>(
            c["filters"].as_int(), c["kernel_size"].as_shape().at(0), conv_options(c));
    };
    f["MaxPooling2D"] = [](const Config& c) {
        check_channels_last(c);
        return std::make_shared<MaxPooling2D>(Ints(c["pool_size"].as_shape()),
                                              strides_option(c),
                                              c.get("padding", Config("valid")).as_string(),
                                              name_option(c));
    };
    f["AveragePooling2D"] = [](const Config& c) {
        check_channels_last(c);
        return std::make_shared<AveragePooling2D>(Ints(c["pool_size"].as_shape()),
                                                  strides_option(c),
                                                  c.get("padding", Config("valid")).as_string(),
                                                  name_option(c));
    };
    f["GlobalAveragePooling2D"] = [](const Config& c) {
        check_channels_last(c);
        if (c.get("keepdims", Config(false)).as_bool())
            throw errors::UnimplementedError(
                fmt::format("layer \"{}\": GlobalAveragePooling2D(keepdims=True) is not supported",
                            name_option(c)));
        return std::make_shared<GlobalAveragePooling2D>(name_option(c));
    };
    f["BatchNormalization"] = [](const Config& c) {
        return std::make_shared<BatchNormalization>(
            BatchNormalizationOptions{.axis = int_or(c, "axis", -1),
                                      .momentum = c.get("momentum", Config(0.99)).as_double(),
                                      .epsilon = c.get("epsilon", Config(1e-3)).as_double(),
                                      .center = c.get("center", Config(true)).as_bool(),
                                      .scale = c.get("scale", Config(true)).as_bool(),
                                      .name = name_option(c),
                                      .dtype = dtype_option(c)});
    };
    f["LayerNormalization"] = [](const Config& c) {
        const Config& axis = c.get("axis", Config(-1));
        return std::make_shared<LayerNormalization>(LayerNormalizationOptions{
            .axis = axis.is_array() ? Axes(axis.as_shape()) : Axes(axis.as_int()),
            .epsilon = c.get("epsilon", Config(1e-3)).as_double(),
            .center = c.get("center", Config(true)).as_bool(),
            .scale = c.get("scale", Config(true)).as_bool(),
            .name = name_option(c),
            .dtype = dtype_option(c)});
    };
    f["MultiHeadAttention"] = [](const Config& c) {
        const Config& value_dim = c.get("value_dim", Config());
        return std::make_shared<MultiHeadAttention>(
            c["num_heads"].as_int(),
            c["key_dim"].as_int(),
            MultiHeadAttentionOptions{.value_dim = value_dim.is_null()
                                                       ? std::nullopt
                                                       : std::optional<int64_t>(value_dim.as_int()),
                                      .dropout = c.get("dropout", Config(0.0)).as_double(),
                                      .use_bias = c.get("use_bias", Config(true)).as_bool(),
                                      .seed = seed_option(c),
                                      .name = name_option(c),
                                      .dtype = dtype_option(c)});
    };
}

Registry& registry() {
    static Registry* r = [] {
        auto* reg = new Registry();  // never destroyed: used by static destructors' loaders too
        register_builtins(reg->factories);
        saving::register_models(reg->factories);
        saving::register_more_layers(reg->factories);
        return reg;
    }();
    return *r;
}

}  // namespace

namespace saving {

void register_layer(const std::string& class_name, LayerFactory factory) {
    if (class_name.empty() || !factory)
        throw errors::InvalidArgumentError(
            "register_layer: needs a class name and a factory (got an empty one)");
    Registry& r = registry();
    const std::lock_guard lock(r.mutex);
    r.factories[class_name] = std::move(factory);
}

std::vector<std::string> registered_layers() {
    Registry& r = registry();
    const std::lock_guard lock(r.mutex);
    std::vector<std::string> names;
    for (const auto& [name, factory] : r.factories)
        names.push_back(name);
    return names;
}

Config serialize_layer(const layers::Layer& layer) {
    const std::string cls = layer.class_name();
    const bool model = cls == "Sequential" || cls == "Functional";
    Config out = keras_object(cls == "Functional" ? "keras.src.models.functional"
                              : model             ? "keras"
                                                  : "keras.layers",
                              cls,
                              layer.get_config());
    if (cls == "Functional") out.set("registered_name", "Functional");
    if (layer.build_input_shape() && cls != "InputLayer")
        out.set("build_config", Config(Config::Object{{"input_shape", Config::shape([&] {
                                                           std::vector<int64_t> d =
                                                               layer.build_input_shape()->dims();
                                                           if (!d.empty()) d[0] = -1;
                                                           return d;
                                                       }())}}));
    return out;
}

std::shared_ptr<layers::Layer> make_layer(const Config& serialized) {
    const std::string cls = serialized["class_name"].as_string();
    LayerFactory factory;
    {
        Registry& r = registry();
        const std::lock_guard lock(r.mutex);
        const auto it = r.factories.find(cls);
        if (it == r.factories.end()) {
            std::vector<std::string> names;
            for (const auto& [name, f] : r.factories)
                names.push_back(name);
            throw errors::NotFoundError(fmt::format(
                "Could not locate class '{}': it is not a registered layer (register it with "
                "tf::keras::saving::register_layer). Registered: {}",
                cls,
                fmt::join(names, ", ")));
        }
        factory = it->second;
    }
    return factory(serialized["config"]);
}

std::shared_ptr<layers::Layer> deserialize_layer(const Config& serialized) {
    std::shared_ptr<layers::Layer> layer = make_layer(serialized);
    // Keras' build_from_config: build on a placeholder batch of the saved input shape.
    const Config& build = serialized.get("build_config", Config());
    if (!layer->built() && build.is_object() && build.contains("input_shape") &&
        build["input_shape"].is_array()) {
        std::vector<int64_t> dims = build["input_shape"].as_shape();
        for (int64_t& d : dims)
            if (d < 0) d = 1;
        (*layer)(zeros(Shape(dims)), false);
    }
    return layer;
}

}  // namespace saving

}  // namespace tapeflow::keras
