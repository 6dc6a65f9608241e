// tf::train::Optimizer: gradients under a tape, the apply loop (slots -> prepare -> updates in list
// order -> finish -> iterations and global_step), the slot map, and gate_none's streaming minimize.
#include <algorithm>
#include <cmath>
#include <mutex>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <tapeflow/core/logging.hpp>
#include <tapeflow/ops/array.hpp>
#include <tapeflow/ops/creation.hpp>
#include <tapeflow/train/optimizer.hpp>
#include <tapeflow/train/training_util.hpp>

#include "autograd/tape.hpp"
#include "autograd/variable_observers.hpp"
#include "profiler/hooks.hpp"
#include "train/remote_apply.hpp"
#include "train/traced_apply.hpp"

namespace tapeflow::train {
namespace {

// Names of the live optimizers: a second "Adam" becomes "Adam_1", as variable names do.
struct NameRegistry {
    std::mutex mutex;
    std::multiset<std::string> live;
    std::map<std::string, Optimizer*, std::less<>> by_name;  // parameter servers look them up
};

NameRegistry& names() {
    static NameRegistry r;
    return r;
}

std::string claim_name(std::string_view base) {
    NameRegistry& r = names();
    const std::lock_guard lock(r.mutex);
    std::string name(base);
    for (int k = 1; r.live.count(name) != 0; ++k)
        name = fmt::format("{}_{}", base, k);
    r.live.insert(name);
    return name;
}

std::string quoted_names(const std::vector<Variable>& vars) {
    std::vector<std::string> q;
    q.reserve(vars.size());
    for (const Variable& v : vars)
        q.push_back(fmt::format("'{}'", v.name()));
    return fmt::format("[{}]", fmt::join(q, ", "));
}

void check_loss_fn(const std::function<Tensor()>& loss_fn) {
    if (!loss_fn) {
        throw errors::RuntimeError(
            "`loss` passed to Optimizer.compute_gradients should be a function when eager "
            "execution "
            "is enabled.");
    }
}

}  // namespace

void check_loss(const Tensor& loss) {
    if (!loss.defined())
        throw errors::InvalidArgumentError("The loss function returned an undefined tensor");
    if (!is_floating(loss.dtype())) {
        throw errors::InvalidArgumentError(fmt::format(
            "Invalid type {} for loss, expected one of [float16, bfloat16, float32, float64].",
            dtype_name(loss.dtype())));
    }
}

void check_hyperparameter(bool ok, const std::string& message) {
    if (!ok) throw errors::InvalidArgumentError(message);
}

void check_learning_rate(const LearningRate& learning_rate) {
    if (!learning_rate.is_constant()) return;
    const double lr = learning_rate(0);
    check_hyperparameter(std::isfinite(lr) && lr >= 0,
                         fmt::format("learning_rate must be a non-negative number, got {}", lr));
}

Optimizer::Optimizer(std::string_view name, LearningRate learning_rate, bool /*use_locking: every
                     apply of one optimizer is serialized (mutex_), whatever it says*/)
    : learning_rate_(std::move(learning_rate)) {
    check_hyperparameter(!name.empty(), "Must specify the optimizer name");
    check_learning_rate(learning_rate_);
    name_ = claim_name(name);
    NameRegistry& r = names();
    const std::lock_guard lock(r.mutex);
    r.by_name[name_] = this;
}

Optimizer::~Optimizer() {
    NameRegistry& r = names();
    const std::lock_guard lock(r.mutex);
    if (auto it = r.live.find(name_); it != r.live.end()) r.live.erase(it);
    if (auto it = r.by_name.find(name_); it != r.by_name.end() && it->second == this)
        r.by_name.erase(it);
}

Optimizer* find_live_optimizer(std::string_view name) {
    NameRegistry& r = names();
    const std::lock_guard lock(r.mutex);
    auto it = r.by_name.find(name);
    return it == r.by_name.end() ? nullptr : it->second;
}

std::vector<GradAndVar> Optimizer::compute_gradients(const std::function<Tensor()>& loss_fn,
                                                     std::vector<Variable> var_list,
                                                     GateGradients /*every gate computes all here*/,
                                                     AggregationMethod aggregation_method) {
    check_loss_fn(loss_fn);
    GradientTape tape;
    if (!var_list.empty()) tape.watch(var_list);
    const Tensor loss = loss_fn();
    check_loss(loss);
    if (var_list.empty()) var_list = tape.watched_variables();
    if (var_list.empty()) throw errors::InvalidArgumentError("No variables to optimize.");
    GradientOptions options;
    options.aggregation_method = aggregation_method;
    const std::vector<Gradient> grads = tape.gradient(loss, var_list, options);
    std::vector<GradAndVar> pairs;
    pairs.reserve(var_list.size());
    for (std::size_t i = 0; i < var_list.size(); ++i)
        pairs.push_back({grads[i], var_list[i]});
    return pairs;
}

void Optimizer::begin_apply(const std::optional<Variable>& global_step) {
    if (global_step) {
        const bool integer = global_step->defined() && (global_step->dtype() == DType::int64 ||
                                                        global_step->dtype() == DType::int32);
        if (!integer || global_step->shape().rank() != 0) {  // TF1 accepts tf.Variable(0) (int32)
            throw errors::InvalidArgumentError(
                fmt::format("global_step must be an int32 or int64 scalar variable, got {}",
                            global_step->defined() ? fmt::format("'{}' of dtype {} and shape {}",
                                                                 global_step->name(),
                                                                 dtype_name(global_step->dtype()),
                                                                 global_step->shape().str())
                                                   : std::string("an empty handle")));
        }
    }
    if (keras_style()) {
        // Keras keeps the counter in a variable: a restored checkpoint (or a deferred restore at
        // its creation here) sets it.
        iterations_ = non_slot("iteration", 0.0, DType::int64).value().item<int64_t>();
    }
    lr_step_ = global_step ? train::global_step(*global_step) : iterations_;
    current_lr_ = learning_rate_(lr_step_);
    applied_ = true;
}

void Optimizer::update(const Variable& var, const Gradient& grad) {
    const profiler::detail::FrameworkSpan span(
        [&] { return fmt::format("{}/update/{}", name(), var.name()); });
    before_update(var);
    if (grad.is_sparse()) {
        apply_sparse(var, grad.sparse());
    } else {
        apply_dense(var, grad.dense());
    }
}

void Optimizer::end_apply(const std::vector<Variable>& updated,
                          const std::optional<Variable>& global_step) {
    finish();
    after_updates(updated);
    ++iterations_;
    if (auto it = non_slots_.find("iteration"); it != non_slots_.end()) {
        Variable(it->second).assign(constant(iterations_));  // a handle copy: same variable
    }
    if (global_step) {  // a handle copy: the same variable
        Variable(*global_step).assign_add(constant(int64_t{1}, global_step->dtype()));
    }
}

void Optimizer::apply_sparse(const Variable& var, const IndexedSlices& grad) {
    // Non-lazy: the dense rule with zeros in the rows the slices do not list (dense_shape is not
    // trusted: the variable's shape governs, as in TensorFlow).
    apply_dense(var, unsorted_segment_sum(grad.values, grad.indices, var.shape()[0]));
}

void Optimizer::apply_gradients(const std::vector<GradAndVar>& grads_and_vars,
                                std::optional<Variable> global_step) {
    if (grads_and_vars.empty()) throw errors::InvalidArgumentError("No variables provided.");
    if (tapeflow::detail::apply_as_host_step(*this, grads_and_vars, global_step)) return;
    if (detail::apply_remotely(*this, grads_and_vars, global_step)) return;
    std::vector<Variable> all;
    for (const GradAndVar& p : grads_and_vars) {
        if (!p.variable.defined())
            throw errors::InvalidArgumentError("apply_gradients: a variable handle is empty");
        all.push_back(p.variable);
    }
    const std::vector<GradAndVar> pairs = transform_gradients(grads_and_vars);
    std::vector<GradAndVar> present;
    std::vector<Variable> missing;
    for (const GradAndVar& p : pairs) {
        if (p.gradient.defined()) {
            present.push_back(p);
        } else {
            missing.push_back(p.variable);
        }
    }
    if (present.empty()) {
        if (keras_style())
            throw errors::InvalidArgumentError("No gradients provided for any variable.");
        throw errors::InvalidArgumentError(
            fmt::format("No gradients provided for any variable: {}.", quoted_names(all)));
    }
    if (keras_style() && !missing.empty()) {
        logging::warn("Gradients do not exist for variables {} when minimizing the loss.",
                      quoted_names(missing));
    }
    const std::lock_guard lock(mutex_);
    const profiler::detail::FrameworkSpan span(
        [&] { return fmt::format("{}.apply_gradients", name()); });
    begin_apply(global_step);
    for (const GradAndVar& p : present)
        create_slots(p.variable);
    prepare();
    std::vector<Variable> updated;
    for (const GradAndVar& p : present) {
        update(p.variable, p.gradient);
        updated.push_back(p.variable);
    }
    end_apply(updated, global_step);
}

Tensor Optimizer::minimize(const std::function<Tensor()>& loss_fn,
                           std::vector<Variable> var_list,
                           std::optional<Variable> global_step,
                           GateGradients gate_gradients,
                           AggregationMethod aggregation_method) {
    if (gate_gradients == GateGradients::gate_none && !needs_all_gradients() &&
        !detail::remote_apply_installed()) {
        return minimize_streaming(loss_fn, std::move(var_list), global_step, aggregation_method);
    }
    check_loss_fn(loss_fn);
    Tensor loss;
    std::vector<GradAndVar> pairs;
    {
        GradientTape tape;
        if (!var_list.empty()) tape.watch(var_list);
        loss = loss_fn();
        check_loss(loss);
        if (var_list.empty()) var_list = tape.watched_variables();
        if (var_list.empty()) throw errors::InvalidArgumentError("No variables to optimize.");
        GradientOptions options;
        options.aggregation_method = aggregation_method;
        const std::vector<Gradient> grads = tape.gradient(loss, var_list, options);
        for (std::size_t i = 0; i < var_list.size(); ++i)
            pairs.push_back({grads[i], var_list[i]});
    }
    const bool any = std::any_of(
        pairs.begin(), pairs.end(), [](const GradAndVar& p) { return p.gradient.defined(); });
    if (!any && !keras_style()) {
        throw errors::InvalidArgumentError(fmt::format(
            "No gradients provided for any variable, check your graph for ops that do not support "
            "gradients, between variables {} and loss {}.",
            quoted_names(var_list),
            loss.str()));
    }
    apply_gradients(pairs, global_step);
    return loss;
}

Tensor Optimizer::minimize_streaming(const std::function<Tensor()>& loss_fn,
                                     std::vector<Variable> var_list,
                                     const std::optional<Variable>& global_step,
                                     AggregationMethod aggregation_method) {
    check_loss_fn(loss_fn);
    GradientTape tape;
    if (!var_list.empty()) tape.watch(var_list);
    const Tensor loss = loss_fn();
    check_loss(loss);
    if (var_list.empty()) var_list = tape.watched_variables();
    if (var_list.empty()) throw errors::InvalidArgumentError("No variables to optimize.");
    // The updates interleave with the backward walk: the walk runs under the lock too.
    const std::lock_guard lock(mutex_);
    begin_apply(global_step);
    GradientOptions options;
    options.aggregation_method = aggregation_method;
    std::vector<Variable> updated;
    bool prepared = false;
    // Each variable is updated the moment its gradient is final; the gradient dies right after.
    stream_gradients(tape, loss, var_list, options, [&](std::size_t i, const Gradient& g) {
        if (!g.defined()) return;
        const Variable& var = var_list[i];
        const Gradient grad = transform_gradients({{g, var}})[0].gradient;  // per-tensor clipping
        create_slots(var);
        if (!prepared) {
            prepare();
            prepared = true;
        }
        update(var, grad);
        updated.push_back(var);
    });
    if (updated.empty()) {
        if (keras_style())
            throw errors::InvalidArgumentError("No gradients provided for any variable.");
        throw errors::InvalidArgumentError(fmt::format(
            "No gradients provided for any variable, check your graph for ops that do not support "
            "gradients, between variables {} and loss {}.",
            quoted_names(var_list),
            loss.str()));
    }
    end_apply(updated, global_step);
    return loss;
}

std::optional<Variable> Optimizer::find_slot(const Variable& var,
                                             std::string_view slot_name) const {
    if (!var.defined()) return std::nullopt;
    const std::lock_guard lock(mutex_);
    auto it = slots_.find({var.id(), std::string(slot_name)});
    if (it == slots_.end()) return std::nullopt;
    return it->second;
}

std::optional<Variable> Optimizer::get_slot(const Variable& var, std::string_view slot_name) const {
    return find_slot(var, slot_name);
}

Variable Optimizer::slot(const Variable& var, std::string_view slot_name, double initial) {
    const std::lock_guard lock(mutex_);  // two threads asking for a new slot create it once
    if (auto s = find_slot(var, slot_name)) return *s;
    Tensor init;
    {
        const DeviceScope device(var.device());
        init = fill(var.shape(), initial, var.dtype());
    }
    const NameScope scope(fmt::format("{}/{}/", var.name(), name_));  // absolute: ends with '/'
    // TF1's key (the Saver's TensorFlow format): "<var>/<optimizer>" for the first slot of var,
    // then "<var>/<optimizer>_1", ... in creation order, as TF1's slot_creator names them.
    std::string key;
    std::optional<detail::CheckpointKeyScope> key_scope;
    if (!keras_style() && !detail::checkpoint_key_scope_active()) {
        key = fmt::format("{}/{}", var.name(), name_);
        int64_t taken = 0;
        for (const auto& [owner, other] : slots_) {
            const std::string& k = detail::checkpoint_key(other);
            if (owner.first == var.id() && (k == key || k.starts_with(key + "_"))) ++taken;
        }
        if (taken > 0) key += fmt::format("_{}", taken);
        key_scope.emplace(key);
    }
    Variable s(init, {.name = std::string(slot_name), .trainable = false});
    slots_.emplace(std::make_pair(var.id(), std::string(slot_name)), s);
    return s;
}

Variable Optimizer::non_slot(std::string_view name, double initial, DType dtype) {
    const std::lock_guard lock(mutex_);
    if (auto it = non_slots_.find(name); it != non_slots_.end()) return it->second;
    const NameScope scope(name_ + "/");
    // TF1's key: the state's own name ("beta1_power"; "beta1_power_1" for a second optimizer).
    const std::string key(name);
    std::optional<detail::CheckpointKeyScope> key_scope;
    if (!keras_style()) key_scope.emplace(key);
    Variable v(constant(initial, dtype), {.name = std::string(name), .trainable = false});
    non_slots_.emplace(std::string(name), v);
    return v;
}

Variable Optimizer::non_slot(std::string_view name) const {
    const std::lock_guard lock(mutex_);
    auto it = non_slots_.find(name);
    if (it == non_slots_.end()) {
        throw errors::InternalError(
            fmt::format("optimizer {} has no state '{}'; this is a tapeflow bug", name_, name));
    }
    return it->second;
}

std::vector<std::string> Optimizer::get_slot_names() const {
    std::set<std::string> unique;
    const std::lock_guard lock(mutex_);
    for (const auto& [key, var] : slots_)
        unique.insert(key.second);
    return {unique.begin(), unique.end()};
}

int64_t Optimizer::iterations() const {
    const std::lock_guard lock(mutex_);
    if (auto it = non_slots_.find("iteration"); it != non_slots_.end())
        return it->second.value().item<int64_t>();
    return iterations_;
}

double Optimizer::current_learning_rate() const {
    const std::lock_guard lock(mutex_);
    return applied_ ? current_lr_ : learning_rate_(iterations());
}

void Optimizer::set_learning_rate(LearningRate learning_rate) {
    check_learning_rate(learning_rate);
    const std::lock_guard lock(mutex_);
    learning_rate_ = std::move(learning_rate);
    current_lr_ = learning_rate_(iterations());
}

std::vector<Variable> Optimizer::variables() const {
    std::vector<Variable> out;
    const std::lock_guard lock(mutex_);
    for (const auto& [key, var] : slots_)
        out.push_back(var);
    for (const auto& [key, var] : non_slots_)
        out.push_back(var);
    std::sort(out.begin(), out.end(), [](const Variable& a, const Variable& b) {
        return a.name() < b.name();
    });
    return out;
}

}  // namespace tapeflow::train
