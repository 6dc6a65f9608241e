// Run-time choice of the CPU kernel set (lib/kernels/isa/meson.build builds one set per level of
// the cpu_dispatch meson option besides the baseline; docs/architecture.md explains why).
#pragma once

#include <string_view>

#include "ops/dispatch.hpp"

namespace tapeflow::cpu_isa {

/// The -march level of the CPU kernels this process runs: the best dispatched level the CPU
/// supports ("x86-64-v3": AVX2 and FMA), else the baseline ("x86-64", or the march option).
/// TAPEFLOW_CPU_ISA=<level> asks for a lower one (a level this CPU lacks, or that was not built,
/// is refused with a warning). Decided once, when first asked.
std::string_view active_level();

/// The levels this library was built with, best first, the baseline last (comma-separated).
std::string_view built_levels();

/// Registers the CPU kernels of active_level() (called by kernel_registry()).
void register_kernels(KernelRegistry& registry);

}  // namespace tapeflow::cpu_isa
