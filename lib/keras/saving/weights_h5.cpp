// Keras 3's ".weights.h5" layout (keras/src/saving/saving_lib.py: save_weights_only, _save_state,
// H5IOStore): one group "<object path>/vars" per saveable object, with attribute "name" (the
// object's name, a variable-length string) and its own variables as datasets "0", "1", ...
// Object paths: the model is "" (the root's "vars"), a Sequential's/Model's layers are
// "layers/<snake_case(class)>" made unique in the list ("dense", "dense_1"), not the layers' names.
#include <algorithm>
#include <map>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/core/logging.hpp>
#include <tapeflow/keras/model.hpp>

#include "keras/saving/h5_file.hpp"
#include "keras/saving/weights_io.hpp"

namespace tapeflow::keras::saving {
namespace {

// One saveable object of the walk: its path, its name and the variables it saves itself.
struct SavedObject {
    std::string path;
    std::string name;
    std::vector<Variable> vars;
};

std::string join_path(const std::string& a, const std::string& b) {
    return a.empty() ? b : a + "/" + b;
}

void walk(const layers::Layer& layer, const std::string& path, std::vector<SavedObject>& out) {
    SavedObject self{path, layer.name(), {}};
    // Variables created in a name scope below the layer ("query/kernel") belong to a sublayer in
    // Keras; keep them apart in creation order.
    std::vector<SavedObject> scoped;
    for (const Variable& v : own_variables(layer)) {
        const std::string relative = name_in_layer(v, layer.name()).substr(layer.name().size() + 1);
        const std::size_t slash = relative.find('/');
        if (slash == std::string::npos) {
            self.vars.push_back(v);
            continue;
        }
        const std::string scope = relative.substr(0, slash);
        const std::string sub_path = join_path(path, keras_attribute(layer.class_name(), scope));
        auto it = std::find_if(
            scoped.begin(), scoped.end(), [&](const SavedObject& o) { return o.path == sub_path; });
        if (it == scoped.end()) {
            scoped.push_back({sub_path, scope, {}});
            it = scoped.end() - 1;
        }
        it->vars.push_back(v);
    }
    // Keras' SimpleRNN / LSTM / GRU keep their weights in the "cell" attribute (an RNN cell).
    const std::string cls = layer.class_name();
    if ((cls == "SimpleRNN" || cls == "LSTM" || cls == "GRU") && !self.vars.empty()) {
        SavedObject cell{join_path(path, "cell"), keras::detail::snake_case(cls) + "_cell", {}};
        std::swap(cell.vars, self.vars);
        scoped.insert(scoped.begin(), std::move(cell));
    }
    out.push_back(std::move(self));
    for (auto& s : scoped)
        out.push_back(std::move(s));

    // Child layers: a model's layers() list (saving_lib's _save_container_state names them by
    // class, made unique in the list); a plain layer's tracked child layers the same way.
    std::vector<std::shared_ptr<layers::Layer>> children;
    if (const auto* model = dynamic_cast<const Model*>(&layer)) {
        children = model->layers();
    } else {
        for (const auto& child : layer.children())
            if (auto l = std::dynamic_pointer_cast<layers::Layer>(child)) children.push_back(l);
    }
    // Keras' wrappers keep their layers in attributes: Bidirectional's "forward_layer" and
    // "backward_layer", TimeDistributed's "layer".
    if ((cls == "Bidirectional" && children.size() == 2) ||
        (cls == "TimeDistributed" && children.size() == 1)) {
        const char* const names[] = {cls == "TimeDistributed" ? "layer" : "forward_layer",
                                     "backward_layer"};
        for (std::size_t i = 0; i < children.size(); ++i)
            walk(*children[i], join_path(path, names[i]), out);
        return;
    }
    std::map<std::string, int> used;
    for (const auto& child : children) {
        std::string name = keras::detail::snake_case(child->class_name());
        auto [it, first] = used.try_emplace(name, 0);
        if (!first) name = fmt::format("{}_{}", name, ++it->second);
        walk(*child, join_path(join_path(path, "layers"), name), out);
    }
}

std::vector<SavedObject> saved_objects(const Model& model) {
    std::vector<SavedObject> out;
    walk(model, "", out);
    return out;
}

std::string vars_path(const std::string& path) {
    return join_path(path, "vars");
}

}  // namespace

void save_weights_keras3(const Model& model, const std::string& path) {
    std::lock_guard lock(h5::hdf5_mutex());
    h5::File file = h5::File::create_in_memory(path);
    const h5::Group root = file.root();
    for (const SavedObject& object : saved_objects(model)) {
        const h5::Group vars = root.create_group(vars_path(object.path));
        vars.write_str_attr("name", object.name);
        for (std::size_t i = 0; i < object.vars.size(); ++i)
            vars.write_dataset(std::to_string(i), object.vars[i].value());
    }
    file.commit();
}

void load_weights_keras3(Model& model, const std::string& path, bool skip_mismatch) {
    std::lock_guard lock(h5::hdf5_mutex());
    const h5::File file = h5::File::open(path);
    const h5::Group root = file.root();
    // Files of Keras 2.13 named the layer list "_layer_checkpoint_dependencies" (H5IOStore.get).
    const bool old_names = root.has_group("_layer_checkpoint_dependencies");
    PendingAssignments pending;
    for (const SavedObject& object : saved_objects(model)) {
        std::string group_path = vars_path(object.path);
        if (!root.has_group(group_path) && old_names) {
            std::string renamed = group_path;
            for (std::size_t at = 0; (at = renamed.find("layers", at)) != std::string::npos;
                 at += 30)
                renamed.replace(at, 6, "_layer_checkpoint_dependencies");
            group_path = renamed;
        }
        // Keras 2.15 on Windows joined object paths with '\\' ("layers\\dense/vars").
        if (!root.has_group(group_path) && !object.path.empty()) {
            std::string windows = object.path;
            std::replace(windows.begin(), windows.end(), '/', '\\');
            if (root.has_group(vars_path(windows))) group_path = vars_path(windows);
        }
        std::vector<std::string> keys;
        std::optional<h5::Group> vars;
        if (root.has_group(group_path)) {
            vars.emplace(root.group(group_path));
            keys = vars->children();
        }
        if (keys.size() != object.vars.size()) {
            std::vector<std::string> expected;
            for (const Variable& v : object.vars)
                expected.push_back(v.name());
            const std::string message =
                fmt::format("layer \"{}\" expects {} variables ({}), but {} holds {} under '/{}'",
                            object.name,
                            object.vars.size(),
                            fmt::join(expected, ", "),
                            path,
                            keys.size(),
                            group_path);
            if (!skip_mismatch)
                throw errors::InvalidArgumentError(
                    fmt::format("Model.load_weights: {} (another architecture?)", message));
            logging::warn("Model.load_weights: skipping {} (skip_mismatch)", message);
            continue;
        }
        for (std::size_t i = 0; i < object.vars.size(); ++i) {
            const std::string key = std::to_string(i);
            if (!vars->has_dataset(key))
                throw errors::InvalidArgumentError(fmt::format(
                    "Model.load_weights: layer \"{}\": {} has no dataset '/{}/{}' (it holds {})",
                    object.name,
                    path,
                    group_path,
                    key,
                    fmt::join(keys, ", ")));
            pending.add(object.vars[i],
                        vars->read_dataset(key),
                        object.name,
                        fmt::format("'/{}/{}' in {}", group_path, key, path),
                        skip_mismatch);
        }
    }
    pending.assign_all();
}

}  // namespace tapeflow::keras::saving
