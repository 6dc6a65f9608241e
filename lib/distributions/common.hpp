// Helpers the distribution families share: parameter conversion and checks, shapes.
#pragma once

#include <string>
#include <vector>

#include <tapeflow/distributions.hpp>

namespace tapeflow::distributions::detail {

/// The parameters as tensors of one floating-point dtype (numbers take the tensors' dtype,
/// float32 without tensors); InvalidArgumentError naming the distribution and the parameter for
/// an integer tensor or two dtypes.
std::vector<Tensor> resolve(const std::string& dist,
                            const std::vector<std::pair<const char*, const Param*>>& params);
/// Two parameters resolved to one dtype, and their broadcast shape (the batch shape of the
/// families with two scalar parameters).
struct ParamPair {
    Tensor first, second;
    Shape batch_shape;
};
ParamPair resolve_pair(const std::string& dist,
                       const char* first_name,
                       const Param& first,
                       const char* second_name,
                       const Param& second);
/// broadcast of the shapes (InvalidArgumentError naming the distribution and both parameters).
Shape broadcast_params(const std::string& dist,
                       const std::vector<std::pair<const char*, Shape>>& shapes);
/// Shape without its last `n` dims (InvalidArgumentError naming `param` when its rank is < n).
Shape drop_last(const std::string& dist, const char* param, const Shape& shape, int n);
Shape concat(const Shape& a, const Shape& b);

/// With validate_args: InvalidArgumentError "<dist>: Argument `<param>` <what>" when any element
/// of `ok` (a bool tensor) is false, quoting the first offending value of `value`.
void require(const std::string& dist,
             const char* param,
             const Tensor& ok,
             const Tensor& value,
             const char* what);

/// With validate_args: `t` > 0 ("<dist>: Argument `<param>` must be positive.").
void require_positive(const std::string& dist, const char* param, const Tensor& t);

/// A scalar of `like`'s dtype.
Tensor scalar(const Tensor& like, double value);
/// x * y, 0 where x == 0 even when y is inf or NaN (xlogy-style), d/dx = y wherever y is finite.
Tensor mul_no_nan(const Tensor& x, const Tensor& y);
/// where(cond, x, the scalar y) broadcast to cond, x.
Tensor where_scalar(const Tensor& cond, const Tensor& x, double y);

}  // namespace tapeflow::distributions::detail
