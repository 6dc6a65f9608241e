// tf::random: TensorFlow's numbers bit for bit. The Philox generator against its published test
// vectors, values printed by TensorFlow's docs, tests and tutorials (each with its source),
// TensorFlow 2 eager's seed rules and per-call reservations, independence from the thread count,
// and the moments of each distribution.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include <catch2/catch.hpp>
#include <omp.h>

#include <tapeflow/tapeflow.hpp>

#include "kernels/shared/distributions.hpp"
#include "kernels/shared/python_random.hpp"

namespace tf = tapeflow;
namespace philox = tf::philox;

namespace {

// The first n float32 standard normals of a generator position, as TensorFlow's kernel lays them.
std::vector<float> normals_at(const philox::Generator& gen, int n) {
    std::vector<float> out(static_cast<std::size_t>(n));
    for (int g = 0; 4 * g < n; ++g) {
        float v[4];
        philox::sample_group<float>(philox::Dist::normal,
                                    philox::Format::f32,
                                    gen,
                                    static_cast<uint64_t>(g),
                                    1.0f,
                                    0.0f,
                                    v);
        for (int j = 0; j < 4 && 4 * g + j < n; ++j)
            out[static_cast<std::size_t>(4 * g + j)] = v[j];
    }
    return out;
}

}  // namespace

TEST_CASE("Philox4x32-10 matches the Random123 known-answer vectors", "[random]") {
    auto run = [](philox::Block counter, philox::Key key) {
        return philox::generate(key, counter);
    };
    auto b = run({{0, 0, 0, 0}}, {{0, 0}});
    CHECK(b.v[0] == 0x6627e8d5U);
    CHECK(b.v[1] == 0xe169c58dU);
    CHECK(b.v[2] == 0xbc57ac4cU);
    CHECK(b.v[3] == 0x9b00dbd8U);
    b = run({{0xffffffffU, 0xffffffffU, 0xffffffffU, 0xffffffffU}}, {{0xffffffffU, 0xffffffffU}});
    CHECK(b.v[0] == 0x408f276dU);
    CHECK(b.v[1] == 0x41c83b0eU);
    CHECK(b.v[2] == 0xa20bc7c6U);
    CHECK(b.v[3] == 0x6d5451fdU);
    b = run({{0x243f6a88U, 0x85a308d3U, 0x13198a2eU, 0x03707344U}}, {{0xa4093822U, 0x299f31d0U}});
    CHECK(b.v[0] == 0xd16cfe09U);
    CHECK(b.v[1] == 0x94fdccebU);
    CHECK(b.v[2] == 0x5001e420U);
    CHECK(b.v[3] == 0x24126ea1U);
}

TEST_CASE("skip moves the 128-bit counter with TensorFlow's carries", "[random]") {
    auto gen = philox::Generator::from_seeds(0x0123456789abcdefULL, 0xfedcba9876543210ULL);
    CHECK(gen.key.k[0] == 0x89abcdefU);
    CHECK(gen.key.k[1] == 0x01234567U);
    CHECK(gen.counter.v[0] == 0);
    CHECK(gen.counter.v[2] == 0x76543210U);
    CHECK(gen.counter.v[3] == 0xfedcba98U);
    gen.counter = {{0xffffffffU, 0xffffffffU, 0xffffffffU, 7}};
    gen.skip(1);
    CHECK(gen.counter.v[0] == 0);
    CHECK(gen.counter.v[1] == 0);
    CHECK(gen.counter.v[2] == 0);
    CHECK(gen.counter.v[3] == 8);
    gen.skip(0x100000003ULL);
    CHECK(gen.counter.v[0] == 3);
    CHECK(gen.counter.v[1] == 1);
}

