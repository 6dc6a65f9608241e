// Shape and indexing ops: reshape, transpose, concat/stack/split, slicing,
// padding, tiling, broadcasting, gathers, and stop_gradient. Each has TensorFlow's gradient.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string_view>
#include <utility>
#include <vector>

#include <tapeflow/core/export.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/ops/math.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow {

/// Same elements, new shape; one dimension may be -1 (inferred). No copy: the result is a view
/// sharing x's storage. A different element count raises InvalidArgumentError ("Input to reshape
/// is a tensor with 6 values, but the requested shape has 8 [Op:Reshape]").
Tensor reshape(const Tensor& x, const Shape& shape);
/// As above, with the shape as a list, also with one -1; `reshape(x, {3, -1})` picks this
/// overload (a braced list), `reshape(x, tf::Shape{3, -1})` the one above, with the same result.
Tensor reshape(const Tensor& x, std::vector<int64_t> shape);
Tensor reshape(const Tensor& x, std::initializer_list<int64_t> shape);
/// Permutes the axes: output axis i is input axis perm[i]; the default reverses them. `perm` must
/// list each of 0..rank-1 once (no negative entries, as in TensorFlow), else InvalidArgumentError
/// ("1 is missing from {0,0}. [Op:Transpose]"). Moving only size-1 axes returns a view.
Tensor transpose(const Tensor& x, std::vector<int64_t> perm = {});
/// Inserts a size-1 axis at `axis` in [-rank-1, rank] (-1 = at the end). A view of x.
Tensor expand_dims(const Tensor& x, int64_t axis);
/// Removes size-1 axes: all of them by default, or the listed ones (an explicitly empty list
/// removes none). A listed axis of another size raises InvalidArgumentError ("Can not squeeze
/// dim[1], expected a dimension of 1, got 3 [Op:Squeeze]"). A view of x.
Tensor squeeze(const Tensor& x, Axes axis = {});
/// Joins tensors of one dtype and rank along an existing axis; the other dimensions must match
/// (InvalidArgumentError naming both shapes, "[Op:ConcatV2]"). Scalars cannot be joined: use stack.
Tensor concat(const std::vector<Tensor>& values, int64_t axis);
/// Joins tensors of one shape and dtype along a new axis in [-rank-1, rank] ("[Op:Pack]").
Tensor stack(const std::vector<Tensor>& values, int64_t axis = 0);
/// Splits along `axis` into its dim(axis) slices, each without that axis (the inverse of stack,
/// "[Op:Unpack]"). Slices along axis 0 are views of x.
std::vector<Tensor> unstack(const Tensor& x, int64_t axis = 0);
/// Splits into `num_splits` equal parts along `axis`; num_splits must divide dim(axis)
/// ("[Op:Split]"). Parts that are contiguous in x (axis 0) are views.
std::vector<Tensor> split(const Tensor& x, int64_t num_splits, int64_t axis = 0);
/// Splits into parts of the given sizes along `axis`; one size may be -1 (the rest), and they must
/// add up to dim(axis) ("[Op:SplitV]"). Parts that are contiguous in x (axis 0) are views.
std::vector<Tensor> split(const Tensor& x, std::vector<int64_t> sizes, int64_t axis = 0);
/// Repeats the tensor multiples[i] >= 0 times along axis i; one multiple per axis ("[Op:Tile]").
Tensor tile(const Tensor& x, std::vector<int64_t> multiples);
/// Pads each axis i with paddings[i] = (before, after) values: "CONSTANT" (constant_values),
/// "REFLECT" (mirror without the edge) or "SYMMETRIC" (mirror with the edge); the mode is
/// case-insensitive, as tf.pad upper-cases it. Every dtype. InvalidArgumentError for another mode,
/// a paddings list whose length is not the rank, negative paddings, or paddings of a REFLECT
/// (SYMMETRIC) axis that are not less than (not greater than) its size. Gradient: the interior of
/// the upstream gradient (CONSTANT), or the mirrored borders folded back (MirrorPadGrad).
Tensor pad(const Tensor& x,
           std::vector<std::pair<int64_t, int64_t>> paddings,
           std::string_view mode = "CONSTANT",
           double constant_values = 0);
