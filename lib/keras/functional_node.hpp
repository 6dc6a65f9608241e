// Internal to the functional API: one call of a layer on KerasTensors (Keras' Node).
#pragma once

#include <memory>
#include <vector>

#include <tapeflow/keras/functional.hpp>

namespace tapeflow::keras::detail {

struct Node {
    std::shared_ptr<layers::Layer> layer;
    std::vector<KerasTensor> inputs;  // empty for an InputLayer's node
    std::vector<Shape> shapes;        // of the outputs, batch dimension -1
    std::vector<DType> dtypes;
    int64_t node_index = 0;  // among the layer's calls on KerasTensors
};

}  // namespace tapeflow::keras::detail
