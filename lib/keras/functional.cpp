// The functional API: Input(), layers called on KerasTensors (a placeholder run builds them and
// gives the output shapes; the call becomes a Node), and Functional, which sorts the nodes from
// the outputs back to the inputs and runs them in that order.
#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/keras/functional.hpp>
#include <tapeflow/ops/array.hpp>
#include <tapeflow/ops/creation.hpp>
#include <tapeflow/ops/math.hpp>

#include "keras/functional_node.hpp"

namespace tapeflow::keras {

// ---- KerasTensor ----

KerasTensor::KerasTensor(std::shared_ptr<detail::Node> node, int64_t tensor_index)
    : node_(std::move(node)), index_(tensor_index) {}

namespace {
const detail::Node& node_of(const KerasTensor& t) {
    if (!t.defined())
        throw errors::InvalidArgumentError(
            "KerasTensor: this tensor is empty (default-constructed); make one with "
            "tf::keras::Input() or by calling a layer on one");
    return *t.node();
}

std::string describe(const KerasTensor& t) {
    return fmt::format("<KerasTensor shape={}, dtype={}, produced by layer '{}'>",
                       t.shape().debug_string(),
                       dtype_name(t.dtype()),
                       t.layer().name());
}
}  // namespace

const Shape& KerasTensor::shape() const {
    return node_of(*this).shapes.at(static_cast<std::size_t>(index_));
}
DType KerasTensor::dtype() const {
    return node_of(*this).dtypes.at(static_cast<std::size_t>(index_));
}
layers::Layer& KerasTensor::layer() const {
    return *node_of(*this).layer;
}
int64_t KerasTensor::node_index() const {
    return node_of(*this).node_index;
}

// ---- Layer's vector and symbolic calls ----

std::vector<Tensor> layers::Layer::call_multi(const std::vector<Tensor>& inputs, bool training) {
    if (inputs.size() != 1)
        throw errors::InvalidArgumentError(
            fmt::format("Layer \"{}\" ({}) takes one input, but was called on {} tensors",
                        name(),
                        class_name(),
                        inputs.size()));
    return {(*this)(inputs[0], training)};
}

std::vector<KerasTensor> layers::Layer::call_symbolic(const std::vector<KerasTensor>& inputs) {
    std::shared_ptr<Layer> self = weak_from_this().lock();
    if (!self)
        throw errors::InvalidArgumentError(fmt::format(
            "Layer \"{}\" ({}) was called on a KerasTensor but is not held by a std::shared_ptr; "
            "make it with std::make_shared so the functional graph can keep it",
            name(),
            class_name()));
    if (inputs.empty())
        throw errors::InvalidArgumentError(fmt::format(
            "Layer \"{}\" ({}) was called on an empty list of KerasTensors", name(), class_name()));
    // The placeholder batch: zeros, batch size 2 (1 could hide a broadcast).
    std::vector<Tensor> placeholders;
    for (const KerasTensor& x : inputs) {
        std::vector<int64_t> dims =
            node_of(x).shapes.at(static_cast<std::size_t>(x.tensor_index())).dims();
        if (!dims.empty()) dims[0] = 2;
        placeholders.push_back(zeros(Shape(dims), x.dtype()));
    }
    const std::vector<Tensor> outputs = call_multi(placeholders, false);
    if (outputs.size() == 1) set_output_shape(outputs[0].shape());
    auto node = std::make_shared<keras::detail::Node>();
    node->layer = self;
    node->inputs = inputs;
    node->node_index = inbound_nodes_++;
    for (const Tensor& y : outputs) {
        std::vector<int64_t> dims = y.shape().dims();
        if (!dims.empty()) dims[0] = -1;
        node->shapes.emplace_back(dims);
        node->dtypes.push_back(y.dtype());
    }
    std::vector<KerasTensor> out;
    for (std::size_t i = 0; i < outputs.size(); ++i)
        out.emplace_back(node, static_cast<int64_t>(i));
    return out;
}

KerasTensor layers::Layer::operator()(const std::vector<KerasTensor>& inputs) {
    std::vector<KerasTensor> out = call_symbolic(inputs);
    if (out.size() != 1)
        throw errors::InvalidArgumentError(
            fmt::format("Layer \"{}\" ({}) gives {} outputs; call call_symbolic() to get them all",
                        name(),
                        class_name(),
                        out.size()));
    return out[0];
}

KerasTensor layers::Layer::operator()(const KerasTensor& x) {
    return (*this)(std::vector<KerasTensor>{x});
}

// ---- Input ----

namespace {
Shape with_batch(const Shape& shape) {
    std::vector<int64_t> dims{-1};
    for (int64_t d : shape.dims())
        dims.push_back(d);
    return Shape(dims);
}
}  // namespace

InputLayer::InputLayer(Shape shape, DType dtype, std::string name)
    : Layer(std::move(name), "InputLayer"), batch_shape_(with_batch(shape)), dtype_(dtype) {
    for (int64_t d : shape.dims())
        if (d < 0)
            throw errors::InvalidArgumentError(fmt::format(
                "Input: every dimension after the batch must be known, got shape {} (the batch "
                "dimension is implicit: Input({{28, 28}}) takes [batch, 28, 28])",
                shape.debug_string()));
    set_output_shape(batch_shape_);
    set_built();
}

Tensor InputLayer::call(const Tensor& x, bool) {
    return x;
}

KerasTensor Input(Shape shape, DType dtype, std::string name) {
    auto layer = std::make_shared<InputLayer>(std::move(shape), dtype, std::move(name));
    auto node = std::make_shared<detail::Node>();
    node->layer = layer;
    node->shapes.push_back(layer->batch_shape());
    node->dtypes.push_back(dtype);
    return KerasTensor(node, 0);
}

// ---- Functional ----

Functional::Functional(std::vector<KerasTensor> inputs,
                       std::vector<KerasTensor> outputs,
                       std::string name)
    : Model(std::move(name), "Functional"),
      inputs_(std::move(inputs)),
      outputs_(std::move(outputs)) {
    if (inputs_.empty() || outputs_.empty())
        throw errors::InvalidArgumentError(
            fmt::format("Functional model \"{}\" needs at least one input and one output (got {} "
                        "and {})",
                        this->name(),
                        inputs_.size(),
                        outputs_.size()));
    std::set<const detail::Node*> input_nodes;
    for (std::size_t i = 0; i < inputs_.size(); ++i) {
        const detail::Node& node = node_of(inputs_[i]);
        if (!node.inputs.empty() || dynamic_cast<InputLayer*>(node.layer.get()) == nullptr)
            throw errors::InvalidArgumentError(fmt::format(
                "Functional model \"{}\": input {} must come from tf::keras::Input(), but it is "
                "{}",
                this->name(),
                i,
                describe(inputs_[i])));
        if (!input_nodes.insert(&node).second)
            throw errors::InvalidArgumentError(
                fmt::format("Functional model \"{}\": input {} ('{}') is given twice",
                            this->name(),
                            i,
                            node.layer->name()));
    }
    // Depth-first from the outputs: a node comes after every node it reads.
    std::set<const detail::Node*> done;
    std::function<void(const KerasTensor&, const KerasTensor*)> visit = [&](const KerasTensor& t,
                                                                            const KerasTensor*
                                                                                consumer) {
        const std::shared_ptr<detail::Node>& node = t.node();
        node_of(t);
        if (done.count(node.get())) return;
        if (node->inputs.empty() && !input_nodes.count(node.get()))
            throw errors::InvalidArgumentError(fmt::format(
                "Functional model \"{}\": graph disconnected: {} needs input '{}', which is not "
                "among the model's inputs ({})",
                this->name(),
                consumer ? describe(*consumer) : std::string("an output"),
                node->layer->name(),
                fmt::join(
                    [&] {
                        std::vector<std::string> names;
                        for (const auto& in : inputs_)
                            names.push_back(in.layer().name());
                        return names;
                    }(),
                    ", ")));
        for (const KerasTensor& in : node->inputs)
            visit(in, &t);
        done.insert(node.get());
        if (!node->inputs.empty()) nodes_.push_back(node);
    };
    for (const KerasTensor& out : outputs_)
        visit(out, nullptr);
    std::set<const layers::Layer*> seen;
    auto add_layer = [&](const std::shared_ptr<layers::Layer>& layer) {
        if (seen.insert(layer.get()).second) layers_.push_back(track(layer));
    };
    for (const KerasTensor& in : inputs_)
        add_layer(in.node()->layer);
    for (const auto& node : nodes_)
        add_layer(node->layer);
    set_built();
}

std::vector<std::string> Functional::output_names() const {
    std::vector<std::string> names;
    for (const KerasTensor& out : outputs_)
        names.push_back(out.layer().name());
    return names;
}

Tensor Functional::call(const Tensor& x, bool training) {
    if (inputs_.size() != 1 || outputs_.size() != 1)
        throw errors::InvalidArgumentError(fmt::format(
            "Functional model \"{}\" has {} inputs and {} outputs; call it with call_multi() (and "
            "use the std::vector<Tensor> forms of fit, evaluate and predict)",
            name(),
            inputs_.size(),
            outputs_.size()));
    return call_multi({x}, training)[0];
}

std::vector<Tensor> Functional::call_multi(const std::vector<Tensor>& inputs, bool training) {
    if (inputs.size() != inputs_.size())
        throw errors::InvalidArgumentError(
            fmt::format("Functional model \"{}\" expects {} inputs ({}) but got {} tensors",
                        name(),
                        inputs_.size(),
                        fmt::join(
                            [&] {
                                std::vector<std::string> names;
                                for (const auto& in : inputs_)
                                    names.push_back(in.layer().name());
                                return names;
                            }(),
                            ", "),
                        inputs.size()));
    std::map<const detail::Node*, std::vector<Tensor>> values;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        const KerasTensor& spec = inputs_[i];
        Tensor x = inputs[i];
        const Shape& want = spec.shape();
        bool ok = x.defined() && x.rank() == want.rank();
        for (int64_t a = 1; ok && a < want.rank(); ++a)
            ok = x.shape()[a] == want[a];
        if (!ok)
            throw errors::InvalidArgumentError(fmt::format(
                "Functional model \"{}\": input {} ('{}') expects shape {} (batch first), got {}",
                name(),
                i,
                spec.layer().name(),
                want.debug_string(),
                x.defined() ? x.shape().debug_string() : std::string("an undefined tensor")));
        if (x.dtype() != spec.dtype()) x = cast(x, spec.dtype());
        values[spec.node().get()] = {x};
    }
    for (const auto& node : nodes_) {
        std::vector<Tensor> ins;
        for (const KerasTensor& in : node->inputs)
            ins.push_back(
                values.at(in.node().get()).at(static_cast<std::size_t>(in.tensor_index())));
        values[node.get()] = node->layer->call_multi(ins, training);
    }
    std::vector<Tensor> out;
    for (const KerasTensor& t : outputs_)
        out.push_back(values.at(t.node().get()).at(static_cast<std::size_t>(t.tensor_index())));
    return out;
}

std::shared_ptr<Model> functional(std::vector<KerasTensor> inputs,
                                  std::vector<KerasTensor> outputs,
                                  std::string name) {
    return std::make_shared<Functional>(std::move(inputs), std::move(outputs), std::move(name));
}

}  // namespace tapeflow::keras
