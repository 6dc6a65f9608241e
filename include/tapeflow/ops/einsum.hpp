// tf::einsum: Einstein summation over one or two operands with TensorFlow's subscript rules
// (tf.einsum / the Einsum kernel). It is a composite of transpose, reshape, gather (diagonals),
// reduce_sum and one (batched) matmul, so it runs on every device and every derivative order.
#pragma once

#include <string_view>
#include <vector>

#include <tapeflow/core/export.hpp>
#include <tapeflow/core/tensor.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow {

/// Einstein summation, e.g. "bij,bjk->bik" (batched matmul), "ij->ji", "ii->i" (diagonal),
/// "ii" (trace), "i,j->ij" (outer product), "...ij,...jk->...ik" (broadcast batch dims).
/// - Subscripts are letters a-z and A-Z; spaces are ignored; one `...` per subscript stands for
///   any number of leading/middle/trailing dimensions, which broadcast (NumPy rules) between the
///   operands and must appear in the output as `...` (when they cover any dimension).
/// - Labels missing from the output are summed; a label repeated inside one operand takes the
///   diagonal over those dimensions. Output labels must be distinct and appear in an input.
/// - Without `->` (implicit form) the output is the labels that appear exactly once, in ASCII
///   order (upper case first), after `...` when an operand has one.
/// - One or two operands of one dtype (the dtypes of matmul); a named label must have the same
///   size wherever it appears.
/// Bad subscripts raise InvalidArgumentError "[Op:Einsum]" naming the equation, the shapes and
/// the fix.
Tensor einsum(std::string_view equation, const std::vector<Tensor>& inputs);

/// TensorFlow also files einsum under tf.linalg.
namespace linalg {
using tapeflow::einsum;
}  // namespace linalg

}  // namespace tapeflow

TAPEFLOW_API_END
