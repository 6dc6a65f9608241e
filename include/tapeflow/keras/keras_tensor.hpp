// tf::keras::KerasTensor: a symbolic tensor of the functional API (Keras 3's KerasTensor): a shape
// whose first (batch) dimension is -1 (None), a dtype, and the layer call that produced it. Made
// by tf::keras::Input() and by calling layers on KerasTensors (functional.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <tapeflow/core/dtype.hpp>
#include <tapeflow/core/export.hpp>
#include <tapeflow/core/shape.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow::keras {

namespace layers {
class Layer;
}
namespace detail {
/// One call of a layer on KerasTensors (Keras' Node): the layer, its input KerasTensors, and the
/// shapes and dtypes of its outputs (defined in lib/keras/functional_node.hpp).
struct Node;
}  // namespace detail

class KerasTensor {
public:
    KerasTensor() = default;
    KerasTensor(std::shared_ptr<detail::Node> node, int64_t tensor_index);

    bool defined() const { return node_ != nullptr; }
    /// With the batch dimension first, as -1 ("None"): Input({784}) has shape [-1, 784].
    const Shape& shape() const;
    DType dtype() const;
    /// The layer whose call produced this tensor (an InputLayer for Input()), the index of that
    /// call among the layer's calls on KerasTensors and of this tensor among its outputs: Keras'
    /// _keras_history, printed by summary()'s "Connected to" as "dense[0][0]".
    layers::Layer& layer() const;
    int64_t node_index() const;
    int64_t tensor_index() const { return index_; }
    const std::shared_ptr<detail::Node>& node() const { return node_; }

private:
    std::shared_ptr<detail::Node> node_;
    int64_t index_ = 0;
};

}  // namespace tapeflow::keras

TAPEFLOW_API_END
