// Model::save_weights / load_weights for a TensorFlow checkpoint prefix (tf.keras 2's
// save_format="tf"): every weight under its variable name, through tf::train::Saver.
#pragma once

#include <string>

#include <tapeflow/keras/model.hpp>

namespace tapeflow::keras::saving {

void save_weights_tf(const Model& model, const std::string& prefix);
void load_weights_tf(Model& model, const std::string& prefix, bool skip_mismatch);

}  // namespace tapeflow::keras::saving
