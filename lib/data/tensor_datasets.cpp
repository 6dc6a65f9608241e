// The Tensor side of tf::data: from_tensor_slices (views of each slice, made once per dataset)
// and the stacking behind batch() of tensors, with tf.data's message for mismatched shapes.
#include <fmt/core.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/data.hpp>
#include <tapeflow/ops/array.hpp>

namespace tapeflow::data {
namespace {

std::string dims_text(const Shape& shape) {
    return shape.debug_string();
}

// Checks that every element's component has the first element's shape and dtype.
void check_same(const Tensor& first,
                const Tensor& other,
                std::size_t component,
                std::size_t element) {
    if (other.shape() != first.shape())
        throw errors::InvalidArgumentError(fmt::format(
            "Cannot batch tensors with different shapes in component {}. First element had "
            "shape {} and element {} had shape {}.",
            component,
            dims_text(first.shape()),
            element,
            dims_text(other.shape())));
    if (other.dtype() != first.dtype())
        throw errors::InvalidArgumentError(fmt::format(
            "Cannot batch tensors with different dtypes in component {}. First element had "
            "dtype {} and element {} had dtype {}.",
            component,
            dtype_name(first.dtype()),
            element,
            dtype_name(other.dtype())));
}

}  // namespace

namespace detail {

Tensor stack_batch(std::vector<Tensor>& elements) {
    for (std::size_t i = 1; i < elements.size(); ++i)
        check_same(elements[0], elements[i], 0, i);
    return stack(elements, 0);
}

std::vector<Tensor> stack_batch(std::vector<std::vector<Tensor>>& elements) {
    const std::size_t num_components = elements.front().size();
    std::vector<Tensor> out;
    out.reserve(num_components);
    std::vector<Tensor> column(elements.size());
    for (std::size_t c = 0; c < num_components; ++c) {
        for (std::size_t i = 0; i < elements.size(); ++i) {
            if (elements[i].size() != num_components)
                throw errors::InvalidArgumentError(fmt::format(
                    "Cannot batch elements with different numbers of components: the first "
                    "element has {} and element {} has {}.",
                    num_components,
                    i,
                    elements[i].size()));
            column[i] = std::move(elements[i][c]);
            check_same(column[0], column[i], c, i);
        }
        out.push_back(stack(column, 0));
    }
    return out;
}

}  // namespace detail

Dataset<std::vector<Tensor>> from_tensor_slices(std::vector<Tensor> components) {
    if (components.empty())
        throw errors::InvalidArgumentError("from_tensor_slices: no components given.");
    const Shape& first = components[0].shape();
    for (std::size_t c = 0; c < components.size(); ++c) {
        const Shape& shape = components[c].shape();
        if (shape.rank() == 0)
            throw errors::InvalidArgumentError(fmt::format(
                "from_tensor_slices: component {} is a scalar; slicing needs rank >= 1.", c));
        if (shape[0] != first[0])
            throw errors::InvalidArgumentError(fmt::format(
                "Dimensions {} and {} are not compatible: all components need the same size "
                "of axis 0, but component 0 has shape {} and component {} has shape {}.",
                first[0],
                shape[0],
                dims_text(first),
                c,
                dims_text(shape)));
    }
    std::vector<std::vector<Tensor>> elements(static_cast<std::size_t>(first[0]));
    for (const Tensor& component : components) {
        std::vector<Tensor> slices = unstack(component, 0);
        for (std::size_t i = 0; i < slices.size(); ++i)
            elements[i].push_back(std::move(slices[i]));
    }
    return from_vector(std::move(elements));
}

}  // namespace tapeflow::data
