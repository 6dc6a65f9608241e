// Tensors to and from the host buffers the transport moves (transport.hpp), and the small
// collectives on strings the tensor-level ones are built from. Shared by collectives.cpp,
// distributed_optimizer.cpp and parameter_server.cpp.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <tapeflow/core/error.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/distribute.hpp>

#include "core/plugin.hpp"

namespace tapeflow::distribute::detail {

/// The dtype a tensor travels in for a reduction: float16/bfloat16 as float32, the others as
/// they are. InvalidArgumentError (naming `what`) for a dtype/op pair that has no meaning.
DType wire_dtype(DType dtype, ReduceOp op, std::string_view what);
/// A CPU tensor of `dtype` (a copy when `t` lives elsewhere or has another dtype).
Tensor on_host(const Tensor& t, DType dtype);
/// A new CPU tensor holding a copy of `nbytes` = shape x dtype bytes at `data`.
Tensor tensor_from_bytes(const void* data, const Shape& shape, DType dtype);
/// data[i] *= factor for `count` elements of a floating wire dtype.
void scale_in_place(void* data, int64_t count, DType dtype, double factor);

/// Every process's string, in rank order (two collectives: the lengths, then the bytes).
TAPEFLOW_PLUGIN_API std::vector<std::string> all_gather_strings(const std::string& mine);
/// Root's string on every process.
TAPEFLOW_PLUGIN_API std::string broadcast_string(const std::string& mine, int root);
/// "[2,3] float32"
TAPEFLOW_PLUGIN_API std::string describe(const Shape& shape, DType dtype);
/// Raises the tapeflow error type of `code` (errors that crossed processes as a code and a
/// message).
[[noreturn]] void throw_error(errors::Code code, const std::string& message);

/// Makes worker task 0 the chief (ParameterServerStrategy).
void set_chief_rank(int rank);
/// Runs `fn` on the chief only and returns its result on every process; an error it raises is
/// raised on every process, with the same type and message.
std::string run_on_chief(const std::function<std::string()>& fn);

/// A shape and dtype as bytes, and back (for headers exchanged before the data).
std::string encode_spec(const Shape& shape, DType dtype);
std::pair<Shape, DType> decode_spec(std::string_view bytes);

}  // namespace tapeflow::distribute::detail
