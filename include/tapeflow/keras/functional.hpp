// tf::keras's functional API (Keras 3's keras.Input and keras.Model(inputs, outputs)): Input()
// makes a KerasTensor, layers called on KerasTensors record a graph of layer calls, and Functional
// runs that graph: several inputs and outputs, shared layers (their weights counted once), models
// used as layers, summary() with Keras' "Connected to" column.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <tapeflow/core/export.hpp>
#include <tapeflow/keras/keras_tensor.hpp>
#include <tapeflow/keras/model.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow::keras {

/// The layer behind Input() (Keras' InputLayer): it has no weights and passes its input through.
class InputLayer : public layers::Layer {
public:
    /// `shape` without the batch dimension; name "" = "input_layer", "input_layer_1", ...
    InputLayer(Shape shape, DType dtype, std::string name = "");
    Tensor call(const Tensor& x, bool training) override;
    Config get_config() const override;
    /// With the batch dimension as -1.
    const Shape& batch_shape() const { return batch_shape_; }
    DType dtype() const { return dtype_; }

private:
    Shape batch_shape_;
    DType dtype_;
};

/// keras.Input(shape, dtype, name): `shape` without the batch dimension (every dimension known).
KerasTensor Input(Shape shape, DType dtype = DType::float32, std::string name = "");

/// keras.Model(inputs, outputs): runs the graph of layer calls from `inputs` to `outputs`.
///
///     auto x = tf::keras::Input({784});
///     auto h = (*std::make_shared<Dense>(64, DenseOptions{.activation = "relu"}))(x);
///     auto model = tf::keras::functional({x}, {(*std::make_shared<Dense>(10))(h)});
///
/// An output that needs an Input not among `inputs`, an input that is not an Input(), or an
/// empty list raise InvalidArgumentError naming the tensor. One input and one output: call(x)
/// and the Tensor forms of fit / evaluate / predict; otherwise the std::vector<Tensor> forms (one
/// tensor per input, in `inputs` order; per output, in `outputs` order).
class Functional : public Model {
public:
    Functional(std::vector<KerasTensor> inputs,
               std::vector<KerasTensor> outputs,
               std::string name = "");
    Tensor call(const Tensor& x, bool training) override;
    Config get_config() const override;
    std::vector<Tensor> call_multi(const std::vector<Tensor>& inputs, bool training) override;
    /// The InputLayers, then each layer once, in the order the graph runs them.
    std::vector<std::shared_ptr<layers::Layer>> layers() const override { return layers_; }
    const std::vector<KerasTensor>& inputs() const { return inputs_; }
    const std::vector<KerasTensor>& outputs() const { return outputs_; }
    /// The names of the layers that produce the outputs (Keras' output_names).
    std::vector<std::string> output_names() const;
    /// The layer calls in the order they run (Keras' _nodes, topologically sorted).
    const std::vector<std::shared_ptr<detail::Node>>& nodes() const { return nodes_; }

private:
    std::vector<KerasTensor> inputs_, outputs_;
    std::vector<std::shared_ptr<detail::Node>> nodes_;
    std::vector<std::shared_ptr<layers::Layer>> layers_;
};

/// Python's keras.Model(inputs, outputs, name).
std::shared_ptr<Model> functional(std::vector<KerasTensor> inputs,
                                  std::vector<KerasTensor> outputs,
                                  std::string name = "");

}  // namespace tapeflow::keras

TAPEFLOW_API_END
