// Model weights as a TensorFlow checkpoint prefix, as tf.keras 2's save_weights(save_format="tf")
// writes them: a TF2 object checkpoint with the model as its root (tf::train::Checkpoint::write:
// keys by the weight's place in the model, "layer_with_weights-0/kernel/.ATTRIBUTES/
// VARIABLE_VALUE", and the serialized object graph TensorFlow's load_weights reads). Loading reads
// by that graph; a checkpoint without one, or skip_mismatch, matches the same keys one by one.
#include "keras/saving/tf_format.hpp"

#include <map>

#include <fmt/format.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/core/logging.hpp>
#include <tapeflow/train/checkpoint.hpp>
#include <tapeflow/train/checkpoint_reader.hpp>
#include <tapeflow/train/saver.hpp>

#include "keras/saving/weights_io.hpp"

namespace tapeflow::keras::saving {
namespace {

void add_keys(std::map<std::string, Variable>& keyed,
              const std::string& object,
              const std::string& owner,
              const std::string& class_name,
              const std::vector<Variable>& vars,
              const std::string& prefix) {
    for (const Variable& v : vars) {
        std::string relative = name_in_layer(v, owner).substr(owner.size() + 1);
        if (const std::size_t slash = relative.find('/'); slash != std::string::npos)
            relative =
                keras_attribute(class_name, relative.substr(0, slash)) + relative.substr(slash);
        const std::string key = fmt::format("{}{}/.ATTRIBUTES/VARIABLE_VALUE", object, relative);
        if (!keyed.emplace(key, v).second)
            throw errors::InvalidArgumentError(fmt::format(
                "Model weights in checkpoint \"{}\": two weights of \"{}\" map to key \"{}\"",
                prefix,
                owner,
                key));
    }
}

std::map<std::string, Variable> keyed_variables(const Model& model, const std::string& prefix) {
    std::map<std::string, Variable> keyed;
    int with_weights = 0;
    for (const auto& layer : model.layers()) {
        const std::vector<Variable> vars = layer_weights(*layer);
        if (vars.empty()) continue;
        add_keys(keyed,
                 fmt::format("layer_with_weights-{}/", with_weights++),
                 layer->name(),
                 layer->class_name(),
                 vars,
                 prefix);
    }
    add_keys(keyed, "", model.name(), model.class_name(), own_variables(model), prefix);
    return keyed;
}

// The model as a Checkpoint's root, not owned (the Checkpoint lives only for the call); writing
// reads the variables only.
std::shared_ptr<Module> unowned(const Model& model) {
    return {std::shared_ptr<Module>(), const_cast<Model*>(&model)};  // NOLINT: see above
}

}  // namespace

void save_weights_tf(const Model& model, const std::string& prefix) {
    train::Checkpoint(unowned(model)).write(prefix);
}

void load_weights_tf(Model& model, const std::string& prefix, bool skip_mismatch) {
    if (!skip_mismatch &&
        train::load_checkpoint(prefix).has_tensor("_CHECKPOINTABLE_OBJECT_GRAPH")) {
        // Every weight of the model must be in the file; the file may hold more (an optimizer).
        train::Checkpoint(unowned(model)).read(prefix).assert_existing_objects_matched();
        return;
    }
    std::map<std::string, Variable> keyed = keyed_variables(model, prefix);
    if (skip_mismatch) {
        const auto stored = train::list_variables(prefix);
        for (auto it = keyed.begin(); it != keyed.end();) {
            const auto found = stored.find(it->first);
            if (found != stored.end() && found->second.first == it->second.shape()) {
                ++it;
                continue;
            }
            logging::warn(
                "Model.load_weights: skipping weight \"{}\" (skip_mismatch): {}",
                it->second.name(),
                found == stored.end()
                    ? fmt::format("checkpoint \"{}\" has no key \"{}\"", prefix, it->first)
                    : fmt::format("the model expects {}, checkpoint \"{}\" holds {}",
                                  it->second.shape().debug_string(),
                                  prefix,
                                  found->second.first.debug_string()));
            it = keyed.erase(it);
        }
    }
    train::Saver(std::move(keyed), train::SaverOptions{.max_to_keep = 0}).restore(prefix);
}

}  // namespace tapeflow::keras::saving
