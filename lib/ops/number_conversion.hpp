// TensorFlow converts a Python number to a tensor of the op's dtype before the op runs
// (convert_to_tensor): a number that dtype cannot hold is an error, never a truncated value. The
// ops that take a C++ number next to a tensor (operators, fill, clip_by_value, pad, one_hot, range)
// check it here, with TensorFlow's message.
#pragma once

#include <string>
#include <string_view>

#include <tapeflow/core/dtype.hpp>

namespace tapeflow::detail {

/// InvalidArgumentError "Cannot convert <value> to EagerTensor of dtype <dtype>"
/// (pywrap_tensor.cc), with `op` as its [Op:...] suffix when given.
[[noreturn]] void cannot_convert(const std::string& value, DType dtype, std::string_view op = {});

/// Raises cannot_convert unless `dtype` holds `value` exactly: floating dtypes take any double;
/// integer dtypes a finite whole number in their range; bool 0 or 1. A C++ int passed as a double
/// parameter arrives here as a whole double, so `pad(int_tensor, p, "CONSTANT", 7)` converts and
/// 7.5 raises (TensorFlow, which sees the Python float 7.0, raises for that too).
void check_number_fits(double value, DType dtype, std::string_view op);

}  // namespace tapeflow::detail
