// tf::keras::layers::Layer: the base of every Keras layer (and of Model). The first call builds the
// layer from the input's shape (weights created under the layer's name scope, on the input's
// device), then every call checks the input against the layer's InputSpec and runs call().
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <tapeflow/core/export.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/keras/config.hpp>
#include <tapeflow/keras/dtype_policy.hpp>
#include <tapeflow/keras/keras_tensor.hpp>
#include <tapeflow/keras/module.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow::keras::layers {

/// What a built layer accepts (Keras' InputSpec): a rank, a minimum rank, fixed axis sizes.
struct InputSpec {
    std::optional<int64_t> ndim = std::nullopt;
    std::optional<int64_t> min_ndim = std::nullopt;
    std::vector<std::pair<int64_t, int64_t>> axes = {};  // (axis, size); negative: from the end
};

/// Subclass and override build() (create weights with add_weight) and call().
///
///     struct Scale : tf::keras::layers::Layer {
///         tf::Variable w;
///         void build(const tf::Shape& s) override { w = add_weight("w", {s[-1]}); }
///         tf::Tensor call(const tf::Tensor& x, bool) override { return x * w; }
///     };
///
/// Several inputs or outputs (merge layers, recurrent layers with states, attention): the
/// functional API (functional.hpp) runs every layer through call_multi(). Its default takes one
/// input and returns {(*this)(inputs[0], training)}; a layer with several inputs or outputs
/// overrides it (building itself on the first call, e.g. with set_built()), and may add its own
/// `Tensor operator()(const std::vector<Tensor>&, bool)`. A subclass that declares any
/// operator() adds `using Layer::operator();` so the KerasTensor calls stay visible. Layers
/// called on KerasTensors must be held by a std::shared_ptr (std::make_shared): the graph keeps
/// them.
class Layer : public Module, public std::enable_shared_from_this<Layer> {
public:
    /// "" = Keras' default from the class (snake case), made unique; an explicit name is kept.
    explicit Layer(std::string name = "");

    /// Builds on the first call (build(x.shape()) under the layer's name scope, on x's device),
    /// checks x against input_spec() (InvalidArgumentError naming the layer, the expected and the
    /// received shape), then returns call(x, training). During a layer's first call, a layer it
    /// calls but never tracked (track()) gets a warning, once per class: its weights would be
    /// missing from variables(), the optimizer and saved files (C++ cannot see members).
    Tensor operator()(const Tensor& x, bool training = false);
    virtual Tensor call(const Tensor& x, bool training) = 0;
    virtual void build(const Shape& input_shape) { (void)input_shape; }
    /// Keras' call(x, mask=...): layers that use a mask (the recurrent layers) override it; the
    /// default ignores the mask and returns (*this)(x, training). Sequential calls it.
    virtual Tensor call_with_mask(const Tensor& x, const Tensor& mask, bool training) {
        (void)mask;
        return (*this)(x, training);
    }
    /// Keras' compute_mask(inputs, previous_mask): the mask of this layer's output (an undefined
    /// tensor for none). The default passes `mask` on (Embedding(mask_zero) makes one; a recurrent
    /// layer without return_sequences drops it).
    virtual Tensor compute_mask(const Tensor& x, const Tensor& mask) const {
        (void)x;
        return mask;
    }
    bool built() const { return built_; }

    /// The vector call path: the functional API calls every layer through it (see above).
    /// Default: one input (InvalidArgumentError naming the layer otherwise), one output.
    virtual std::vector<Tensor> call_multi(const std::vector<Tensor>& inputs, bool training);
    /// Functional API: the layer called on KerasTensors. It runs once on a placeholder batch
    /// (zeros, batch size 2, inference mode) to build its weights, as Keras builds then, and to
    /// learn its output shapes; the call is recorded in the graph. The one-output forms raise
    /// InvalidArgumentError when the layer gives several outputs (use call_symbolic).
    KerasTensor operator()(const KerasTensor& x);
    KerasTensor operator()(const std::vector<KerasTensor>& inputs);
    std::vector<KerasTensor> call_symbolic(const std::vector<KerasTensor>& inputs);
    /// How many times the layer was called on KerasTensors (Keras' len(layer._inbound_nodes)).
    int64_t inbound_node_count() const { return inbound_nodes_; }

    /// Keras' get_config(): the constructor's arguments under Keras 3's keys, with "name",
    /// "trainable" and "dtype" (a serialized DTypePolicy). A layer that overrides it starts from
    /// Layer::get_config(); tf::keras::saving::register_layer makes it loadable (saving.hpp).
    virtual Config get_config() const;
    /// The shape of the input the layer was built from (nullopt before; Keras' build_config).
    const std::optional<Shape>& build_input_shape() const { return build_input_shape_; }

