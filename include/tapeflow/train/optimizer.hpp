// tf::train::Optimizer: the base of every optimizer (TF1 tf.compat.v1.train and Keras families):
// computes gradients under a tape, applies them with each optimizer's fused update, and keeps the
// slots in a map keyed by (variable id, slot name).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <tapeflow/autograd/gradient.hpp>
#include <tapeflow/autograd/gradient_tape.hpp>
#include <tapeflow/autograd/variable.hpp>
#include <tapeflow/core/export.hpp>
#include <tapeflow/train/learning_rate.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow::train {

struct GradAndVar {
    Gradient gradient;
    Variable variable;
};

/// TensorFlow's gate_gradients. In tapeflow gate_op and gate_graph compute every gradient before
/// the first update; gate_none (minimize only) updates each variable as soon as its gradient is
/// final during the backward walk and frees that gradient at once. All three give the same result.
enum class GateGradients { gate_none, gate_op, gate_graph };

class Optimizer {
public:
    // The public entry points are virtual so that a wrapper (tf::distribute::DistributedOptimizer)
    // can stand in for the optimizer it wraps.
    virtual ~Optimizer();
    Optimizer(const Optimizer&) = delete;
    Optimizer& operator=(const Optimizer&) = delete;

    /// Unique among live optimizers, like variable names: a second "Adam" is "Adam_1".
    const std::string& name() const { return name_; }

    /// Runs `loss_fn` under a GradientTape and returns one (gradient, variable) pair per variable
    /// of var_list (default: the trainable variables loss_fn read); gradients may be undefined.
    virtual std::vector<GradAndVar> compute_gradients(
        const std::function<Tensor()>& loss_fn,
        std::vector<Variable> var_list = {},
        GateGradients gate_gradients = GateGradients::gate_op,
        AggregationMethod aggregation_method = AggregationMethod::default_);

    /// Applies the gradients in list order; undefined gradients are skipped (InvalidArgumentError
    /// "No gradients provided for any variable: ..." when all are). `global_step` (an int64 scalar
    /// variable) is incremented once after all updates.
    virtual void apply_gradients(const std::vector<GradAndVar>& grads_and_vars,
                                 std::optional<Variable> global_step = {});

    /// compute_gradients + apply_gradients; returns the loss.
    virtual Tensor minimize(const std::function<Tensor()>& loss_fn,
                            std::vector<Variable> var_list = {},
                            std::optional<Variable> global_step = {},
                            GateGradients gate_gradients = GateGradients::gate_op,
                            AggregationMethod aggregation_method = AggregationMethod::default_);

    /// The slot variable, or nullopt for an unknown variable or slot name.
    virtual std::optional<Variable> get_slot(const Variable& var, std::string_view slot_name) const;
    /// The names of the slots created so far, sorted.
    virtual std::vector<std::string> get_slot_names() const;
    /// apply_gradients calls so far. The Keras family keeps it in an int64 state variable
    /// "<optimizer name>/iteration" (as Keras 3 does), so checkpoints save and restore it.
    virtual int64_t iterations() const;
    /// The learning rate of the last apply_gradients (before the first: the value at iterations()).
    virtual double current_learning_rate() const;
    /// Replaces the learning rate (Keras' `optimizer.learning_rate = x`, used by the Keras
    /// callbacks ReduceLROnPlateau and LearningRateScheduler).
    virtual void set_learning_rate(LearningRate learning_rate);
    /// Slots and non-slot state (e.g. Adam's beta1_power), sorted by name: what checkpoints save.
    virtual std::vector<Variable> variables() const;

protected:
    Optimizer(std::string_view name, LearningRate learning_rate, bool use_locking);

    // ---- what an optimizer implements ----

    /// Creates the slots of `var` (on its first update; called before prepare()).
    virtual void create_slots(const Variable& var) { (void)var; }
    /// Once per apply, before any update: read hyper-parameters (lr() is set).
    virtual void prepare() {}
    /// Updates `var` with a dense gradient of its shape and dtype.
    virtual void apply_dense(const Variable& var, const Tensor& grad) = 0;
    /// Updates `var` with IndexedSlices; default: the dense rule on the densified gradient (right
    /// for non-lazy optimizers such as Adam).
    virtual void apply_sparse(const Variable& var, const IndexedSlices& grad);
    /// Once per apply, after every update (Adam advances its beta powers here).
    virtual void finish() {}

    // ---- hooks of the Keras family ----

    /// Keras: no global-step argument; None gradients are dropped with a warning.
    virtual bool keras_style() const { return false; }
    /// Gradient transformation before any update (Keras clipping).
    virtual std::vector<GradAndVar> transform_gradients(std::vector<GradAndVar> pairs) {
        return pairs;
    }
    /// True when transform_gradients needs all gradients at once (gate_none then computes all).
    virtual bool needs_all_gradients() const { return false; }
    /// Right before `var`'s update (Keras weight decay).
    virtual void before_update(const Variable& var) { (void)var; }
    /// After all updates, before iterations += 1 (Keras EMA); `updated` lists the variables.
    virtual void after_updates(const std::vector<Variable>& updated) { (void)updated; }

    // ---- helpers ----

    /// The slot `slot_name` of `var`, created with `initial` (every element) on first use; named
    /// "<var name>/<optimizer name>/<slot_name>", non-trainable, var's shape, dtype and device.
    Variable slot(const Variable& var, std::string_view slot_name, double initial = 0.0);
    /// The slot if it exists.
    std::optional<Variable> find_slot(const Variable& var, std::string_view slot_name) const;
    /// Optimizer-wide scalar state "<optimizer name>/<name>", created with `initial` in `dtype` on
    /// first use.
    Variable non_slot(std::string_view name, double initial, DType dtype);
    /// An existing non-slot variable (InternalError when missing: create it in create_slots).
    Variable non_slot(std::string_view name) const;
    /// The learning rate of the current apply.
    double lr() const { return current_lr_; }
    /// The step the learning rate is evaluated at in the current apply.
    int64_t lr_step() const { return lr_step_; }

private:
    void begin_apply(const std::optional<Variable>& global_step);
    void update(const Variable& var, const Gradient& grad);
    void end_apply(const std::vector<Variable>& updated,
                   const std::optional<Variable>& global_step);
    Tensor minimize_streaming(const std::function<Tensor()>& loss_fn,
                              std::vector<Variable> var_list,
                              const std::optional<Variable>& global_step,
                              AggregationMethod aggregation_method);

    std::string name_;
    LearningRate learning_rate_;
    // Held for a whole apply (bookkeeping, slot creation and updates) and by every reader of the
    // state below: an optimizer shared by threads applies one step at a time. Recursive: the
    // hooks run under it and read iterations() and the slots.
    mutable std::recursive_mutex mutex_;
    std::map<std::pair<int64_t, std::string>, Variable> slots_;
    std::map<std::string, Variable, std::less<>> non_slots_;
    int64_t iterations_ = 0;
    double current_lr_ = 0;
    int64_t lr_step_ = 0;
    bool applied_ = false;
};

/// Validation shared by the optimizers' constructors: InvalidArgumentError with `message` unless
/// ok.
void check_hyperparameter(bool ok, const std::string& message);
/// A constant learning rate must be a non-negative finite number.
void check_learning_rate(const LearningRate& learning_rate);
/// A loss must be a defined floating tensor (InvalidArgumentError with TensorFlow's message).
void check_loss(const Tensor& loss);

}  // namespace tapeflow::train

TAPEFLOW_API_END
