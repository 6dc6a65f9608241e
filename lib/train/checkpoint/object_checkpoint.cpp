// tf::train::Checkpoint: saving the live object graph in TensorFlow's bundle format with its
// "_CHECKPOINTABLE_OBJECT_GRAPH", and restoring by walking the saved graph and the live one
// together from the root by the children's local names (TF's CheckpointPosition). Values of
// objects that do not exist yet (optimizer slots and the Keras iteration counter before the first
// step) are restored when the variable is created, through a variable-creation observer.
#include <algorithm>
#include <deque>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>

#include <fmt/format.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/core/logging.hpp>
#include <tapeflow/keras/layer.hpp>
#include <tapeflow/keras/optimizers.hpp>
#include <tapeflow/ops/creation.hpp>
#include <tapeflow/train/checkpoint.hpp>
#include <tapeflow/train/checkpoint_reader.hpp>

#include "autograd/variable_observers.hpp"
#include "train/checkpoint/checkpoint_state.hpp"
#include "train/checkpoint/object_graph.hpp"
#include "train/checkpoint/tensor_bundle.hpp"
#include "train/checkpoint/trackable.hpp"

namespace tapeflow::train {
namespace ckpt {

using objects::Live;
using objects::ObjectGraph;

/// One restore: the saved graph, what matched, and the restorations still deferred.
struct RestoreState {
    std::mutex mutex;
    std::string prefix;
    std::unique_ptr<CheckpointReader> reader;
    std::map<std::string, Shape> shapes;  // the reader's, read once
    std::map<std::string, DType> dtypes;
    ObjectGraph saved;
    objects::Roots roots;                     // the live graph, for assert_*
    std::vector<bool> restored;               // per saved node: its value was assigned
    std::set<int64_t> restored_ids;           // variables that got a value
    std::map<std::string, int32_t> deferred;  // variable name at creation -> saved node
    // Weights of Keras layers not built yet: matched by "<layer name>/<local name>" at creation.
    struct LayerWeight {
        std::string layer_name;
        std::string local_name;
        int32_t node = 0;
    };
    std::vector<LayerWeight> deferred_weights;
    std::vector<std::pair<int32_t, std::shared_ptr<train::Optimizer>>> optimizers;  // matched
    std::vector<std::string> unused_attributes;
    bool expect_partial = false;
    bool completed = false;  // read() got through (a failed one warns of nothing)
    int64_t observer_id = 0;

    // The object path of a saved node with a value (its key without the attribute suffix).
    std::string path_of(int32_t node) const {
        const auto& attrs = saved.nodes[static_cast<std::size_t>(node)].attributes;
        if (attrs.empty()) return fmt::format("node {}", node);
        const std::string& key = attrs.front().checkpoint_key;
        const auto at = key.rfind("/.ATTRIBUTES/");
        return at == std::string::npos ? key : key.substr(0, at);
    }
    std::vector<std::string> unresolved() const {
        std::vector<std::string> out;
        for (std::size_t i = 0; i < saved.nodes.size(); ++i)
            if (!saved.nodes[i].attributes.empty() && !restored[i])
                out.push_back(path_of(static_cast<int32_t>(i)));
        return out;
    }
    // Live variables reachable now that got no value.
    std::vector<std::string> unmatched_live() const {
        std::vector<std::string> out;
        const bool saved_counter =
            std::any_of(saved.nodes.front().children.begin(),
                        saved.nodes.front().children.end(),
                        [](const ObjectGraph::Child& c) { return c.local_name == "save_counter"; });
        for (const auto& n : objects::build_live_graph(roots).nodes) {
            if (n.object.kind != Live::Kind::variable) continue;
            // The counter restore creates is not required of checkpoints written without one.
            if (!saved_counter && roots.save_counter &&
                n.object.variable.id() == roots.save_counter->id())
                continue;
            if (!restored_ids.contains(n.object.variable.id()))
                out.push_back(fmt::format("{} ('{}')", n.path, n.object.variable.name()));
        }
        return out;
    }

    // A deferred original variable now exists: its slots are restored when they are created.
    void defer_slots_of(int32_t original_node, const Variable& original) {
        for (const auto& [o, opt] : optimizers) {
            for (const auto& ref : saved.nodes[static_cast<std::size_t>(o)].slot_variables) {
                if (ref.original_variable_node_id != original_node) continue;
                deferred.emplace(fmt::format("{}/{}/{}",
                                             original.name(),
                                             opt->name(),
                                             objects::tapeflow_slot_name(*opt, ref.slot_name)),
                                 ref.slot_variable_node_id);
            }
        }
    }

