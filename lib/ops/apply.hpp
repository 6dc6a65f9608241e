// apply(): the one path every op call takes — validate the inputs, allocate the outputs, dispatch
// to the kernel of (op, device, dtype). Ops' public wrappers compute their output shapes and call
// it. After the kernel ran, apply() offers the op to the recording tapes (lib/autograd/tape.hpp).
#pragma once

#include <initializer_list>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <tapeflow/core/error.hpp>
#include <tapeflow/core/tensor.hpp>

#include "core/sizes.hpp"
#include "ops/attrs.hpp"
#include "ops/dispatch.hpp"
#include "ops/op.hpp"

namespace tapeflow {

/// The shape and dtype of one output. An output with `alias_input >= 0` is a view into that input's
/// storage starting `byte_offset` bytes after the input's first element (reshape, unstack, ...):
/// no memory is allocated, and when every output is a view no kernel runs.
struct OutputSpec {
    Shape shape;
    DType dtype = DType::float32;
    int alias_input = -1;
    std::size_t byte_offset = 0;
};

/// Runs `op` on `inputs` and returns its single output. The spec is taken by value: its shape
/// moves into the output tensor (one allocation less per op).
Tensor apply(Op op, std::span<const Tensor> inputs, OutputSpec output, const Attrs& attrs = {});
inline Tensor apply(Op op,
                    std::initializer_list<Tensor> inputs,
                    OutputSpec output,
                    const Attrs& attrs = {}) {
    return apply(
        op, std::span<const Tensor>(inputs.begin(), inputs.size()), std::move(output), attrs);
}

/// Runs an op with several outputs.
std::vector<Tensor> apply_multi(Op op,
                                std::span<const Tensor> inputs,
                                std::span<const OutputSpec> outputs,
                                const Attrs& attrs = {});

/// The kernel apply() runs for `op` on these inputs and outputs (a tf::function's plan resolves it
/// once: NOTE [Function replay]).
KernelFn resolve_kernel(Op op,
                        Device device,
                        std::span<const Tensor> inputs,
                        std::span<const Tensor> outputs);

/// TensorFlow's eager type check, with its dtype names: "cannot compute AddV2 as input
/// #1(zero-based) was expected to be a half tensor but is a float tensor [Op:AddV2]".
[[noreturn]] void fail_input_dtype(Op op, std::size_t index, DType expected, DType got);

/// Throws E with the formatted message and the op's TensorFlow type as op name:
///     op_fail(Op::cast, "Cast {} to {} is not supported", a, b)  ->  "... [Op:Cast]"
template <class E = errors::InvalidArgumentError, class... Args>
[[noreturn]] void op_fail(Op op, fmt::format_string<Args...> format, Args&&... args) {
    throw E(fmt::format(format, std::forward<Args>(args)...), std::string(op_type(op)));
}

}  // namespace tapeflow
