// compile()'s string identifiers, as keras.optimizers.get / keras.losses.get / compile_utils'
// get_metric resolve them: Keras' names and defaults; an unknown one lists the valid names.
#include <functional>
#include <map>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/keras/losses.hpp>
#include <tapeflow/keras/metrics.hpp>
#include <tapeflow/keras/model.hpp>
#include <tapeflow/keras/optimizers.hpp>

namespace tapeflow::keras {

namespace {

template <class T>
using Factories = std::map<std::string, std::function<std::shared_ptr<T>(const std::string&)>>;

template <class T>
std::shared_ptr<T> lookup(const Factories<T>& table,
                          const std::string& id,
                          const char* kind,
                          const std::string& model) {
    std::string lower;
    for (char c : id)
        lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const auto it = table.find(lower);
    if (it == table.end()) {
        std::vector<std::string> names;
        for (const auto& [name, factory] : table)
            names.push_back(name);
        throw errors::InvalidArgumentError(
            fmt::format("Model \"{}\": compile: unknown {} identifier \"{}\"; valid ones are: {}",
                        model,
                        kind,
                        id,
                        fmt::join(names, ", ")));
    }
    return it->second(id);
}

// keras.optimizers.get: the class names in snake case, Keras' defaults.
const Factories<train::Optimizer>& optimizer_table() {
    static const Factories<train::Optimizer> table = {
        {"adadelta",
         [](auto&) {
             return std::make_shared<optimizers::Adadelta>();
         }},
        {"adagrad",
         [](auto&) {
             return std::make_shared<optimizers::Adagrad>();
         }},
        {"adam",
         [](auto&) {
             return std::make_shared<optimizers::Adam>();
         }},
        {"adamax",
         [](auto&) {
             return std::make_shared<optimizers::Adamax>();
         }},
        {"adamw",
         [](auto&) {
             return std::make_shared<optimizers::AdamW>();
         }},
        {"ftrl",
         [](auto&) {
             return std::make_shared<optimizers::Ftrl>();
         }},
        {"nadam",
         [](auto&) {
             return std::make_shared<optimizers::Nadam>();
         }},
        {"rmsprop",
         [](auto&) {
             return std::make_shared<optimizers::RMSprop>();
         }},
        {"sgd",
         [](auto&) {
             return std::make_shared<optimizers::SGD>();
         }},
    };
    return table;
}

// keras.losses.get: the functions' names and their aliases (Keras' reduction).
const Factories<losses::Loss>& loss_table() {
    using namespace losses;  // NOLINT(google-build-using-namespace): the table reads as Keras'
    static const Factories<Loss> table = {
        {"binary_crossentropy",
         [](auto&) {
             return std::make_shared<BinaryCrossentropy>();
         }},
        {"categorical_crossentropy",
         [](auto&) {
             return std::make_shared<CategoricalCrossentropy>();
         }},
        {"huber",
         [](auto&) {
             return std::make_shared<Huber>();
         }},
        {"mae",
         [](auto&) {
             return std::make_shared<MeanAbsoluteError>();
         }},
        {"mean_absolute_error",
         [](auto&) {
             return std::make_shared<MeanAbsoluteError>();
         }},
        {"mean_squared_error",
         [](auto&) {
             return std::make_shared<MeanSquaredError>();
         }},
        {"mse",
         [](auto&) {
             return std::make_shared<MeanSquaredError>();
         }},
        {"sparse_categorical_crossentropy",
         [](auto&) {
             return std::make_shared<SparseCategoricalCrossentropy>();
         }},
    };
    return table;
}

// compile_utils.get_metric's "accuracy" / "acc": binary, sparse categorical or categorical,
// chosen from the first batch's shapes (is_binary_or_sparse_categorical).
class AutoAccuracy : public metrics::Metric {
public:
    explicit AutoAccuracy(std::string name) : Metric(std::move(name)) {}
    void update_state(const Tensor& y_true, const Tensor& y_pred, const Tensor& w) override {
        if (!chosen_) {
            if (!y_true.defined() || !y_pred.defined() || y_pred.rank() == 0)
                throw errors::InvalidArgumentError(fmt::format(
                    "metric {}: y_true and y_pred must be defined tensors of rank >= 1", name()));
            const int64_t p_last = y_pred.shape()[-1];
            const int64_t t_last = y_true.rank() > 0 ? y_true.shape()[-1] : 1;
            if (p_last == 1)
                chosen_ = std::make_unique<metrics::BinaryAccuracy>(0.5, name());
            else if (y_true.rank() < y_pred.rank() || t_last == 1)
                chosen_ = std::make_unique<metrics::SparseCategoricalAccuracy>(name());
            else
                chosen_ = std::make_unique<metrics::CategoricalAccuracy>(name());
        }
        chosen_->update_state(y_true, y_pred, w);
    }
    Tensor result() const override {
        return chosen_ ? chosen_->result() : metrics::Mean(name()).result();
    }
    void reset_state() override {
        if (chosen_) chosen_->reset_state();
    }
    bool higher_is_better() const override { return true; }

private:
    std::unique_ptr<metrics::Metric> chosen_;
};

// keras.metrics.get by name; the metric is named by the identifier, as Keras does.
const Factories<metrics::Metric>& metric_table() {
    using namespace metrics;  // NOLINT(google-build-using-namespace): the table reads as Keras'
    static const Factories<Metric> table = {
        {"acc",
         [](auto& id) {
             return std::make_shared<AutoAccuracy>(id);
         }},
        {"accuracy",
         [](auto& id) {
             return std::make_shared<AutoAccuracy>(id);
         }},
        {"auc",
         [](auto& id) {
             return std::make_shared<AUC>(AUCOptions{.name = id});
         }},
        {"binary_accuracy",
         [](auto& id) {
             return std::make_shared<BinaryAccuracy>(0.5, id);
         }},
        {"categorical_accuracy",
         [](auto& id) {
             return std::make_shared<CategoricalAccuracy>(id);
         }},
        {"mae",
         [](auto& id) {
             return std::make_shared<MeanAbsoluteError>(id);
         }},
        {"mean_absolute_error",
         [](auto& id) {
             return std::make_shared<MeanAbsoluteError>(id);
         }},
        {"mean_squared_error",
         [](auto& id) {
             return std::make_shared<MeanSquaredError>(id);
         }},
        {"mse",
         [](auto& id) {
             return std::make_shared<MeanSquaredError>(id);
         }},
        {"precision",
         [](auto& id) {
             return std::make_shared<Precision>(0.5, id);
         }},
        {"recall",
         [](auto& id) {
             return std::make_shared<Recall>(0.5, id);
         }},
        {"sparse_categorical_accuracy",
         [](auto& id) {
             return std::make_shared<SparseCategoricalAccuracy>(id);
         }},
        {"top_k_categorical_accuracy",
         [](auto& id) {
             return std::make_shared<TopKCategoricalAccuracy>(5, id);
         }},
    };
    return table;
}

std::vector<std::shared_ptr<metrics::Metric>> metrics_of(const std::vector<std::string>& ids,
                                                         const std::string& model) {
    std::vector<std::shared_ptr<metrics::Metric>> out;
    for (const std::string& id : ids)
        out.push_back(lookup(metric_table(), id, "metric", model));
    return out;
}

}  // namespace

void Model::compile(const std::string& optimizer,
                    const std::string& loss,
                    const std::vector<std::string>& metrics) {
    compile(lookup(optimizer_table(), optimizer, "optimizer", name()),
            lookup(loss_table(), loss, "loss", name()),
            metrics_of(metrics, name()));
}

void Model::compile(std::shared_ptr<train::Optimizer> optimizer,
                    const std::string& loss,
                    const std::vector<std::string>& metrics) {
    compile(std::move(optimizer),
            lookup(loss_table(), loss, "loss", name()),
            metrics_of(metrics, name()));
}

void Model::compile(const std::string& optimizer,
                    std::shared_ptr<losses::Loss> loss,
                    std::vector<std::shared_ptr<metrics::Metric>> metrics) {
    compile(lookup(optimizer_table(), optimizer, "optimizer", name()),
            std::move(loss),
            std::move(metrics));
}

}  // namespace tapeflow::keras
