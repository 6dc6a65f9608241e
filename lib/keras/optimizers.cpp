// The Keras 3 optimizers: validation with Keras' messages, Keras slot names and initial values,
// clipping / weight decay / EMA around the same fused training ops as tf::train.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include <tapeflow/keras/optimizers.hpp>
#include <tapeflow/ops/clip.hpp>
#include <tapeflow/ops/creation.hpp>
#include <tapeflow/ops/math.hpp>

#include "ops/training_ops.hpp"

namespace tapeflow::keras::optimizers {

using train::check_hyperparameter;

namespace {

std::string opt_str(const std::optional<double>& v) {
    return v ? fmt::format("{}", *v) : "None";
}

void check_common(const CommonOptions& c) {
    const int clips = int(c.clipnorm.has_value()) + int(c.clipvalue.has_value()) +
                      int(c.global_clipnorm.has_value());
    check_hyperparameter(
        clips <= 1,
        fmt::format("Only one of `clipnorm`, `clipvalue` and `global_clipnorm` can be "
                    "set. Received: clipnorm={}, clipvalue={}, global_clipnorm={}",
                    opt_str(c.clipnorm),
                    opt_str(c.clipvalue),
                    opt_str(c.global_clipnorm)));
    if (c.use_ema) {
        check_hyperparameter(
            c.ema_momentum >= 0 && c.ema_momentum <= 1,
            fmt::format("`ema_momentum` must be in the range [0, 1]. Received: ema_momentum={}",
                        c.ema_momentum));
        check_hyperparameter(
            !c.ema_overwrite_frequency || *c.ema_overwrite_frequency >= 1,
            fmt::format("`ema_overwrite_frequency` must be an integer >= 1 or None. Received: "
                        "ema_overwrite_frequency={}",
                        c.ema_overwrite_frequency.value_or(0)));
    }
    check_hyperparameter(
        !c.weight_decay || *c.weight_decay >= 0,
        fmt::format("`weight_decay` must be non-negative. Received: weight_decay={}",
                    opt_str(c.weight_decay)));
}

void check_beta(const char* name, double beta) {
    check_hyperparameter(beta >= 0 && beta < 1,
                         fmt::format("`{}` must be in [0, 1). Received: {}={}", name, name, beta));
}

Attrs adam_attrs(double lr, double beta_1, double beta_2, double epsilon, double t) {
    return Attrs()
        .set("lr", lr)
        .set("beta1", beta_1)
        .set("beta2", beta_2)
        .set("epsilon", epsilon)
        .set("beta1_power", std::pow(beta_1, t))
        .set("beta2_power", std::pow(beta_2, t));
}

}  // namespace

// ---- the Keras base ----

Optimizer::Optimizer(LearningRate learning_rate, const CommonOptions& common)
    : train::Optimizer(common.name, std::move(learning_rate), false), common_(common) {
    check_common(common_);
}

void Optimizer::exclude_from_weight_decay(const std::vector<Variable>& var_list,
                                          const std::vector<std::string>& var_names) {
    for (const Variable& v : var_list)
        excluded_ids_.push_back(v.id());
    excluded_names_.insert(excluded_names_.end(), var_names.begin(), var_names.end());
}

std::vector<train::GradAndVar> Optimizer::transform_gradients(
    std::vector<train::GradAndVar> pairs) {
    if (common_.clipnorm) {
        for (auto& p : pairs) {
            if (p.gradient.defined()) p.gradient = clip_by_norm(p.gradient, *common_.clipnorm);
        }
    } else if (common_.clipvalue) {
        for (auto& p : pairs) {
            if (p.gradient.defined())
                p.gradient = clip_by_value(p.gradient, -*common_.clipvalue, *common_.clipvalue);
        }
    } else if (common_.global_clipnorm) {
        std::vector<Gradient> grads;
        for (const auto& p : pairs)
            grads.push_back(p.gradient);
        const auto clipped = clip_by_global_norm(grads, *common_.global_clipnorm).first;
        for (std::size_t i = 0; i < pairs.size(); ++i)
            pairs[i].gradient = clipped[i];
    }
    return pairs;
}

void Optimizer::before_update(const Variable& var) {
    if (!common_.weight_decay || *common_.weight_decay == 0) return;
    if (std::find(excluded_ids_.begin(), excluded_ids_.end(), var.id()) != excluded_ids_.end())
        return;
    for (const std::string& n : excluded_names_) {
        if (var.name().find(n) != std::string::npos) return;
    }
    // var -= var·weight_decay·lr: the gradient-descent op with the variable as its own gradient.
    training::apply_dense(Op::apply_gradient_descent,
                          var,
                          {},
                          var.value(),
                          Attrs().set("alpha", lr() * *common_.weight_decay));
}

void Optimizer::after_updates(const std::vector<Variable>& updated) {
    if (!common_.use_ema) return;
    // average = m·average + (1 − m)·var with m = 0 on the first step (the average starts as var).
    const double m = iterations() == 0 ? 0.0 : common_.ema_momentum;
    const bool overwrite = common_.ema_overwrite_frequency &&
                           (iterations() + 1) % *common_.ema_overwrite_frequency == 0;
    for (const Variable& v : updated) {
        Variable average = slot(v, "average");
        average.assign(average.value() * m + v.value() * (1.0 - m));
        if (overwrite) Variable(v).assign(average.value());
    }
}

// ---- SGD ----

SGD::SGD(SGDOptions o)
    : Optimizer(o.learning_rate, CommonOptions::of(o)),
      momentum_(o.momentum),
      nesterov_(o.nesterov) {
    check_hyperparameter(
        momentum_ >= 0 && momentum_ <= 1,
        fmt::format("`momentum` must be a float between [0, 1]. Received: momentum={}", momentum_));
}

void SGD::create_slots(const Variable& var) {
    if (momentum_ > 0) slot(var, "momentum");
}

void SGD::apply_dense(const Variable& var, const Tensor& grad) {
    if (momentum_ > 0) {
        training::apply_dense(
            Op::apply_keras_momentum,
            var,
            {slot(var, "momentum")},
            grad,
            Attrs().set("lr", lr()).set("momentum", momentum_).set("use_nesterov", nesterov_));
    } else {
        training::apply_dense(
            Op::apply_gradient_descent, var, {}, grad, Attrs().set("alpha", lr()));
    }
}

void SGD::apply_sparse(const Variable& var, const IndexedSlices& grad) {
    if (momentum_ > 0) {
        Optimizer::apply_sparse(var, grad);
    } else {
        training::apply_sparse(
            Op::sparse_apply_gradient_descent, var, {}, grad, Attrs().set("alpha", lr()));
    }
}

// ---- RMSprop ----

RMSprop::RMSprop(RMSpropOptions o)
    : Optimizer(o.learning_rate, CommonOptions::of(o)),
      rho_(o.rho),
      momentum_(o.momentum),
      epsilon_(o.epsilon),
      centered_(o.centered) {
    check_hyperparameter(
        momentum_ >= 0,
        fmt::format("`momentum` must be non-negative. Received: momentum={}", momentum_));
}

void RMSprop::create_slots(const Variable& var) {
    slot(var, "velocity");
    if (momentum_ > 0) slot(var, "momentum");
    if (centered_) slot(var, "average_gradient");
}

void RMSprop::apply_dense(const Variable& var, const Tensor& grad) {
    const Attrs attrs = Attrs()
                            .set("lr", lr())
                            .set("rho", rho_)
                            .set("momentum", momentum_)
                            .set("epsilon", epsilon_);
    const Variable ms = slot(var, "velocity");
    if (momentum_ > 0 && centered_) {
        training::apply_dense(Op::apply_centered_rms_prop,
                              var,
                              {slot(var, "average_gradient"), ms, slot(var, "momentum")},
                              grad,
                              attrs);
    } else if (momentum_ > 0) {
        training::apply_dense(Op::apply_rms_prop, var, {ms, slot(var, "momentum")}, grad, attrs);
    } else if (centered_) {
        training::apply_dense(Op::apply_keras_centered_rms_prop,
                              var,
                              {ms, slot(var, "average_gradient")},
                              grad,
                              attrs);
    } else {
        training::apply_dense(Op::apply_keras_rms_prop, var, {ms}, grad, attrs);
    }
}

// ---- Adam, AdamW ----

Adam::Adam(AdamOptions o)
    : Adam(o.learning_rate, o.beta_1, o.beta_2, o.epsilon, o.amsgrad, CommonOptions::of(o)) {}

Adam::Adam(LearningRate learning_rate,
           double beta_1,
           double beta_2,
           double epsilon,
           bool amsgrad,
           const CommonOptions& common)
    : Optimizer(std::move(learning_rate), common),
      beta_1_(beta_1),
      beta_2_(beta_2),
      epsilon_(epsilon),
      amsgrad_(amsgrad) {
    check_beta("beta_1", beta_1_);
    check_beta("beta_2", beta_2_);
}

void Adam::create_slots(const Variable& var) {
    slot(var, "momentum");
    slot(var, "velocity");
    if (amsgrad_) slot(var, "velocity_hat");
}

void Adam::apply_dense(const Variable& var, const Tensor& grad) {
    const Attrs attrs = adam_attrs(lr(), beta_1_, beta_2_, epsilon_, local_step());
    if (amsgrad_) {
        training::apply_dense(
            Op::apply_adam_with_amsgrad,
            var,
            {slot(var, "momentum"), slot(var, "velocity"), slot(var, "velocity_hat")},
            grad,
            attrs);
    } else {
        training::apply_dense(
            Op::apply_adam, var, {slot(var, "momentum"), slot(var, "velocity")}, grad, attrs);
    }
}

namespace {
CommonOptions adamw_common(const AdamWOptions& o) {
    check_hyperparameter(o.weight_decay.has_value(),
                         "Argument `weight_decay` must be a float. Received: weight_decay=None");
    return CommonOptions::of(o);
}
}  // namespace

AdamW::AdamW(AdamWOptions o)
    : Adam(o.learning_rate, o.beta_1, o.beta_2, o.epsilon, o.amsgrad, adamw_common(o)) {}

// ---- Adamax ----

Adamax::Adamax(AdamaxOptions o)
    : Optimizer(o.learning_rate, CommonOptions::of(o)),
      beta_1_(o.beta_1),
      beta_2_(o.beta_2),
      epsilon_(o.epsilon) {
    check_beta("beta_1", beta_1_);
    check_beta("beta_2", beta_2_);
}

void Adamax::create_slots(const Variable& var) {
    slot(var, "momentum");
    slot(var, "norm");
}

void Adamax::apply_dense(const Variable& var, const Tensor& grad) {
    training::apply_dense(Op::apply_ada_max,
                          var,
                          {slot(var, "momentum"), slot(var, "norm")},
                          grad,
                          Attrs()
                              .set("lr", lr())
                              .set("beta1", beta_1_)
                              .set("beta2", beta_2_)
                              .set("epsilon", epsilon_)
                              .set("beta1_power", std::pow(beta_1_, local_step())));
}

// ---- Nadam ----

Nadam::Nadam(NadamOptions o)
    : Optimizer(o.learning_rate, CommonOptions::of(o)),
      beta_1_(o.beta_1),
      beta_2_(o.beta_2),
      epsilon_(o.epsilon) {
    check_beta("beta_1", beta_1_);
    check_beta("beta_2", beta_2_);
}

void Nadam::create_slots(const Variable& var) {
    non_slot("u_product", 1.0, var.dtype());
    slot(var, "momentum");
    slot(var, "velocity");
}

void Nadam::prepare() {
    // Once per apply, before any variable: P *= u_t (the momentum schedule 0.96^t).
    const double t = local_step();
    u_t_ = beta_1_ * (1.0 - 0.5 * std::pow(0.96, t));
    u_t1_ = beta_1_ * (1.0 - 0.5 * std::pow(0.96, t + 1));
    Variable product = non_slot("u_product");
    product.assign(product.value() * u_t_);
    u_product_ = product.value().item<double>();
}

void Nadam::apply_dense(const Variable& var, const Tensor& grad) {
    training::apply_dense(Op::apply_nadam,
                          var,
                          {slot(var, "momentum"), slot(var, "velocity")},
                          grad,
                          Attrs()
                              .set("lr", lr())
                              .set("beta1", beta_1_)
                              .set("beta2", beta_2_)
                              .set("epsilon", epsilon_)
                              .set("u_t", u_t_)
                              .set("u_t1", u_t1_)
                              .set("u_product", u_product_)
                              .set("beta2_power", std::pow(beta_2_, local_step())));
}

// ---- Adagrad ----

Adagrad::Adagrad(AdagradOptions o)
    : Optimizer(o.learning_rate, CommonOptions::of(o)),
      initial_accumulator_value_(o.initial_accumulator_value),
      epsilon_(o.epsilon) {
    check_hyperparameter(initial_accumulator_value_ >= 0,
                         fmt::format("`initial_accumulator_value` must be non-negative. Received: "
                                     "initial_accumulator_value={}",
                                     initial_accumulator_value_));
}

void Adagrad::create_slots(const Variable& var) {
    slot(var, "accumulator", initial_accumulator_value_);
}

void Adagrad::apply_dense(const Variable& var, const Tensor& grad) {
    training::apply_dense(
        Op::apply_adagrad,
        var,
        {slot(var, "accumulator", initial_accumulator_value_)},
        grad,
        Attrs().set("lr", lr()).set("epsilon", epsilon_).set("epsilon_inside_sqrt", true));
}

// ---- Adadelta ----

Adadelta::Adadelta(AdadeltaOptions o)
    : Optimizer(o.learning_rate, CommonOptions::of(o)), rho_(o.rho), epsilon_(o.epsilon) {}

void Adadelta::create_slots(const Variable& var) {
    slot(var, "accumulated_grad");
    slot(var, "accumulated_delta_var");
}

void Adadelta::apply_dense(const Variable& var, const Tensor& grad) {
    training::apply_dense(Op::apply_adadelta,
                          var,
                          {slot(var, "accumulated_grad"), slot(var, "accumulated_delta_var")},
                          grad,
                          Attrs().set("lr", lr()).set("rho", rho_).set("epsilon", epsilon_));
}

// ---- Ftrl ----

Ftrl::Ftrl(FtrlOptions o)
    : Optimizer(o.learning_rate, CommonOptions::of(o)), options_(std::move(o)) {
    const auto& f = options_;
    auto check = [](bool ok, const char* name, const char* need, double value) {
        check_hyperparameter(
            ok, fmt::format("`{}` needs to be {}. Received: {}={}", name, need, name, value));
    };
    check(f.initial_accumulator_value >= 0,
          "initial_accumulator_value",
          "positive or zero",
          f.initial_accumulator_value);
    check(f.learning_rate_power <= 0,
          "learning_rate_power",
          "negative or zero",
          f.learning_rate_power);
    check(f.l1_regularization_strength >= 0,
          "l1_regularization_strength",
          "positive or zero",
          f.l1_regularization_strength);
    check(f.l2_regularization_strength >= 0,
          "l2_regularization_strength",
          "positive or zero",
          f.l2_regularization_strength);
    check(f.l2_shrinkage_regularization_strength >= 0,
          "l2_shrinkage_regularization_strength",
          "positive or zero",
          f.l2_shrinkage_regularization_strength);
}

void Ftrl::create_slots(const Variable& var) {
    slot(var, "accumulator", options_.initial_accumulator_value);
    slot(var, "linear");
}

void Ftrl::apply_dense(const Variable& var, const Tensor& grad) {
    const auto& f = options_;
    training::apply_dense(
        Op::apply_ftrl,
        var,
        {slot(var, "accumulator", f.initial_accumulator_value), slot(var, "linear")},
        grad,
        Attrs()
            .set("lr", lr())
            .set("l1", f.l1_regularization_strength)
            .set("l2", f.l2_regularization_strength + f.beta / (2.0 * std::max(lr(), 1e-36)))
            .set("l2_shrinkage", f.l2_shrinkage_regularization_strength)
            .set("lr_power", f.learning_rate_power));
}

}  // namespace tapeflow::keras::optimizers
