// GPU tests of the runtime around the kernels: the caching allocator (reuse without cudaMalloc,
// out-of-memory as ResourceExhaustedError after emptying the cache), asynchronous ops with
// synchronizing host reads, and device errors (bad index, mixed devices, integer division by zero).
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

#include "cublas_loader.hpp"
#include "cuda_backend.hpp"

namespace tf = tapeflow;

namespace {
const tf::Device kGpu = tf::Device::cuda(0);
}

TEST_CASE("the allocator reuses freed blocks without cudaMalloc", "[gpu][allocator]") {
    auto scope = tf::device(kGpu);
    {  // warm the cache with the two blocks each iteration needs
        auto a = tf::zeros({1000, 1000});
        auto b = a + a;
    }
    const auto before = tf::cuda_allocator_stats(0);
    for (int i = 0; i < 10; ++i) {
        auto a = tf::zeros({1000, 1000});
        auto b = a + a;  // same size class: served from the cache
        (void)b;
    }
    const auto after = tf::cuda_allocator_stats(0);
    CHECK(after.malloc_calls == before.malloc_calls);
    CHECK(after.cache_hits > before.cache_hits);
    CHECK(tf::memory_stats(kGpu).bytes_in_use >= 0);
}

TEST_CASE("out of memory is ResourceExhaustedError and the device stays usable",
          "[gpu][allocator]") {
    auto scope = tf::device(kGpu);
    {
        auto keep = tf::ones({1 << 20});
        (void)keep;
    }  // leaves a cached block to flush
    const auto before = tf::cuda_allocator_stats(0);
    try {
        (void)tf::zeros({int64_t{1} << 40}, tf::float32);  // 4 TiB
        FAIL("expected ResourceExhaustedError");
    } catch (const tf::errors::ResourceExhaustedError& e) {
        CHECK_THAT(e.what(), Catch::Contains("OOM") && Catch::Contains("GPU:0"));
    }
    CHECK(tf::cuda_allocator_stats(0).cache_flushes == before.cache_flushes + 1);
    CHECK(tf::reduce_sum(tf::ones({100})).item<float>() == 100.f);
}

TEST_CASE("ops are asynchronous and host reads see their results", "[gpu][stream]") {
    auto scope = tf::device(kGpu);
    auto x = tf::ones({1 << 22});
    for (int i = 0; i < 20; ++i)
        x = x + x;  // queued back to back
    CHECK(tf::reduce_max(x).item<float>() == static_cast<float>(1 << 20));
    CHECK(x.cpu().to_vector<float>()[12345] == static_cast<float>(1 << 20));
}

TEST_CASE("device errors name the problem", "[gpu][errors]") {
    CHECK_THROWS_AS(tf::zeros({2}).to(tf::Device::cuda(99)), tf::errors::InvalidArgumentError);
    auto cpu = tf::ones({2});
    auto gpu = cpu.to(kGpu);
    try {
        (void)(cpu + gpu);
        FAIL("expected InvalidArgumentError");
    } catch (const tf::errors::InvalidArgumentError& e) {
        CHECK_THAT(e.what(), Catch::Contains("one device") && Catch::Contains("GPU:0"));
    }
    auto a = tf::constant({4, 5, 6}).to(kGpu);
    auto z = tf::constant({1, 0, 2}).to(kGpu);
    CHECK_THROWS_WITH(tf::floordiv(a, z), Catch::Contains("Integer division by zero"));
    CHECK_THROWS_WITH(tf::pow(a, tf::constant({1, -1, 2}).to(kGpu)),
                      Catch::Contains("negative integer powers"));
}

TEST_CASE("16-bit floats are stored on the GPU and multiply in float32", "[gpu][half]") {
    for (auto dtype : {tf::float16, tf::bfloat16}) {
        auto a = tf::cast(tf::constant({{1.f, 2.f}, {3.f, 4.f}}), dtype).to(kGpu);
        auto c = tf::matmul(a, a);
        CHECK(c.dtype() == dtype);
        CHECK(c.cpu().cast(tf::float32).to_vector<float>() == std::vector<float>{7, 10, 15, 22});
    }
}

// Runs without a GPU too (meson test cuda-loader): libcublas is not mapped until the first GPU
// matmul, and then every entry point resolves.
TEST_CASE("cuBLAS is loaded on first use, not with libtapeflow", "[cublas-loader]") {
    const auto cublas_mapped = [] {
        std::ifstream maps("/proc/self/maps");
        std::string line;
        while (std::getline(maps, line)) {
            if (line.find("libcublas") != std::string::npos) return true;
        }
        return false;
    };
    if (!tf::cuda::is_available()) CHECK_FALSE(cublas_mapped());  // (a GPU run may have used it)
    const auto& api = tf::cuda_detail::cublas_api();
    CHECK(api.create != nullptr);
    CHECK(api.set_stream != nullptr);
    CHECK(api.gemm_ex != nullptr);
    CHECK(api.gemm_strided_batched_ex != nullptr);
    REQUIRE(api.status_string != nullptr);
    CHECK(std::string(api.status_string(CUBLAS_STATUS_SUCCESS)) == "success");
    CHECK(cublas_mapped());
}

TEST_CASE("the profiler times an op's kernels on the GPU's stream", "[gpu][profiler]") {
    auto scope = tf::device(kGpu);
    const auto a = tf::ones({512, 512});
    (void)tf::matmul(a, a).to(tf::Device::cpu());  // cuBLAS loaded, the stream warm
    const tf::profiler::Profile p = tf::profiler::profile([&] {
        for (int i = 0; i < 3; ++i)
            (void)tf::matmul(a, a);
    });
    REQUIRE(p.by_op_type.size() == 1);
    const tf::profiler::OpStats& mm = p.by_op_type[0];
    CHECK(mm.name == "MatMul");
    CHECK(mm.count == 3);
    CHECK(mm.gpu_us > 0);  // CUDA events around each call, resolved when the session ended
    CHECK(mm.flops == 3 * 2.0 * 512 * 512 * 512);
    CHECK(mm.self_cpu_us <= mm.total_cpu_us);
    // Off the GPU's stream: device_tracer_level 0 records host times only.
    const tf::profiler::Profile host_only =
        tf::profiler::profile([&] { (void)tf::matmul(a, a); }, {.device_tracer_level = 0});
    CHECK(host_only.by_op_type[0].gpu_us == 0);
}