TEST_CASE("the classic tutorial's tf.random_normal([2, 3], stddev=1, seed=1)",
          "[random][tf_values]") {
    // Printed by the TF1 tutorials and books (e.g. "TensorFlow: Google deep learning framework in
    // practice", chapter 3, and the TensorFlow 1 get-started material): a graph op with only an op
    // seed uses the pair (DEFAULT_GRAPH_SEED, 1) from the start of its stream. In tapeflow that is
    // the first call with seed 1 after set_seed(kDefaultGraphSeed) (or with no global seed at all).
    const std::vector<float> expected{
        -0.8113182f, 1.4845988f, 0.06532937f, -2.4427042f, 0.0992484f, 0.5912243f};
    tf::random::set_seed(tf::random::kDefaultGraphSeed);
    CHECK(tf::random::normal({2, 3}, 0, 1, tf::float32, 1).to_vector<float>() == expected);
    // the same stream at the generator level: key 87654321, counter (0, 0, 1)
    CHECK(normals_at(philox::Generator::from_seeds(87654321, 1), 6) == expected);

    // The same book's forward pass: w1 = random_normal([2, 3], seed=1), w2 = random_normal([3, 1],
    // seed=1) (a second graph op: its own stream from the start), x = [[0.7, 0.9]] gives
    // [[3.95757794]].
    tf::random::set_seed(tf::random::kDefaultGraphSeed);
    const tf::Tensor w1 = tf::random::normal({2, 3}, 0, 1, tf::float32, 1);
    tf::random::set_seed(tf::random::kDefaultGraphSeed);
    const tf::Tensor w2 = tf::random::normal({3, 1}, 0, 1, tf::float32, 1);
    const tf::Tensor y = tf::matmul(tf::matmul(tf::constant({{0.7f, 0.9f}}), w1), w2);
    CHECK(y.item<float>() == Approx(3.95757794).epsilon(1e-7));
}

TEST_CASE("tf.random.Generator.from_seed(1234) and stateless_normal seed=[1, 2]",
          "[random][tf_values]") {
    // The same normal distribution in TensorFlow's other Philox kernels. Generator.from_seed(1234)
    // starts at key 0, counter 1234 (tf.random.Generator's docstring, and
    // stateful_random_ops_test.py testTF1, whose second call starts 6 * 256 blocks later: 256 per
    // output). These sources print 7 or 8 digits, not always enough to name the float: compared
    // within 1e-7.
    const auto close = [](const std::vector<float>& got, const std::vector<float>& printed) {
        REQUIRE(got.size() == printed.size());
        for (std::size_t i = 0; i < got.size(); ++i)
            CHECK(got[i] == Approx(printed[i]).epsilon(1e-7));
    };
    philox::Generator gen{{{0, 0}}, {{1234, 0, 0, 0}}};
    close(normals_at(gen, 6),
          {0.9356609f, 1.0854305f, -0.93788373f, -0.50615472f, 1.31697023f, 0.71375787f});
    gen.skip(6 * 256);
    close(normals_at(gen, 6),
          {-0.3964749f, 0.8369565f, -0.30946946f, 1.1206646f, 1.00852597f, -0.10185789f});
    // stateless_normal([2, 3], seed=[1, 2]) (TensorFlow's "Random number generation" guide): the
    // seed pair is the counter under a fixed key; that block gives the op's key and counter words.
    const philox::Block mix = philox::generate({{0x3ec8f720U, 0x02461e29U}}, {{1, 0, 2, 0}});
    const philox::Generator stateless{{{mix.v[0], mix.v[1]}}, {{0, 0, mix.v[2], mix.v[3]}}};
    // The guide's output differs from TensorFlow's CPU kernel by up to 2 ulps in two values
    // (0.07356432 and -0.95385653 here): its notebook runs where the float sin/log are not glibc's.
    for (auto [got, printed] : {std::pair{normals_at(stateless, 6)[2], 0.07356433f},
                                std::pair{normals_at(stateless, 6)[5], -0.95385665f}}) {
        CHECK(got == Approx(printed).epsilon(2e-7));
    }
    const auto s6 = normals_at(stateless, 6);
    close({s6[0], s6[1], s6[3], s6[4]}, {0.5441101f, 0.20738031f, 0.04643455f, -1.30159f});
}

