// tf.keras 2's ".h5" weights layout (keras/src/legacy/saving/legacy_h5_format.py:
// save_weights_to_hdf5_group, load_weights_from_hdf5_group[_by_name]): root attributes
// "layer_names", "backend", "keras_version" (Python bytes: h5py 3 stores them as variable-length
// ASCII strings, h5py 2 as fixed-length ones; both are read), one group per layer with attribute
// "weight_names" ("dense/kernel:0", ...) and a dataset at each of those paths. Loading matches
// layers with weights by order, or by name.
#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/core/logging.hpp>
#include <tapeflow/keras/model.hpp>

#include "keras/saving/h5_file.hpp"
#include "keras/saving/weights_io.hpp"

namespace tapeflow::keras::saving {
namespace {

// The tf.keras 2 release whose layout this writes (its loader reads keras_version for Keras 1
// conversions only).
constexpr const char* kKerasVersion = "2.15.0";
constexpr const char* kTopLevel = "top_level_model_weights";

// An attribute Keras may have split into "<name>0", "<name>1", ... when it exceeded HDF5's 64 KiB
// object header (load_attributes_from_hdf5_group).
std::vector<std::string> chunked_attr(const h5::Group& group, const std::string& name) {
    if (group.has_attr(name)) return group.read_strings_attr(name);
    std::vector<std::string> out;
    for (int chunk = 0; group.has_attr(name + std::to_string(chunk)); ++chunk)
        for (std::string& s : group.read_strings_attr(name + std::to_string(chunk)))
            out.push_back(std::move(s));
    return out;
}

std::vector<std::string> weight_names(const std::string& layer_name,
                                      const std::vector<Variable>& weights) {
    std::vector<std::string> names;
    for (const Variable& v : weights)
        names.push_back(name_in_layer(v, layer_name) + ":0");
    return names;
}

void write_weights(const h5::Group& group,
                   const std::string& layer_name,
                   const std::vector<Variable>& weights) {
    const std::vector<std::string> names = weight_names(layer_name, weights);
    group.write_bytes_array_attr("weight_names", names);
    for (std::size_t i = 0; i < weights.size(); ++i)
        group.write_dataset(names[i], weights[i].value());
}

struct SavedLayer {
    std::string name;
    std::vector<std::string> weight_names;
};

// The layers of the file, in its "layer_names" order, with their weight names.
std::vector<SavedLayer> saved_layers(const h5::Group& root, const std::string& path) {
    if (!root.has_attr("layer_names") && !root.has_attr("layer_names0"))
        throw errors::InvalidArgumentError(fmt::format(
            "Model.load_weights: {} has no \"layer_names\" attribute, so it is not a tf.keras 2 "
            "weights file (Keras 3 weight files end in \".weights.h5\")",
            path));
    std::vector<SavedLayer> out;
    for (const std::string& name : chunked_attr(root, "layer_names")) {
        if (!root.has_group(name))
            throw errors::InvalidArgumentError(fmt::format(
                "Model.load_weights: {} lists layer \"{}\" in \"layer_names\" but has no group for "
                "it",
                path,
                name));
        out.push_back({name, chunked_attr(root.group(name), "weight_names")});
    }
    return out;
}

// Queues the file's weights of `saved` for `weights` (the model's layer `owner`); false when the
// counts differ and skip_mismatch skipped them.
bool queue_layer(const h5::Group& root,
                 const SavedLayer& saved,
                 const std::string& owner,
                 const std::vector<Variable>& weights,
                 const std::string& path,
                 bool skip_mismatch,
                 PendingAssignments& pending) {
    if (saved.weight_names.size() != weights.size()) {
        std::vector<std::string> expected;
        for (const Variable& v : weights)
            expected.push_back(v.name());
        const std::string message = fmt::format(
            "weight count mismatch for layer \"{}\" (\"{}\" in {}): the layer has {} weights "
            "({}), the file holds {} ({})",
            owner,
            saved.name,
            path,
            weights.size(),
            fmt::join(expected, ", "),
            saved.weight_names.size(),
            fmt::join(saved.weight_names, ", "));
        if (!skip_mismatch) throw errors::InvalidArgumentError("Model.load_weights: " + message);
        logging::warn("Model.load_weights: skipping {} (skip_mismatch)", message);
        return false;
    }
    const h5::Group group = root.group(saved.name);
    for (std::size_t i = 0; i < weights.size(); ++i)
        pending.add(weights[i],
                    group.read_dataset(saved.weight_names[i]),
                    owner,
                    fmt::format("'/{}/{}' in {}", saved.name, saved.weight_names[i], path),
                    skip_mismatch);
    return true;
}

}  // namespace

void save_weights_legacy(const Model& model, const std::string& path) {
    std::lock_guard lock(h5::hdf5_mutex());
    h5::File file = h5::File::create_in_memory(path);
    const h5::Group root = file.root();
    std::vector<std::string> names;
    for (const auto& layer : model.layers())
        names.push_back(layer->name());
    root.write_bytes_array_attr("layer_names", names);
    root.write_bytes_attr("backend", "tensorflow");
    root.write_bytes_attr("keras_version", kKerasVersion);
    for (const auto& layer : model.layers()) {
        if (root.has(layer->name()))
            throw errors::InvalidArgumentError(fmt::format(
                "Model.save_weights(\"{}\"): two layers are named \"{}\"; the .h5 layout needs "
                "unique layer names",
                path,
                layer->name()));
        write_weights(root.create_group(layer->name()), layer->name(), layer_weights(*layer));
    }
    // Weights of the model itself (a subclassed Model's add_weight), as Keras' top-level group.
    const std::vector<Variable> own = own_variables(model);
    if (!own.empty()) write_weights(root.create_group(kTopLevel), model.name(), own);
    file.commit();
}

void load_weights_legacy(Model& model, const std::string& path, bool by_name, bool skip_mismatch) {
    std::lock_guard lock(h5::hdf5_mutex());
    const h5::File file = h5::File::open(path);
    const h5::Group root = file.root();
    const std::vector<SavedLayer> saved = saved_layers(root, path);
    PendingAssignments pending;
    if (by_name) {
        std::map<std::string, const SavedLayer*> by;
        for (const SavedLayer& s : saved)
            by.emplace(s.name, &s);
        for (const auto& layer : model.layers()) {
            const auto it = by.find(layer->name());
            const std::vector<Variable> weights = layer_weights(*layer);
            if (it == by.end() || weights.empty()) continue;
            queue_layer(root, *it->second, layer->name(), weights, path, skip_mismatch, pending);
        }
    } else {
        std::vector<const SavedLayer*> file_layers;
        for (const SavedLayer& s : saved)
            if (!s.weight_names.empty()) file_layers.push_back(&s);
        std::vector<std::shared_ptr<layers::Layer>> model_layers;
        for (const auto& layer : model.layers())
            if (!layer->variables().empty()) model_layers.push_back(layer);
        if (file_layers.size() != model_layers.size()) {
            std::vector<std::string> mine, theirs;
            for (const auto& l : model_layers)
                mine.push_back(l->name());
            for (const SavedLayer* s : file_layers)
                theirs.push_back(s->name);
            throw errors::InvalidArgumentError(fmt::format(
                "Model.load_weights: layer count mismatch: model \"{}\" has {} layers with "
                "weights ({}), {} holds {} ({})",
                model.name(),
                model_layers.size(),
                fmt::join(mine, ", "),
                path,
                file_layers.size(),
                fmt::join(theirs, ", ")));
        }
        for (std::size_t k = 0; k < model_layers.size(); ++k) {
            const auto& layer = model_layers[k];
            const std::vector<Variable> weights = layer_weights(*layer);
            if (file_layers[k]->weight_names.size() != weights.size())
                queue_layer(root, *file_layers[k], layer->name(), weights, path, false, pending);
            queue_layer(
                root, *file_layers[k], layer->name(), weights, path, skip_mismatch, pending);
        }
    }
    const std::vector<Variable> own = own_variables(model);
    if (root.has_group(kTopLevel) && !own.empty()) {
        const SavedLayer top{kTopLevel, chunked_attr(root.group(kTopLevel), "weight_names")};
        queue_layer(root, top, model.name(), own, path, skip_mismatch, pending);
    }
    pending.assign_all();
}

}  // namespace tapeflow::keras::saving
