// The profiler's view of one op call (apply() creates one while ops are traced): host time with
// its nested ops subtracted for self time, FLOPs and output bytes from the shapes, memory in use
// at its end, and CUDA markers around its kernels on a GPU.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include <tapeflow/core/device.hpp>
#include <tapeflow/core/tensor.hpp>

#include "ops/attrs.hpp"
#include "ops/op.hpp"
#include "profiler/hooks.hpp"

namespace tapeflow::profiler::detail {

class OpScope {
public:
    OpScope(Op op, std::span<const Tensor> inputs);
    /// Records the call; not calling it (the op raised) records nothing.
    void finish(std::span<const Tensor> inputs,
                std::span<const Tensor> outputs,
                const Attrs& attrs);
    ~OpScope();
    OpScope(const OpScope&) = delete;
    OpScope& operator=(const OpScope&) = delete;

    /// The op type of the calling thread's innermost op in progress ("" when none).
    static std::string_view current_op_type() noexcept;

private:
    Op op_;
    OpScope* parent_;
    int64_t start_ns_;
    int64_t child_ns_ = 0;  // time of the ops called inside this one
    uint64_t session_;
    Device device_ = Device::cpu();
    void* gpu_begin_ = nullptr;  // backend marker, on a GPU with device_tracer_level 1
};

}  // namespace tapeflow::profiler::detail
