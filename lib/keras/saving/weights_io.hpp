// Model::save_weights / load_weights' formats (docs/interchange.md, "Keras weight files"): Keras
// 3's
// ".weights.h5" (weights_h5.cpp), tf.keras 2's ".h5" (legacy_h5.cpp), and the helpers both share:
// which variables a layer owns, in Keras' order, and checked, all-or-nothing assignment.
#pragma once

#include <string>
#include <vector>

#include <tapeflow/keras/model.hpp>

namespace tapeflow::keras::saving {

void save_weights_keras3(const Model& model, const std::string& path);
void load_weights_keras3(Model& model, const std::string& path, bool skip_mismatch);
void save_weights_legacy(const Model& model, const std::string& path);
void load_weights_legacy(Model& model, const std::string& path, bool by_name, bool skip_mismatch);

/// FailedPreconditionError unless `model` and its layers are built (Keras refuses unbuilt models).
void check_built(const Model& model, const std::string& path, const char* what);

/// The variables `module` owns itself (not through child layers), trainable first, each kept in
/// creation order (Keras' `_trainable_variables + _non_trainable_variables`).
std::vector<Variable> own_variables(const Module& module);
/// tf.keras 2's `layer.weights`: every variable of the layer, trainable first.
std::vector<Variable> layer_weights(const Module& layer);
/// `variable`'s name from `layer_name` on ("dense/kernel", "multi_head_attention/query/kernel"):
/// tf.keras 2's weight names inside a model; `layer_name`/<last component> when the name does not
/// contain the layer's scope.
std::string name_in_layer(const Variable& variable, const std::string& layer_name);

/// The Keras attribute that holds the sublayer whose variables tapeflow's layer of `class_name`
/// creates in name scope `scope` (MultiHeadAttention: "query" -> "_query_dense", ...); `scope`
/// itself for other layers.
std::string keras_attribute(const std::string& class_name, const std::string& scope);

/// Values checked against their variables, assigned only when every check passed.
class PendingAssignments {
public:
    /// Checks `value`'s shape against `variable` (InvalidArgumentError naming `owner`, the weight,
    /// both shapes and `source`, or a warning and false with skip_mismatch); queues it.
    bool add(const Variable& variable,
             const Tensor& value,
             const std::string& owner,
             const std::string& source,
             bool skip_mismatch);
    /// Casts each value to its variable's dtype and device and assigns it.
    void assign_all();

private:
    std::vector<std::pair<Variable, Tensor>> pending_;
};

}  // namespace tapeflow::keras::saving
