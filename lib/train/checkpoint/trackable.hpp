// The live object graph of a tf::train::Checkpoint: which objects are trackable (variables,
// modules, optimizers), the names of their children as TF2 gives them (tf.Module attributes,
// tf.keras 2's layers and optimizer_v2 slots), and the optimizer slots' TF names.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <tapeflow/autograd/variable.hpp>
#include <tapeflow/keras/module.hpp>
#include <tapeflow/train/optimizer.hpp>

namespace tapeflow::train::ckpt::objects {

/// One live object; the root is the Checkpoint itself (or its root module).
struct Live {
    // group: weights a layer made under a sub-scope (MultiHeadAttention's "query/kernel"), which
    // tf.keras 2 keeps in a sublayer of their own ("_query_dense").
    enum class Kind { root, variable, module, optimizer, group };
    Kind kind = Kind::root;
    Variable variable;
    std::shared_ptr<Module> module;
    std::shared_ptr<train::Optimizer> optimizer;
    std::string group;  // the sub-scope, for Kind::group (module is the layer)

    /// Equal for the same object (a variable by id, the others by address).
    std::tuple<int, const void*, std::string> identity() const;
};

/// What the root holds: TF's Checkpoint(root=..., **kwargs) with its save_counter.
struct Roots {
    std::shared_ptr<Module> root_module;                 // may be null
    std::vector<std::pair<std::string, Live>> children;  // sorted by name
    std::optional<Variable> save_counter;                // once created
};

struct LiveChild {
    std::string name;
    Live object;
};

/// The named children of `object` in TF's order (duplicates allowed: the first path wins).
std::vector<LiveChild> children_of(const Live& object, const Roots& roots);

/// An optimizer's slot names as TensorFlow calls them ("m", "v" for Adam), in TF's order
/// (tf.compat.v1: sorted; optimizer_v2: creation order), each with tapeflow's name.
std::vector<std::pair<std::string, std::string>> slot_names(const train::Optimizer& optimizer);
/// tapeflow's slot name for TF's `tf_slot` (itself when there is no mapping).
std::string tapeflow_slot_name(const train::Optimizer& optimizer, const std::string& tf_slot);
/// The name of the variable an optimizer creates for its child `local_name` ("iter" ->
/// "<optimizer>/iteration" for the Keras family), to restore it when it is created.
std::string non_slot_variable_name(const train::Optimizer& optimizer,
                                   const std::string& local_name);

/// The live graph breadth first from the root (TF's graph_view), slot variables appended after
/// it as TensorFlow's save_util does: node i's path, object, children and slots.
struct LiveGraph {
    struct Node {
        Live object;
        std::string path;  // "" for the root
        std::vector<std::pair<std::string, int32_t>> children;
        struct Slot {
            int32_t original = 0;
            std::string tf_name;
            int32_t slot = 0;
        };
        std::vector<Slot> slots;
    };
    std::vector<Node> nodes;
};
LiveGraph build_live_graph(const Roots& roots);

}  // namespace tapeflow::train::ckpt::objects
