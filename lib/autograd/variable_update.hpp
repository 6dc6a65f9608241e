// In-place access to a variable's buffer for kernels that update it (the optimizers' fused
// training ops): the variable stays locked while the guard lives, and its buffer is un-shared first
// (copy-on-write), so tensors read earlier keep their values.
#pragma once

#include <mutex>

#include <tapeflow/autograd/variable.hpp>

namespace tapeflow {

class [[nodiscard]] VariableUpdate {
public:
    /// Locks `variable` and makes its buffer exclusively its own (copying it when a read still
    /// shares it).
    explicit VariableUpdate(const Variable& variable);
    VariableUpdate(const VariableUpdate&) = delete;
    VariableUpdate& operator=(const VariableUpdate&) = delete;

    /// The variable's buffer: a kernel may write it in place while this guard lives.
    const Tensor& buffer() const { return buffer_; }

private:
    std::unique_lock<std::mutex> lock_;
    Tensor buffer_;
};

}  // namespace tapeflow
