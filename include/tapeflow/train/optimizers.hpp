// The TF1 optimizer family (tf.compat.v1.train.*Optimizer): constructor with the learning rate
// first (and the momentum for Momentum), then an options struct with TensorFlow's keyword names and
// defaults in TensorFlow's order, then name and use_locking. Update rules, slot names and sparse
// behaviour: docs/optimizers.md.
#pragma once

#include <optional>
#include <string>

#include <tapeflow/core/export.hpp>
#include <tapeflow/train/optimizer.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow::train {

struct GradientDescentOptimizerOptions {
    std::string name = "GradientDescent";
    bool use_locking = false;
};

/// var -= lr·g. No slots.
class GradientDescentOptimizer : public Optimizer {
public:
    explicit GradientDescentOptimizer(LearningRate learning_rate,
                                      GradientDescentOptimizerOptions options = {});

protected:
    void apply_dense(const Variable& var, const Tensor& grad) override;
    void apply_sparse(const Variable& var, const IndexedSlices& grad) override;
};

struct MomentumOptimizerOptions {
    bool use_nesterov = false;
    std::string name = "Momentum";
    bool use_locking = false;
};

/// accum = momentum·accum + g; var -= lr·accum (Nesterov: var -= lr·g + lr·momentum·accum).
/// Slot "momentum". Sparse: lazy.
class MomentumOptimizer : public Optimizer {
public:
    MomentumOptimizer(LearningRate learning_rate,
                      double momentum,
                      MomentumOptimizerOptions options = {});

protected:
    void create_slots(const Variable& var) override;
    void apply_dense(const Variable& var, const Tensor& grad) override;
    void apply_sparse(const Variable& var, const IndexedSlices& grad) override;

private:
    double momentum_;
    bool nesterov_;
};

struct AdagradOptimizerOptions {
    double initial_accumulator_value = 0.1;
    std::string name = "Adagrad";
    bool use_locking = false;
};

/// accum += g²; var -= lr·g/sqrt(accum) (no epsilon). Slot "accumulator". Sparse: lazy.
class AdagradOptimizer : public Optimizer {
public:
    explicit AdagradOptimizer(LearningRate learning_rate, AdagradOptimizerOptions options = {});

protected:
    void create_slots(const Variable& var) override;
    void apply_dense(const Variable& var, const Tensor& grad) override;
    void apply_sparse(const Variable& var, const IndexedSlices& grad) override;

private:
    double initial_accumulator_value_;
};

struct AdadeltaOptimizerOptions {
    double rho = 0.95;
    double epsilon = 1e-8;
    std::string name = "Adadelta";
    bool use_locking = false;
};

/// Slots "accum" (E[g²]) and "accum_update" (E[Δx²]). Sparse: lazy.
class AdadeltaOptimizer : public Optimizer {
public:
    explicit AdadeltaOptimizer(LearningRate learning_rate = 0.001,
                               AdadeltaOptimizerOptions options = {});

protected:
    void create_slots(const Variable& var) override;
    void apply_dense(const Variable& var, const Tensor& grad) override;
    void apply_sparse(const Variable& var, const IndexedSlices& grad) override;

private:
    double rho_, epsilon_;
};

struct AdamOptimizerOptions {
    double beta1 = 0.9;
    double beta2 = 0.999;
    double epsilon = 1e-8;
    std::string name = "Adam";
    bool use_locking = false;
};

/// Slots "m", "v"; non-slot "beta1_power", "beta2_power" shared by all variables, advanced once
/// per apply_gradients. ε-hat placement. Sparse: not lazy (m, v decay and var moves everywhere).
class AdamOptimizer : public Optimizer {
public:
    explicit AdamOptimizer(LearningRate learning_rate = 0.001, AdamOptimizerOptions options = {});

protected:
    void create_slots(const Variable& var) override;
    void prepare() override;
    void apply_dense(const Variable& var, const Tensor& grad) override;
    void finish() override;

private:
    double beta1_, beta2_, epsilon_;
    double beta1_power_ = 0, beta2_power_ = 0;  // read in prepare()
};

struct FtrlOptimizerOptions {
    double learning_rate_power = -0.5;
    double initial_accumulator_value = 0.1;
    double l1_regularization_strength = 0.0;
    double l2_regularization_strength = 0.0;
    double l2_shrinkage_regularization_strength = 0.0;
    double beta = 0.0;
    std::optional<std::string> accum_name = {};  // slot names, default "accum" / "linear"
    std::optional<std::string> linear_name = {};
    std::string name = "Ftrl";
    bool use_locking = false;
};

/// FTRL-Proximal. Slots "accum" (initial initial_accumulator_value) and "linear". Sparse: lazy.
class FtrlOptimizer : public Optimizer {
public:
    explicit FtrlOptimizer(LearningRate learning_rate, FtrlOptimizerOptions options = {});

protected:
    void create_slots(const Variable& var) override;
    void apply_dense(const Variable& var, const Tensor& grad) override;
    void apply_sparse(const Variable& var, const IndexedSlices& grad) override;

private:
    FtrlOptimizerOptions options_;
    std::string accum_name_, linear_name_;
};

struct RMSPropOptimizerOptions {
    double decay = 0.9;
    double momentum = 0.0;
    double epsilon = 1e-10;
    bool centered = false;
    std::string name = "RMSProp";
    bool use_locking = false;
};

/// Slots "rms" (initial 1.0), "mg" (centered only), "momentum". ε inside the root. Sparse: lazy.
class RMSPropOptimizer : public Optimizer {
public:
    explicit RMSPropOptimizer(LearningRate learning_rate, RMSPropOptimizerOptions options = {});

protected:
    void create_slots(const Variable& var) override;
    void apply_dense(const Variable& var, const Tensor& grad) override;
    void apply_sparse(const Variable& var, const IndexedSlices& grad) override;

private:
    RMSPropOptimizerOptions options_;
};

struct ProximalGradientDescentOptimizerOptions {
    double l1_regularization_strength = 0.0;
    double l2_regularization_strength = 0.0;
    std::string name = "ProximalGradientDescent";
    bool use_locking = false;
};

/// Gradient step then the proximal (l1, l2) shrinkage. No slots. Sparse: lazy.
class ProximalGradientDescentOptimizer : public Optimizer {
public:
    explicit ProximalGradientDescentOptimizer(LearningRate learning_rate,
                                              ProximalGradientDescentOptimizerOptions options = {});

protected:
    void apply_dense(const Variable& var, const Tensor& grad) override;
    void apply_sparse(const Variable& var, const IndexedSlices& grad) override;

private:
    double l1_, l2_;
};

struct ProximalAdagradOptimizerOptions {
    double initial_accumulator_value = 0.1;
    double l1_regularization_strength = 0.0;
    double l2_regularization_strength = 0.0;
    std::string name = "ProximalAdagrad";
    bool use_locking = false;
};

/// Adagrad step then the proximal shrinkage. Slot "accumulator". Sparse: lazy.
class ProximalAdagradOptimizer : public Optimizer {
public:
    explicit ProximalAdagradOptimizer(LearningRate learning_rate,
                                      ProximalAdagradOptimizerOptions options = {});

protected:
    void create_slots(const Variable& var) override;
    void apply_dense(const Variable& var, const Tensor& grad) override;
    void apply_sparse(const Variable& var, const IndexedSlices& grad) override;

private:
    double initial_accumulator_value_, l1_, l2_;
};

}  // namespace tapeflow::train

TAPEFLOW_API_END