/// The block starting at `begin` with `size` (-1 = to the end of that axis); both list one value
/// per axis. Every dtype; a contiguous block is a view of x (no copy). Out of bounds:
/// InvalidArgumentError as TensorFlow's ("Expected size[0] in [0, 2], but got 3 [Op:Slice]").
/// Gradient: the upstream gradient padded with zeros back to x's shape.
Tensor slice(const Tensor& x, std::vector<int64_t> begin, std::vector<int64_t> size);
/// NumPy-style strided slicing with TensorFlow's mask bit fields (bit i refers to entry i of
/// begin/end/strides): begin_mask/end_mask ignore that bound, ellipsis_mask marks at most one
/// entry that stands for all remaining axes, new_axis_mask inserts a size-1 axis, shrink_axis_mask
/// takes the single index begin[i] and drops the axis. Negative indices count from the end,
/// negative strides walk backwards, bounds are clamped (ValidateStridedSliceOp's rules).
/// Every dtype. Zero strides, out-of-range shrunk indices, too many indices and several ellipses
/// raise InvalidArgumentError. Gradient: StridedSliceGrad (the upstream scattered into zeros).
Tensor strided_slice(const Tensor& x,
                     std::vector<int64_t> begin,
                     std::vector<int64_t> end,
                     std::vector<int64_t> strides,
                     int64_t begin_mask = 0,
                     int64_t end_mask = 0,
                     int64_t ellipsis_mask = 0,
                     int64_t new_axis_mask = 0,
                     int64_t shrink_axis_mask = 0);
/// Broadcasts x to `shape` (NumPy rules: x's dims, aligned to the right, must equal the target's
/// or be 1), else InvalidArgumentError ("Unable to broadcast tensor of shape [2,3] to tensor of
/// shape [4,3] [Op:BroadcastTo]"). The gradient sums over the broadcast axes.
Tensor broadcast_to(const Tensor& x, const Shape& shape);
/// Slices of `params` along `axis` selected by integer `indices` (int32 or int64); with batch_dims
/// the first batch_dims axes of params and indices are batch axes (batch_dims <= axis; negative
/// values count from the end). Output shape: params.shape[:axis] + indices.shape[batch_dims:] +
/// params.shape[axis+1:]. Every dtype. Index out of range: InvalidArgumentError
/// ("indices[1] = 7 is not in [0, 5) [Op:GatherV2]"). The gradient w.r.t. params is an
/// IndexedSlices for axis 0 and batch_dims 0, else dense (unsorted_segment_sum).
Tensor gather(const Tensor& params,
              const Tensor& indices,
              int64_t axis = 0,
              int64_t batch_dims = 0);
/// Gathers slices of params addressed by the last axis of `indices` (int32 or int64): the result
/// has shape indices.shape[:-1] + params.shape[batch_dims + indices.shape[-1]:]; with batch_dims
/// the first batch_dims axes of both are batch axes. An index outside params: InvalidArgumentError
/// ("indices[1] = [5, 0] does not index into param shape [3,3]"). Gradient: scatter_nd.
Tensor gather_nd(const Tensor& params, const Tensor& indices, int64_t batch_dims = 0);
/// tf.scatter_nd: zeros of `shape` with each slice updates[i...] added at the index tuple
/// indices[i..., :] (its K = indices.shape[-1] leading coordinates); duplicate tuples add up.
/// indices are int32 or int64 and updates has shape indices.shape[:-1] + shape[K:]. An index
/// outside `shape`: InvalidArgumentError ("indices[1] = [5, 0] does not index into shape [3,3]").
/// The gradient w.r.t. updates is gather_nd of the upstream gradient (indices have none).
Tensor scatter_nd(const Tensor& indices, const Tensor& updates, const Shape& shape);
/// Sums the rows of `data` into `num_segments` rows: row segment_ids[i] gets data[i] (ids outside
/// [0, num_segments) are dropped, as in TensorFlow). segment_ids (int32 or int64) may have the
/// shape of any leading part of data's shape; the result is [num_segments] + the rest. Numeric
/// dtypes; results do not depend on the thread count. Densifies IndexedSlices. Gradient: the
/// upstream rows gathered by id (zeros for dropped ids).
Tensor unsorted_segment_sum(const Tensor& data, const Tensor& segment_ids, int64_t num_segments);
/// Identity in the forward pass (a view of x); no gradient flows through it (TensorFlow's
/// StopGradient: other paths from x still contribute).
Tensor stop_gradient(const Tensor& x);
/// The shape of x as an int32 vector on x's device; no gradient.
Tensor shape(const Tensor& x);

}  // namespace tapeflow

TAPEFLOW_API_END
