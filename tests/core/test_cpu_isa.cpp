// The CPU kernel set picked at run time (lib/kernels/isa): the best level that was built and that
// this CPU runs, checked against the CPU's flags in /proc/cpuinfo (an independent source), or the
// level TAPEFLOW_EXPECT_CPU_ISA names (the qemu tests, whose /proc/cpuinfo is the host's).
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

#include "kernels/isa/dispatch.hpp"

namespace tf = tapeflow;

namespace {

std::set<std::string> cpu_flags() {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("flags", 0) != 0) continue;
        std::istringstream words(line.substr(line.find(':') + 1));
        std::set<std::string> flags;
        for (std::string w; words >> w;)
            flags.insert(w);
        return flags;
    }
    return {};
}

// The x86-64 psABI levels (v2 and up), as Linux names the CPUID bits.
bool has_level(const std::set<std::string>& f, std::string_view level) {
    auto all = [&](std::initializer_list<const char*> names) {
        for (const char* n : names)
            if (!f.contains(n)) return false;
        return true;
    };
    const bool v2 = all({"cx16", "lahf_lm", "popcnt", "sse4_1", "sse4_2", "ssse3"});
    const bool v3 =
        v2 && all({"avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave"});
    const bool v4 = v3 && all({"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"});
    if (level == "x86-64-v2") return v2;
    if (level == "x86-64-v3") return v3;
    if (level == "x86-64-v4") return v4;
    return true;  // the baseline
}

}  // namespace

TEST_CASE("the CPU kernels are the best set built for this CPU", "[cpu_isa]") {
    const std::string_view active = tf::cpu_isa::active_level();
    const std::string built(tf::cpu_isa::built_levels());
    std::printf("CPU kernels: %.*s (built: %s)\n",
                static_cast<int>(active.size()),
                active.data(),
                built.c_str());
    // The kernels of that set run.
    const tf::Tensor x = tf::range(0.f, 1000.f) / 1000.f;
    CHECK(tf::reduce_sum(tf::exp(x)).item<float>() == Approx(1717.4228));
    if (const char* expect = std::getenv("TAPEFLOW_EXPECT_CPU_ISA")) {
        CHECK(active == expect);
        return;
    }
    // The first built level (best first) that the CPU has.
    const auto flags = cpu_flags();
    std::string want;
    std::istringstream levels(built);
    for (std::string level; std::getline(levels, level, ',');) {
        if (has_level(flags, level)) {
            want = level;
            break;
        }
    }
    CHECK(active == want);
}
