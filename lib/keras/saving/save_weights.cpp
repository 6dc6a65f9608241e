// Model::save_weights / load_weights: the format chosen from the file name, as Keras does, and the
// helpers the formats share (weights_io.hpp).
#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/core/logging.hpp>
#include <tapeflow/keras/model.hpp>

#include "keras/saving/tf_format.hpp"
#include "keras/saving/weights_io.hpp"

namespace tapeflow::keras {
namespace {

enum class Format { keras3, legacy, tf };

bool ends_with(const std::string& s, std::string_view suffix) {
    return s.size() >= suffix.size() &&
           s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

Format format_of(const std::string& path, const char* what) {
    if (ends_with(path, ".keras"))
        throw errors::InvalidArgumentError(fmt::format(
            "Model.{}: \"{}\" names a whole-model .keras archive; weights go to a "
            "\"*.weights.h5\" file (Keras 3), a \"*.h5\" file (tf.keras 2) or a checkpoint prefix",
            what,
            path));
    if (ends_with(path, ".weights.h5")) return Format::keras3;
    if (ends_with(path, ".h5") || ends_with(path, ".hdf5")) return Format::legacy;
    return Format::tf;
}

}  // namespace

void Model::save_weights(const std::string& filepath) const {
    const Format format = format_of(filepath, "save_weights");
    saving::check_built(*this, filepath, "save_weights");
    if (format == Format::keras3) return saving::save_weights_keras3(*this, filepath);
    if (format == Format::legacy) return saving::save_weights_legacy(*this, filepath);
    saving::save_weights_tf(*this, filepath);
}

void Model::load_weights(const std::string& filepath, bool skip_mismatch) {
    load_weights(filepath, LoadWeightsOptions{.by_name = false, .skip_mismatch = skip_mismatch});
}

void Model::load_weights(const std::string& filepath, const LoadWeightsOptions& options) {
    const Format format = format_of(filepath, "load_weights");
    if (options.by_name && format != Format::legacy)
        throw errors::InvalidArgumentError(fmt::format(
            "Model.load_weights: by_name applies to tf.keras 2 \".h5\" files only, got \"{}\" "
            "(Keras 3 files and checkpoints are matched by structure)",
            filepath));
    saving::check_built(*this, filepath, "load_weights");
    if (format == Format::keras3)
        return saving::load_weights_keras3(*this, filepath, options.skip_mismatch);
    if (format == Format::legacy)
        return saving::load_weights_legacy(*this, filepath, options.by_name, options.skip_mismatch);
    saving::load_weights_tf(*this, filepath, options.skip_mismatch);
}

namespace saving {

void check_built(const Model& model, const std::string& path, const char* what) {
    std::vector<std::string> unbuilt;
    for (const auto& layer : model.layers())
        if (!layer->built()) unbuilt.push_back(layer->name());
    if (model.variables().empty() || !unbuilt.empty())
        throw errors::FailedPreconditionError(fmt::format(
            "Model.{}(\"{}\"): model \"{}\" is not built{}{}; call it on a batch of inputs "
            "first, so that its layers create their weights",
            what,
            path,
            model.name(),
            unbuilt.empty() ? "" : ", layers not built: ",
            fmt::join(unbuilt, ", ")));
}

namespace {
void trainable_first(std::vector<Variable>& vars) {
    std::stable_partition(
        vars.begin(), vars.end(), [](const Variable& v) { return v.trainable(); });
}
}  // namespace

std::vector<Variable> own_variables(const Module& module) {
    std::vector<Variable> children;
    for (const auto& child : module.children())
        if (dynamic_cast<const layers::Layer*>(child.get()))
            for (const Variable& v : child->variables())
                children.push_back(v);
    std::vector<Variable> own;
    for (const Variable& v : module.variables())
        if (std::find(children.begin(), children.end(), v) == children.end()) own.push_back(v);
    trainable_first(own);
    return own;
}

std::vector<Variable> layer_weights(const Module& layer) {
    std::vector<Variable> vars = layer.variables();
    trainable_first(vars);
    return vars;
}

std::string name_in_layer(const Variable& variable, const std::string& layer_name) {
    const std::string& name = variable.name();
    const std::string scope = layer_name + "/";
    if (name.compare(0, scope.size(), scope) == 0) return name;
    const std::size_t at = name.find("/" + scope);
    if (at != std::string::npos) return name.substr(at + 1);
    const std::size_t slash = name.rfind('/');
    return scope + (slash == std::string::npos ? name : name.substr(slash + 1));
}

std::string keras_attribute(const std::string& class_name, const std::string& scope) {
    // Keras 3's MultiHeadAttention keeps its projections in EinsumDense sublayers stored under
    // these attribute names (so do tf.keras 2's object-graph checkpoints).
    static const std::map<std::string, std::string> attention = {
        {"query", "_query_dense"},
        {"key", "_key_dense"},
        {"value", "_value_dense"},
        {"attention_output", "_output_dense"}};
    if (class_name == "MultiHeadAttention")
        if (const auto it = attention.find(scope); it != attention.end()) return it->second;
    return scope;
}

bool PendingAssignments::add(const Variable& variable,
                             const Tensor& value,
                             const std::string& owner,
                             const std::string& source,
                             bool skip_mismatch) {
    if (value.shape() != variable.shape()) {
        const std::string message = fmt::format(
            "shape mismatch for layer \"{}\", weight \"{}\": the model expects {}, {} holds {}",
            owner,
            variable.name(),
            variable.shape().debug_string(),
            source,
            value.shape().debug_string());
        if (!skip_mismatch) throw errors::InvalidArgumentError(message);
        logging::warn("Model.load_weights: skipping {} (skip_mismatch)", message);
        return false;
    }
    pending_.emplace_back(variable, value);
    return true;
}

void PendingAssignments::assign_all() {
    for (auto& [variable, value] : pending_) {
        Tensor v = value.dtype() == variable.dtype() ? value : value.cast(variable.dtype());
        variable.assign(v.to(variable.value().device()));
    }
    pending_.clear();
}

}  // namespace saving
}  // namespace tapeflow::keras
