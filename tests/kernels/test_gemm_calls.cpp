// The OpenBLAS calls that matmul and conv2d make do not depend on the thread count. OpenBLAS may
// round an element differently from one call geometry to another (its Cooperlake small-matrix
// kernel takes products up to 100^3 multiply-adds, so a product cut in two for two threads ran
// other code than the whole one), so the promise "one thread gives the same bits" holds on every
// CPU only if every thread count makes the same calls. This executable defines cblas_sgemm and
// cblas_dgemm itself: the library's objects (linked statically here) call these, which record
// each call's geometry and forward it to OpenBLAS. That checks the calls on any CPU, whichever
// kernel OpenBLAS picked on the machine that runs the suite. The last case checks gemm_slices'
// rules themselves (lib/kernels/cpu/blas.hpp).
#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <tuple>
#include <vector>

#include <catch2/catch.hpp>
#include <cblas.h>
#include <dlfcn.h>
#include <omp.h>

#include <tapeflow/tapeflow.hpp>

#include "kernels/cpu/blas.hpp"
#include "support/gradcheck.hpp"

namespace tf = tapeflow;
using tf::testing::random_f64;

namespace {

// One call: dtype size, transposes, m, n, k, leading dimensions.
using Call = std::tuple<int, int, int, blasint, blasint, blasint, blasint, blasint, blasint>;
std::mutex calls_mutex;
std::vector<Call> calls;

void record(int size,
            CBLAS_TRANSPOSE ta,
            CBLAS_TRANSPOSE tb,
            blasint m,
            blasint n,
            blasint k,
            blasint lda,
            blasint ldb,
            blasint ldc) {
    const std::lock_guard lock(calls_mutex);
    calls.emplace_back(size, static_cast<int>(ta), static_cast<int>(tb), m, n, k, lda, ldb, ldc);
}

template <class Fn>
Fn next_symbol(const char* name) {
    void* symbol = dlsym(RTLD_NEXT, name);
    if (symbol == nullptr) std::abort();  // OpenBLAS is linked: it cannot be missing
    return reinterpret_cast<Fn>(symbol);
}

// The calls a computation makes, sorted (threads make them in any order).
template <class Body>
std::vector<Call> calls_of(int threads, const Body& body) {
    const int saved = omp_get_max_threads();
    {
        const std::lock_guard lock(calls_mutex);
        calls.clear();
    }
    omp_set_num_threads(threads);
    body();
    omp_set_num_threads(saved);
    const std::lock_guard lock(calls_mutex);
    std::vector<Call> made = calls;
    std::sort(made.begin(), made.end());
    return made;
}

struct OpenBlasSgemm {  // the float32 products through OpenBLAS in every kernel set
    OpenBlasSgemm() { setenv("TAPEFLOW_SGEMM", "openblas", 1); }
    ~OpenBlasSgemm() { unsetenv("TAPEFLOW_SGEMM"); }
};

}  // namespace

