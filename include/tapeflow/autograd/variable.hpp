// Variables: named, mutable handles to a tensor — the only mutable objects in tapeflow. Copies of
// a Variable refer to the same variable. Reads are watched by recording tapes; assignments are
// never recorded. Also name scopes and TF1-style get_variable / variable_scope.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <tapeflow/autograd/gradient.hpp>
#include <tapeflow/core/export.hpp>
#include <tapeflow/core/tensor.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow {

struct VariableOptions {
    std::string name = "Variable";
    bool trainable = true;
};

struct VariableState;

/// A named, mutable tensor.
///
///     tf::Variable w(tf::random::normal({3, 2}), {.name = "w"});
///     w.assign_sub(0.1 * grad);            // in place, never recorded
///     auto y = tf::matmul(x, w);           // reads w (watched by recording tapes)
class Variable {
public:
    /// An empty handle (refers to no variable).
    Variable() = default;
    explicit Variable(const Tensor& initial_value, VariableOptions options = {});
    /// A handle to an existing variable's state (used by the registry and checkpoints).
    explicit Variable(std::shared_ptr<VariableState> state) : state_(std::move(state)) {}

    bool defined() const { return state_ != nullptr; }
    /// Unique name: a second "w" becomes "w_1"; active name scopes prefix it ("a/b/w").
    const std::string& name() const;
    const Shape& shape() const;
    DType dtype() const;
    Device device() const;
    bool trainable() const;
    /// Stable unique id (the tape identifies variables by it).
    int64_t id() const;

    /// The current value, as a read that recording tapes watch (see GradientTape).
    Tensor value() const;
    Tensor read_value() const { return value(); }
    operator Tensor() const { return value(); }  // NOLINT(google-explicit-constructor)

    /// In-place updates; the value must have the variable's shape and dtype (InvalidArgumentError).
    /// A tensor read earlier keeps its value (copy-on-write).
    Variable& assign(const Tensor& value);
    Variable& assign_add(const Tensor& delta);
    Variable& assign_sub(const Tensor& delta);
    /// Row updates: rows `indices` of the variable get `values` added / subtracted / written.
    Variable& scatter_add(const IndexedSlices& slices);
    Variable& scatter_sub(const IndexedSlices& slices);
    Variable& scatter_update(const IndexedSlices& slices);

    bool operator==(const Variable& other) const { return state_ == other.state_; }
    const std::shared_ptr<VariableState>& state() const { return state_; }

private:
    VariableState& checked() const;
    std::shared_ptr<VariableState> state_;
};

/// Every live variable, in creation order.
std::vector<Variable> global_variables();
/// The live trainable variables, in creation order.
std::vector<Variable> trainable_variables();

/// RAII: while alive, variable names (and op names in tape.graph()) get the prefix "<name>/".
class [[nodiscard]] NameScope {
public:
    explicit NameScope(std::string_view name);
    ~NameScope();
    NameScope(const NameScope&) = delete;
    NameScope& operator=(const NameScope&) = delete;

private:
    std::size_t previous_length_;
};
[[nodiscard]] NameScope name_scope(std::string_view name);
/// The current name-scope prefix ("a/b/", or "" at top level).
std::string current_name_scope();

/// A variable initializer: a Tensor (used as is), or a callable building the value from a shape.
/// Default-constructed: glorot_uniform, as tf.compat.v1.get_variable.
class Initializer {
public:
    Initializer() = default;
    Initializer(Tensor value);  // NOLINT(google-explicit-constructor)
    template <class F>
    requires std::is_invocable_r_v<Tensor, F, const Shape&> Initializer(F f)
        : fn_(std::move(f)) {}  // NOLINT(google-explicit-constructor)
    Tensor operator()(const Shape& shape, DType dtype) const;
    /// True when built from a Tensor (which then defines the variable's shape and dtype).
    bool is_tensor() const { return value_.defined(); }
    /// The Tensor's dtype, when built from one.
    std::optional<DType> tensor_dtype() const {
        return value_.defined() ? std::optional<DType>(value_.dtype()) : std::nullopt;
    }

private:
    std::function<Tensor(const Shape&)> fn_;
    Tensor value_;
};

/// `dtype` is the new variable's dtype, except that a Tensor initializer gives its own (as in
/// TensorFlow, where get_variable("v", initializer=tf.constant(2)) is int32); a dtype other than
/// float32 that differs from the Tensor's is an InvalidArgumentError.
struct GetVariableOptions {
    std::optional<Shape> shape;
    DType dtype = DType::float32;
    Initializer initializer = {};
    bool trainable = true;
};

/// RAII: a TF1 variable scope. Prefixes names like name_scope; `reuse` lets get_variable return
/// existing variables.
class [[nodiscard]] VariableScope {
public:
    VariableScope(std::string_view name, bool reuse);
    ~VariableScope();
    VariableScope(const VariableScope&) = delete;
    VariableScope& operator=(const VariableScope&) = delete;

private:
    NameScope names_;
    bool previous_reuse_;
};
[[nodiscard]] VariableScope variable_scope(std::string_view name, bool reuse = false);

/// TF1 get_variable: the existing variable "<scope>/<name>" when the scope reuses; a new one when
/// none exists and the scope does not reuse; InvalidArgumentError ("Variable a/w already exists")
/// when it exists and the scope does not reuse, or does not exist and the scope reuses.
Variable get_variable(std::string_view name, const GetVariableOptions& options = {});

}  // namespace tapeflow

TAPEFLOW_API_END