    // The saved node a just-created variable takes, or -1.
    int32_t take_deferred(const Variable& created) {
        if (const auto it = deferred.find(created.name()); it != deferred.end()) {
            const int32_t node = it->second;
            deferred.erase(it);
            return node;
        }
        const std::string& name = created.name();
        for (auto it = deferred_weights.begin(); it != deferred_weights.end(); ++it) {
            const std::string tail = it->layer_name + "/" + it->local_name;
            if (name == tail || name.ends_with("/" + tail)) {
                const int32_t node = it->node;
                deferred_weights.erase(it);
                return node;
            }
        }
        return -1;
    }

    ~RestoreState() {
        detail::remove_variable_observer(observer_id);
        const std::vector<std::string> left = unresolved();
        if (completed && !expect_partial && !left.empty()) {
            logging::warn(
                "Some values in checkpoint {} were never restored (no object took them): {}. Call "
                "expect_partial() on the load status to silence this warning.",
                prefix,
                fmt::join(left, ", "));
        }
    }
};

namespace {

std::string list(const std::vector<std::string>& items) {
    constexpr std::size_t kShown = 10;
    std::string out = fmt::format(
        "{}", fmt::join(items.begin(), items.begin() + std::min(items.size(), kShown), ", "));
    if (items.size() > kShown) out += fmt::format(" and {} more", items.size() - kShown);
    return out;
}

void check_value(const RestoreState& state,
                 const std::string& key,
                 const std::string& path,
                 const Variable& v) {
    const CheckpointReader& reader = *state.reader;
    const auto& shapes = state.shapes;
    const auto& dtypes = state.dtypes;
    const auto s = shapes.find(key);
    if (s == shapes.end()) {
        throw errors::NotFoundError(
            fmt::format("Checkpoint {} is missing key {} that its object graph names for '{}'",
                        reader.prefix(),
                        key,
                        path));
    }
    const auto d = dtypes.find(key);
    if (d == dtypes.end() || d->second != v.dtype() || s->second != v.shape()) {
        throw errors::InvalidArgumentError(fmt::format(
            "Cannot restore '{}' (variable '{}') from checkpoint {}: the saved value has shape {} "
            "and dtype {}, the variable has shape {} and dtype {}",
            path,
            v.name(),
            reader.prefix(),
            s->second.str(),
            reader.dtype_name(key),
            v.shape().str(),
            dtype_name(v.dtype())));
    }
}

}  // namespace
}  // namespace ckpt

// ---- CheckpointLoadStatus ----

CheckpointLoadStatus::CheckpointLoadStatus(std::shared_ptr<ckpt::RestoreState> state)
    : state_(std::move(state)) {}

const CheckpointLoadStatus& CheckpointLoadStatus::assert_consumed() const {
    const std::lock_guard lock(state_->mutex);
    if (const auto left = state_->unresolved(); !left.empty()) {
        throw errors::AssertionError(
            fmt::format("Unresolved object in checkpoint {}: {} (no live object took its value{})",
                        state_->prefix,
                        ckpt::list(left),
                        state_->deferred.empty() && state_->deferred_weights.empty()
                            ? ""
                            : ", or it was deferred and not created yet"));
    }
    if (!state_->unused_attributes.empty()) {
        throw errors::AssertionError(fmt::format("Unused attributes in checkpoint {}: {}",
                                                 state_->prefix,
                                                 ckpt::list(state_->unused_attributes)));
    }
    if (const auto live = state_->unmatched_live(); !live.empty()) {
        throw errors::AssertionError(fmt::format(
            "Some objects had no value in checkpoint {}: {}", state_->prefix, ckpt::list(live)));
    }
    return *this;
}

const CheckpointLoadStatus& CheckpointLoadStatus::assert_existing_objects_matched() const {
    const std::lock_guard lock(state_->mutex);
    if (const auto live = state_->unmatched_live(); !live.empty()) {
        throw errors::FailedPreconditionError(
            fmt::format("Some existing objects were not matched by checkpoint {}: {}",
                        state_->prefix,
                        ckpt::list(live)));
    }
    return *this;
}

const CheckpointLoadStatus& CheckpointLoadStatus::expect_partial() const {
    const std::lock_guard lock(state_->mutex);
    state_->expect_partial = true;
    return *this;
}

// ---- Checkpoint ----

struct Checkpoint::Impl {
    mutable ckpt::objects::Roots roots;
    std::shared_ptr<ckpt::RestoreState> last_restore;  // keeps its deferred restorations armed

