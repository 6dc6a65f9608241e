// CPU kernels of the arithmetic binary ops: the TFL_BINARY rows of kernels/shared/binary_ops.def
// (add ... divide_no_nan), one arithmetic_kernel each (the loops of elementwise_loops.hpp, the
// functors of kernels/shared/elementwise_functors.hpp); registered through
// register_elementwise_cpu.
#include "kernels/cpu/elementwise_loops.hpp"
#include "kernels/shared/elementwise_functors.hpp"

namespace tapeflow::cpu::ew {

void register_binary_cpu(KernelRegistry& r) {
    constexpr auto kCpu = DeviceType::cpu;
#define TFL_COMPARE(op, functor, dtypes)
#define TFL_BINARY(op, functor, dtypes, check, cost)                           \
    r.add(Op::op,                                                              \
          kCpu,                                                                \
          arithmetic_kernel<tapeflow::ew::functor,                             \
                            TypeSet::dtypes,                                   \
                            IntCheck::check,                                   \
                            Cost::cost == Cost::heavy ? kHeavyGrain : kGrain>, \
          dtypes_of(TypeSet::dtypes));
#include "kernels/shared/binary_ops.def"
#undef TFL_BINARY
#undef TFL_COMPARE
}

}  // namespace tapeflow::cpu::ew
