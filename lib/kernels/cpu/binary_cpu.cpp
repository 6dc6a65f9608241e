// CPU kernels of the binary ops beyond the basic four: floordiv, floormod, pow, maximum, minimum,
// squared_difference, divide_no_nan. Same loops as add (elementwise_loops.hpp), other functors
// (kernels/shared/elementwise_functors.hpp); registered through register_elementwise_cpu.
#include "kernels/cpu/elementwise_loops.hpp"
#include "kernels/shared/elementwise_functors.hpp"

namespace tapeflow::cpu::ew {

void register_binary_cpu(KernelRegistry& r) {
    namespace f = tapeflow::ew;
    constexpr auto kCpu = DeviceType::cpu;
    constexpr auto kNum = TypeSet::numbers;
    constexpr auto kSigned = TypeSet::signed_numbers;
    constexpr auto kFloat = TypeSet::floats;
    constexpr auto kDivisor = IntCheck::nonzero_divisor;
    r.add(Op::floordiv, kCpu, arithmetic_kernel<f::FloorDiv, kNum, kDivisor>, dtypes_of(kNum));
    r.add(Op::floormod, kCpu, arithmetic_kernel<f::FloorMod, kNum, kDivisor>, dtypes_of(kNum));
    // std::pow costs tens of cycles per element: worth threads at fewer elements.
    r.add(Op::pow,
          kCpu,
          arithmetic_kernel<f::Pow, kSigned, IntCheck::nonnegative_exponent, kHeavyGrain>,
          dtypes_of(kSigned));
    r.add(Op::maximum, kCpu, arithmetic_kernel<f::Maximum, kNum>, dtypes_of(kNum));
    r.add(Op::minimum, kCpu, arithmetic_kernel<f::Minimum, kNum>, dtypes_of(kNum));
    r.add(Op::squared_difference,
          kCpu,
          arithmetic_kernel<f::SquaredDifference, kSigned>,
          dtypes_of(kSigned));
    r.add(Op::divide_no_nan, kCpu, arithmetic_kernel<f::DivNoNan, kFloat>, dtypes_of(kFloat));
}

}  // namespace tapeflow::cpu::ew
