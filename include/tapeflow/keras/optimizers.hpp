// The Keras 3 optimizer family (tf::keras::optimizers): Keras defaults, slot names and epsilon
// placement, on tf::train::Optimizer's slot map. One apply_gradients: clip (clipnorm, clipvalue or
// global_clipnorm) -> decoupled weight decay -> update -> EMA of the variables -> iterations += 1.
// The learning rate is evaluated at iterations() (0 on the first step); Adam-family t =
// iterations+1. IndexedSlices gradients take the dense rule (Keras 3 densifies them), except SGD
// without momentum.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <tapeflow/core/export.hpp>
#include <tapeflow/train/optimizer.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow::keras::optimizers {

using train::LearningRate;

/// The options every Keras optimizer has, after its own (Keras 3's keyword order).
#define TAPEFLOW_KERAS_COMMON_OPTIONS(default_name)      \
    std::optional<double> clipnorm = {};                 \
    std::optional<double> clipvalue = {};                \
    std::optional<double> global_clipnorm = {};          \
    bool use_ema = false;                                \
    double ema_momentum = 0.99;                          \
    std::optional<int64_t> ema_overwrite_frequency = {}; \
    std::string name = default_name;

/// The common options, collected from any options struct.
struct CommonOptions {
    std::optional<double> weight_decay;
    std::optional<double> clipnorm, clipvalue, global_clipnorm;
    bool use_ema = false;
    double ema_momentum = 0.99;
    std::optional<int64_t> ema_overwrite_frequency;
    std::string name;

    template <class O>
    static CommonOptions of(const O& o) {
        return {o.weight_decay,
                o.clipnorm,
                o.clipvalue,
                o.global_clipnorm,
                o.use_ema,
                o.ema_momentum,
                o.ema_overwrite_frequency,
                o.name};
    }
};

/// The Keras 3 base: clipping, weight decay, EMA and Keras' None-gradient handling.
class Optimizer : public train::Optimizer {
public:
    /// Variables (or variables whose name contains one of `var_names`) that weight decay skips.
    void exclude_from_weight_decay(const std::vector<Variable>& var_list = {},
                                   const std::vector<std::string>& var_names = {});

protected:
    Optimizer(LearningRate learning_rate, const CommonOptions& common);
    /// Adam-family step: iterations() + 1.
    double local_step() const { return static_cast<double>(iterations() + 1); }

    bool keras_style() const override { return true; }
    std::vector<train::GradAndVar> transform_gradients(
        std::vector<train::GradAndVar> pairs) override;
    bool needs_all_gradients() const override { return common_.global_clipnorm.has_value(); }
    void before_update(const Variable& var) override;
    void after_updates(const std::vector<Variable>& updated) override;

private:
    CommonOptions common_;
    std::vector<int64_t> excluded_ids_;
    std::vector<std::string> excluded_names_;
};

struct SGDOptions {
    LearningRate learning_rate = 0.01;
    double momentum = 0.0;
    bool nesterov = false;
    std::optional<double> weight_decay = {};
    TAPEFLOW_KERAS_COMMON_OPTIONS("SGD")
};

/// m = momentum·m − lr·g; var += m (Nesterov: var += momentum·m − lr·g). Slot "momentum" (only when
/// momentum > 0).
class SGD : public Optimizer {
public:
    explicit SGD(SGDOptions options = {});

protected:
    void create_slots(const Variable& var) override;
    void apply_dense(const Variable& var, const Tensor& grad) override;
    void apply_sparse(const Variable& var, const IndexedSlices& grad) override;

private:
    double momentum_;
    bool nesterov_;
};

struct RMSpropOptions {
    LearningRate learning_rate = 0.001;
    double rho = 0.9;
    double momentum = 0.0;
    double epsilon = 1e-7;
    bool centered = false;
    std::optional<double> weight_decay = {};
    TAPEFLOW_KERAS_COMMON_OPTIONS("rmsprop")
};

/// Slots "velocity" (mean square, initial 0), "momentum" (momentum > 0), "average_gradient"
/// (centered). ε inside the root.
class RMSprop : public Optimizer {
public:
    explicit RMSprop(RMSpropOptions options = {});

protected:
    void create_slots(const Variable& var) override;
    void apply_dense(const Variable& var, const Tensor& grad) override;

private:
    double rho_, momentum_, epsilon_;
    bool centered_;
};

struct AdamOptions {
    LearningRate learning_rate = 0.001;
    double beta_1 = 0.9;
    double beta_2 = 0.999;
    double epsilon = 1e-7;
    bool amsgrad = false;
    std::optional<double> weight_decay = {};
    TAPEFLOW_KERAS_COMMON_OPTIONS("adam")
};

