// Picks the CPU kernel set for this CPU: the first level of cpu_levels.hpp (best first) that
// __builtin_cpu_supports() confirms (it also checks that the OS saves the AVX/AVX-512 registers),
// else the baseline set, which is the library's own register_cpu_kernels.
#include "kernels/isa/dispatch.hpp"

#include <cstdlib>
#include <string>

#include <tapeflow/core/logging.hpp>

#include "kernels/isa/cpu_levels.hpp"

namespace tapeflow {

// Each dispatched set's register_cpu_kernels, under the name make_isa_object.py gave it.
#define TAPEFLOW_CPU_LEVEL(id, level) \
    void register_cpu_kernels_##id(KernelRegistry& r) __asm__(TAPEFLOW_CPU_ENTRY ".isa_" #id);
TAPEFLOW_CPU_LEVELS
#undef TAPEFLOW_CPU_LEVEL

namespace cpu_isa {
namespace {

struct KernelSet {
    std::string_view level;
    void (*register_fn)(KernelRegistry&);
};

constexpr KernelSet kSets[] = {
#define TAPEFLOW_CPU_LEVEL(id, level) {level, &register_cpu_kernels_##id},
    TAPEFLOW_CPU_LEVELS
#undef TAPEFLOW_CPU_LEVEL
    {TAPEFLOW_CPU_BASELINE, &register_cpu_kernels},
};
constexpr const KernelSet& kBaseline = kSets[std::size(kSets) - 1];

bool cpu_supports(std::string_view level) {
#if defined(__x86_64__)
    __builtin_cpu_init();
#define TAPEFLOW_CPU_LEVEL(id, name) \
    if (level == name) return __builtin_cpu_supports(name);
    TAPEFLOW_CPU_LEVELS
#undef TAPEFLOW_CPU_LEVEL
#endif
    return level == kBaseline.level;
}

const KernelSet& choose() {
    const KernelSet* best = &kBaseline;
    for (const KernelSet& s : kSets) {
        if (cpu_supports(s.level)) {
            best = &s;
            break;
        }
    }
    const char* env = std::getenv("TAPEFLOW_CPU_ISA");
    if (env != nullptr && *env != '\0') {
        const std::string_view wanted = env;
        for (const KernelSet* s = best; s != std::end(kSets); ++s) {
            if (s->level == wanted) {
                logging::debug("CPU kernels: {} (TAPEFLOW_CPU_ISA)", s->level);
                return *s;
            }
        }
        logging::warn(
            "TAPEFLOW_CPU_ISA={} ignored: this CPU and build allow {} (built: {}); "
            "using {}",
            wanted,
            best->level,
            built_levels(),
            best->level);
    }
    logging::debug("CPU kernels: {} (built: {})", best->level, built_levels());
    return *best;
}

const KernelSet& chosen() {
    static const KernelSet& set = choose();
    return set;
}

}  // namespace

std::string_view active_level() {
    return chosen().level;
}

std::string_view built_levels() {
    static const std::string list = [] {
        std::string s;
        for (const KernelSet& k : kSets)
            s += (s.empty() ? "" : ",") + std::string(k.level);
        return s;
    }();
    return list;
}

void register_kernels(KernelRegistry& registry) {
    chosen().register_fn(registry);
}

}  // namespace cpu_isa
}  // namespace tapeflow
