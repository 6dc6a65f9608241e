// TF2's names for the children of live objects and the breadth-first object graph.
//
// tf.Module: attribute names (track_as / add_weight names here). tf.keras 2's Sequential
// (Functional._layer_checkpoint_dependencies): "layer_with_weights-<k>" for the k-th layer that has
// weights, then "layer-<i>" for every i-th layer. Optimizers: tf.compat.v1's non-slot state by its
// name ("beta1_power"), slots sorted; the Keras family in tf.keras 2's optimizer_v2 layout
// ("iter", slots "m", "v", ... in creation order). Hyperparameters are options in tapeflow, not
// variables, so they are not children (optimizer_v2 also saves learning_rate, beta_1, ...).
#include "train/checkpoint/trackable.hpp"

#include <algorithm>
#include <deque>
#include <map>

#include <fmt/format.h>

#include <tapeflow/keras/layers/attention.hpp>
#include <tapeflow/keras/model.hpp>
#include <tapeflow/keras/optimizers.hpp>

#include "train/checkpoint/object_graph.hpp"

namespace tapeflow::train::ckpt::objects {
namespace {

namespace kopt = keras::optimizers;

struct SlotRename {
    const char* tapeflow;
    const char* tf;
};

// Keras 3 slot names (tapeflow's) -> optimizer_v2's, in optimizer_v2's creation order.
std::vector<SlotRename> keras_slot_table(const train::Optimizer& opt) {
    if (dynamic_cast<const kopt::Adam*>(&opt) != nullptr)  // AdamW too
        return {{"momentum", "m"}, {"velocity", "v"}, {"velocity_hat", "vhat"}};
    if (dynamic_cast<const kopt::Adamax*>(&opt) != nullptr)
        return {{"momentum", "m"}, {"norm", "v"}};
    if (dynamic_cast<const kopt::Nadam*>(&opt) != nullptr)
        return {{"momentum", "m"}, {"velocity", "v"}};
    if (dynamic_cast<const kopt::RMSprop*>(&opt) != nullptr)
        return {{"velocity", "rms"}, {"momentum", "momentum"}, {"average_gradient", "mg"}};
    if (dynamic_cast<const kopt::Adadelta*>(&opt) != nullptr)
        return {{"accumulated_grad", "accum_grad"}, {"accumulated_delta_var", "accum_var"}};
    if (dynamic_cast<const kopt::Ftrl*>(&opt) != nullptr)
        return {{"accumulator", "accumulator"}, {"linear", "linear"}};
    return {{"momentum", "momentum"}, {"accumulator", "accumulator"}};  // SGD, Adagrad
}

bool keras_family(const train::Optimizer& opt) {
    return dynamic_cast<const kopt::Optimizer*>(&opt) != nullptr;
}

// Keras 3 non-slot names -> optimizer_v2's.
constexpr std::pair<const char*, const char*> kKerasNonSlots[] = {
    {"iteration", "iter"},
    {"u_product", "momentum_cache"},  // Nadam's product of the momentum schedule
};

std::string keras_non_slot_tf_name(const std::string& name) {
    for (const auto& [tp, tf] : kKerasNonSlots)
        if (name == tp) return tf;
    return name;
}

// The last component of a variable's name: the name TF gives a variable tracked without one.
std::string base_name(const std::string& name) {
    const auto slash = name.rfind('/');
    return slash == std::string::npos ? name : name.substr(slash + 1);
}

Live of_variable(const Variable& v) {
    Live l;
    l.kind = Live::Kind::variable;
    l.variable = v;
    return l;
}

Live of_module(std::shared_ptr<Module> m) {
    Live l;
    l.kind = Live::Kind::module;
    l.module = std::move(m);
    return l;
}

// tf.keras 2's attribute names of the sublayers that hold a layer's sub-scoped weights.
std::string group_child_name(const Module& m, const std::string& scope) {
    if (dynamic_cast<const keras::layers::MultiHeadAttention*>(&m) != nullptr) {
        if (scope == "attention_output") return "_output_dense";
        return "_" + scope + "_dense";
    }
    return scope;
}

// The sub-scope of a weight made by add_weight(local) under a nested name scope of the layer
// ("<...>/<layer>/<scope>/<local>"), or "".
std::string weight_scope(const Module& m, const Variable& v, const std::string& local) {
    if (local.empty() || dynamic_cast<const keras::layers::Layer*>(&m) == nullptr) return "";
    const std::string& n = v.name();
    const std::string tail = "/" + local;
    if (!n.ends_with(tail)) return "";
    const std::string head = n.substr(0, n.size() - tail.size());  // ".../<layer>/<scope>"
    const auto slash = head.rfind('/');
    if (slash == std::string::npos) return "";
    const std::string owner = head.substr(0, slash);
    if (owner != m.name() && !owner.ends_with("/" + m.name())) return "";
    return head.substr(slash + 1);
}

void group_children(const Module& m, const std::string& group, std::vector<LiveChild>& out) {
    const auto& vars = m.own_variables();
    const auto& names = m.own_variable_names();
    for (std::size_t i = 0; i < vars.size(); ++i)
        if (weight_scope(m, vars[i], names[i]) == group && !group.empty())
            out.push_back({names[i], of_variable(vars[i])});
}

void module_children(const std::shared_ptr<Module>& owner, std::vector<LiveChild>& out) {
    const Module& m = *owner;
    const auto* sequential = dynamic_cast<const keras::Sequential*>(&m);
    std::vector<const Module*> layer_ptrs;
    if (sequential != nullptr) {
        int64_t with_weights = 0;
        const auto layers = sequential->layers();
        for (std::size_t i = 0; i < layers.size(); ++i) {
            if (!layers[i]->variables().empty())
                out.push_back(
                    {fmt::format("layer_with_weights-{}", with_weights++), of_module(layers[i])});
            out.push_back({fmt::format("layer-{}", i), of_module(layers[i])});
            layer_ptrs.push_back(layers[i].get());
        }
    }
    const auto& vars = m.own_variables();
    const auto& var_names = m.own_variable_names();
    std::vector<std::string> groups;
    for (std::size_t i = 0; i < vars.size(); ++i) {
        if (const std::string scope = weight_scope(m, vars[i], var_names[i]); !scope.empty()) {
            if (std::find(groups.begin(), groups.end(), scope) != groups.end()) continue;
            groups.push_back(scope);
            Live g;
            g.kind = Live::Kind::group;
            g.module = owner;
            g.group = scope;
            out.push_back({group_child_name(m, scope), g});
            continue;
        }
        out.push_back({var_names[i].empty() ? base_name(vars[i].name()) : var_names[i],
                       of_variable(vars[i])});
    }
    const auto& kids = m.children();
    const auto& kid_names = m.child_names();
    for (std::size_t i = 0; i < kids.size(); ++i) {
        // A Sequential's layers are named by position only (tf.keras 2 tracks them nowhere else).
        if (std::find(layer_ptrs.begin(), layer_ptrs.end(), kids[i].get()) != layer_ptrs.end() &&
            kid_names[i].empty())
            continue;
        out.push_back({kid_names[i].empty() ? kids[i]->name() : kid_names[i], of_module(kids[i])});
    }
}

void optimizer_children(const train::Optimizer& opt, std::vector<LiveChild>& out) {
    // Non-slot state is "<optimizer>/<name>"; slots are "<variable>/<optimizer>/<slot>".
    const std::string prefix = opt.name() + "/";
    std::vector<LiveChild> state;
    for (const Variable& v : opt.variables()) {
        const std::string& n = v.name();
        if (!n.starts_with(prefix) || n.find('/', prefix.size()) != std::string::npos) continue;
        std::string local = n.substr(prefix.size());
        if (keras_family(opt)) local = keras_non_slot_tf_name(local);
        state.push_back({std::move(local), of_variable(v)});
    }
    std::sort(state.begin(), state.end(), [](const LiveChild& a, const LiveChild& b) {
        // optimizer_v2 creates "iter" first, then its hyperparameters and state sorted.
        if ((a.name == "iter") != (b.name == "iter")) return a.name == "iter";
        return a.name < b.name;
    });
    out.insert(out.end(), state.begin(), state.end());
}

}  // namespace

std::tuple<int, const void*, std::string> Live::identity() const {
    switch (kind) {
        case Kind::variable:
            return {1, reinterpret_cast<const void*>(static_cast<intptr_t>(variable.id())), ""};
        case Kind::module:
            return {2, module.get(), ""};
        case Kind::optimizer:
            return {3, optimizer.get(), ""};
        case Kind::group:
            return {4, module.get(), group};
        case Kind::root:
            break;
    }
    return {0, nullptr, ""};
}

std::vector<LiveChild> children_of(const Live& object, const Roots& roots) {
    std::vector<LiveChild> out;
    switch (object.kind) {
        case Live::Kind::root:
            if (roots.root_module) module_children(roots.root_module, out);
            for (const auto& [name, child] : roots.children)
                out.push_back({name, child});
            if (roots.save_counter)
                out.push_back({"save_counter", of_variable(*roots.save_counter)});
            break;
        case Live::Kind::module:
            module_children(object.module, out);
            break;
        case Live::Kind::group:
            group_children(*object.module, object.group, out);
            break;
        case Live::Kind::optimizer:
            optimizer_children(*object.optimizer, out);
            break;
        case Live::Kind::variable:
            break;
    }
    return out;
}

std::vector<std::pair<std::string, std::string>> slot_names(const train::Optimizer& opt) {
    const std::vector<std::string> live = opt.get_slot_names();  // sorted
    std::vector<std::pair<std::string, std::string>> out;
    if (!keras_family(opt)) {
        for (const std::string& s : live)
            out.emplace_back(s, s);
        return out;
    }
    std::vector<std::string> rest = live;
    for (const SlotRename& r : keras_slot_table(opt)) {
        const auto it = std::find(rest.begin(), rest.end(), r.tapeflow);
        if (it == rest.end()) continue;
        out.emplace_back(r.tf, r.tapeflow);
        rest.erase(it);
    }
    for (const std::string& s : rest)  // "average" (use_ema): no optimizer_v2 counterpart
        out.emplace_back(s, s);
    return out;
}

std::string tapeflow_slot_name(const train::Optimizer& opt, const std::string& tf_slot) {
    if (!keras_family(opt)) return tf_slot;
    for (const SlotRename& r : keras_slot_table(opt))
        if (tf_slot == r.tf) return r.tapeflow;
    return tf_slot;
}

std::string non_slot_variable_name(const train::Optimizer& opt, const std::string& local_name) {
    std::string name = local_name;
    if (keras_family(opt)) {
        for (const auto& [tp, tf] : kKerasNonSlots)
            if (local_name == tf) name = tp;
    }
    return opt.name() + "/" + name;
}

LiveGraph build_live_graph(const Roots& roots) {
    LiveGraph g;
    std::map<std::tuple<int, const void*, std::string>, int32_t> ids;
    g.nodes.push_back({Live{}, "", {}, {}});
    ids[Live{}.identity()] = 0;
    std::deque<int32_t> queue = {0};
    while (!queue.empty()) {
        const int32_t id = queue.front();
        queue.pop_front();
        const std::vector<LiveChild> kids = children_of(g.nodes[id].object, roots);
        for (const LiveChild& c : kids) {
            const auto key = c.object.identity();
            auto it = ids.find(key);
            if (it == ids.end()) {
                const auto child_id = static_cast<int32_t>(g.nodes.size());
                const std::string local = escape_local_name(c.name);
                std::string path =
                    g.nodes[id].path.empty() ? local : g.nodes[id].path + "/" + local;
                g.nodes.push_back({c.object, std::move(path), {}, {}});
                it = ids.emplace(key, child_id).first;
                queue.push_back(child_id);
            }
            g.nodes[id].children.emplace_back(c.name, it->second);
        }
    }
    // Slot variables after every other node, per optimizer, slot name and original variable in
    // node order (save_util_v1._serialize_slot_variables).
    const std::size_t non_slot_count = g.nodes.size();
    for (std::size_t o = 0; o < non_slot_count; ++o) {
        if (g.nodes[o].object.kind != Live::Kind::optimizer) continue;
        const train::Optimizer& opt = *g.nodes[o].object.optimizer;
        for (const auto& [tf_name, tp_name] : slot_names(opt)) {
            for (std::size_t v = 0; v < non_slot_count; ++v) {
                if (g.nodes[v].object.kind != Live::Kind::variable) continue;
                const auto slot = opt.get_slot(g.nodes[v].object.variable, tp_name);
                if (!slot) continue;
                Live l;
                l.kind = Live::Kind::variable;
                l.variable = *slot;
                if (ids.contains(l.identity())) continue;  // TF refuses; tapeflow never shares
                const auto slot_id = static_cast<int32_t>(g.nodes.size());
                ids.emplace(l.identity(), slot_id);
                std::string path = slot_variable_path(g.nodes[v].path, g.nodes[o].path, tf_name);
                g.nodes.push_back({l, std::move(path), {}, {}});
                g.nodes[o].slots.push_back({static_cast<int32_t>(v), tf_name, slot_id});
            }
        }
    }
    return g;
}

}  // namespace tapeflow::train::ckpt::objects
