// ExponentialMovingAverage, assign_moving_average and WeightedMovingAverage.
#include <algorithm>
#include <cmath>
#include <mutex>
#include <set>

#include <fmt/format.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/ops/creation.hpp>
#include <tapeflow/ops/math.hpp>
#include <tapeflow/train/moving_average.hpp>

namespace tapeflow::train {
namespace {

// shadow <- shadow - (shadow - value)·(1 - decay), in the shadow's dtype.
void move_towards(Variable& shadow, const Tensor& value, double decay) {
    shadow.assign_sub((shadow.value() - value) * (1.0 - decay));
}

// The hidden state of zero-debiased assign_moving_average, per variable.
struct DebiasState {
    Variable biased;
    Variable local_step;
};

std::mutex& debias_mutex() {
    static std::mutex m;
    return m;
}

std::map<int64_t, DebiasState>& debias_states() {
    static std::map<int64_t, DebiasState> states;
    return states;
}

}  // namespace

ExponentialMovingAverage::ExponentialMovingAverage(double decay, EmaOptions options)
    : decay_(decay), options_(std::move(options)) {
    if (options_.num_updates) {
        const Variable& n = *options_.num_updates;
        if (!n.defined() || !is_integer(n.dtype()) || n.shape().rank() != 0) {
            throw errors::InvalidArgumentError("num_updates must be an integer scalar variable");
        }
    }
    if (options_.name.empty())
        throw errors::InvalidArgumentError("ExponentialMovingAverage needs a name");
}

void ExponentialMovingAverage::apply(const std::vector<Variable>& var_list) {
    const std::vector<Variable> vars = var_list.empty() ? trainable_variables() : var_list;
    for (const Variable& v : vars) {
        if (!v.defined())
            throw errors::InvalidArgumentError(
                "ExponentialMovingAverage.apply: an empty variable handle");
        if (!is_floating(v.dtype())) {
            throw errors::InvalidArgumentError(
                fmt::format("The variables must be half, float, or double: {} (dtype {})",
                            v.name(),
                            dtype_name(v.dtype())));
        }
    }
    const std::lock_guard lock(mutex_);
    for (const Variable& v : vars) {
        if (shadows_.count(v.id()) != 0) continue;
        shadows_.emplace(
            v.id(),
            Variable(v.value(), {.name = v.name() + "/" + options_.name, .trainable = false}));
    }
    double decay = decay_;
    if (options_.num_updates) {
        const auto n =
            static_cast<double>(static_cast<float>(options_.num_updates->value().item<int64_t>()));
        decay = std::min(decay, (1.0 + n) / (10.0 + n));
    }
    for (const Variable& v : vars)
        move_towards(shadows_.at(v.id()), v.value(), decay);
}

std::optional<Variable> ExponentialMovingAverage::average(const Variable& var) const {
    if (!var.defined()) return std::nullopt;
    const std::lock_guard lock(mutex_);
    auto it = shadows_.find(var.id());
    if (it == shadows_.end()) return std::nullopt;
    return it->second;
}

std::string ExponentialMovingAverage::average_name(const Variable& var) const {
    if (auto s = average(var)) return s->name();
    return current_name_scope() + var.name() + "/" + options_.name;
}

std::map<std::string, Variable> ExponentialMovingAverage::variables_to_restore() const {
    std::map<std::string, Variable> out;
    std::set<int64_t> averaged;
    for (const Variable& v : trainable_variables())
        averaged.insert(v.id());
    {
        const std::lock_guard lock(mutex_);
        for (const auto& [id, shadow] : shadows_)
            averaged.insert(id);
    }
    for (const Variable& v : global_variables()) {
        if (averaged.count(v.id()) != 0) {
            out.insert_or_assign(average_name(v), v);
        } else {
            out.emplace(v.name(), v);
        }
    }
    return out;
}

void assign_moving_average(Variable& variable,
                           const Tensor& value,
                           double decay,
                           bool zero_debias) {
    if (!zero_debias) {
        move_towards(variable, value, decay);
        return;
    }
    DebiasState* state = nullptr;
    {
        const std::lock_guard lock(debias_mutex());
        auto& states = debias_states();
        auto it = states.find(variable.id());
        if (it == states.end()) {
            Tensor zero = zeros_like(variable.value());
            DebiasState s{Variable(zero, {.name = variable.name() + "/biased", .trainable = false}),
                          Variable(constant(0.0, variable.dtype()),
                                   {.name = variable.name() + "/local_step", .trainable = false})};
            it = states.emplace(variable.id(), std::move(s)).first;
        }
        state = &it->second;
    }
    move_towards(state->biased, value, decay);
    state->local_step.assign_add(constant(1.0, variable.dtype()));
    const double steps = state->local_step.value().item<double>();
    variable.assign(state->biased.value() / (1.0 - std::pow(decay, steps)));
}

WeightedMovingAverage::WeightedMovingAverage(double decay, const Shape& shape, DType dtype)
    : decay_(decay),
      numerator_(zeros(shape, dtype),
                 {.name = "weighted_moving_average/numerator", .trainable = false}),
      denominator_(zeros(shape, dtype),
                   {.name = "weighted_moving_average/denominator", .trainable = false}) {}

Tensor WeightedMovingAverage::update(const Tensor& value, const Tensor& weight) {
    move_towards(numerator_, value * weight, decay_);
    move_towards(denominator_, weight, decay_);
    return numerator_.value() / denominator_.value();
}

}  // namespace tapeflow::train
