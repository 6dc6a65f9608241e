// A seeded, deterministic mutation fuzzer (libFuzzer needs clang; this runs with GCC, in every
// build and under the sanitizers): valid seed files are mutated (bit flips, special bytes,
// interesting integers, truncation, insertion, deletion, duplication, splicing, plus a target's
// own structural mutations) and handed to a target, which reads them in full through the public
// API and checks what it read. Mutants that read fine join the corpus to be mutated further.
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace fuzz {

using Rng = std::mt19937_64;

/// What a target found wrong with data it accepted: a value that differs from what was written.
struct WrongValue : std::logic_error {
    using std::logic_error::logic_error;
};

struct Target {
    std::string name;
    std::vector<std::string> seeds;
    /// Reads `bytes` in full: returns normally when they read fine (checking the values, throwing
    /// WrongValue on a changed one); a typed tapeflow error means "rejected", which is fine.
    std::function<void(const std::string& bytes)> run;
    /// Extra, format-aware mutations (may be empty).
    std::function<void(std::string& bytes, Rng& rng)> mutate;
};

struct Options {
    long iterations = 2000;
    double seconds = 0;  // > 0: run until this much time has passed (iterations is then ignored)
    uint64_t seed = 1;
    std::string crash_dir = ".";  // where a failing input is written
};

/// Fuzzes `target`; returns 0, or 1 after printing the failure and writing the input to a file.
/// A hang (one input taking over 20 s) ends the process with the input written too.
int run(const Target& target, const Options& options);

std::size_t pick(Rng& rng, std::size_t n);

}  // namespace fuzz
