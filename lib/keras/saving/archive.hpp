// Internal to whole-model saving: the layer registry's raw constructor (no build) and the model
// classes' factories (Sequential, Functional, InputLayer), registered with the built-in layers.
#pragma once

#include <map>
#include <memory>
#include <string>

#include <tapeflow/keras/saving.hpp>

namespace tapeflow::keras::saving {

/// The layer of a serialized form, not built (the models build their layers by calling them).
std::shared_ptr<layers::Layer> make_layer(const Config& serialized);
/// Adds Sequential, Functional and InputLayer to the registry's table.
void register_models(std::map<std::string, LayerFactory>& factories);
/// Adds the recurrent, reshaping, merging, preprocessing and extra conv / pooling /
/// normalization layers (layer_configs_more.cpp).
void register_more_layers(std::map<std::string, LayerFactory>& factories);

}  // namespace tapeflow::keras::saving