    /// The Keras class name ("Dense"; a user subclass: its C++ class name).
    std::string class_name() const;
    /// The output shape of the latest call (nullopt before the first).
    const std::optional<Shape>& output_shape() const { return output_shape_; }
    /// Number of weights' elements (Keras' count_params).
    int64_t count_params() const;
    /// The spec set at build (empty before).
    const InputSpec& input_spec() const { return input_spec_; }
    /// The dtype of the weights. Under a policy (see dtype_policy()): its variable dtype.
    /// Otherwise float32, or float64 when the first input was float64 (so layers can be checked in
    /// double precision).
    DType variable_dtype() const { return variable_dtype_; }

    /// Keras' layer.dtype_policy: the global policy when the layer was made, or the one set here.
    /// A layer made under the default "float32" global policy and given none follows its inputs'
    /// dtype (as above) and casts nothing. Any other (or one set explicitly): floating inputs are
    /// cast to its compute dtype, weights are created in its variable dtype, and, when the two
    /// differ (mixed_float16, mixed_bfloat16), the layer's weights read as the compute dtype inside
    /// its call (Keras' AutoCastVariable: gradients reach them in their own dtype).
    const mixed_precision::Policy& dtype_policy() const { return policy_; }
    /// Sets the policy (before the first call, for the weights' dtype to follow it).
    void set_dtype_policy(mixed_precision::Policy policy);
    /// The policy's compute dtype (Keras' layer.compute_dtype).
    DType compute_dtype() const { return policy_.compute_dtype(); }

protected:
    /// For library layers: `class_name` ("Conv2D") gives the default name ("conv2d").
    Layer(std::string name, std::string_view class_name);
    void set_input_spec(InputSpec spec) { input_spec_ = std::move(spec); }
    /// Marks the layer built (for layers that build from several inputs, e.g. attention).
    /// `input_shape`: the shape it was built for (get_config's build_config), when known.
    void set_built(std::optional<Shape> input_shape = std::nullopt) {
        built_ = true;
        if (input_shape) build_input_shape_ = std::move(input_shape);
    }
    /// Sets variable_dtype() from the policy, or else from the first input (before building).
    void choose_variable_dtype(const Tensor& x) {
        if (policy_set_) {
            variable_dtype_ = policy_.variable_dtype();
        } else {
            variable_dtype_ = x.dtype() == DType::float64 ? DType::float64 : DType::float32;
        }
    }
    /// x cast to the compute dtype when a policy applies and x is floating (Keras' input autocast).
    Tensor cast_input(const Tensor& x) const;
    /// Runs fn (a layer's call) with its weights reading as the compute dtype (see dtype_policy()).
    Tensor call_with_policy(const std::function<Tensor()>& fn) const;
    /// The layer options' `dtype`: a policy name to set, or "" for the global policy.
    void use_dtype_option(const std::string& dtype) {
        if (!dtype.empty()) set_dtype_policy(mixed_precision::Policy(dtype));
    }
    /// Whether a policy applies (see dtype_policy()).
    bool dtype_policy_applies() const { return policy_set_; }
    /// Weights created now autocast (Module::add_weight asks).
    bool autocasts_new_weights() const override;
    void set_output_shape(const Shape& shape) { output_shape_ = shape; }
    /// Whether the layer's weights autocast under a mixed policy (Keras' add_weight(autocast=)).
    /// The normalization layers and Embedding say no: they compute in float32 / look up rows.
    virtual bool autocast_weights() const { return true; }

    /// Checks `x` against `spec` (the message names this layer and input `index`).
    void check_input(const Tensor& x, const InputSpec& spec, int index = 0) const;

private:
    std::string class_name_;
    InputSpec input_spec_;
    std::optional<Shape> output_shape_;
    std::optional<Shape> build_input_shape_;
    bool tracking_checked_ = false;  // the first call checked that called layers are tracked
    DType variable_dtype_ = DType::float32;
    bool built_ = false;
    int64_t inbound_nodes_ = 0;
    mixed_precision::Policy policy_ = mixed_precision::global_policy();
    bool policy_set_ = policy_.name() != "float32";
};

namespace detail {
/// The op seed of a layer's next random call: nullopt without a seed; else a new seed per call,
/// fixed by the layer's seed (as Keras' SeedGenerator), so masks differ per call yet repeat per
/// run.
std::optional<uint64_t> next_seed(const std::optional<uint64_t>& seed, uint64_t& calls);
}  // namespace detail

/// Keras' shape text: the batch dimension as None, "(None, 26, 26, 32)".
std::string shape_text(const Shape& shape);

}  // namespace tapeflow::keras::layers

TAPEFLOW_API_END
