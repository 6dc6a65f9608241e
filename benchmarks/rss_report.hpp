// Peak-RSS measurement by a separate program: the child (rss_mlp_*) reports its own peak and its
// growth over its start on stdout; bench_train runs it and reads the two numbers.
#pragma once

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>

#include <unistd.h>

namespace rss_report {

/// A /proc/self/status value ("VmRSS:", "VmHWM:") in MiB.
inline double status_mib(const std::string& key) {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line)) {
        if (line.rfind(key, 0) == 0) return std::stod(line.substr(key.size())) / 1024.0;
    }
    return 0;
}

/// In the child: runs `work` and prints "<peak MiB> <growth MiB>".
inline int report(const std::function<void()>& work) {
    const double start = status_mib("VmRSS:");
    work();
    const double peak = status_mib("VmHWM:");
    std::printf("%.3f %.3f\n", peak, peak - start);
    return 0;
}

struct Rss {
    double peak = 0;
    double growth = 0;
};

/// In the parent: runs the program at `path`; nothing when it is missing or fails.
inline std::optional<Rss> run_child(const std::string& path) {
    if (access(path.c_str(), X_OK) != 0) return std::nullopt;
    FILE* out = popen(("'" + path + "'").c_str(), "r");
    if (out == nullptr) return std::nullopt;
    Rss rss;
    const bool read = std::fscanf(out, "%lf %lf", &rss.peak, &rss.growth) == 2;
    return pclose(out) == 0 && read ? std::optional<Rss>(rss) : std::nullopt;
}

/// The directory of the running executable.
inline std::string own_directory() {
    return std::filesystem::read_symlink("/proc/self/exe").parent_path().string();
}

}  // namespace rss_report