    Variable counter() const {
        if (!roots.save_counter)
            roots.save_counter =
                Variable(constant(int64_t{0}), {.name = "save_counter", .trainable = false});
        return *roots.save_counter;
    }
};

namespace {

ckpt::objects::Live to_live(const Checkpoint::Child& child) {
    ckpt::objects::Live l;
    std::visit(
        [&](const auto& c) {
            using T = std::decay_t<decltype(c)>;
            if constexpr (std::is_same_v<T, Variable>) {
                l.kind = ckpt::objects::Live::Kind::variable;
                l.variable = c;
            } else if constexpr (std::is_same_v<T, std::shared_ptr<Module>>) {
                l.kind = ckpt::objects::Live::Kind::module;
                l.module = c;
            } else {
                l.kind = ckpt::objects::Live::Kind::optimizer;
                l.optimizer = c;
            }
        },
        static_cast<const Checkpoint::ChildVariant&>(child));
    const bool empty = l.kind == ckpt::objects::Live::Kind::variable
                           ? !l.variable.defined()
                           : (l.module == nullptr && l.optimizer == nullptr);
    if (empty) throw errors::InvalidArgumentError("tf::train::Checkpoint: a child is empty");
    return l;
}

std::vector<std::pair<std::string, ckpt::objects::Live>> sorted_children(
    std::vector<std::pair<std::string, Checkpoint::Child>> children) {
    std::vector<std::pair<std::string, ckpt::objects::Live>> out;
    for (auto& [name, child] : children) {
        if (name.empty() || name == "save_counter") {
            throw errors::InvalidArgumentError(fmt::format(
                "tf::train::Checkpoint: invalid child name '{}' (empty or reserved)", name));
        }
        out.emplace_back(name, to_live(child));
    }
    // tf.train.Checkpoint sets its keyword arguments in sorted order.
    std::sort(
        out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (std::size_t i = 1; i < out.size(); ++i) {
        if (out[i].first == out[i - 1].first) {
            throw errors::InvalidArgumentError(
                fmt::format("tf::train::Checkpoint: child name '{}' given twice", out[i].first));
        }
    }
    return out;
}

}  // namespace

Checkpoint::Checkpoint(std::vector<std::pair<std::string, Child>> children)
    : impl_(std::make_unique<Impl>()) {
    impl_->roots.children = sorted_children(std::move(children));
}

Checkpoint::Checkpoint(std::shared_ptr<Module> root,
                       std::vector<std::pair<std::string, Child>> children)
    : impl_(std::make_unique<Impl>()) {
    if (!root) throw errors::InvalidArgumentError("tf::train::Checkpoint: the root module is null");
    impl_->roots.root_module = std::move(root);
    impl_->roots.children = sorted_children(std::move(children));
}

Checkpoint::~Checkpoint() = default;

Variable Checkpoint::save_counter() const {
    return impl_->counter();
}

std::string Checkpoint::write(const std::string& file_prefix) {
    using namespace ckpt::objects;
    if (file_prefix.empty()) throw errors::InvalidArgumentError("Checkpoint::write: empty prefix");
    const LiveGraph live = build_live_graph(impl_->roots);
    ObjectGraph graph;
    graph.nodes.resize(live.nodes.size());
    std::vector<std::pair<std::string, Variable>> values;
    for (std::size_t i = 0; i < live.nodes.size(); ++i) {
        const LiveGraph::Node& n = live.nodes[i];
        ObjectGraph::Node& out = graph.nodes[i];
        for (const auto& [name, id] : n.children)
            out.children.push_back({id, name});
        for (const auto& s : n.slots)
            out.slot_variables.push_back({s.original, s.tf_name, s.slot});
        if (n.object.kind == Live::Kind::variable) {
            std::string key = attribute_key(n.path, kVariableValue);
            out.attributes.push_back({std::string(kVariableValue), n.object.variable.name(), key});
            values.emplace_back(std::move(key), n.object.variable);
        }
    }
    // has_checkpoint_values: the node or a descendant holds a value (TF's fixpoint over parents).
    for (std::size_t i = 0; i < graph.nodes.size(); ++i)
        graph.nodes[i].has_checkpoint_values =
            !graph.nodes[i].attributes.empty() || !graph.nodes[i].slot_variables.empty();
    for (bool changed = true; changed;) {
        changed = false;
        for (auto& node : graph.nodes) {
            if (node.has_checkpoint_values) continue;
            for (const auto& c : node.children) {
                if (graph.nodes[static_cast<std::size_t>(c.node_id)].has_checkpoint_values) {
                    node.has_checkpoint_values = changed = true;
                    break;
                }
            }
        }
    }
    const std::filesystem::path dir = std::filesystem::path(file_prefix).parent_path();
    if (!dir.empty()) std::filesystem::create_directories(dir);
    ckpt::bundle::BundleWriter writer(file_prefix);
    for (const auto& [key, var] : values)
        writer.add(key, var.value());
    writer.add_strings(std::string(kObjectGraphKey), Shape{}, {serialize_object_graph(graph)});
    writer.finish();
    return file_prefix;
}

std::string Checkpoint::save(const std::string& file_prefix) {
    Variable counter = impl_->counter();
    counter.assign(constant(counter.value().item<int64_t>() + 1));
    const std::string path =
        write(fmt::format("{}-{}", file_prefix, counter.value().item<int64_t>()));
    // TF 2's Checkpoint.save records only the newest path (CheckpointManager keeps a list).
    ckpt::write_checkpoint_state(ckpt::prefix_dir(file_prefix), path, {path});
    return path;
}

CheckpointLoadStatus Checkpoint::restore(const std::string& save_path) {
    return read(save_path);
}

CheckpointLoadStatus Checkpoint::read(const std::string& save_path) {
    using namespace ckpt::objects;
    impl_->counter();  // TF creates it here, so that it is restored with everything else
    auto state = std::make_shared<ckpt::RestoreState>();
    state->reader = std::make_unique<CheckpointReader>(save_path);
    const CheckpointReader& reader = *state->reader;
    state->prefix = reader.prefix();
    state->shapes = reader.get_variable_to_shape_map();
    state->dtypes = reader.get_variable_to_dtype_map();
    const std::string index = ckpt::bundle::index_file_name(state->prefix);
    if (!reader.has_tensor(std::string(kObjectGraphKey))) {
        throw errors::NotFoundError(fmt::format(
            "Checkpoint {} has no {}: it is not an object-based (TF2) checkpoint; restore it by "
            "variable names with tf::train::Saver",
            state->prefix,
            kObjectGraphKey));
    }
    const std::vector<std::string> graph_bytes =
        reader.get_tensor_bytes(std::string(kObjectGraphKey));
    if (graph_bytes.size() != 1) {
        throw errors::DataLossError(
            fmt::format("Corrupt checkpoint {}: {} holds {} strings, not one",
                        index,
                        kObjectGraphKey,
                        graph_bytes.size()));
    }
    state->saved = parse_object_graph(graph_bytes.front(), index);
    state->roots = impl_->roots;
    const ObjectGraph& saved = state->saved;
    const std::size_t n = saved.nodes.size();
    state->restored.assign(n, false);

    // Walk both graphs from the root by local names.
    std::vector<std::optional<Live>> matched(n);
    matched[0] = Live{};
    std::deque<int32_t> queue = {0};
    while (!queue.empty()) {
        const int32_t id = queue.front();
        queue.pop_front();
        const Live& live = *matched[static_cast<std::size_t>(id)];
        const std::vector<LiveChild> kids = children_of(live, impl_->roots);
        for (const auto& c : saved.nodes[static_cast<std::size_t>(id)].children) {
            auto& slot = matched[static_cast<std::size_t>(c.node_id)];
            if (slot) continue;
            const auto it = std::find_if(kids.begin(), kids.end(), [&](const LiveChild& k) {
                return k.name == c.local_name;
            });
            if (it != kids.end()) {
                slot = it->object;
                queue.push_back(c.node_id);
            } else if (live.kind == Live::Kind::optimizer &&
                       !saved.nodes[static_cast<std::size_t>(c.node_id)].attributes.empty()) {
                // Optimizer state created at the first step ("iter", "beta1_power").
                state->deferred.emplace(non_slot_variable_name(*live.optimizer, c.local_name),
                                        c.node_id);
            } else if (const auto* layer =
                           dynamic_cast<const keras::layers::Layer*>(live.module.get());
                       layer != nullptr && !layer->built() &&
                       !saved.nodes[static_cast<std::size_t>(c.node_id)].attributes.empty()) {
                // A weight the layer creates when it builds (TF defers it the same way).
                state->deferred_weights.push_back({layer->name(), c.local_name, c.node_id});
            }
        }
    }
    // Slot variables, once both the optimizer and the original variable are matched.
    for (std::size_t o = 0; o < n; ++o) {
        if (!matched[o] || matched[o]->kind != Live::Kind::optimizer) continue;
        const train::Optimizer& opt = *matched[o]->optimizer;
        state->optimizers.emplace_back(static_cast<int32_t>(o), matched[o]->optimizer);
        for (const auto& s : saved.nodes[o].slot_variables) {
            const auto& orig = matched[static_cast<std::size_t>(s.original_variable_node_id)];
            auto& slot = matched[static_cast<std::size_t>(s.slot_variable_node_id)];
            if (!orig || orig->kind != Live::Kind::variable || slot) continue;
            const std::string tp_name = tapeflow_slot_name(opt, s.slot_name);
            if (const auto existing = opt.get_slot(orig->variable, tp_name)) {
                Live l;
                l.kind = Live::Kind::variable;
                l.variable = *existing;
                slot = l;
            } else {
                state->deferred.emplace(
                    fmt::format("{}/{}/{}", orig->variable.name(), opt.name(), tp_name),
                    s.slot_variable_node_id);
            }
        }
    }
    // Check every value first, read them all, then assign: a failure changes nothing.
    struct Assignment {
        int32_t node;
        Variable variable;
        std::string key;
    };
    std::vector<Assignment> plan;
    for (std::size_t i = 0; i < n; ++i) {
        for (const auto& attr : saved.nodes[i].attributes) {
            const bool variable = matched[i] && matched[i]->kind == Live::Kind::variable;
            if (attr.name != kVariableValue || (matched[i] && !variable)) {
                state->unused_attributes.push_back(attr.checkpoint_key);
                continue;
            }
            if (!variable) continue;
            ckpt::check_value(*state,
                              attr.checkpoint_key,
                              state->path_of(static_cast<int32_t>(i)),
                              matched[i]->variable);
            plan.push_back({static_cast<int32_t>(i), matched[i]->variable, attr.checkpoint_key});
        }
    }
    std::vector<int32_t> deferred_nodes;
    for (const auto& [name, node] : state->deferred)
        deferred_nodes.push_back(node);
    for (const auto& w : state->deferred_weights)
        deferred_nodes.push_back(w.node);
    for (const int32_t node : deferred_nodes) {
        for (const auto& attr : saved.nodes[static_cast<std::size_t>(node)].attributes) {
            if (!state->shapes.contains(attr.checkpoint_key)) {
                throw errors::NotFoundError(
                    fmt::format("Checkpoint {} is missing key {} that its object graph names",
                                state->prefix,
                                attr.checkpoint_key));
            }
        }
    }
    std::vector<Tensor> values;
    values.reserve(plan.size());
    for (const Assignment& a : plan)
        values.push_back(reader.get_tensor(a.key));
    for (std::size_t i = 0; i < plan.size(); ++i) {
        Variable v = plan[i].variable;
        v.assign(values[i]);
        state->restored[static_cast<std::size_t>(plan[i].node)] = true;
        state->restored_ids.insert(v.id());
    }
    // The rest when it is created.
    if (!deferred_nodes.empty()) {
        std::weak_ptr<ckpt::RestoreState> weak = state;
        state->observer_id = detail::add_variable_observer([weak](Variable& created) {
            const auto s = weak.lock();
            if (!s) return;
            const std::lock_guard lock(s->mutex);
            const int32_t node = s->take_deferred(created);
            if (node < 0) return;
            for (const auto& attr : s->saved.nodes[static_cast<std::size_t>(node)].attributes) {
                if (attr.name != kVariableValue) continue;
                ckpt::check_value(*s, attr.checkpoint_key, s->path_of(node), created);
                created.assign(s->reader->get_tensor(attr.checkpoint_key));
                s->restored[static_cast<std::size_t>(node)] = true;
                s->restored_ids.insert(created.id());
                logging::debug("Restored {} from {} at its creation", s->path_of(node), s->prefix);
            }
            s->defer_slots_of(node, created);
        });
    }
    state->completed = true;
    impl_->last_restore = state;
    return CheckpointLoadStatus(std::move(state));
}

}  // namespace tapeflow::train
