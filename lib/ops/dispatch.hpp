// The kernel registry: one entry per (op, device type), holding the kernel function and the dtypes
// it accepts (of the operand op_list.def names as the dispatch dtype). Backends fill it through
// explicit registration functions (register_cpu_kernels, register_cuda_kernels): self-registering
// statics would be dropped by the linker from static archives.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>

#include <tapeflow/core/device.hpp>
#include <tapeflow/core/tensor.hpp>

#include "core/plugin.hpp"
#include "ops/attrs.hpp"
#include "ops/op.hpp"

namespace tapeflow {

/// What a kernel sees: its inputs, its outputs (already allocated on `device` by apply()), the
/// attributes of the call.
struct KernelContext {
    Op op;
    Device device;
    std::span<const Tensor> inputs;
    std::span<Tensor> outputs;
    const Attrs& attrs;
};

using KernelFn = void (*)(const KernelContext& ctx);

/// A set of dtypes as a bit mask.
class DTypeSet {
public:
    constexpr DTypeSet() = default;
    constexpr DTypeSet(std::initializer_list<DType> dtypes) {
        for (DType d : dtypes)
            bits_ |= 1U << static_cast<unsigned>(d);
    }
    constexpr bool contains(DType d) const { return (bits_ >> static_cast<unsigned>(d)) & 1U; }
    constexpr DTypeSet operator|(DTypeSet other) const {
        DTypeSet s;
        s.bits_ = bits_ | other.bits_;
        return s;
    }

private:
    uint32_t bits_ = 0;
};

inline constexpr DTypeSet kFloatTypes{
    DType::float32, DType::float64, DType::float16, DType::bfloat16};
inline constexpr DTypeSet kIntTypes{DType::int32, DType::int64, DType::uint8};
inline constexpr DTypeSet kAllTypes = kFloatTypes | kIntTypes | DTypeSet{DType::bool_};

struct KernelEntry {
    KernelFn fn = nullptr;
    DTypeSet dtypes;
};

class TAPEFLOW_PLUGIN_API KernelRegistry {
public:
    /// Registers `fn` for (op, device type); registering the same pair twice is a bug.
    void add(Op op, DeviceType device, KernelFn fn, DTypeSet dtypes);
    /// The kernel for (op, device, dtype); throws UnimplementedError naming all three when missing.
    KernelFn find(Op op, Device device, DType dtype) const;
    bool has(Op op, DeviceType device) const;

private:
    KernelEntry entries_[kNumOps][2];
};

/// The process-wide registry: the CPU kernels on first use, a plugin's when it is loaded.
TAPEFLOW_PLUGIN_API const KernelRegistry& kernel_registry();
/// The registry that backend_plugin.cpp hands a plugin to register its kernels into.
KernelRegistry& mutable_kernel_registry();

/// Registration function of the CPU backend (lib/kernels/cpu/register_cpu.cpp); the CUDA
/// plugin's is cuda/ops_cuda.cpp's register_cuda_kernels.
void register_cpu_kernels(KernelRegistry& registry);

}  // namespace tapeflow
