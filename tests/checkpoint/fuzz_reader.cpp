// A deterministic mutation fuzzer for the checkpoint reader (libFuzzer needs clang): valid files are
// mutated (bit flips, special bytes, truncation, insertion, deletion, lying lengths, numbers swapped
// in the JSON, structural characters) and parsed and read in full; anything but a typed tapeflow
// error — or a crash, a leak or UB under -Db_sanitize=address,undefined — fails.
// Usage: fuzz_checkpoint_reader [iterations=20000] [seed=1]
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include <tapeflow/tapeflow.hpp>

#include "checkpoint/corrupt_files.hpp"
#include "train/checkpoint/checkpoint_file.hpp"

namespace tf = tapeflow;
namespace ck = tapeflow::train::ckpt;

namespace {

using Rng = std::mt19937_64;

std::string encode(const std::vector<std::pair<std::string, tf::Tensor>>& tensors, std::optional<int64_t> step) {
    std::vector<ck::TensorInfo> infos;
    std::string data;
    for (const auto& [name, t] : tensors) {
        const std::string bytes(static_cast<const char*>(t.raw_data()), t.nbytes());
        infos.push_back({name, t.dtype(), &t.shape(), t.nbytes(), tf::io::crc32c(bytes)});
        data += bytes;
    }
    return ck::encode_header(infos, step) + data;
}

std::vector<std::string> seeds() {
    const std::vector<std::pair<std::string, tf::Tensor>> many = {
        {"a/w", tf::reshape(tf::constant({1.5f, -2.f, 3.25f, 0.f, 8.f, -0.5f}), {2, 3})},
        {"b", tf::constant({int64_t{7}, int64_t{-9}})},
        {"c", tf::constant({1.0, 2.0})},
        {"e", tf::zeros({0, 3})},
        {"flag", tf::constant({true, false, true})},
        {"h", tf::constant({1.f, 2.f}).cast(tf::float16)},
        {"i", tf::constant({3, 4, 5}, tf::int32)},
        {"u", tf::constant({1, 2}, tf::uint8)},
        {"z", tf::constant({1.f, 2.f}).cast(tf::bfloat16)},
    };
    const std::vector<std::pair<std::string, tf::Tensor>> one = {{"w", tf::constant(2.5f)}};
    return {encode(many, 123), encode(one, std::nullopt),
            ckpt_test::safetensors_bytes("{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}",
                                         std::string(4, '\1'))};
}

const std::vector<std::string> kNumbers = {"0", "1", "7", "8", "-1", "4294967296", "9223372036854775807",
                                           "18446744073709551615", "18446744073709551616", "1e308", "0.5",
                                           "99999999999999999999999999", "null", "\"x\"", "[]", "{}"};
const std::string kSpecial("{}[]\":,\\ \0\x7f\xff" "0-e.", 16);

std::size_t pick(Rng& rng, std::size_t n) { return n == 0 ? 0 : std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); }

void mutate_once(std::string& s, Rng& rng) {
    const uint64_t header_len = s.size() >= 8 ? [&] {
        uint64_t n = 0;
        for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(s[static_cast<std::size_t>(i)]);
        return n;
    }() : 0;
    const std::size_t header_end = static_cast<std::size_t>(std::min<uint64_t>(s.size(), 8 + header_len));
    switch (pick(rng, 9)) {
        case 0:  // bit flips
            for (std::size_t k = 1 + pick(rng, 4); k > 0 && !s.empty(); --k) s[pick(rng, s.size())] ^= static_cast<char>(1 << pick(rng, 8));
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
        case 5: {  // a lying header length
            const uint64_t choices[] = {0, 1, header_len - 1, header_len + 1, header_len + 8, s.size() - 8, s.size(),
                                        uint64_t{1} << 32, uint64_t{1} << 63, ~uint64_t{0}, rng()};
            const uint64_t n = choices[pick(rng, std::size(choices))];
            if (s.size() < 8) s.resize(8);
            for (int i = 0; i < 8; ++i) s[static_cast<std::size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xff);
            break;
        }
        case 6: {  // a number in the JSON replaced
            if (header_end <= 8) break;
            const std::size_t at = 8 + pick(rng, header_end - 8);
            std::size_t b = at;
            while (b < header_end && !std::isdigit(static_cast<unsigned char>(s[b]))) ++b;
            std::size_t e = b;
            while (e < header_end && std::isdigit(static_cast<unsigned char>(s[e]))) ++e;
            if (b < e) s.replace(b, e - b, kNumbers[pick(rng, kNumbers.size())]);
            break;
        }
        case 7: {  // a slice of the header duplicated (structure)
            if (header_end <= 9) break;
            const std::size_t b = 8 + pick(rng, header_end - 8);
            const std::size_t len = pick(rng, std::min<std::size_t>(64, header_end - b) + 1);
            s.insert(b, s.substr(b, len));
            break;
        }
        default: {  // header characters swapped
            if (header_end <= 9) break;
            std::swap(s[8 + pick(rng, header_end - 8)], s[8 + pick(rng, header_end - 8)]);
            break;
        }
    }
}

enum class Outcome { ok, typed_error };

Outcome run_one(const std::string& bytes) {
    try {
        const auto reader = ck::CheckpointReader::from_bytes(bytes, "fuzz.safetensors");
        for (const ck::TensorEntry& e : reader->header().tensors) (void)reader->read(e);
        return Outcome::ok;
    } catch (const tf::errors::OpError&) {
        return Outcome::typed_error;
    }
}

}  // namespace

int main(int argc, char** argv) {
    const long iterations = argc > 1 ? std::atol(argv[1]) : 20000;
    const uint64_t seed = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1;
    Rng rng(seed);
    std::vector<std::string> corpus = seeds();
    const std::size_t n_seeds = corpus.size();
    long ok = 0, typed = 0;
    for (long i = 0; i < iterations; ++i) {
        std::string m = corpus[pick(rng, corpus.size())];
        for (std::size_t k = 1 + pick(rng, 3); k > 0; --k) mutate_once(m, rng);
        if (m.size() > (1u << 20)) m.resize(1u << 20);
        try {
            if (run_one(m) == Outcome::ok) {
                ++ok;
                // Mutants that still parse are kept (bounded) to be mutated further.
                if (corpus.size() < n_seeds + 256) corpus.push_back(m);
                else corpus[n_seeds + pick(rng, 256)] = m;
            } else {
                ++typed;
            }
        } catch (const std::exception& e) {
            std::fprintf(stderr, "iteration %ld: untyped exception %s: %s\n", i, typeid(e).name(), e.what());
            std::fprintf(stderr, "input (%zu bytes):", m.size());
            for (const unsigned char c : m) std::fprintf(stderr, " %02x", c);
            std::fprintf(stderr, "\n");
            return 1;
        }
    }
    std::printf("fuzz_checkpoint_reader: %ld iterations (seed %llu): %ld read fine, %ld typed errors\n", iterations,
                static_cast<unsigned long long>(seed), ok, typed);
    return 0;
}
