// tf::keras::Model and Sequential: compile / fit / evaluate / predict / summary with Keras 3's
// loop: batches (shuffled each epoch), one tape per step, the optimizer's apply_gradients, metrics
// accumulated on the device, per-epoch logs, History and callbacks, a progress bar (verbose = 1;
// one line per epoch when stdout is not a terminal).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <tapeflow/core/export.hpp>
#include <tapeflow/data.hpp>
#include <tapeflow/keras/callbacks.hpp>
#include <tapeflow/keras/layer.hpp>
#include <tapeflow/keras/losses.hpp>
#include <tapeflow/keras/metrics.hpp>
#include <tapeflow/train/optimizer.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow::keras {

struct FitOptions {
    int64_t batch_size = 32;
    int64_t epochs = 1;
    int verbose = 1;  // 0: silent, 1: progress bar, 2: one line per epoch
    std::vector<std::shared_ptr<callbacks::Callback>> callbacks = {};
    double validation_split = 0;  // the last fraction of x, y (before shuffling), as Keras
    bool shuffle = true;
    /// Validation tensors [x, y] or [x, y, sample_weight] (instead of validation_split).
    std::vector<Tensor> validation_data = {};
    Tensor sample_weight = {};  // one weight per sample of x
    int64_t initial_epoch = 0;
};

/// Per epoch: "loss", metric names, "val_loss", "val_<metric>".
struct History {
    std::map<std::string, std::vector<double>> history;
    std::vector<int64_t> epoch;
};

/// Model::load_weights' options (tf.keras 2's by_name and skip_mismatch arguments).
struct LoadWeightsOptions {
    bool by_name = false;        // tf.keras 2 ".h5" files: match layers by name, not order
    bool skip_mismatch = false;  // skip (with a warning) weights whose count or shape differs
};

/// Model::compile's options (Keras' compile arguments).
struct CompileOptions {
    /// Keras' run_eagerly: false (the default) runs fit's, evaluate's and predict's steps through
    /// tf::function (traced once per batch shape, then replayed); true runs them eagerly.
    bool run_eagerly = false;
    /// Accepted for Keras' signature: tf::function always fuses element-wise chains.
    bool jit_compile = false;
};

/// Subclass Model and override call() (track the layers you use with track()), or use Sequential.
class Model : public layers::Layer {
public:
    explicit Model(std::string name = "");

    /// Any tf::train or tf::keras optimizer; metrics are updated with (y, y_pred, sample_weight).
    void compile(std::shared_ptr<train::Optimizer> optimizer,
                 std::shared_ptr<losses::Loss> loss,
                 std::vector<std::shared_ptr<metrics::Metric>> metrics = {},
                 CompileOptions options = {});
    bool compiled() const { return optimizer_ != nullptr; }
    /// One loss per output (Keras' compile(loss=[...], loss_weights=[...])): the total loss is
    /// sum(loss_weights[i] * losses[i](y[i], y_pred[i])), loss_weights 1 when empty.
    void compile(std::shared_ptr<train::Optimizer> optimizer,
                 std::vector<std::shared_ptr<losses::Loss>> losses,
                 std::vector<double> loss_weights,
                 std::vector<std::shared_ptr<metrics::Metric>> metrics = {});
    /// Keras' string identifiers (optimizers "adam", "sgd", "rmsprop", "adamw", ... with Keras'
    /// defaults; losses "mse", "sparse_categorical_crossentropy", ...; metrics "accuracy", "mae",
    /// "auc", ...). An unknown identifier raises InvalidArgumentError listing the valid ones.
    void compile(const std::string& optimizer,
                 const std::string& loss,
                 const std::vector<std::string>& metrics = {});
    void compile(std::shared_ptr<train::Optimizer> optimizer,
                 const std::string& loss,
                 const std::vector<std::string>& metrics = {});
    void compile(const std::string& optimizer,
                 std::shared_ptr<losses::Loss> loss,
                 std::vector<std::shared_ptr<metrics::Metric>> metrics = {});

    /// Trains on x, y (first dimensions equal). FailedPreconditionError before compile.
    History fit(const Tensor& x, const Tensor& y, FitOptions options = {});
    /// Trains on batches [x, y] or [x, y, sample_weight] (options.batch_size is ignored and
    /// validation_split must be 0); one epoch is one pass over `data`.
    History fit(const data::Dataset<std::vector<Tensor>>& data,
                FitOptions options = {},
                std::optional<data::Dataset<std::vector<Tensor>>> validation_data = {});
    /// {"loss": ..., "<metric>": ...} over x, y (inference mode).
    std::map<std::string, double> evaluate(const Tensor& x,
                                           const Tensor& y,
                                           int64_t batch_size = 32);
    std::map<std::string, double> evaluate(const data::Dataset<std::vector<Tensor>>& data);
    /// The outputs for x in inference mode, batch by batch, concatenated.
    Tensor predict(const Tensor& x, int64_t batch_size = 32);
    /// Several inputs or outputs (a Functional model; any model runs through call_multi()): one
    /// tensor per input and per output. Metrics need a model with one output.
    History fit(const std::vector<Tensor>& x,
                const std::vector<Tensor>& y,
                FitOptions options = {});
    std::map<std::string, double> evaluate(const std::vector<Tensor>& x,
                                           const std::vector<Tensor>& y,
                                           int64_t batch_size = 32);
    /// One tensor per output.
    std::vector<Tensor> predict(const std::vector<Tensor>& x, int64_t batch_size = 32);
    /// Keras' table: "Model: \"name\"", one row per layer (name (type), output shape, params), then
    /// Total / Trainable / Non-trainable params with their sizes.
    std::string summary() const;