TEST_CASE("op seeds come from Python's random.Random(global seed), as in TF2 eager", "[random]") {
    // CPython 3: random.Random(1234).getrandbits(32) x 3 = 4150886329, 3342196574, 1892932127, so
    // randint(0, 2**31 - 1) rejects the first two; Random(0) and a seed past 32 bits likewise.
    tf::random_detail::PythonRandom r(1234);
    CHECK(r.next32() == 4150886329U);
    CHECK(r.next32() == 3342196574U);
    CHECK(r.next32() == 1892932127U);
    tf::random_detail::PythonRandom a(1234);
    CHECK(a.randint_int31() == 1892932127U);
    CHECK(a.randint_int31() == 501869158U);
    CHECK(a.randint_int31() == 32175636U);
    CHECK(tf::random_detail::PythonRandom(0).randint_int31() == 1654615998U);
    CHECK(tf::random_detail::PythonRandom((uint64_t{1} << 40) + 5).randint_int31() == 1153647273U);

    // tf.random.set_seed(1234); tf.random.normal([3]) uses the pair (1234, 1892932127), the next
    // op (1234, 501869158)
    tf::random::set_seed(1234);
    const auto first = tf::random::normal({3}).to_vector<float>();
    const auto second = tf::random::uniform({3}).to_vector<float>();
    tf::random::set_seed(1234);
    CHECK(tf::random::normal({3}, 0, 1, tf::float32, 1892932127).to_vector<float>() == first);
    CHECK(tf::random::uniform({3}, 0, 1, tf::float32, 501869158).to_vector<float>() == second);
    CHECK(tf::random::get_global_seed() == 1234U);
}

TEST_CASE("a second call with the same seeds continues 256 blocks per output later", "[random]") {
    // tf.random.set_seed's docs: uniform([1], seed=1) twice gives 'A1' then 'A2' (one cached
    // kernel); set_seed resets it. TensorFlow's kernel reserves 256 blocks per output of each call.
    tf::random::set_seed(tf::random::kDefaultGraphSeed);
    const auto a1 = tf::random::normal({2, 3}, 0, 1, tf::float32, 1).to_vector<float>();
    const auto a2 = tf::random::normal({5}, 0, 1, tf::float32, 1).to_vector<float>();
    const auto u1 =
        tf::random::uniform({4}, 0, 1, tf::float32, 1).to_vector<float>();  // its own kernel
    const auto d1 =
        tf::random::normal({4}, 0, 1, tf::float64, 1).to_vector<double>();  // and this one
    tf::random::set_seed(tf::random::kDefaultGraphSeed);
    const auto all = tf::random::normal({6 * 256 * 4 + 5}, 0, 1, tf::float32, 1).to_vector<float>();
    CHECK(std::equal(a1.begin(), a1.end(), all.begin()));
    CHECK(std::equal(a2.begin(), a2.end(), all.begin() + 6 * 256 * 4));
    CHECK(tf::random::uniform({4}, 0, 1, tf::float32, 1).to_vector<float>() == u1);
    CHECK(tf::random::normal({4}, 0, 1, tf::float64, 1).to_vector<double>() == d1);
}

TEST_CASE("values do not depend on the thread count", "[random]") {
    const int saved = omp_get_max_threads();
    for (auto dtype : {tf::float32, tf::float64, tf::float16, tf::int64}) {
        CAPTURE(tf::dtype_name(dtype));
        const double hi = dtype == tf::int64 ? 1000 : 1;
        tf::random::set_seed(5);
        auto many = tf::random::truncated_normal(
                        {100001}, 0, 1, dtype == tf::int64 ? tf::float32 : dtype, 3)
                        .to_vector<double>();
        auto uni = tf::random::uniform({100001}, 0, hi, dtype, 3).to_vector<double>();
        tf::random::set_seed(5);
        omp_set_num_threads(1);
        CHECK(tf::random::truncated_normal(
                  {100001}, 0, 1, dtype == tf::int64 ? tf::float32 : dtype, 3)
                  .to_vector<double>() == many);
        CHECK(tf::random::uniform({100001}, 0, hi, dtype, 3).to_vector<double>() == uni);
        omp_set_num_threads(saved);
    }
}