/// Slots "momentum", "velocity" (+ "velocity_hat" with amsgrad). ε-hat placement, beta^t from t.
class Adam : public Optimizer {
public:
    explicit Adam(AdamOptions options = {});

protected:
    Adam(LearningRate learning_rate,
         double beta_1,
         double beta_2,
         double epsilon,
         bool amsgrad,
         const CommonOptions& common);
    void create_slots(const Variable& var) override;
    void apply_dense(const Variable& var, const Tensor& grad) override;

private:
    double beta_1_, beta_2_, epsilon_;
    bool amsgrad_;
};

struct AdamWOptions {
    LearningRate learning_rate = 0.001;
    std::optional<double> weight_decay = 0.004;
    double beta_1 = 0.9;
    double beta_2 = 0.999;
    double epsilon = 1e-7;
    bool amsgrad = false;
    TAPEFLOW_KERAS_COMMON_OPTIONS("adamw")
};

/// Adam with decoupled weight decay (var -= var·weight_decay·lr before each step).
class AdamW : public Adam {
public:
    explicit AdamW(AdamWOptions options = {});
};

struct AdamaxOptions {
    LearningRate learning_rate = 0.001;
    double beta_1 = 0.9;
    double beta_2 = 0.999;
    double epsilon = 1e-7;
    std::optional<double> weight_decay = {};
    TAPEFLOW_KERAS_COMMON_OPTIONS("adamax")
};

/// Slots "momentum", "norm".
class Adamax : public Optimizer {
public:
    explicit Adamax(AdamaxOptions options = {});

protected:
    void create_slots(const Variable& var) override;
    void apply_dense(const Variable& var, const Tensor& grad) override;

private:
    double beta_1_, beta_2_, epsilon_;
};

struct NadamOptions {
    LearningRate learning_rate = 0.001;
    double beta_1 = 0.9;
    double beta_2 = 0.999;
    double epsilon = 1e-7;
    std::optional<double> weight_decay = {};
    TAPEFLOW_KERAS_COMMON_OPTIONS("nadam")
};

/// Slots "momentum", "velocity"; non-slot "u_product" (initial 1), times u_t once per apply.
class Nadam : public Optimizer {
public:
    explicit Nadam(NadamOptions options = {});

protected:
    void create_slots(const Variable& var) override;
    void prepare() override;
    void apply_dense(const Variable& var, const Tensor& grad) override;

private:
    double beta_1_, beta_2_, epsilon_;
    double u_t_ = 0, u_t1_ = 0, u_product_ = 1;
};

struct AdagradOptions {
    LearningRate learning_rate = 0.001;
    double initial_accumulator_value = 0.1;
    double epsilon = 1e-7;
    std::optional<double> weight_decay = {};
    TAPEFLOW_KERAS_COMMON_OPTIONS("adagrad")
};

/// Slot "accumulator"; var -= lr·g/sqrt(acc + ε) (ε inside the root).
class Adagrad : public Optimizer {
public:
    explicit Adagrad(AdagradOptions options = {});

protected:
    void create_slots(const Variable& var) override;
    void apply_dense(const Variable& var, const Tensor& grad) override;

private:
    double initial_accumulator_value_, epsilon_;
};

struct AdadeltaOptions {
    LearningRate learning_rate = 0.001;
    double rho = 0.95;
    double epsilon = 1e-7;
    std::optional<double> weight_decay = {};
    TAPEFLOW_KERAS_COMMON_OPTIONS("adadelta")
};

/// Slots "accumulated_grad", "accumulated_delta_var".
class Adadelta : public Optimizer {
public:
    explicit Adadelta(AdadeltaOptions options = {});

protected:
    void create_slots(const Variable& var) override;
    void apply_dense(const Variable& var, const Tensor& grad) override;

private:
    double rho_, epsilon_;
};

struct FtrlOptions {
    LearningRate learning_rate = 0.001;
    double learning_rate_power = -0.5;
    double initial_accumulator_value = 0.1;
    double l1_regularization_strength = 0.0;
    double l2_regularization_strength = 0.0;
    double l2_shrinkage_regularization_strength = 0.0;
    double beta = 0.0;
    std::optional<double> weight_decay = {};
    TAPEFLOW_KERAS_COMMON_OPTIONS("ftrl")
};

/// Slots "accumulator" (initial initial_accumulator_value), "linear".
class Ftrl : public Optimizer {
public:
    explicit Ftrl(FtrlOptions options = {});

protected:
    void create_slots(const Variable& var) override;
    void apply_dense(const Variable& var, const Tensor& grad) override;

private:
    FtrlOptions options_;
};

#undef TAPEFLOW_KERAS_COMMON_OPTIONS

}  // namespace tapeflow::keras::optimizers

TAPEFLOW_API_END
