// Tests of the deferred element-wise fusion (NOTE [Deferred element-wise fusion] in
// lib/kernels/cpu/fusion.hpp): fused results are bitwise equal to op-by-op results, pending
// storages are computed on first read from any path (kernels, views, copies, threads), chains are
// bounded, and variables' copy-on-write still protects earlier reads. Run: test_ops "[fusion]".
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

#include "kernels/cpu/fusion.hpp"

namespace tf = tapeflow;
namespace fusion = tf::cpu::fusion;

namespace {

// Sets the fusion threshold for one test and restores it afterwards.
struct FusionThreshold {
    explicit FusionThreshold(int64_t n) : saved(fusion::fusion_min_elements()) {
        fusion::set_fusion_min_elements(n);
    }
    ~FusionThreshold() { fusion::set_fusion_min_elements(saved); }
    int64_t saved;
};

bool pending(const tf::Tensor& t) {
    return t.impl()->storage->deferred() != nullptr;
}

// f evaluated with fusion on (threshold 1) and off: the bytes must be identical.
void check_same_as_eager(const std::function<tf::Tensor()>& f) {
    tf::Tensor eager, fused;
    {
        FusionThreshold off(-1);
        eager = f();
    }
    {
        FusionThreshold on(1);
        fused = f();
    }
    REQUIRE(eager.shape() == fused.shape());
    REQUIRE(eager.dtype() == fused.dtype());
    CHECK(std::memcmp(eager.raw_data(), fused.raw_data(), eager.nbytes()) == 0);
}

tf::Tensor randn(tf::Shape shape, tf::DType dtype, int64_t seed) {
    return tf::random::normal(shape, 0.0, 1.0, dtype, seed);
}

}  // namespace

TEST_CASE("fusion: a large element-wise result is deferred until read", "[fusion]") {
    FusionThreshold on(1000);
    const auto a = randn({4096}, tf::DType::float32, 1);
    const auto b = randn({4096}, tf::DType::float32, 2);
    const auto c = a * b + a;
    CHECK(pending(c));
    const auto small = randn({10}, tf::DType::float32, 3) * 2.0f;
    CHECK_FALSE(pending(small));                              // under the threshold
    CHECK_FALSE(pending(tf::cast(a, tf::DType::int32) * 2));  // integers compute eagerly
    const float first = c.data<float>()[0];
    CHECK_FALSE(pending(c));
    CHECK(first == a.data<float>()[0] * b.data<float>()[0] + a.data<float>()[0]);
}

TEST_CASE("fusion: fused chains equal op-by-op results bitwise", "[fusion]") {
    for (auto dtype : {tf::DType::float32, tf::DType::float64}) {
        const auto a = randn({3, 1000}, dtype, 4);
        const auto b = randn({3, 1000}, dtype, 5);
        const auto s = tf::cast(tf::constant(0.5), dtype);
        check_same_as_eager([&] { return a * b + a; });
        check_same_as_eager([&] { return tf::exp(a) * b - a / (tf::abs(b) + s); });
        check_same_as_eager([&] { return tf::tanh(tf::sigmoid(a * s) - tf::square(b)); });
        check_same_as_eager([&] { return tf::maximum(a, s) + tf::minimum(b, s) * 2.0; });
        check_same_as_eager([&] { return s - a; });  // scalar first operand
        check_same_as_eager([&] { return tf::sqrt(tf::abs(a)) + tf::log1p(tf::abs(b)); });
        check_same_as_eager([&] {  // deeper than one pending chain may be
            auto x = a;
            for (int i = 0; i < 20; ++i)
                x = x * s + b;
            return x;
        });
        check_same_as_eager([&] {  // a shared sub-expression, inlined twice
            const auto x = a * b;
            return x * x + tf::exp(x);
        });
        check_same_as_eager([&] {  // a balanced tree of 64 products: one pass, few block buffers
            std::vector<tf::Tensor> level;
            for (int k = 0; k < 64; ++k)
                level.push_back(a * tf::cast(tf::constant(k + 1.0), dtype));
            while (level.size() > 1) {
                std::vector<tf::Tensor> next;
                for (std::size_t i = 0; i < level.size(); i += 2)
                    next.push_back(level[i] + level[i + 1]);
                level = next;
            }
            return level[0];
        });
        check_same_as_eager([&] { return tf::reduce_sum(a * b + a, {1}); });  // a kernel reads it
        check_same_as_eager([&] { return tf::reshape(a * b, {1000, 3}) + 1.0; });  // through a view
    }
}

TEST_CASE("fusion: intermediates read later keep their own values", "[fusion]") {
    FusionThreshold on(1);
    const auto a = randn({5000}, tf::DType::float64, 6);
    const auto x = a * 3.0;  // inlined into y, never written by y's evaluation
    const auto y = x + 1.0;
    const auto yv = y.to_vector<double>();
    CHECK(pending(x));
    const auto xv = x.to_vector<double>();
    for (std::size_t i = 0; i < xv.size(); i += 997) {
        CHECK(xv[i] == a.to_vector<double>()[i] * 3.0);
        CHECK(yv[i] == xv[i] + 1.0);
    }
}

TEST_CASE("fusion: several threads reading one pending tensor", "[fusion]") {
    FusionThreshold on(1);
    const auto a = randn({1 << 16}, tf::DType::float32, 7);
    const auto c = tf::exp(a) * a + 2.0f;
    std::vector<float> sums(4);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] { sums[t] = tf::reduce_sum(c).item<float>(); });
    }
    for (auto& th : threads)
        th.join();
    for (int t = 1; t < 4; ++t)
        CHECK(sums[t] == sums[0]);
}

TEST_CASE("fusion: copies to other tensors, printing and variables see the values", "[fusion]") {
    FusionThreshold on(1);
    const auto a = randn({2, 3}, tf::DType::float32, 8);
    const auto c = a * 2.0f;
    CHECK(fmt::format("{}", c) == fmt::format("{}", tf::identity(a) * 2.0f));
    tf::Variable v(randn({256}, tf::DType::float32, 9));
    const auto before = v.read_value() * 1.0f;  // pending, holding the variable's buffer
    const auto expect = v.read_value().to_vector<float>();
    v.assign_add(tf::ones({256}));
    CHECK(before.to_vector<float>() == expect);  // copy-on-write kept the old values
    CHECK(v.read_value().to_vector<float>()[0] == expect[0] + 1.0f);
}

TEST_CASE("fusion: gradients through fused chains match op-by-op gradients", "[fusion]") {
    const auto x0 = randn({64, 64}, tf::DType::float64, 10);
    const auto grad = [&] {
        tf::Variable x(x0);
        tf::GradientTape tape;
        const auto y = tf::reduce_sum(tf::exp(x * 0.5) * x - tf::tanh(x));
        return tape.gradient(y, x);
    };
    check_same_as_eager([&] { return grad().dense(); });
}

TEST_CASE("fusion: pending results take no memory until read", "[fusion]") {
    FusionThreshold on(1);
    const auto a = randn({1 << 16}, tf::DType::float32, 11);
    const int64_t before = tf::memory_stats().bytes_in_use;
    const auto c = tf::exp(a) * 2.0f + a;  // two intermediates, none allocated
    const int64_t pending_bytes = tf::memory_stats().bytes_in_use - before;
    CHECK(pending_bytes < 64);  // the scalar 2.0f only
    CHECK(c.to_vector<float>().size() == std::size_t{1} << 16);
    CHECK(tf::memory_stats().bytes_in_use - before == int64_t{1} << 18);  // c; inputs released
}