TEST_CASE("each distribution follows TensorFlow's kernel on the raw words", "[random]") {
    // Rebuilt here from the words of the stream (random_distributions.h): uniform float = 23 bits
    // under exponent 0 minus 1, then * (maxval - minval) + minval in float; int32 = lo + word %
    // range; int64 = lo + (low word | high word << 32) % range; truncated normal group g = the
    // first four Box-Muller values with |v| < 2 of the words from block 256 g on.
    tf::random::set_seed(tf::random::kDefaultGraphSeed);
    const auto gen = philox::Generator::from_seeds(tf::random::kDefaultGraphSeed, 9);
    const auto uni = tf::random::uniform({6}, -1, 2.5, tf::float32, 9).to_vector<float>();
    const auto ints = tf::random::uniform({5}, -3, 10, tf::int32, 9).to_vector<int32_t>();
    const auto longs = tf::random::uniform({3}, 0, 1e12, tf::int64, 9).to_vector<int64_t>();
    const auto trunc = tf::random::truncated_normal({9}, 0, 1, tf::float32, 9).to_vector<float>();
    philox::Generator g = gen;
    const philox::Block b0 = g.next(), b1 = g.next();
    const uint32_t words[8] = {
        b0.v[0], b0.v[1], b0.v[2], b0.v[3], b1.v[0], b1.v[1], b1.v[2], b1.v[3]};
    for (int i = 0; i < 6; ++i) {
        const float unit = philox::uint32_to_float(words[i]);
        volatile float scaled = unit * 3.5f;
        CHECK(uni[static_cast<std::size_t>(i)] == scaled + -1.0f);
    }
    for (int i = 0; i < 5; ++i)
        CHECK(ints[static_cast<std::size_t>(i)] == -3 + static_cast<int32_t>(words[i] % 13));
    for (int i = 0; i < 3; ++i) {
        const uint64_t bits = words[2 * i] | (static_cast<uint64_t>(words[2 * i + 1]) << 32);
        CHECK(longs[static_cast<std::size_t>(i)] == static_cast<int64_t>(bits % 1000000000000ULL));
    }
    for (int group = 0; group < 3; ++group) {
        philox::WordStream stream{gen};
        stream.gen.skip(256 * static_cast<uint64_t>(group));
        std::vector<float> kept;
        while (kept.size() < 4) {
            float f0 = 0, f1 = 0;
            const uint32_t x0 = stream.next();
            philox::box_muller_float(x0, stream.next(), f0, f1);
            for (float f : {f0, f1}) {
                if (std::fabs(f) < 2.0f && kept.size() < 4) kept.push_back(f);
            }
        }
        for (int j = 0; j < 4 && 4 * group + j < 9; ++j) {
            CHECK(trunc[static_cast<std::size_t>(4 * group + j)] ==
                  kept[static_cast<std::size_t>(j)]);
        }
    }
}

// TensorFlow's BoxMullerDouble (random_distributions.h) written out from its words: two 52-bit
// uniforms, u1 clamped to 1e-7, sqrt(-2 log u1) times sincos(2 pi u2), with the C library's log
// and sincos as TensorFlow calls them on Linux.
namespace {
std::pair<double, double> tf_box_muller_double(philox::WordStream& words) {
    uint32_t x[4];
    for (uint32_t& w : x)
        w = words.next();
    auto unit = [](uint32_t hi, uint32_t lo) {
        const uint64_t bits = (uint64_t{1023} << 52) | (uint64_t{hi & 0xfffffU} << 32) | lo;
        double d = 0;
        std::memcpy(&d, &bits, sizeof d);
        return d - 1.0;
    };
    const double u1 = std::max(unit(x[0], x[1]), 1.0e-7);
    const double v1 = 2 * M_PI * unit(x[2], x[3]);
    const double r = std::sqrt(-2.0 * std::log(u1));
    double s = 0, c = 0;
    ::sincos(v1, &s, &c);
    return {s * r, c * r};
}
}  // namespace