extern "C" void cblas_sgemm(OPENBLAS_CONST enum CBLAS_ORDER order,
                            OPENBLAS_CONST enum CBLAS_TRANSPOSE ta,
                            OPENBLAS_CONST enum CBLAS_TRANSPOSE tb,
                            OPENBLAS_CONST blasint m,
                            OPENBLAS_CONST blasint n,
                            OPENBLAS_CONST blasint k,
                            OPENBLAS_CONST float alpha,
                            OPENBLAS_CONST float* a,
                            OPENBLAS_CONST blasint lda,
                            OPENBLAS_CONST float* b,
                            OPENBLAS_CONST blasint ldb,
                            OPENBLAS_CONST float beta,
                            float* c,
                            OPENBLAS_CONST blasint ldc) {
    using Fn = decltype(&cblas_sgemm);
    static const Fn next = next_symbol<Fn>("cblas_sgemm");
    record(4, ta, tb, m, n, k, lda, ldb, ldc);
    next(order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

extern "C" void cblas_dgemm(OPENBLAS_CONST enum CBLAS_ORDER order,
                            OPENBLAS_CONST enum CBLAS_TRANSPOSE ta,
                            OPENBLAS_CONST enum CBLAS_TRANSPOSE tb,
                            OPENBLAS_CONST blasint m,
                            OPENBLAS_CONST blasint n,
                            OPENBLAS_CONST blasint k,
                            OPENBLAS_CONST double alpha,
                            OPENBLAS_CONST double* a,
                            OPENBLAS_CONST blasint lda,
                            OPENBLAS_CONST double* b,
                            OPENBLAS_CONST blasint ldb,
                            OPENBLAS_CONST double beta,
                            double* c,
                            OPENBLAS_CONST blasint ldc) {
    using Fn = decltype(&cblas_dgemm);
    static const Fn next = next_symbol<Fn>("cblas_dgemm");
    record(8, ta, tb, m, n, k, lda, ldb, ldc);
    next(order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

TEST_CASE("matmul makes the same OpenBLAS calls on 1, 2 and 4 threads", "[gemm_calls]") {
    const OpenBlasSgemm openblas;
    struct Case {
        tf::Shape a, b;
    };
    // Sliced by rows and by columns, a batch of fewer products than threads (each product sliced
    // on the threads, or whole products on the threads: the same slices), a batch folded into m.
    const std::vector<Case> cases = {{{600, 200}, {200, 300}},
                                     {{90, 300}, {300, 700}},
                                     {{2, 300, 200}, {2, 200, 260}},
                                     {{8, 40, 50}, {8, 50, 60}},
                                     {{4, 150, 90}, {90, 80}}};
    for (const Case& c : cases) {
        for (const tf::DType dtype : {tf::float32, tf::float64}) {
            const tf::Tensor a = random_f64(c.a, -1, 1, 3).cast(dtype);
            const tf::Tensor b = random_f64(c.b, -1, 1, 4).cast(dtype);
            const auto run = [&] {
                (void)tf::matmul(a, b);
            };
            const std::vector<Call> one = calls_of(1, run);
            INFO("a " << c.a.str() << ", b " << c.b.str() << ", " << tf::dtype_name(dtype));
            CHECK(!one.empty());
            CHECK(calls_of(2, run) == one);
            CHECK(calls_of(4, run) == one);
        }
    }
}

TEST_CASE("conv2d and its gradients make the same OpenBLAS calls on 1, 2 and 4 threads",
          "[gemm_calls]") {
    const OpenBlasSgemm openblas;
    struct Case {
        tf::Shape x, f;
        int64_t stride;
        const char* padding;
    };
    // The 1x1 filter (one gemm per direction, sliced) that issue 33 saw differ, and the im2col
    // blocks of a 3x3 filter.
    const std::vector<Case> cases = {{{3, 20, 30, 40}, {1, 1, 40, 24}, 1, "VALID"},
                                     {{5, 63, 65, 3}, {3, 3, 3, 19}, 1, "SAME"}};
    for (const Case& c : cases) {
        for (const tf::DType dtype : {tf::float32, tf::float64}) {
            const tf::Tensor x = random_f64(c.x, -1, 1, 8).cast(dtype);
            const tf::Tensor f = random_f64(c.f, -1, 1, 9).cast(dtype);
            const auto run = [&] {
                tf::GradientTape tape;
                tape.watch(x);
                tape.watch(f);
                const tf::Tensor y = tf::nn::conv2d(x, f, c.stride, c.padding);
                (void)tape.gradient(tf::reduce_sum(y * y), {x, f});
            };
            const std::vector<Call> one = calls_of(1, run);
            INFO("x " << c.x.str() << ", filter " << c.f.str() << ", " << tf::dtype_name(dtype));
            CHECK(!one.empty());
            CHECK(calls_of(2, run) == one);
            CHECK(calls_of(4, run) == one);
        }
    }
}

TEST_CASE("gemm_slices cuts by the shape alone, by its documented rules", "[gemm_calls]") {
    using tf::cpu::gemm_slices;
    using tf::cpu::kThreadedGemmMnk;
    // Known cuts (tests/ops/test_linalg.cpp's sliced cases rely on them).
    CHECK(gemm_slices(70, 400, 300).count == 3);
    CHECK(gemm_slices(70, 400, 300).length == 144);
    CHECK(gemm_slices(64, 64, 64).count == 1);  // 262,144 multiply-adds: whole
    for (int64_t m : {1, 15, 16, 100, 128, 255, 256, 300, 1000, 1800, 4096, 100000}) {
        for (int64_t n : {1, 7, 24, 64, 129, 512, 2000, 8192}) {
            for (int64_t k : {1, 3, 40, 256, 1024}) {
                const auto s = gemm_slices(m, n, k);
                const double mnk = static_cast<double>(m) * static_cast<double>(n) * k;
                INFO("m " << m << " n " << n << " k " << k << ": " << s.count << " x " << s.length);
                REQUIRE(s.count >= 1);
                if (mnk <= kThreadedGemmMnk) CHECK(s.count == 1);
                if (s.count == 1) continue;
                const int64_t longer = std::max(m, n);
                CHECK(s.count <= 32);
                if (s.count >= 4) {
                    // the count aimed at (a multiple of 4) less what rounding the length took
                    const int64_t aimed = (s.count + 3) / 4 * 4;
                    CHECK(aimed * (s.length - 16) < longer);
                }
                CHECK(s.length % 16 == 0);
                CHECK(s.length >= 128);
                // each full slice does at least a quarter of the threading threshold's work
                CHECK(static_cast<double>(s.length) * (mnk / static_cast<double>(longer)) >=
                      kThreadedGemmMnk / 4.0);
                CHECK((s.count - 1) * s.length < longer);  // the slices cover it exactly
                CHECK(s.count * s.length >= longer);
            }
        }
    }
}
