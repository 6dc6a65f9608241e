// The merge layers: checks with Keras 3's messages (plus the shapes), then add / subtract /
// multiply / maximum / minimum / concat / batched matmul.
#include <optional>

#include <fmt/format.h>

#include <tapeflow/core/device.hpp>
#include <tapeflow/core/error.hpp>
#include <tapeflow/keras/layers/merging.hpp>
#include <tapeflow/ops/array.hpp>
#include <tapeflow/ops/math.hpp>

namespace tapeflow::keras::layers {

namespace {

std::string shapes_text(const std::vector<Tensor>& inputs) {
    std::string text = "[";
    for (std::size_t i = 0; i < inputs.size(); ++i)
        text += (i ? ", " : "") + shape_text(inputs[i].shape());
    return text + "]";
}

int64_t resolve(int64_t axis, int64_t rank) {
    return axis < 0 ? axis + rank : axis;
}

}  // namespace

// ---- Merge ----

Tensor Merge::call(const Tensor&, bool) {
    throw errors::InvalidArgumentError(
        fmt::format("layer \"{}\" ({}): a merge layer should be called on a list of inputs "
                    "(std::vector<Tensor>), got a single tensor",
                    name(),
                    class_name()));
}

Tensor Merge::operator()(const std::vector<Tensor>& inputs, bool) {
    for (std::size_t i = 0; i < inputs.size(); ++i)
        if (!inputs[i].defined())
            throw errors::InvalidArgumentError(fmt::format(
                "layer \"{}\" ({}): input {} is an undefined tensor", name(), class_name(), i));
    const auto scope = name_scope();
    std::optional<DeviceScope> on_device;
    if (!inputs.empty() && inputs[0].device() != default_device())
        on_device.emplace(inputs[0].device());
    std::vector<Tensor> in;
    in.reserve(inputs.size());
    for (const Tensor& x : inputs)
        in.push_back(cast_input(x));
    in = check_inputs(in);
    if (!built()) {
        choose_variable_dtype(in[0]);
        set_built();
    }
    Tensor y = call_with_policy([&] { return merge(in); });
    set_output_shape(y.shape());
    return y;
}

std::vector<Tensor> Merge::elementwise_inputs(const std::vector<Tensor>& inputs,
                                              std::size_t min,
                                              std::size_t max) const {
    if (inputs.size() < min || (max != 0 && inputs.size() > max)) {
        if (min == max)
            throw errors::InvalidArgumentError(fmt::format(
                "A `{}` layer (\"{}\") should be called on exactly {} inputs. Received: {} "
                "input(s) of shapes {}",
                class_name(),
                name(),
                min,
                inputs.size(),
                shapes_text(inputs)));
        throw errors::InvalidArgumentError(fmt::format(
            "A merge layer (\"{}\", {}) should be called on a list of at least {} input(s). "
            "Received: {}",
            name(),
            class_name(),
            min,
            inputs.size()));
    }
    int64_t rank = 0;
    for (const Tensor& x : inputs)
        rank = std::max(rank, x.rank());
    std::vector<Tensor> out;
    for (Tensor x : inputs) {
        if (x.rank() == 0 && rank > 0)
            throw errors::InvalidArgumentError(
                fmt::format("layer \"{}\" ({}): inputs need a batch dimension, got shapes {}",
                            name(),
                            class_name(),
                            shapes_text(inputs)));
        while (x.rank() < rank)
            x = expand_dims(x, 1);
        out.push_back(x);
    }
    for (std::size_t i = 1; i < out.size(); ++i) {
        for (int64_t d = 0; d < rank; ++d) {
            const int64_t a = out[0].shape()[d], b = out[i].shape()[d];
            if (a != b && a != 1 && b != 1)
                throw errors::InvalidArgumentError(fmt::format(
                    "layer \"{}\" ({}): Inputs have incompatible shapes. Received shapes {} and "
                    "{} (dimension {}: {} vs {}; sizes must match or be 1)",
                    name(),
                    class_name(),
                    shape_text(inputs[0].shape()),
                    shape_text(inputs[i].shape()),
                    d,
                    a,
                    b));
        }
        if (out[i].dtype() != out[0].dtype())
            throw errors::InvalidArgumentError(
                fmt::format("layer \"{}\" ({}): inputs of different dtypes, {} and {}",
                            name(),
                            class_name(),
                            dtype_name(out[0].dtype()),
                            dtype_name(out[i].dtype())));
    }
    return out;
}

Tensor Add::merge(const std::vector<Tensor>& inputs) {
    Tensor y = inputs[0];
    for (std::size_t i = 1; i < inputs.size(); ++i)
        y = y + inputs[i];
    return y;
}

Tensor Subtract::merge(const std::vector<Tensor>& inputs) {
    return inputs[0] - inputs[1];
}

Tensor Multiply::merge(const std::vector<Tensor>& inputs) {
    Tensor y = inputs[0];
    for (std::size_t i = 1; i < inputs.size(); ++i)
        y = y * inputs[i];
    return y;
}

Tensor Average::merge(const std::vector<Tensor>& inputs) {
    Tensor y = inputs[0];
    for (std::size_t i = 1; i < inputs.size(); ++i)
        y = y + inputs[i];
    return y / scalar_like(y, static_cast<double>(inputs.size()));
}

Tensor Maximum::merge(const std::vector<Tensor>& inputs) {
    Tensor y = inputs[0];
    for (std::size_t i = 1; i < inputs.size(); ++i)
        y = maximum(y, inputs[i]);
    return y;
}

Tensor Minimum::merge(const std::vector<Tensor>& inputs) {
    Tensor y = inputs[0];
    for (std::size_t i = 1; i < inputs.size(); ++i)
        y = minimum(y, inputs[i]);
    return y;
}

// ---- Concatenate ----

std::vector<Tensor> Concatenate::check_inputs(const std::vector<Tensor>& inputs) const {
    if (inputs.empty())
        throw errors::InvalidArgumentError(fmt::format(
            "A `Concatenate` layer (\"{}\") should be called on a list of at least 1 input",
            name()));
    const int64_t rank = inputs[0].rank();
    const int64_t axis = resolve(options_.axis, rank);
    bool ok = axis >= 0 && axis < rank;
    for (const Tensor& x : inputs) {
        ok = ok && x.rank() == rank && x.dtype() == inputs[0].dtype();
        for (int64_t d = 0; ok && d < rank; ++d)
            ok = d == axis || x.shape()[d] == inputs[0].shape()[d];
    }
    if (!ok)
        throw errors::InvalidArgumentError(fmt::format(
            "layer \"{}\" (Concatenate): A `Concatenate` layer requires inputs with matching "
            "shapes (and dtypes) except for the concatenation axis. Received: axis={}, "
            "input_shape={}",
            name(),
            options_.axis,
            shapes_text(inputs)));
    return inputs;
}

Tensor Concatenate::merge(const std::vector<Tensor>& inputs) {
    return inputs.size() == 1 ? inputs[0] : concat(inputs, options_.axis);
}

// ---- Dot ----

Dot::Dot(Ints axes, DotOptions options)
    : Merge(options.name, "Dot"), axes_(axes.values()), options_(std::move(options)) {
    if (axes_.size() != 1 && axes_.size() != 2)
        throw errors::InvalidArgumentError(fmt::format(
            "layer \"{}\" (Dot): axes must be one integer or a list of two, got {} values",
            name(),
            axes_.size()));
}

std::vector<int64_t> Dot::axes_of(const std::vector<Tensor>& inputs) const {
    const int64_t a = axes_[0], b = axes_.size() == 2 ? axes_[1] : axes_[0];
    return {resolve(a, inputs[0].rank()), resolve(b, inputs[1].rank())};
}

std::vector<Tensor> Dot::check_inputs(const std::vector<Tensor>& inputs) const {
    if (inputs.size() != 2)
        throw errors::InvalidArgumentError(fmt::format(
            "A `Dot` layer (\"{}\") should be called on a list of 2 inputs. Received: {} "
            "input(s)",
            name(),
            inputs.size()));
    const Tensor &x = inputs[0], &y = inputs[1];
    if (x.rank() < 2 || y.rank() < 2 || x.shape()[0] != y.shape()[0])
        throw errors::InvalidArgumentError(fmt::format(
            "layer \"{}\" (Dot): inputs need rank >= 2 and one batch size, got shapes {} and {}",
            name(),
            shape_text(x.shape()),
            shape_text(y.shape())));
    const std::vector<int64_t> ax = axes_of(inputs);
    if (ax[0] <= 0 || ax[0] >= x.rank() || ax[1] <= 0 || ax[1] >= y.rank())
        throw errors::InvalidArgumentError(fmt::format(
            "layer \"{}\" (Dot): axes ({}) out of range or on the batch axis for shapes {} and {}",
            name(),
            fmt::join(axes_, ", "),
            shape_text(x.shape()),
            shape_text(y.shape())));
    if (x.shape()[ax[0]] != y.shape()[ax[1]])
        throw errors::InvalidArgumentError(fmt::format(
            "layer \"{}\" (Dot): Incompatible input shapes: axis values {} (at axis {}) != {} (at "
            "axis {}). Full input shapes: {}, {}",
            name(),
            x.shape()[ax[0]],
            ax[0],
            y.shape()[ax[1]],
            ax[1],
            shape_text(x.shape()),
            shape_text(y.shape())));
    if (x.dtype() != y.dtype())
        throw errors::InvalidArgumentError(
            fmt::format("layer \"{}\" (Dot): inputs of different dtypes, {} and {}",
                        name(),
                        dtype_name(x.dtype()),
                        dtype_name(y.dtype())));
    return inputs;
}

namespace {
// Keras' ops.nn.normalize(x, axis) with its default epsilon 1e-7: x * rsqrt(max(sum x^2, eps^2)).
Tensor l2_normalize(const Tensor& x, int64_t axis) {
    const Tensor sq = reduce_sum(square(x), Axes(axis), true);
    return x * rsqrt(maximum(sq, scalar_like(sq, 1e-14)));
}
}  // namespace

Tensor Dot::merge(const std::vector<Tensor>& inputs) {
    const std::vector<int64_t> ax = axes_of(inputs);
    Tensor x = inputs[0], y = inputs[1];
    if (options_.normalize) {
        x = l2_normalize(x, ax[0]);
        y = l2_normalize(y, ax[1]);
    }
    // Keras' batch_dot: x's axis last, y's axis second, both squashed to rank 3, one matmul.
    const int64_t x_rank = x.rank(), y_rank = y.rank();
    std::vector<int64_t> px, py{0, ax[1]};
    for (int64_t d = 0; d < x_rank; ++d)
        if (d != ax[0]) px.push_back(d);
    px.push_back(ax[0]);
    for (int64_t d = 1; d < y_rank; ++d)
        if (d != ax[1]) py.push_back(d);
    x = transpose(x, px);
    y = transpose(y, py);
    const int64_t batch = x.shape()[0], depth = x.shape()[-1];
    std::vector<int64_t> out{batch};
    int64_t x_mid = 1, y_rest = 1;
    for (int64_t d = 1; d < x_rank - 1; ++d) {
        out.push_back(x.shape()[d]);
        x_mid *= x.shape()[d];
    }
    for (int64_t d = 2; d < y_rank; ++d) {
        out.push_back(y.shape()[d]);
        y_rest *= y.shape()[d];
    }
    const Tensor z =
        matmul(reshape(x, Shape{batch, x_mid, depth}), reshape(y, Shape{batch, depth, y_rest}));
    if (out.size() == 1) out.push_back(1);  // two rank-2 inputs: [B, 1]
    return reshape(z, Shape(out));
}

}  // namespace tapeflow::keras::layers