TEST_CASE("float64 normals are TensorFlow's BoxMullerDouble with the C library's log and sincos",
          "[random]") {
    // 20000 values: an own log or sin/cos within an ulp of glibc's (tapeflow's before) differs
    // from TensorFlow's in about 9% of the pairs, so this would fail on hundreds.
    const int n = 20000;
    tf::random::set_seed(tf::random::kDefaultGraphSeed);
    const auto normal = tf::random::normal({n}, 0, 1, tf::float64, 11).to_vector<double>();
    const auto trunc = tf::random::truncated_normal({9}, 0, 1, tf::float64, 11).to_vector<double>();
    const auto gen = philox::Generator::from_seeds(tf::random::kDefaultGraphSeed, 11);
    philox::WordStream words{gen};  // one block (4 words) per pair, in order
    int differ = 0;
    for (std::size_t i = 0; i < normal.size(); i += 2) {
        const auto [d0, d1] = tf_box_muller_double(words);
        differ += (normal[i] != d0) + (normal[i + 1] != d1);
    }
    CHECK(differ == 0);
    // truncated_normal is its own kernel, so its stream starts at (seed, seed2)'s beginning; group
    // g (2 outputs) draws from block g * 256 * 2 / 4 on, pairs until two fall inside (-2, 2)
    for (int group = 0; 2 * group < 9; ++group) {
        auto base = gen;
        base.skip(128 * static_cast<uint64_t>(group));
        philox::WordStream stream{base};
        std::vector<double> kept;
        while (kept.size() < 2) {
            const auto [d0, d1] = tf_box_muller_double(stream);
            for (double d : {d0, d1}) {
                if (std::fabs(d) < 2.0 && kept.size() < 2) kept.push_back(d);
            }
        }
        for (int j = 0; j < 2 && 2 * group + j < 9; ++j)
            CHECK(trunc[static_cast<std::size_t>(2 * group + j)] ==
                  kept[static_cast<std::size_t>(j)]);
    }
}

TEST_CASE("the affine step rounds the product on its own (no fma)", "[random]") {
    // 0.1 * 3 rounds up by 2^-56; an fma would keep that and make 1 + 0.1 * 3 - 1.3 differ
    volatile double b = 0.1, x = 3.0, a = 1.0;
    const double product = b * x;  // stored: rounded
    volatile double rounded = product;
    CHECK(philox::affine(philox::Format::f64, x, b, a) == a + rounded);
    volatile float bf = 0.1f, xf = 3.0f, af = 1.0f;
    volatile float rounded_f = bf * xf;
    CHECK(philox::affine(philox::Format::f32, xf, bf, af) == af + rounded_f);
}

TEST_CASE("shuffle is TensorFlow's forward Fisher-Yates and reserves one word per swap",
          "[random]") {
    tf::random::set_seed(3);
    std::vector<int> values(200);
    std::iota(values.begin(), values.end(), 0);
    const auto rows = tf::constant(values, {100, 2});
    const auto shuffled = tf::random::shuffle(rows, 4).to_vector<int>();
    const auto again = tf::random::shuffle(rows, 4).to_vector<int>();
    // rebuilt from the stream of (3, 4): swap(i, i + word % (100 - i)); the second call starts
    // ceil(99 / 4) = 25 blocks on
    for (const auto& [result, offset] : {std::pair{shuffled, 0}, std::pair{again, 25}}) {
        auto gen = philox::Generator::from_seeds(3, 4);
        gen.skip(static_cast<uint64_t>(offset));
        philox::WordStream words{gen};
        std::vector<int> perm(100);
        std::iota(perm.begin(), perm.end(), 0);
        for (int i = 0; i < 99; ++i)
            std::swap(perm[i], perm[i + words.next() % (100 - i)]);
        for (std::size_t r = 0; r < 100; ++r) {
            CHECK(result[2 * r] == 2 * perm[r]);  // rows move whole
            CHECK(result[2 * r + 1] == 2 * perm[r] + 1);
        }
    }
    CHECK(shuffled != again);
    CHECK(tf::random::shuffle(tf::constant(5)).item<int>() == 5);
    CHECK(tf::random::shuffle(tf::constant({7}), 4).to_vector<int>() == std::vector<int>{7});
}