    /// One training step (forward under a tape, gradients, apply, metrics); returns the loss.
    /// Override to customize training, as Keras' train_step.
    virtual Tensor train_step(const Tensor& x, const Tensor& y, const Tensor& sample_weight);
    /// The training step of the std::vector forms (call_multi, the per-output losses).
    virtual Tensor train_step(const std::vector<Tensor>& x,
                              const std::vector<Tensor>& y,
                              const Tensor& sample_weight);
    /// The total loss of the outputs `y_pred` against `y` (the per-output losses and weights).
    Tensor compute_loss(const std::vector<Tensor>& y,
                        const std::vector<Tensor>& y_pred,
                        const Tensor& sample_weight) const;
    /// The layers shown by summary(): the tracked submodules that are layers.
    virtual std::vector<std::shared_ptr<layers::Layer>> layers() const;

    /// The variables' current values, in variables() order, and their restoration.
    std::vector<Tensor> get_weights() const;
    void set_weights(const std::vector<Tensor>& weights);

    /// Writes the weights in the format the name picks (docs/interchange.md, "Keras weight
    /// files"): "*.weights.h5" Keras 3's layout, "*.h5" / "*.hdf5" tf.keras 2's layout, anything
    /// else a TensorFlow checkpoint prefix. Atomic; FailedPreconditionError before the model is
    /// built.
    void save_weights(const std::string& filepath) const;
    /// Loads weights written by save_weights or by Keras for the same architecture. A layer or
    /// weight count, or a shape, that differs raises InvalidArgumentError naming the layer, the
    /// weight and both shapes (nothing is changed then); skip_mismatch skips those with a warning.
    void load_weights(const std::string& filepath, bool skip_mismatch = false);
    /// tf.keras 2's load_weights(filepath, by_name, skip_mismatch): by_name (".h5" files only)
    /// matches layers by name instead of by order.
    void load_weights(const std::string& filepath, const LoadWeightsOptions& options);
    /// Keras 3's whole-model archive ("*.keras"): a zip (stored) of config.json (get_config of
    /// the model and its layers), metadata.json and model.weights.h5 (save_weights' layout),
    /// written atomically. Sequential and Functional models of registered layers;
    /// tf::keras::models::load_model reads it back (saving.hpp).
    void save(const std::string& filepath) const;

    train::Optimizer* optimizer() const { return optimizer_.get(); }
    losses::Loss* loss() const { return loss_.get(); }
    const std::vector<std::shared_ptr<metrics::Metric>>& metrics() const { return metrics_; }
    /// Set by a callback to end fit: after the current epoch (EarlyStopping), or, when set in
    /// on_train_batch_end (TerminateOnNaN), after that batch, as Keras 3.
    bool stop_training = false;
    /// Set by a callback in on_train_begin (BackupAndRestore) to start fit at that epoch.
    std::optional<int64_t> resume_epoch;

protected:
    Model(std::string name, std::string_view class_name);

private:
    std::map<std::string, double> run_evaluation(
        const std::function<bool(std::vector<Tensor>&)>& next);
    History run_fit(const std::function<void(int64_t)>& begin_epoch,
                    const std::function<bool(std::vector<Tensor>&)>& next_batch,
                    std::optional<int64_t> steps_per_epoch,
                    const std::function<std::map<std::string, double>()>& validate,
                    const FitOptions& options);

    // The steps fit, evaluate and predict run: train_step / test_step / the forward pass, each
    // through a tf::function unless compiled with run_eagerly (model.cpp).
    Tensor test_step(const Tensor& x, const Tensor& y, const Tensor& sample_weight);
    // The vector forms: batches hold [x_0.., y_0.., sample_weight] with `packed_inputs_` inputs
    // (0: the Tensor forms' [x, y, sample_weight]).
    Tensor step_on(const std::vector<Tensor>& batch);
    Tensor evaluate_on(const std::vector<Tensor>& batch);

    std::shared_ptr<train::Optimizer> optimizer_;
    std::shared_ptr<losses::Loss> loss_;
    std::vector<std::shared_ptr<metrics::Metric>> metrics_;
    CompileOptions compile_options_;
    std::function<Tensor(const Tensor&, const Tensor&, const Tensor&)> train_function_;
    std::function<Tensor(const Tensor&, const Tensor&, const Tensor&)> test_function_;
    std::function<Tensor(const Tensor&)> predict_function_;
    std::vector<std::shared_ptr<losses::Loss>> output_losses_;
    std::vector<double> loss_weights_;
    std::size_t packed_inputs_ = 0;
};

/// A stack of layers, each applied to the previous one's output.
class Sequential : public Model {
public:
    Sequential(std::vector<std::shared_ptr<layers::Layer>> layers = {}, std::string name = "");
    void add(std::shared_ptr<layers::Layer> layer);
    Tensor call(const Tensor& x, bool training) override;
    std::vector<std::shared_ptr<layers::Layer>> layers() const override { return layers_; }
    Config get_config() const override;

private:
    std::vector<std::shared_ptr<layers::Layer>> layers_;
};

namespace layers {
using keras::Sequential;
}

}  // namespace tapeflow::keras

TAPEFLOW_API_END
