// The TF1 optimizers: hyper-parameter validation, slots, and one fused training op per update
// (lib/ops/training_ops.cpp). Update rules: docs/optimizers.md.
#include <algorithm>

#include <fmt/format.h>

#include <tapeflow/ops/creation.hpp>
#include <tapeflow/ops/math.hpp>
#include <tapeflow/train/optimizers.hpp>

#include "autograd/variable_observers.hpp"
#include "ops/training_ops.hpp"

namespace tapeflow::train {

// ---- GradientDescent ----

GradientDescentOptimizer::GradientDescentOptimizer(LearningRate learning_rate,
                                                   GradientDescentOptimizerOptions options)
    : Optimizer(options.name, std::move(learning_rate), options.use_locking) {}

void GradientDescentOptimizer::apply_dense(const Variable& var, const Tensor& grad) {
    training::apply_dense(Op::apply_gradient_descent, var, {}, grad, Attrs().set("alpha", lr()));
}

void GradientDescentOptimizer::apply_sparse(const Variable& var, const IndexedSlices& grad) {
    training::apply_sparse(
        Op::sparse_apply_gradient_descent, var, {}, grad, Attrs().set("alpha", lr()));
}

// ---- Momentum ----

MomentumOptimizer::MomentumOptimizer(LearningRate learning_rate,
                                     double momentum,
                                     MomentumOptimizerOptions options)
    : Optimizer(options.name, std::move(learning_rate), options.use_locking),
      momentum_(momentum),
      nesterov_(options.use_nesterov) {}

void MomentumOptimizer::create_slots(const Variable& var) {
    slot(var, "momentum");
}

namespace {
Attrs momentum_attrs(double lr, double momentum, bool nesterov) {
    return Attrs().set("lr", lr).set("momentum", momentum).set("use_nesterov", nesterov);
}
}  // namespace

void MomentumOptimizer::apply_dense(const Variable& var, const Tensor& grad) {
    training::apply_dense(Op::apply_momentum,
                          var,
                          {slot(var, "momentum")},
                          grad,
                          momentum_attrs(lr(), momentum_, nesterov_));
}

void MomentumOptimizer::apply_sparse(const Variable& var, const IndexedSlices& grad) {
    training::apply_sparse(Op::sparse_apply_momentum,
                           var,
                           {slot(var, "momentum")},
                           grad,
                           momentum_attrs(lr(), momentum_, nesterov_));
}

// ---- Adagrad ----

AdagradOptimizer::AdagradOptimizer(LearningRate learning_rate, AdagradOptimizerOptions options)
    : Optimizer(options.name, std::move(learning_rate), options.use_locking),
      initial_accumulator_value_(options.initial_accumulator_value) {
    check_hyperparameter(
        initial_accumulator_value_ > 0,
        fmt::format("initial_accumulator_value must be positive: {}", initial_accumulator_value_));
}

void AdagradOptimizer::create_slots(const Variable& var) {
    slot(var, "accumulator", initial_accumulator_value_);
}

namespace {
Attrs adagrad_attrs(double lr, double epsilon, bool inside) {
    return Attrs().set("lr", lr).set("epsilon", epsilon).set("epsilon_inside_sqrt", inside);
}
}  // namespace

void AdagradOptimizer::apply_dense(const Variable& var, const Tensor& grad) {
    training::apply_dense(
        Op::apply_adagrad, var, {slot(var, "accumulator")}, grad, adagrad_attrs(lr(), 0.0, false));
}

void AdagradOptimizer::apply_sparse(const Variable& var, const IndexedSlices& grad) {
    training::apply_sparse(Op::sparse_apply_adagrad,
                           var,
                           {slot(var, "accumulator")},
                           grad,
                           adagrad_attrs(lr(), 0.0, false));
}

// ---- Adadelta ----

AdadeltaOptimizer::AdadeltaOptimizer(LearningRate learning_rate, AdadeltaOptimizerOptions options)
    : Optimizer(options.name, std::move(learning_rate), options.use_locking),
      rho_(options.rho),
      epsilon_(options.epsilon) {}

void AdadeltaOptimizer::create_slots(const Variable& var) {
    slot(var, "accum");
    slot(var, "accum_update");
}

void AdadeltaOptimizer::apply_dense(const Variable& var, const Tensor& grad) {
    training::apply_dense(Op::apply_adadelta,
                          var,
                          {slot(var, "accum"), slot(var, "accum_update")},
                          grad,
                          Attrs().set("lr", lr()).set("rho", rho_).set("epsilon", epsilon_));
}

void AdadeltaOptimizer::apply_sparse(const Variable& var, const IndexedSlices& grad) {
    training::apply_sparse(Op::sparse_apply_adadelta,
                           var,
                           {slot(var, "accum"), slot(var, "accum_update")},
                           grad,
                           Attrs().set("lr", lr()).set("rho", rho_).set("epsilon", epsilon_));
}

// ---- Adam ----

AdamOptimizer::AdamOptimizer(LearningRate learning_rate, AdamOptimizerOptions options)
    : Optimizer(options.name, std::move(learning_rate), options.use_locking),
      beta1_(options.beta1),
      beta2_(options.beta2),
      epsilon_(options.epsilon) {
    check_hyperparameter(beta1_ >= 0 && beta1_ < 1,
                         fmt::format("beta1 must be in [0, 1), got {}", beta1_));
    check_hyperparameter(beta2_ >= 0 && beta2_ < 1,
                         fmt::format("beta2 must be in [0, 1), got {}", beta2_));
    check_hyperparameter(epsilon_ >= 0,
                         fmt::format("epsilon must be non-negative, got {}", epsilon_));
}

void AdamOptimizer::create_slots(const Variable& var) {
    // One pair of powers per optimizer, in the dtype of the first variable (as TensorFlow does).
    non_slot("beta1_power", beta1_, var.dtype());
    non_slot("beta2_power", beta2_, var.dtype());
    slot(var, "m");
    slot(var, "v");
}

void AdamOptimizer::prepare() {
    beta1_power_ = non_slot("beta1_power").value().item<double>();
    beta2_power_ = non_slot("beta2_power").value().item<double>();
}

void AdamOptimizer::apply_dense(const Variable& var, const Tensor& grad) {
    training::apply_dense(Op::apply_adam,
                          var,
                          {slot(var, "m"), slot(var, "v")},
                          grad,
                          Attrs()
                              .set("lr", lr())
                              .set("beta1", beta1_)
                              .set("beta2", beta2_)
                              .set("epsilon", epsilon_)
                              .set("beta1_power", beta1_power_)
                              .set("beta2_power", beta2_power_));
}

namespace {
// power <- power·beta, computed on the host in the power's dtype (as TensorFlow's Mul would).
void advance_power(Variable power, double current, double beta) {
    const double next =
        power.dtype() == DType::float32
            ? static_cast<double>(static_cast<float>(current) * static_cast<float>(beta))
            : current * beta;
    power.assign(constant(next, power.dtype()));
}
}  // namespace

void AdamOptimizer::finish() {
    advance_power(non_slot("beta1_power"), beta1_power_, beta1_);
    advance_power(non_slot("beta2_power"), beta2_power_, beta2_);
}

// ---- Ftrl ----

FtrlOptimizer::FtrlOptimizer(LearningRate learning_rate, FtrlOptimizerOptions options)
    : Optimizer(options.name, std::move(learning_rate), options.use_locking),
      options_(std::move(options)) {
    const auto& o = options_;
    check_hyperparameter(o.initial_accumulator_value >= 0,
                         fmt::format("initial_accumulator_value {} needs to be positive or zero",
                                     o.initial_accumulator_value));
    check_hyperparameter(
        o.learning_rate_power <= 0,
        fmt::format("learning_rate_power {} needs to be negative or zero", o.learning_rate_power));
    check_hyperparameter(o.l1_regularization_strength >= 0,
                         fmt::format("l1_regularization_strength {} needs to be positive or zero",
                                     o.l1_regularization_strength));
    check_hyperparameter(o.l2_regularization_strength >= 0,
                         fmt::format("l2_regularization_strength {} needs to be positive or zero",
                                     o.l2_regularization_strength));
    check_hyperparameter(
        o.l2_shrinkage_regularization_strength >= 0,
        fmt::format("l2_shrinkage_regularization_strength {} needs to be positive or zero",
                    o.l2_shrinkage_regularization_strength));
    accum_name_ = o.accum_name.value_or("accum");
    linear_name_ = o.linear_name.value_or("linear");
}

void FtrlOptimizer::create_slots(const Variable& var) {
    // TF1 names a slot "<var>/<accum_name>" when one is given, else "<var>/<optimizer name>".
    auto named_slot =
        [&](const std::optional<std::string>& given, const std::string& slot_name, double initial) {
            if (!given || find_slot(var, slot_name)) return slot(var, slot_name, initial);
            const std::string key = var.name() + "/" + *given;
            const detail::CheckpointKeyScope scope(key);
            return slot(var, slot_name, initial);
        };
    named_slot(options_.accum_name, accum_name_, options_.initial_accumulator_value);
    named_slot(options_.linear_name, linear_name_, 0.0);
}

namespace {
// beta is folded into l2: l2 + beta / (2·lr).
Attrs ftrl_attrs(double lr, double power, double l1, double l2, double shrinkage, double beta) {
    return Attrs()
        .set("lr", lr)
        .set("l1", l1)
        .set("l2", l2 + beta / (2.0 * std::max(lr, 1e-36)))
        .set("l2_shrinkage", shrinkage)
        .set("lr_power", power);
}
}  // namespace

void FtrlOptimizer::apply_dense(const Variable& var, const Tensor& grad) {
    const auto& o = options_;
    training::apply_dense(Op::apply_ftrl,
                          var,
                          {slot(var, accum_name_), slot(var, linear_name_)},
                          grad,
                          ftrl_attrs(lr(),
                                     o.learning_rate_power,
                                     o.l1_regularization_strength,
                                     o.l2_regularization_strength,
                                     o.l2_shrinkage_regularization_strength,
                                     o.beta));
}

void FtrlOptimizer::apply_sparse(const Variable& var, const IndexedSlices& grad) {
    const auto& o = options_;
    training::apply_sparse(Op::sparse_apply_ftrl,
                           var,
                           {slot(var, accum_name_), slot(var, linear_name_)},
                           grad,
                           ftrl_attrs(lr(),
                                      o.learning_rate_power,
                                      o.l1_regularization_strength,
                                      o.l2_regularization_strength,
                                      o.l2_shrinkage_regularization_strength,
                                      o.beta));
}

// ---- RMSProp ----

RMSPropOptimizer::RMSPropOptimizer(LearningRate learning_rate, RMSPropOptimizerOptions options)
    : Optimizer(options.name, std::move(learning_rate), options.use_locking),
      options_(std::move(options)) {
    check_hyperparameter(options_.epsilon >= 0,
                         fmt::format("epsilon must be non-negative, got {}", options_.epsilon));
}

void RMSPropOptimizer::create_slots(const Variable& var) {
    slot(var, "rms", 1.0);  // TF1 starts the mean square at 1
    if (options_.centered) slot(var, "mg");
    slot(var, "momentum");
}

namespace {
Attrs rms_attrs(double lr, const RMSPropOptimizerOptions& o) {
    return Attrs()
        .set("lr", lr)
        .set("rho", o.decay)
        .set("momentum", o.momentum)
        .set("epsilon", o.epsilon);
}
}  // namespace

void RMSPropOptimizer::apply_dense(const Variable& var, const Tensor& grad) {
    if (options_.centered) {
        training::apply_dense(Op::apply_centered_rms_prop,
                              var,
                              {slot(var, "mg"), slot(var, "rms", 1.0), slot(var, "momentum")},
                              grad,
                              rms_attrs(lr(), options_));
    } else {
        training::apply_dense(Op::apply_rms_prop,
                              var,
                              {slot(var, "rms", 1.0), slot(var, "momentum")},
                              grad,
                              rms_attrs(lr(), options_));
    }
}

void RMSPropOptimizer::apply_sparse(const Variable& var, const IndexedSlices& grad) {
    if (options_.centered) {
        training::apply_sparse(Op::sparse_apply_centered_rms_prop,
                               var,
                               {slot(var, "mg"), slot(var, "rms", 1.0), slot(var, "momentum")},
                               grad,
                               rms_attrs(lr(), options_));
    } else {
        training::apply_sparse(Op::sparse_apply_rms_prop,
                               var,
                               {slot(var, "rms", 1.0), slot(var, "momentum")},
                               grad,
                               rms_attrs(lr(), options_));
    }
}

// ---- ProximalGradientDescent ----

ProximalGradientDescentOptimizer::ProximalGradientDescentOptimizer(
    LearningRate learning_rate, ProximalGradientDescentOptimizerOptions options)
    : Optimizer(options.name, std::move(learning_rate), options.use_locking),
      l1_(options.l1_regularization_strength),
      l2_(options.l2_regularization_strength) {
    check_hyperparameter(
        l1_ >= 0, fmt::format("l1_regularization_strength {} needs to be positive or zero", l1_));
    check_hyperparameter(
        l2_ >= 0, fmt::format("l2_regularization_strength {} needs to be positive or zero", l2_));
}

void ProximalGradientDescentOptimizer::apply_dense(const Variable& var, const Tensor& grad) {
    training::apply_dense(Op::apply_proximal_gradient_descent,
                          var,
                          {},
                          grad,
                          Attrs().set("alpha", lr()).set("l1", l1_).set("l2", l2_));
}

void ProximalGradientDescentOptimizer::apply_sparse(const Variable& var,
                                                    const IndexedSlices& grad) {
    training::apply_sparse(Op::sparse_apply_proximal_gradient_descent,
                           var,
                           {},
                           grad,
                           Attrs().set("alpha", lr()).set("l1", l1_).set("l2", l2_));
}

// ---- ProximalAdagrad ----

ProximalAdagradOptimizer::ProximalAdagradOptimizer(LearningRate learning_rate,
                                                   ProximalAdagradOptimizerOptions options)
    : Optimizer(options.name, std::move(learning_rate), options.use_locking),
      initial_accumulator_value_(options.initial_accumulator_value),
      l1_(options.l1_regularization_strength),
      l2_(options.l2_regularization_strength) {
    check_hyperparameter(
        initial_accumulator_value_ > 0,
        fmt::format("initial_accumulator_value must be positive: {}", initial_accumulator_value_));
    check_hyperparameter(
        l1_ >= 0, fmt::format("l1_regularization_strength {} needs to be positive or zero", l1_));
    check_hyperparameter(
        l2_ >= 0, fmt::format("l2_regularization_strength {} needs to be positive or zero", l2_));
}

void ProximalAdagradOptimizer::create_slots(const Variable& var) {
    slot(var, "accumulator", initial_accumulator_value_);
}

void ProximalAdagradOptimizer::apply_dense(const Variable& var, const Tensor& grad) {
    training::apply_dense(Op::apply_proximal_adagrad,
                          var,
                          {slot(var, "accumulator", initial_accumulator_value_)},
                          grad,
                          Attrs().set("lr", lr()).set("l1", l1_).set("l2", l2_));
}

void ProximalAdagradOptimizer::apply_sparse(const Variable& var, const IndexedSlices& grad) {
    training::apply_sparse(Op::sparse_apply_proximal_adagrad,
                           var,
                           {slot(var, "accumulator", initial_accumulator_value_)},
                           grad,
                           Attrs().set("lr", lr()).set("l1", l1_).set("l2", l2_));
}

}  // namespace tapeflow::train