TEST_CASE("dropout's mask is uniform(seed) >= rate, as tf.nn.dropout's", "[random]") {
    const tf::Tensor x = tf::ones({64});
    tf::random::set_seed(tf::random::kDefaultGraphSeed);
    const auto dropped = tf::nn::dropout(x, 0.25, 5).to_vector<float>();
    tf::random::set_seed(tf::random::kDefaultGraphSeed);
    const auto noise = tf::random::uniform({64}, 0, 1, tf::float32, 5).to_vector<float>();
    const auto scale = static_cast<float>(1.0 / 0.75);
    for (std::size_t i = 0; i < noise.size(); ++i)
        CHECK(dropped[i] == (noise[i] >= 0.25f ? scale : 0.0f));
}

TEST_CASE("16-bit floats are float32's Box-Muller rounded, then TensorFlow's half arithmetic",
          "[random]") {
    tf::random::set_seed(tf::random::kDefaultGraphSeed);
    const auto f32 = tf::random::normal({8}, 0, 1, tf::float32, 2).to_vector<float>();
    const auto f16 = tf::random::normal({8}, 0, 1, tf::float16, 2).to_vector<float>();
    const auto bf16 = tf::random::normal({8}, 0, 1, tf::bfloat16, 2).to_vector<float>();
    for (std::size_t i = 0; i < f32.size(); ++i) {
        CHECK(f16[i] == static_cast<float>(tf::Half(f32[i])));
        CHECK(bf16[i] == static_cast<float>(tf::BFloat16(f32[i])));
    }
    // uniform half: the low 10 bits of each word as the mantissa
    const auto gen = philox::Generator::from_seeds(tf::random::kDefaultGraphSeed, 2);
    const auto halves = tf::random::uniform({4}, 0, 1, tf::float16, 2).to_vector<float>();
    philox::Generator g = gen;
    const philox::Block b = g.next();
    for (int j = 0; j < 4; ++j)
        CHECK(halves[static_cast<std::size_t>(j)] == static_cast<float>(b.v[j] & 0x3ff) / 1024);
}

namespace {

struct Moments {
    double mean = 0, variance = 0, min = INFINITY, max = -INFINITY;
};

Moments moments(const std::vector<double>& v) {
    Moments m;
    for (double x : v) {
        m.mean += x;
        m.min = std::min(m.min, x);
        m.max = std::max(m.max, x);
    }
    m.mean /= static_cast<double>(v.size());
    for (double x : v)
        m.variance += (x - m.mean) * (x - m.mean);
    m.variance /= static_cast<double>(v.size());
    return m;
}

}  // namespace

