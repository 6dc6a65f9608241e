// sum_to_shape (ops/sum_to_shape.hpp): the engine's un-broadcasting (NOTE [Un-broadcasting] in
// lib/autograd/backward.cpp), written with public ops so that it is differentiable itself.
#include "ops/sum_to_shape.hpp"

#include <algorithm>
#include <vector>

#include <tapeflow/core/error.hpp>
#include <tapeflow/ops/array.hpp>
#include <tapeflow/ops/math.hpp>

namespace tapeflow {

Tensor sum_to_shape(const Tensor& grad, const Shape& shape, int batch_dims) {
    const auto& g = grad.shape().dims();
    const auto& s = shape.dims();
    const auto batch = static_cast<std::size_t>(batch_dims);
    if (g.size() == batch + s.size() && std::equal(s.begin(), s.end(), g.begin() + batch_dims)) {
        return grad;
    }
    if (batch_dims > 0 && g.size() < batch + s.size()) {
        throw errors::InternalError(fmt::format(
            "a batched gradient of shape {} cannot be summed to shape {}; this is a tapeflow bug "
            "(a gradient row wrongly flagged batchable?)",
            grad.shape().debug_string(),
            shape.debug_string()));
    }
    const std::size_t lead = g.size() - s.size() - batch;  // broadcast added these leading axes
    std::vector<int64_t> axes;
    for (std::size_t i = batch; i < g.size(); ++i) {
        const std::size_t j = i - batch;
        if (j < lead || (s[j - lead] == 1 && g[i] != 1)) axes.push_back(static_cast<int64_t>(i));
    }
    Tensor reduced = axes.empty() ? grad : reduce_sum(grad, Axes(axes), /*keepdims=*/true);
    if (batch_dims == 0) return reshape(reduced, shape);
    std::vector<int64_t> dims(g.begin(), g.begin() + batch_dims);
    dims.insert(dims.end(), s.begin(), s.end());
    return reshape(reduced, Shape(std::move(dims)));
}

}  // namespace tapeflow
