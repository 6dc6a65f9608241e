// The Keras-family optimizer of a golden case ("keras.optimizers.X (Keras 3)" and the optimizer_v2
// cases whose numbers Keras 3 reproduces).
#include "train/training_golden.hpp"

namespace tapeflow::testing {
namespace {

double hp(const nlohmann::json& h, const char* key, double fallback) {
    return h.contains(key) && h[key].is_number() ? h[key].get<double>() : fallback;
}

std::optional<double> opt_hp(const nlohmann::json& h, const char* key) {
    if (h.contains(key) && h[key].is_number()) return h[key].get<double>();
    return std::nullopt;
}

}  // namespace

std::unique_ptr<train::Optimizer> make_keras_optimizer(const nlohmann::json& c) {
    namespace ko = tapeflow::keras::optimizers;
    const std::string api = c.at("api");
    const auto& h = c.at("hyperparameters");
    auto is = [&](const char* cls) {
        return api.starts_with(std::string("keras.optimizers.") + cls + " ") ||
               api.starts_with(std::string("tf.keras.optimizers.legacy.") + cls + " ");
    };
    const double lr = hp(h, "learning_rate", 0.001);
    const auto wd = opt_hp(h, "weight_decay");
    if (is("SGD")) {
        return std::make_unique<ko::SGD>(
            ko::SGDOptions{.learning_rate = hp(h, "learning_rate", 0.01),
                           .momentum = hp(h, "momentum", 0.0),
                           .nesterov = h.value("nesterov", false),
                           .weight_decay = wd});
    }
    if (is("RMSprop")) {
        return std::make_unique<ko::RMSprop>(
            ko::RMSpropOptions{.learning_rate = lr,
                               .rho = hp(h, "rho", 0.9),
                               .momentum = hp(h, "momentum", 0.0),
                               .epsilon = hp(h, "epsilon", 1e-7),
                               .centered = h.value("centered", false),
                               .weight_decay = wd});
    }
    if (is("Adam")) {
        return std::make_unique<ko::Adam>(ko::AdamOptions{.learning_rate = lr,
                                                          .beta_1 = hp(h, "beta_1", 0.9),
                                                          .beta_2 = hp(h, "beta_2", 0.999),
                                                          .epsilon = hp(h, "epsilon", 1e-7),
                                                          .amsgrad = h.value("amsgrad", false),
                                                          .weight_decay = wd});
    }
    if (is("AdamW")) {
        return std::make_unique<ko::AdamW>(
            ko::AdamWOptions{.learning_rate = lr,
                             .weight_decay = hp(h, "weight_decay", 0.004),
                             .beta_1 = hp(h, "beta_1", 0.9),
                             .beta_2 = hp(h, "beta_2", 0.999),
                             .epsilon = hp(h, "epsilon", 1e-7),
                             .amsgrad = h.value("amsgrad", false)});
    }
    if (is("Adamax")) {
        return std::make_unique<ko::Adamax>(ko::AdamaxOptions{.learning_rate = lr,
                                                              .beta_1 = hp(h, "beta_1", 0.9),
                                                              .beta_2 = hp(h, "beta_2", 0.999),
                                                              .epsilon = hp(h, "epsilon", 1e-7),
                                                              .weight_decay = wd});
    }
    if (is("Nadam")) {
        return std::make_unique<ko::Nadam>(ko::NadamOptions{.learning_rate = lr,
                                                            .beta_1 = hp(h, "beta_1", 0.9),
                                                            .beta_2 = hp(h, "beta_2", 0.999),
                                                            .epsilon = hp(h, "epsilon", 1e-7),
                                                            .weight_decay = wd});
    }
    if (is("Adagrad")) {
        return std::make_unique<ko::Adagrad>(
            ko::AdagradOptions{.learning_rate = lr,
                               .initial_accumulator_value = hp(h, "initial_accumulator_value", 0.1),
                               .epsilon = hp(h, "epsilon", 1e-7),
                               .weight_decay = wd});
    }
    if (is("Adadelta")) {
        return std::make_unique<ko::Adadelta>(ko::AdadeltaOptions{.learning_rate = lr,
                                                                  .rho = hp(h, "rho", 0.95),
                                                                  .epsilon = hp(h, "epsilon", 1e-7),
                                                                  .weight_decay = wd});
    }
    if (is("Ftrl")) {
        return std::make_unique<ko::Ftrl>(
            ko::FtrlOptions{.learning_rate = lr,
                            .learning_rate_power = hp(h, "learning_rate_power", -0.5),
                            .initial_accumulator_value = hp(h, "initial_accumulator_value", 0.1),
                            .l1_regularization_strength = hp(h, "l1_regularization_strength", 0.0),
                            .l2_regularization_strength = hp(h, "l2_regularization_strength", 0.0),
                            .l2_shrinkage_regularization_strength =
                                hp(h, "l2_shrinkage_regularization_strength", 0.0),
                            .beta = hp(h, "beta", 0.0),
                            .weight_decay = wd});
    }
    return nullptr;
}

}  // namespace tapeflow::testing
