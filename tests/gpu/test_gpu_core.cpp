// GPU tests of the core: device copies, factories under a device scope, and seeded random numbers
// identical to the CPU's. Runs only where a GPU is present (see gpu_gate.cpp).
#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

#include "ops/dispatch.hpp"

namespace tf = tapeflow;

TEST_CASE("round trip host -> GPU -> host keeps every byte", "[gpu]") {
    auto x = tf::constant({{1.5f, -2.f, 3.f}, {4.f, 5.f, 6.25f}});
    auto g = x.to(tf::Device::cuda(0));
    CHECK(g.device() == tf::Device::cuda(0));
    CHECK(g.shape() == x.shape());
    CHECK(g.cpu().to_vector<float>() == x.to_vector<float>());
}

TEST_CASE("factories follow tf::device", "[gpu]") {
    auto scope = tf::device(tf::Device::parse("/gpu:0"));
    auto z = tf::zeros({3, 4}, tf::float64);
    CHECK(z.device().is_cuda());
    CHECK(z.to_vector<double>() == std::vector<double>(12, 0.0));
    auto c = tf::constant({1, 2, 3});
    CHECK(c.device().is_cuda());
    CHECK(c.to_vector<int>() == std::vector<int>{1, 2, 3});
}

TEST_CASE("seeded random numbers are identical on CPU and GPU", "[gpu][random]") {
    for (auto dtype : {tf::float32, tf::float64}) {
        tf::random::set_seed(7);
        auto cpu_n = tf::random::normal({1001}, 0, 1, dtype).to_vector<double>();
        auto cpu_u = tf::random::uniform({1001}, -1, 3, dtype).to_vector<double>();
        auto cpu_t = tf::random::truncated_normal({1001}, 1, 2, dtype).to_vector<double>();
        tf::random::set_seed(7);
        auto scope = tf::device(tf::Device::cuda(0));
        auto gpu_n = tf::random::normal({1001}, 0, 1, dtype);
        CHECK(gpu_n.device().is_cuda());
        const auto gpu_u = tf::random::uniform({1001}, -1, 3, dtype).to_vector<double>();
        const auto gpu_t = tf::random::truncated_normal({1001}, 1, 2, dtype).to_vector<double>();
        CHECK(gpu_u == cpu_u);  // integer bits and exactly rounded arithmetic: identical
        if (dtype == tf::float32) {  // Box-Muller runs in double, rounded once to float
            CHECK(gpu_n.to_vector<double>() == cpu_n);
            CHECK(gpu_t == cpu_t);
        } else {  // CUDA's double log/cos/sin may differ from glibc's by an ulp or two
            const auto n = gpu_n.to_vector<double>();
            for (std::size_t i = 0; i < n.size(); ++i) {
                CHECK(n[i] == Approx(cpu_n[i]).epsilon(1e-15).margin(1e-14));
                CHECK(gpu_t[i] == Approx(cpu_t[i]).epsilon(1e-15).margin(1e-14));
            }
        }
    }
}

TEST_CASE("a missing GPU kernel names the op, device and dtype", "[gpu]") {
    try {
        (void)tf::kernel_registry().find(tf::Op::sqrt, tf::Device::cuda(0), tf::int32);
        FAIL("expected UnimplementedError");
    } catch (const tf::errors::UnimplementedError& e) {
        CHECK_THAT(e.what(), Catch::Contains("sqrt") && Catch::Contains("/device:GPU:0") &&
                                 Catch::Contains("int32"));
    }
}
