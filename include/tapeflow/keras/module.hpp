// tf::Module (TF2's tf.Module): a named object that owns variables and submodules, tracked
// explicitly (C++ has no attribute reflection). The base of every Keras layer and model. Entry
// points: variables(), trainable_variables(), submodules(); add_weight() and track() for
// subclasses.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <tapeflow/autograd/variable.hpp>
#include <tapeflow/core/export.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow {

/// A named container of variables and submodules.
///
///     struct Affine : tf::Module {
///         Affine() : Module("affine") { w = add_weight("w", {3, 2}); }
///         tf::Variable w;
///     };
///     Affine m;  m.variables();  // {"affine/w"}
class Module {
public:
    /// "" gives the class's default name in snake case ("module", "my_model" for a subclass
    /// MyModel), made unique with Keras' counter ("dense", "dense_1", ...); an explicit name is
    /// kept as given.
    explicit Module(std::string name = "");
    virtual ~Module();
    Module(const Module&) = delete;
    Module& operator=(const Module&) = delete;

    const std::string& name() const;
    /// Own variables, then each tracked submodule's, in registration order, depth first, each once.
    std::vector<Variable> variables() const;
    std::vector<Variable> trainable_variables() const;
    std::vector<Variable> non_trainable_variables() const;
    /// Every descendant module, depth first, each once.
    std::vector<std::shared_ptr<Module>> submodules() const;
    /// The directly tracked submodules, in registration order.
    const std::vector<std::shared_ptr<Module>>& children() const { return children_; }
    /// The directly tracked variables, in registration order (a variable tracked twice is listed
    /// twice).
    const std::vector<Variable>& own_variables() const { return variables_; }
    /// The names object-based checkpoints give them (tf::train::Checkpoint), parallel to
    /// own_variables() and children(): the name given to track_as or add_weight, "" where none
    /// was given.
    const std::vector<std::string>& own_variable_names() const { return variable_names_; }
    const std::vector<std::string>& child_names() const { return child_names_; }

    /// Tracks a variable or submodule under `name`, the attribute name TF2 would give it
    /// (`self.a = tf.Variable(...)`): its checkpoint key is "<path>/a/.ATTRIBUTES/VARIABLE_VALUE".
    void track_as(std::string name, const Variable& variable);
    template <class M>
    std::shared_ptr<M> track_as(std::string name, std::shared_ptr<M> submodule) {
        track_module(submodule, std::move(name));
        return submodule;
    }

    /// RAII: the module's name scope ("<name>/" inside the current scope); weights created by
    /// add_weight while it is open are named "<scopes>/<name>/<weight>".
    class [[nodiscard]] Scope {
    public:
        explicit Scope(const Module& module);
        ~Scope();
        Scope(const Scope&) = delete;
        Scope& operator=(const Scope&) = delete;

    private:
        const Module& module_;
        NameScope names_;
    };
    Scope name_scope() const { return Scope(*this); }

protected:
    /// For library subclasses: `class_name` ("Conv2D") gives the default name ("conv2d").
    Module(std::string name, std::string_view class_name);

    /// A tracked variable created under this module's name scope ("<module>/<name>", e.g.
    /// "dense/kernel"; nested in the scopes open when it is created). The initializer's value is
    /// created on the current tf::device.
    Variable add_weight(std::string_view name,
                        const Shape& shape,
                        Initializer initializer = {},
                        DType dtype = DType::float32,
                        bool trainable = true);
    /// Tracks a submodule (its variables become part of variables()); returns it.
    template <class M>
    std::shared_ptr<M> track(std::shared_ptr<M> submodule) {
        track_module(submodule);
        return submodule;
    }
    /// Tracks a variable created elsewhere.
    void track(const Variable& variable);
    /// Whether add_weight marks new weights as autocast (a Keras layer under a mixed policy).
    virtual bool autocasts_new_weights() const { return false; }

private:
    void track_module(std::shared_ptr<Module> submodule, std::string name = "");
    void collect(std::vector<Variable>& out, std::vector<int64_t>& seen) const;

    mutable std::string name_;  // resolved on first use when a user subclass gave none
    std::vector<Variable> variables_;
    std::vector<std::string> variable_names_;
    std::vector<std::shared_ptr<Module>> children_;
    std::vector<std::string> child_names_;
    mutable int open_scopes_ = 0;
};

namespace keras::detail {
/// Keras' to_snake_case: "MaxPooling2D" -> "max_pooling2d", "MyModel" -> "my_model".
std::string snake_case(std::string_view class_name);
/// Keras' unique object names: the first "dense" is "dense", then "dense_1", "dense_2", ...
std::string unique_name(const std::string& prefix);
/// The dynamic type's unqualified C++ class name ("MyModel").
std::string class_name_of(const Module& module);
}  // namespace keras::detail

}  // namespace tapeflow

TAPEFLOW_API_END
