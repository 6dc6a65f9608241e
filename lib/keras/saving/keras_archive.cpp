// Keras 3's ".keras" archive (keras/src/saving/saving_lib.py): a zip of metadata.json,
// config.json (serialize_keras_object of the model) and model.weights.h5 (the save_weights
// layout), and the model configs it holds: Sequential's "layers" / "build_input_shape" and
// Functional's "layers" with "inbound_nodes", "input_layers" and "output_layers"
// (keras/src/models/functional.py: get_config, functional_from_config).
#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <functional>
#include <map>
#include <set>

#include <fmt/format.h>
#include <unistd.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/keras/functional.hpp>
#include <tapeflow/keras/saving.hpp>
#include <tapeflow/ops/creation.hpp>

#include "io/file_util.hpp"
#include "io/zip.hpp"
#include "keras/functional_node.hpp"
#include "keras/saving/archive.hpp"
#include "keras/saving/weights_io.hpp"

namespace tapeflow::keras {

namespace fs = std::filesystem;

namespace {

constexpr const char* kKerasFormatVersion = "3.16.0";  // the Keras release whose layout is kept

bool is_functional(const layers::Layer& layer) {
    return dynamic_cast<const Functional*>(&layer) != nullptr;
}

DType dtype_from(const Config& c) {
    return parse_dtype(c.is_string() ? c.as_string() : std::string("float32"));
}

// InputLayer's "batch_shape" (Keras 3) or "batch_input_shape" (Keras 2's .keras files).
Shape batch_shape_of(const Config& input_config) {
    const Config shape = input_config.get("batch_shape", input_config.get("batch_input_shape", {}));
    if (!shape.is_array())
        throw errors::DataLossError(fmt::format("load_model: InputLayer \"{}\" has no batch_shape",
                                                input_config.get("name", "").is_string()
                                                    ? input_config.get("name", "").as_string()
                                                    : std::string()));
    return Shape(shape.as_shape());
}

Shape without_batch(const std::vector<int64_t>& batch_shape) {
    return Shape(std::vector<int64_t>(batch_shape.begin() + (batch_shape.empty() ? 0 : 1),
                                      batch_shape.end()));
}

// A placeholder batch of a saved input shape (None: 1).
Tensor placeholder(std::vector<int64_t> dims, DType dtype) {
    for (int64_t& d : dims)
        if (d < 0) d = 1;
    return zeros(Shape(dims), dtype);
}

}  // namespace

// ---- Sequential ----

Config Sequential::get_config() const {
    Config c;
    c.set("name", name());
    c.set("trainable", true);
    c.set("dtype", Layer::get_config()["dtype"]);
    Config list = Config::array();
    for (const auto& layer : layers_)
        list.push_back(saving::serialize_layer(*layer));
    c.set("layers", std::move(list));
    if (build_input_shape()) {
        std::vector<int64_t> dims = build_input_shape()->dims();
        if (!dims.empty()) dims[0] = -1;
        c.set("build_input_shape", Config::shape(dims));
    }
    return c;
}

// ---- Functional ----

Config Functional::get_config() const {
    // Each layer's calls inside this model, numbered from 0 (a Functional layer from 1: Keras
    // counts the node that made it).
    // Each layer's calls in the order it was called (Keras' _inbound_nodes).
    std::map<const layers::Layer*, std::vector<const keras::detail::Node*>> calls;
    for (const auto& node : nodes_)
        calls[node->layer.get()].push_back(node.get());
    for (auto& [layer, list] : calls)
        std::sort(list.begin(), list.end(), [](const auto* x, const auto* y) {
            return x->node_index < y->node_index;
        });
    std::map<const keras::detail::Node*, int64_t> index;
    for (const KerasTensor& in : inputs_)
        index[in.node().get()] = 0;
    for (const auto& [layer, list] : calls)
        for (std::size_t i = 0; i < list.size(); ++i)
            index[list[i]] = static_cast<int64_t>(i) + (is_functional(*layer) ? 1 : 0);
    auto tensor_config = [&](const KerasTensor& t) {
        Config history = Config::array();
        history.push_back(t.layer().name());
        history.push_back(index.at(t.node().get()));
        history.push_back(t.tensor_index());
        return history;
    };
    auto keras_tensor = [&](const KerasTensor& t) {
        Config config;
        config.set("shape", Config::shape(t.shape().dims()));
        config.set("dtype", std::string(dtype_name(t.dtype())));
        config.set("keras_history", tensor_config(t));
        Config out;
        out.set("class_name", "__keras_tensor__");
        out.set("config", std::move(config));
        return out;
    };
    Config c;
    c.set("name", name());
    c.set("trainable", true);
    Config list = Config::array();
    for (const auto& layer : layers_) {
        Config serialized = saving::serialize_layer(*layer);
        serialized.set("name", layer->name());
        Config inbound = Config::array();
        const auto found = calls.find(layer.get());
        for (const keras::detail::Node* node :
             found == calls.end() ? std::vector<const keras::detail::Node*>{} : found->second) {
            Config args = Config::array();
            if (node->inputs.size() == 1) {
                args.push_back(keras_tensor(node->inputs[0]));
            } else {
                Config group = Config::array();
                for (const KerasTensor& in : node->inputs)
                    group.push_back(keras_tensor(in));
                args.push_back(std::move(group));
            }
            Config entry;
            entry.set("args", std::move(args));
            entry.set("kwargs", Config::object());
            inbound.push_back(std::move(entry));
        }
        serialized.set("inbound_nodes", std::move(inbound));
        list.push_back(std::move(serialized));
    }
    c.set("layers", std::move(list));
    Config ins = Config::array(), outs = Config::array();
    for (const KerasTensor& t : inputs_)
        ins.push_back(tensor_config(t));
    for (const KerasTensor& t : outputs_)
        outs.push_back(tensor_config(t));
    c.set("input_layers", std::move(ins));
    c.set("output_layers", std::move(outs));
    return c;
}

namespace {

std::shared_ptr<layers::Layer> sequential_from(const Config& c) {
    std::vector<std::shared_ptr<layers::Layer>> children;
    std::optional<std::vector<int64_t>> input_shape;
    DType input_dtype = DType::float32;
    if (c.contains("build_input_shape") && c["build_input_shape"].is_array())
        input_shape = c["build_input_shape"].as_shape();
    for (const Config& layer : c["layers"].as_array()) {
        if (layer["class_name"].as_string() == "InputLayer") {
            input_shape = batch_shape_of(layer["config"]).dims();
            const Config& ic = layer["config"];
            input_dtype = dtype_from(ic.get("dtype", Config("float32")));
            continue;
        }
        children.push_back(saving::make_layer(layer));
    }
    auto model = std::make_shared<Sequential>(std::move(children), c.get("name", "").as_string());
    if (input_shape) (*model)(placeholder(*input_shape, input_dtype), false);
    return model;
}

// One saved tensor reference: a serialized KerasTensor (Keras 3) or [name, node, tensor, ...]
// (Keras 2's inbound_nodes).
std::tuple<std::string, int64_t, int64_t> history_of(const Config& t) {
    const Config& h = t.is_object() ? t["config"]["keras_history"] : t;
    const auto& a = h.as_array();
    if (a.size() < 3)
        throw errors::DataLossError(fmt::format("load_model: bad tensor reference {}", h.dump()));
    return {a[0].as_string(), a[1].as_int(), a[2].as_int()};
}

bool is_tensor_ref(const Config& t) {
    return (t.is_object() && t.get("class_name", Config("")).is_string() &&
            t["class_name"].as_string() == "__keras_tensor__") ||
           (t.is_array() && !t.as_array().empty() && t.as_array()[0].is_string());
}

std::shared_ptr<layers::Layer> functional_from(const Config& c) {
    using Key = std::pair<std::string, int64_t>;
    std::map<Key, std::vector<KerasTensor>> produced;
    struct Pending {
        std::shared_ptr<layers::Layer> layer;
        std::string name;
        std::vector<Config> nodes;
        std::size_t done = 0;
        int64_t offset = 0;
    };
    std::vector<Pending> pending;
    for (const Config& layer : c["layers"].as_array()) {
        const std::string cls = layer["class_name"].as_string();
        const std::string name = layer.contains("name") ? layer["name"].as_string()
                                                        : layer["config"]["name"].as_string();
        if (cls == "InputLayer") {
            const Config& ic = layer["config"];
            produced[{name, 0}] = {Input(without_batch(batch_shape_of(ic).dims()),
                                         dtype_from(ic.get("dtype", Config("float32"))),
                                         name)};
            continue;
        }
        Pending p{saving::make_layer(layer), name, {}, 0, cls == "Functional" ? 1 : 0};
        const Config inbound = layer.get("inbound_nodes", Config::array());
        for (const Config& node : inbound.as_array())
            p.nodes.push_back(node);
        pending.push_back(std::move(p));
    }
    // Keras' loop: run every node whose inputs exist until nothing moves.
    auto resolve = [&](const Config& ref, std::optional<KerasTensor>& out) {
        const auto [name, node, tensor] = history_of(ref);
        const auto it = produced.find({name, node});
        if (it == produced.end()) return false;
        if (tensor >= static_cast<int64_t>(it->second.size()))
            throw errors::DataLossError(fmt::format(
                "load_model: layer '{}' has no output {} (node {})", name, tensor, node));
        out = it->second[static_cast<std::size_t>(tensor)];
        return true;
    };
    for (bool progress = true; progress;) {
        progress = false;
        for (Pending& p : pending) {
            while (p.done < p.nodes.size()) {
                const Config& node = p.nodes[p.done];
                std::vector<Config> refs;
                if (node.is_object()) {
                    const auto& args = node["args"].as_array();
                    if (args.empty())
                        throw errors::UnimplementedError(fmt::format(
                            "load_model: layer '{}' is called without positional tensors", p.name));
                    if (is_tensor_ref(args[0]))
                        refs.push_back(args[0]);
                    else
                        for (const Config& t : args[0].as_array())
                            refs.push_back(t);
                    const Config kwargs = node.get("kwargs", Config::object());
                    for (const auto& [key, value] : kwargs.as_object())
                        if (is_tensor_ref(value))
                            throw errors::UnimplementedError(fmt::format(
                                "load_model: layer '{}' takes the tensor argument '{}' by "
                                "keyword, which tapeflow's layers do not",
                                p.name,
                                key));
                } else {
                    for (const Config& t : node.as_array())
                        refs.push_back(t);
                }
                std::vector<KerasTensor> inputs;
                bool ready = true;
                for (const Config& ref : refs) {
                    std::optional<KerasTensor> t;
                    if (!resolve(ref, t)) {
                        ready = false;
                        break;
                    }
                    inputs.push_back(*t);
                }
                if (!ready) break;
                produced[{p.name, static_cast<int64_t>(p.done) + p.offset}] =
                    p.layer->call_symbolic(inputs);
                ++p.done;
                progress = true;
            }
        }
    }
    for (const Pending& p : pending)
        if (p.done < p.nodes.size())
            throw errors::DataLossError(fmt::format(
                "load_model: the graph of model '{}' cannot be rebuilt: call {} of layer '{}' "
                "needs tensors no layer produces",
                c.get("name", "").as_string(),
                p.done,
                p.name));
    auto tensors = [&](const Config& list) {
        std::vector<KerasTensor> out;
        const auto& a = list.as_array();
        if (!a.empty() && a[0].is_string()) {  // one tensor, not a list
            std::optional<KerasTensor> t;
            if (!resolve(list, t))
                throw errors::DataLossError("load_model: unknown model input or output " +
                                            list.dump());
            return std::vector<KerasTensor>{*t};
        }
        for (const Config& ref : a) {
            std::optional<KerasTensor> t;
            if (!resolve(ref, t))
                throw errors::DataLossError("load_model: unknown model input or output " +
                                            ref.dump());
            out.push_back(*t);
        }
        return out;
    };
    return std::make_shared<Functional>(
        tensors(c["input_layers"]), tensors(c["output_layers"]), c.get("name", "").as_string());
}

}  // namespace

void saving::register_models(std::map<std::string, LayerFactory>& factories) {
    factories["Sequential"] = sequential_from;
    factories["Functional"] = functional_from;
    factories["InputLayer"] = [](const Config& c) {
        return std::make_shared<InputLayer>(without_batch(batch_shape_of(c).dims()),
                                            dtype_from(c.get("dtype", Config("float32"))),
                                            c.get("name", Config("")).as_string());
    };
}

// ---- the archive ----

namespace {

// A scratch "*.weights.h5" next to `path`, removed when the scope ends.
struct ScratchWeights {
    std::string path;
    explicit ScratchWeights(const std::string& target)
        : path(fmt::format("{}.tmp{}.weights.h5", target, ::getpid())) {}
    ~ScratchWeights() {
        std::error_code ec;
        fs::remove(path, ec);
    }
    ScratchWeights(const ScratchWeights&) = delete;
    ScratchWeights& operator=(const ScratchWeights&) = delete;
};

bool ends_with(const std::string& s, std::string_view suffix) {
    return s.size() >= suffix.size() &&
           s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

void Model::save(const std::string& filepath) const {
    if (!ends_with(filepath, ".keras"))
        throw errors::InvalidArgumentError(fmt::format(
            "Model.save: the filepath must end in \".keras\" (Keras 3's archive), got \"{}\"; "
            "for weights only use save_weights",
            filepath));
    const std::string cls = class_name();
    if (cls != "Sequential" && cls != "Functional")
        throw errors::UnimplementedError(fmt::format(
            "Model.save: model \"{}\" is a subclass ({}); only Sequential and Functional "
            "models have a config (use save_weights)",
            name(),
            cls));
    saving::check_built(*this, filepath, "save");
    // Every layer must be loadable again: a class without a factory would save a config that
    // load_model cannot read.
    const std::vector<std::string> known = saving::registered_layers();
    std::function<void(const layers::Layer&)> check = [&](const layers::Layer& layer) {
        if (!std::binary_search(known.begin(), known.end(), layer.class_name()))
            throw errors::UnimplementedError(fmt::format(
                "Model.save: layer \"{}\" ({}) has no registered from_config, so \"{}\" could "
                "not be loaded; register it with tf::keras::saving::register_layer (and give it a "
                "get_config), or use save_weights",
                layer.name(),
                layer.class_name(),
                filepath));
        if (const auto* model = dynamic_cast<const Model*>(&layer))
            for (const auto& child : model->layers())
                check(*child);
    };
    check(*this);
    const std::string config = saving::serialize_layer(*this).dump();
    const std::time_t now = std::time(nullptr);
    std::tm local{};
    localtime_r(&now, &local);
    char date[32];
    std::strftime(date, sizeof date, "%Y-%m-%d@%H:%M:%S", &local);
    Config meta;
    meta.set("keras_version", kKerasFormatVersion);
    meta.set("date_saved", std::string(date));
    const std::string metadata = meta.dump();
    std::string weights;
    {
        const ScratchWeights scratch(filepath);
        saving::save_weights_keras3(*this, scratch.path);
        weights = io::read_whole_file(scratch.path);
    }
    io::zip::write_archive(
        filepath,
        {{"metadata.json", {metadata}}, {"config.json", {config}}, {"model.weights.h5", {weights}}},
        /*compressed=*/false);
}

namespace models {

std::shared_ptr<Model> load_model(const std::string& filepath) {
    if (!fs::exists(filepath))
        throw errors::NotFoundError(fmt::format("load_model: no file \"{}\"", filepath));
    const std::string bytes = io::read_whole_file(filepath);
    const std::vector<io::zip::Member> members = io::zip::read_archive(bytes, filepath);
    const io::zip::Member* config = nullptr;
    const io::zip::Member* weights = nullptr;
    for (const auto& m : members) {
        if (m.name == "config.json") config = &m;
        if (m.name == "model.weights.h5") weights = &m;
    }
    if (config == nullptr)
        throw errors::DataLossError(fmt::format(
            "load_model: \"{}\" has no config.json (not a Keras 3 .keras archive)", filepath));
    const Config serialized = Config::parse(config->bytes, filepath + ":config.json");
    std::shared_ptr<layers::Layer> layer = saving::make_layer(serialized);
    auto model = std::dynamic_pointer_cast<Model>(layer);
    if (!model)
        throw errors::InvalidArgumentError(fmt::format(
            "load_model: \"{}\" holds a {}, not a model", filepath, layer->class_name()));
    // Keras' build_from_config for a model its config did not build (no InputLayer).
    const Config build = serialized.get("build_config", Config());
    if (model->variables().empty() && build.is_object() && build.contains("input_shape") &&
        build["input_shape"].is_array())
        (*model)(placeholder(build["input_shape"].as_shape(), DType::float32), false);
    if (weights != nullptr) {
        const ScratchWeights scratch(filepath);
        io::write_file_atomically(scratch.path, weights->bytes);
        model->load_weights(scratch.path);
    }
    return model;
}

}  // namespace models

}  // namespace tapeflow::keras
