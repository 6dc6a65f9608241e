// Keras' merge layers (keras/src/layers/merging/): Concatenate, Add, Subtract, Multiply, Average,
// Maximum, Minimum and Dot, called on a std::vector of tensors. The element-wise ones expand
// lower-rank inputs at axis 1 until the ranks agree (Keras 3), then need every dimension equal or
// 1 (broadcast); otherwise InvalidArgumentError naming the layer and the shapes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <tapeflow/core/export.hpp>
#include <tapeflow/keras/layer.hpp>
#include <tapeflow/ops/nn.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow::keras::layers {

struct MergeOptions {
    std::string name = "";
};

/// The base of the merge layers: call on a list of tensors. Calling one on a single tensor
/// raises InvalidArgumentError (Keras: a merge layer is called on a list of inputs).
class Merge : public Layer {
public:
    using Layer::operator();
    /// Casts floating inputs to the compute dtype (under a policy), checks the count and the
    /// shapes, then merges; the output shape is recorded as Layer's.
    Tensor operator()(const std::vector<Tensor>& inputs, bool training = false);
    Tensor call(const Tensor& x, bool training) override;
    /// The functional API's vector call path (layer.hpp): the merge of all inputs.
    std::vector<Tensor> call_multi(const std::vector<Tensor>& inputs, bool training) override {
        return {(*this)(inputs, training)};
    }

protected:
    Merge(std::string name, std::string_view class_name) : Layer(std::move(name), class_name) {}
    /// The merge of inputs that passed check_inputs().
    virtual Tensor merge(const std::vector<Tensor>& inputs) = 0;
    /// Element-wise layers: the count (at least `min`, at most `max`; 0 = any) and broadcastable
    /// shapes; inputs of lower rank are expanded at axis 1 (returned).
    std::vector<Tensor> elementwise_inputs(const std::vector<Tensor>& inputs,
                                           std::size_t min,
                                           std::size_t max) const;
    virtual std::vector<Tensor> check_inputs(const std::vector<Tensor>& inputs) const {
        return elementwise_inputs(inputs, 1, 0);
    }
};

/// The sum of the inputs.
class Add : public Merge {
public:
    explicit Add(MergeOptions options = {}) : Merge(options.name, "Add") {}

protected:
    Tensor merge(const std::vector<Tensor>& inputs) override;
};

/// inputs[0] - inputs[1]: exactly two inputs.
class Subtract : public Merge {
public:
    explicit Subtract(MergeOptions options = {}) : Merge(options.name, "Subtract") {}

protected:
    Tensor merge(const std::vector<Tensor>& inputs) override;
    std::vector<Tensor> check_inputs(const std::vector<Tensor>& inputs) const override {
        return elementwise_inputs(inputs, 2, 2);
    }
};

/// The element-wise product of the inputs.
class Multiply : public Merge {
public:
    explicit Multiply(MergeOptions options = {}) : Merge(options.name, "Multiply") {}

protected:
    Tensor merge(const std::vector<Tensor>& inputs) override;
};

/// The element-wise mean of the inputs.
class Average : public Merge {
public:
    explicit Average(MergeOptions options = {}) : Merge(options.name, "Average") {}

protected:
    Tensor merge(const std::vector<Tensor>& inputs) override;
};

/// The element-wise maximum of the inputs (gradient to the larger, as tf.maximum).
class Maximum : public Merge {
public:
    explicit Maximum(MergeOptions options = {}) : Merge(options.name, "Maximum") {}

protected:
    Tensor merge(const std::vector<Tensor>& inputs) override;
};

/// The element-wise minimum of the inputs.
class Minimum : public Merge {
public:
    explicit Minimum(MergeOptions options = {}) : Merge(options.name, "Minimum") {}

protected:
    Tensor merge(const std::vector<Tensor>& inputs) override;
};

struct ConcatenateOptions {
    int64_t axis = -1;
    std::string name = "";
};

/// Joins the inputs along `axis`; every other dimension must match.
class Concatenate : public Merge {
public:
    explicit Concatenate(ConcatenateOptions options = {})
        : Merge(options.name, "Concatenate"), options_(std::move(options)) {}
    Config get_config() const override;

protected:
    Tensor merge(const std::vector<Tensor>& inputs) override;
    std::vector<Tensor> check_inputs(const std::vector<Tensor>& inputs) const override;

private:
    ConcatenateOptions options_;
};

struct DotOptions {
    bool normalize = false;  // L2-normalize both along their dot axes first
    std::string name = "";
};

/// Keras' batch_dot of two inputs over axes (one value for both, or one per input; not the batch
/// axis; negative values count from the end): [B, D] . [B, D] -> [B, 1], [B, N, D] . [B, M, D]
/// with axes 2 -> [B, N, M]. The sizes of the two axes must match.
class Dot : public Merge {
public:
    explicit Dot(Ints axes, DotOptions options = {});
    Config get_config() const override;

protected:
    Tensor merge(const std::vector<Tensor>& inputs) override;
    std::vector<Tensor> check_inputs(const std::vector<Tensor>& inputs) const override;

private:
    std::vector<int64_t> axes_of(const std::vector<Tensor>& inputs) const;
    std::vector<int64_t> axes_;
    DotOptions options_;
};

}  // namespace tapeflow::keras::layers

TAPEFLOW_API_END
