// The mutation engine and the run loop of the reader fuzzers (fuzz_driver.hpp).
#include "fuzz/fuzz_driver.hpp"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <unordered_set>

#include <fcntl.h>
#include <unistd.h>

#include <tapeflow/core/error.hpp>

namespace fuzz {
namespace {

const std::string kSpecial(
    "{}[]\":,\\ \0\x7f\x80\xff"
    "0-e.\x08\x0a\x12\x1a",
    22);
const uint64_t kInteresting[] = {0,
                                 1,
                                 0x7f,
                                 0x80,
                                 0xff,
                                 0x100,
                                 0x7fff,
                                 0xffff,
                                 0x7fffffff,
                                 0x80000000,
                                 0xffffffff,
                                 uint64_t{1} << 32,
                                 uint64_t{1} << 62,
                                 uint64_t{1} << 63,
                                 ~uint64_t{0}};

// The input being run, for the hang handler (which may only call async-signal-safe functions).
std::string hang_path;
const char* volatile current_data = nullptr;
volatile std::size_t current_size = 0;

void write_input(const std::string& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary) << bytes;
}

void on_alarm(int) {
    const int fd = ::open(hang_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
        (void)!::write(fd, current_data, current_size);
        ::close(fd);
    }
    static const char msg[] = "fuzz: an input ran for over 20 s (a hang); it is in ";
    (void)!::write(2, msg, sizeof msg - 1);
    (void)!::write(2, hang_path.data(), hang_path.size());
    (void)!::write(2, "\n", 1);
    _exit(1);
}

void mutate_once(std::string& s, Rng& rng, const std::vector<std::string>& corpus) {
    switch (pick(rng, 9)) {
        case 0:  // bit flips
            for (std::size_t k = 1 + pick(rng, 4); k > 0 && !s.empty(); --k) {
                s[pick(rng, s.size())] ^= static_cast<char>(1 << pick(rng, 8));
            }
            break;
        case 1:  // a special byte
            if (!s.empty()) s[pick(rng, s.size())] = kSpecial[pick(rng, kSpecial.size())];
            break;
        case 2:  // truncation
            s.resize(pick(rng, s.size() + 1));
            break;
        case 3: {  // insertion
            const std::size_t at = pick(rng, s.size() + 1);
            s.insert(at, std::string(1 + pick(rng, 16), kSpecial[pick(rng, kSpecial.size())]));
            break;
        }
        case 4: {  // deletion
            const std::size_t at = pick(rng, s.size() + 1);
            s.erase(at, pick(rng, 24));
            break;
        }
        case 5: {  // an interesting integer (1, 2, 4 or 8 bytes, little endian) over the bytes
            const std::size_t width = std::size_t{1} << pick(rng, 4);
            if (s.size() < width) break;
            const uint64_t v = kInteresting[pick(rng, std::size(kInteresting))];
            const std::size_t at = pick(rng, s.size() - width + 1);
            for (std::size_t i = 0; i < width; ++i)
                s[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
            break;
        }
        case 6: {  // a slice duplicated (repeated structure)
            if (s.empty()) break;
            const std::size_t b = pick(rng, s.size());
            s.insert(b, s.substr(b, pick(rng, std::min<std::size_t>(64, s.size() - b) + 1)));
            break;
        }
        case 7: {  // spliced with another corpus entry
            const std::string& other = corpus[pick(rng, corpus.size())];
            s = s.substr(0, pick(rng, s.size() + 1)) + other.substr(pick(rng, other.size() + 1));
            break;
        }
        default:  // two bytes swapped
            if (s.size() > 1) std::swap(s[pick(rng, s.size())], s[pick(rng, s.size())]);
            break;
    }
}

}  // namespace

std::size_t pick(Rng& rng, std::size_t n) {
    return n == 0 ? 0 : std::uniform_int_distribution<std::size_t>(0, n - 1)(rng);
}

int run(const Target& target, const Options& options) {
    Rng rng(options.seed);
    std::vector<std::string> corpus = target.seeds;
    const std::size_t n_seeds = corpus.size();
    std::unordered_set<std::size_t> known;  // hashes of the inputs the corpus took
    for (const std::string& s : corpus)
        known.insert(std::hash<std::string>{}(s));
    hang_path = options.crash_dir + "/fuzz-" + target.name + "-hang.bin";
    std::signal(SIGALRM, on_alarm);
    const auto start = std::chrono::steady_clock::now();
    const auto elapsed = [&] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    long ok = 0, rejected = 0, i = 0;
    for (;; ++i) {
        if (options.seconds > 0 ? (i & 63) == 0 && elapsed() >= options.seconds
                                : i >= options.iterations) {
            break;
        }
        const std::string& parent = corpus[pick(rng, corpus.size())];
        std::string m = parent;
        // Mutations can be no-ops (a bit flip of an empty input): mutate until something changed.
        for (int tries = 0; m == parent && tries < 8; ++tries) {
            for (std::size_t k = 1 + pick(rng, 3); k > 0; --k) {
                if (target.mutate && pick(rng, 3) == 0) {
                    target.mutate(m, rng);
                } else {
                    mutate_once(m, rng, corpus);
                }
            }
        }
        if (m.size() > (1u << 20)) m.resize(1u << 20);
        current_data = m.data();
        current_size = m.size();
        std::string problem;
        ::alarm(20);
        try {
            target.run(m);
            ++ok;
            if (known.insert(std::hash<std::string>{}(m))
                    .second) {  // each accepted input once, or empty files take over
                if (corpus.size() < n_seeds + 256) {
                    corpus.push_back(m);
                } else {
                    corpus[n_seeds + pick(rng, 256)] = m;
                }
            }
        } catch (const tapeflow::errors::OpError&) {
            ++rejected;
        } catch (const WrongValue& e) {
            problem = std::string("a changed value was accepted: ") + e.what();
        } catch (const std::exception& e) {
            problem = std::string("foreign exception ") + typeid(e).name() + ": " + e.what();
        }
        ::alarm(0);
        if (!problem.empty()) {
            const std::string path = options.crash_dir + "/fuzz-" + target.name + "-" +
                                     std::to_string(options.seed) + "-" + std::to_string(i) +
                                     ".bin";
            write_input(path, m);
            std::fprintf(stderr,
                         "fuzz %s: iteration %ld (seed %llu): %s\ninput (%zu bytes) in %s\n",
                         target.name.c_str(),
                         i,
                         static_cast<unsigned long long>(options.seed),
                         problem.c_str(),
                         m.size(),
                         path.c_str());
            return 1;
        }
    }
    std::printf(
        "fuzz %s: %ld inputs (seed %llu, %.1f s): %ld read fine, %ld rejected (typed errors)\n",
        target.name.c_str(),
        i,
        static_cast<unsigned long long>(options.seed),
        elapsed(),
        ok,
        rejected);
    return 0;
}

}  // namespace fuzz