// With n = 200000 samples, the standard error of the mean is sigma/447; the bounds below are
// about 6 standard errors, so a correct generator fails them with probability < 1e-8.
TEST_CASE("moments of each distribution", "[random]") {
    tf::random::set_seed(2024);
    const int64_t n = 200000;
    for (auto dtype : {tf::float32, tf::float64}) {
        CAPTURE(tf::dtype_name(dtype));
        auto normal = moments(tf::random::normal({n}, 3, 2, dtype).to_vector<double>());
        CHECK(normal.mean == Approx(3).margin(6 * 2 / std::sqrt(n)));
        CHECK(normal.variance == Approx(4).margin(0.05));
        auto uniform = moments(tf::random::uniform({n}, -1, 3, dtype).to_vector<double>());
        CHECK(uniform.mean == Approx(1).margin(0.02));
        CHECK(uniform.variance == Approx(16.0 / 12).margin(0.02));
        CHECK(uniform.min >= -1);
        CHECK(uniform.max < 3);
        // Normal truncated to +-2 sigma: variance factor 1 - 2*2*phi(2)/(2*Phi(2)-1) = 0.7737413
        auto trunc = moments(tf::random::truncated_normal({n}, 1, 0.5, dtype).to_vector<double>());
        CHECK(trunc.mean == Approx(1).margin(0.01));
        CHECK(trunc.variance == Approx(0.25 * 0.7737413).margin(0.004));
        CHECK(trunc.min >= 0);
        CHECK(trunc.max <= 2);
    }
    auto half = moments(tf::random::normal({20000}, 0, 1, tf::float16).to_vector<double>());
    CHECK(half.mean == Approx(0).margin(0.05));
    auto ints = tf::random::uniform({n}, -3, 5, tf::int32).to_vector<int>();
    CHECK(*std::min_element(ints.begin(), ints.end()) == -3);
    CHECK(*std::max_element(ints.begin(), ints.end()) == 4);
    std::vector<int> counts(8);
    for (int v : ints)
        ++counts[static_cast<std::size_t>(v + 3)];
    for (int c : counts)
        CHECK(c == Approx(n / 8.0).margin(6 * std::sqrt(n / 8.0)));
    auto big = tf::random::uniform({1000}, 0, 1e12, tf::int64).to_vector<int64_t>();
    CHECK(*std::max_element(big.begin(), big.end()) > int64_t{1} << 32);
}

TEST_CASE("shuffle permutes along the first axis", "[random]") {
    tf::random::set_seed(3);
    std::vector<int> values(200);
    std::iota(values.begin(), values.end(), 0);
    auto rows = tf::constant(values, {100, 2});
    auto shuffled = tf::random::shuffle(rows).to_vector<int>();
    CHECK(shuffled != values);
    std::vector<int> firsts;
    for (std::size_t r = 0; r < 100; ++r) {
        CHECK(shuffled[2 * r + 1] == shuffled[2 * r] + 1);  // rows move whole
        firsts.push_back(shuffled[2 * r]);
    }
    std::sort(firsts.begin(), firsts.end());
    for (int r = 0; r < 100; ++r)
        CHECK(firsts[static_cast<std::size_t>(r)] == 2 * r);
    tf::random::set_seed(3);
    CHECK(tf::random::shuffle(rows).to_vector<int>() == shuffled);
    CHECK(tf::random::shuffle(tf::constant(5)).item<int>() == 5);
}

TEST_CASE("random ops reject bad arguments", "[random][errors]") {
    using E = tf::errors::InvalidArgumentError;
    CHECK_THROWS_AS(tf::random::normal({2}, 0, 1, tf::int32), E);
    CHECK_THROWS_WITH(tf::random::normal({2}, 0, 1, tf::int32),
                      Catch::Contains("[Op:RandomStandardNormal]"));
    CHECK_THROWS_AS(tf::random::normal({2}, 0, -1), E);
    CHECK_THROWS_AS(tf::random::truncated_normal({2}, 0, 1, tf::bool_), E);
    CHECK_THROWS_AS(tf::random::uniform({2}, 1, 1, tf::int32), E);
    CHECK_THROWS_AS(tf::random::uniform({2}, 2, 1), E);
    CHECK_THROWS_AS(tf::random::uniform({2}, 0, 1, tf::bool_), E);
    CHECK_THROWS_AS(tf::random::normal({-2}), E);
    CHECK_THROWS_AS(tf::random::shuffle(tf::Tensor()), E);
}
