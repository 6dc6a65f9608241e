// Whole-model saving (Keras 3's keras.saving): the registry from a Keras class name to a factory
// that rebuilds the layer from its get_config(), Keras' serialize_keras_object /
// deserialize_keras_object for layers, and load_model for the ".keras" archives Model::save
// writes.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <tapeflow/core/export.hpp>
#include <tapeflow/keras/config.hpp>
#include <tapeflow/keras/model.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow::keras::saving {

/// Rebuilds a layer from the "config" of its serialized form.
using LayerFactory = std::function<std::shared_ptr<layers::Layer>(const Config& config)>;

/// Makes `class_name` loadable (Keras' register_keras_serializable): a user layer registers its
/// factory once, before load_model. The built-in layers, Sequential and Functional are
/// registered; registering a name again replaces its factory.
void register_layer(const std::string& class_name, LayerFactory factory);
/// The registered class names, sorted.
std::vector<std::string> registered_layers();

/// {"module", "class_name", "config": get_config(), "registered_name", "build_config"} (the
/// last when the layer is built), as Keras' serialize_keras_object.
Config serialize_layer(const layers::Layer& layer);
/// The layer from its serialized form (built when it has a build_config). An unregistered
/// class_name raises NotFoundError naming it and the registered ones.
std::shared_ptr<layers::Layer> deserialize_layer(const Config& serialized);

}  // namespace tapeflow::keras::saving

namespace tapeflow::keras::models {

/// Keras' load_model for archives written by Model::save (or by Keras 3, for models of the
/// layers tapeflow has): the model from config.json, its weights from model.weights.h5. The
/// model comes back uncompiled. Stored and deflated zip members are read.
std::shared_ptr<Model> load_model(const std::string& filepath);

}  // namespace tapeflow::keras::models

TAPEFLOW_API_END
