// ThreadSanitizer check of tf::data's threads: the pipeline machinery (header templates plus
// lib/data/stage_engine.cpp, compiled here with -fsanitize=thread) runs parallel map, prefetch,
// parallel interleave, errors and early exits many times. TSan makes the run fail on any race.
#include <cstdio>
#include <numeric>
#include <stdexcept>

#include <tapeflow/data.hpp>

namespace data = tapeflow::data;

namespace {

int failures = 0;
void expect(bool ok, const char* what) {
    if (!ok) {
        std::fprintf(stderr, "FAILED: %s\n", what);
        ++failures;
    }
}

data::Dataset<int64_t> range(int64_t n) {
    std::vector<int64_t> v(static_cast<std::size_t>(n));
    std::iota(v.begin(), v.end(), 0);
    return data::from_vector(std::move(v));
}

}  // namespace

int main() {
    auto square = [](int64_t x) {
        return x * x;
    };
    auto pipeline = range(5000)
                        .map(square, 4)
                        .prefetch(3)
                        .shuffle(32, 9)
                        .map([](int64_t x) { return x + 1; }, 3)
                        .batch(7)
                        .prefetch(2);
    int64_t expect_sum = 0;
    for (int64_t x = 0; x < 5000; ++x)
        expect_sum += x * x + 1;
    for (int pass = 0; pass < 3; ++pass) {
        int64_t sum = 0;
        for (const auto& batch : pipeline)
            for (int64_t x : batch)
                sum += x;
        expect(sum == expect_sum, "sum of a full pass");
    }
    // Parallel interleave of parallel maps, stopped early many times.
    auto nested = range(8)
                      .interleave([square](int64_t) { return range(1000).map(square, 2); }, 4, 4)
                      .prefetch(4);
    for (int round = 0; round < 20; ++round) {
        int n = 0;
        for (int64_t x : nested) {
            (void)x;
            if (++n > round * 37) break;
        }
    }
    expect(data::detail::live_threads() == 0, "no thread left after early exits");
    // Errors crossing threads.
    auto failing = range(200)
                       .map(
                           [](int64_t x) {
                               if (x % 50 == 49) throw std::out_of_range("bad element");
                               return x;
                           },
                           4)
                       .prefetch(5);
    int errors = 0, values = 0;
    auto it = failing.begin();
    for (;;) {
        try {
            if (it == failing.end()) break;
            ++values;
            ++it;
        } catch (const std::out_of_range&) {
            ++errors;
            ++it;
        }
    }
    expect(errors == 4 && values == 196, "errors reach the consumer at their elements");
    std::printf("tsan pipeline: %s\n", failures ? "FAILED" : "ok");
    return failures ? 1 : 0;
}
