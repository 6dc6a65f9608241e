// Tensor printing in TensorFlow 2's print() format (NumPy's default print options).
#pragma once

#include <string>

#include <tapeflow/core/tensor.hpp>

namespace tapeflow {

/// "tf.Tensor(<numpy array text>, shape=(...), dtype=...)"; see lib/core/format.cpp for the rules.
std::string format_tensor(const Tensor& t);

}  // namespace tapeflow
