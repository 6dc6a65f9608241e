// matmul: golden values and gradients (ops.json), finite-difference gradients for every transpose
// flag with broadcast batches, each kernel path (a plain loop for tiny products, one gemm, folded
// batch, small products over threads, 16-bit floats, integers) against a reference loop, and
// TensorFlow's errors.
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include <catch2/catch.hpp>
#include <omp.h>

#include <tapeflow/tapeflow.hpp>

#include "kernels/cpu/blas.hpp"
#include "kernels/cpu/sgemm_packed.hpp"
#include "kernels/isa/dispatch.hpp"
#include "support/golden.hpp"
#include "support/gradcheck.hpp"

namespace tf = tapeflow;
using tf::testing::check_gradients;
using tf::testing::random_f64;

namespace {

using Json = nlohmann::json;
using Tensors = std::vector<tf::Tensor>;
using Dims = std::vector<int64_t>;

// The product in double, batch axes broadcasting, transposes applied by indexing.
std::vector<double> reference_matmul(const tf::Tensor& a, const tf::Tensor& b, bool ta, bool tb) {
    const std::vector<double> va = a.to_vector<double>();
    const std::vector<double> vb = b.to_vector<double>();
    const int64_t m = a.shape()[ta ? -1 : -2];
    const int64_t k = a.shape()[ta ? -2 : -1];
    const int64_t n = b.shape()[tb ? -2 : -1];
    Dims ba(a.shape().dims().begin(), a.shape().dims().end() - 2);
    Dims bb(b.shape().dims().begin(), b.shape().dims().end() - 2);
    const std::size_t rank = std::max(ba.size(), bb.size());
    ba.insert(ba.begin(), rank - ba.size(), 1);
    bb.insert(bb.begin(), rank - bb.size(), 1);
    Dims bo(rank);
    int64_t batch = 1;
    for (std::size_t d = 0; d < rank; ++d) {
        bo[d] = std::max(ba[d], bb[d]);
        batch *= bo[d];
    }
    std::vector<double> out(static_cast<std::size_t>(batch * m * n), 0.0);
    for (int64_t i = 0; i < batch; ++i) {
        int64_t rest = i;
        int64_t ia = 0;
        int64_t ib = 0;
        int64_t sa = 1;
        int64_t sb = 1;
        for (std::size_t d = rank; d-- > 0;) {
            const int64_t digit = rest % bo[d];
            rest /= bo[d];
            ia += (ba[d] == 1 ? 0 : digit) * sa;
            ib += (bb[d] == 1 ? 0 : digit) * sb;
            sa *= ba[d];
            sb *= bb[d];
        }
        const double* pa = va.data() + ia * m * k;
        const double* pb = vb.data() + ib * k * n;
        for (int64_t r = 0; r < m; ++r) {
            for (int64_t c = 0; c < n; ++c) {
                double s = 0;
                for (int64_t p = 0; p < k; ++p) {
                    const double x = ta ? pa[p * m + r] : pa[r * k + p];
                    const double y = tb ? pb[c * k + p] : pb[p * n + c];
                    s += x * y;
                }
                out[static_cast<std::size_t>((i * m + r) * n + c)] = s;
            }
        }
    }
    return out;
}

void check_close(const tf::Tensor& t,
                 const std::vector<double>& expected,
                 double rtol,
                 double atol) {
    const std::vector<double> got = t.to_vector<double>();
    REQUIRE(got.size() == expected.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        if (!(std::abs(got[i] - expected[i]) <= atol + rtol * std::abs(expected[i]))) {
            FAIL_CHECK("element " << i << " is " << got[i] << ", expected " << expected[i]);
            return;
        }
    }
}

// The shape of an operand passed with transpose flag `t`: the last two axes swapped.
tf::Shape stored(Dims dims, bool t) {
    if (t) std::swap(dims[dims.size() - 1], dims[dims.size() - 2]);
    return tf::Shape(dims);
}

std::string describe(const Dims& a, const Dims& b, bool ta, bool tb) {
    return "a " + tf::Shape(a).debug_string() + (ta ? "^T" : "") + ", b " +
           tf::Shape(b).debug_string() + (tb ? "^T" : "");
}

}  // namespace

TEST_CASE("matmul matches the golden cases", "[linalg][golden]") {
    for (const auto& c : tf::testing::golden_cases("tf.linalg.matmul")) {
        SECTION(c.id) {
            tf::testing::run_golden_case(c, [](const Tensors& in, const Json& args) {
                // Real inputs: the adjoint is the transpose.
                const bool ta = args.value("transpose_a", false) || args.value("adjoint_a", false);
                const bool tb = args.value("transpose_b", false) || args.value("adjoint_b", false);
                return Tensors{tf::linalg::matmul(in[0], in[1], ta, tb)};
            });
        }
    }
}

TEST_CASE("matmul gradients match finite differences", "[linalg][gradcheck]") {
    const std::vector<std::pair<Dims, Dims>> cases = {
        {{3, 4}, {4, 5}},           // MatMul
        {{2, 3, 4}, {4, 5}},        // a batch on one side (folds into one gemm)
        {{3, 4}, {2, 4, 5}},        // a batch on the other side
        {{2, 1, 3, 4}, {5, 4, 6}},  // both sides broadcast
        {{1, 3, 2}, {2, 2, 3}},
    };
    for (const auto& [da, db] : cases) {
        for (const bool ta : {false, true}) {
            for (const bool tb : {false, true}) {
                INFO(describe(da, db, ta, tb));
                const tf::Tensor a = random_f64(stored(da, ta), -1, 1, 1);
                const tf::Tensor b = random_f64(stored(db, tb), -1, 1, 2);
                check_gradients([&](const Tensors& in) { return tf::matmul(in[0], in[1], ta, tb); },
                                {a, b});
            }
        }
    }
}

TEST_CASE("matmul second-order gradient", "[linalg][gradcheck]") {
    const tf::Tensor a = random_f64({3, 4}, -1, 1, 4);
    const tf::Tensor b = random_f64({4, 2}, -1, 1, 5);
    check_gradients(
        [](const Tensors& in) {
            tf::GradientTape tape;
            tape.watch(in[0]);
            const tf::Tensor y = tf::matmul(tf::matmul(in[0], in[1]), in[0], true, false);
            return tf::Tensor(tape.gradient(y, in[0]));
        },
        {a, b});
}

TEST_CASE("matmul kernel paths agree with a reference loop", "[linalg]") {
    const std::vector<std::pair<Dims, Dims>> cases = {
        {{37, 53}, {53, 29}},        // one gemm
        {{10, 2}, {2, 3}},           // a plain loop (at most kSmallGemmMnk multiply-adds)
        {{8, 16}, {16, 8}},          // the largest plain loop
        {{8, 16}, {16, 9}},          // just above it: OpenBLAS
        {{5, 1, 3}, {3, 4}},         // small products batched
        {{4, 37, 53}, {53, 29}},     // a batch folded into M
        {{16, 8, 8}, {16, 8, 8}},    // small products spread over threads
        {{3, 1, 5, 7}, {4, 7, 6}},   // broadcast batches
        {{2, 70, 70}, {2, 70, 70}},  // large products, one per thread
        {{70, 300}, {300, 400}},     // sliced by columns (gemm_slices: 144, 144, 112)
        {{300, 60}, {60, 50}},       // by rows, the last slice shorter (160, 140)
        {{0, 4}, {4, 3}},            // empty
        {{2, 0}, {0, 3}},            // k = 0: zeros
    };
    for (const auto& [da, db] : cases) {
        for (const bool ta : {false, true}) {
            for (const bool tb : {false, true}) {
                INFO(describe(da, db, ta, tb));
                const tf::Tensor a64 = random_f64(stored(da, ta), -1, 1, 8);
                const tf::Tensor b64 = random_f64(stored(db, tb), -1, 1, 9);
                check_close(
                    tf::matmul(a64, b64, ta, tb), reference_matmul(a64, b64, ta, tb), 1e-12, 1e-12);
                const tf::Tensor a32 = tf::cast(a64, tf::float32);
                const tf::Tensor b32 = tf::cast(b64, tf::float32);
                const tf::Tensor y = tf::matmul(a32, b32, ta, tb);
                CHECK(y.dtype() == tf::float32);
                check_close(y, reference_matmul(a32, b32, ta, tb), 1e-5, 1e-5);
                const tf::Tensor ai = tf::cast(a64 * 100.0, tf::int32);
                const tf::Tensor bi = tf::cast(b64 * 100.0, tf::int32);
                const std::vector<double> exact = reference_matmul(ai, bi, ta, tb);
                const tf::Tensor yi = tf::matmul(ai, bi, ta, tb);
                CHECK(yi.dtype() == tf::int32);
                check_close(yi, exact, 0, 0);
                const tf::Tensor al = tf::cast(ai, tf::int64);
                const tf::Tensor bl = tf::cast(bi, tf::int64);
                check_close(tf::matmul(al, bl, ta, tb), exact, 0, 0);
                const tf::Tensor ah = tf::cast(a32, tf::float16);
                const tf::Tensor bh = tf::cast(b32, tf::float16);
                const tf::Tensor h = tf::matmul(ah, bh, ta, tb);
                CHECK(h.dtype() == tf::float16);
                check_close(h, reference_matmul(ah, bh, ta, tb), 2e-2, 2e-2);
            }
        }
    }
}

TEST_CASE("matmul agrees with the reference loop on any thread count", "[linalg]") {
    // Large products are cut by rows or columns as their shape alone says (gemm_slices), the
    // slices shared by the threads; several products go one per thread, or fewer products than
    // threads each sliced. So every thread count gives the bits of one thread.
    const std::vector<std::pair<Dims, Dims>> cases = {{{70, 300}, {300, 400}},
                                                      {{300, 60}, {60, 50}},
                                                      {{3, 300, 90}, {3, 90, 280}},
                                                      {{2, 64, 64}, {2, 64, 64}}};
    const int saved = omp_get_max_threads();
    // The packed kernel whatever OpenBLAS detected on this CPU (blas.hpp, prefer_packed_sgemm).
    struct PackedSgemm {
        PackedSgemm() { setenv("TAPEFLOW_SGEMM", "packed", 1); }
        ~PackedSgemm() { unsetenv("TAPEFLOW_SGEMM"); }
    } packed;
    for (const auto& [da, db] : cases) {
        for (const bool ta : {false, true}) {
            for (const bool tb : {false, true}) {
                // Drawn once: each call with an op seed draws new numbers, as in TensorFlow.
                const tf::Tensor a = random_f64(stored(da, ta), -1, 1, 10);
                const tf::Tensor b = random_f64(stored(db, tb), -1, 1, 11);
                std::vector<double> one_thread;
                for (const int threads : {1, 2, 4}) {
                    INFO(describe(da, db, ta, tb) << " on " << threads << " threads");
                    omp_set_num_threads(threads);
                    const tf::Tensor y = tf::matmul(a, b, ta, tb);
                    omp_set_num_threads(saved);
                    check_close(y, reference_matmul(a, b, ta, tb), 1e-12, 1e-12);
                    if (threads == 1) one_thread = y.to_vector<double>();
                    CHECK(y.to_vector<double>() == one_thread);
                }
            }
        }
    }
}

TEST_CASE("float32 matmul's packed sgemm blocks agree with the reference loop", "[linalg]") {
    // Sizes that cross the packed sgemm's blocks (sgemm_packed.hpp: KC 256 of k, MC rows of m, NC
    // 2048 columns of n) and its partial tiles, on 1 and 2 threads (slices by rows or columns).
    // The baseline set (TAPEFLOW_CPU_ISA=x86-64) runs the same cases through OpenBLAS.
    const std::vector<std::pair<Dims, Dims>> cases = {
        {{200, 300}, {300, 40}}, {{13, 20}, {20, 2100}}, {{2, 101, 257}, {2, 257, 35}}};
    const int saved = omp_get_max_threads();
    for (const auto& [da, db] : cases) {
        for (const bool ta : {false, true}) {
            for (const bool tb : {false, true}) {
                for (const int threads : {1, 2}) {
                    INFO(describe(da, db, ta, tb) << " on " << threads << " threads");
                    const tf::Tensor a =
                        tf::cast(random_f64(stored(da, ta), -1, 1, 12), tf::float32);
                    const tf::Tensor b =
                        tf::cast(random_f64(stored(db, tb), -1, 1, 13), tf::float32);
                    omp_set_num_threads(threads);
                    const tf::Tensor y = tf::matmul(a, b, ta, tb);
                    omp_set_num_threads(saved);
                    check_close(y, reference_matmul(a, b, ta, tb), 1e-4, 1e-4);
                }
            }
        }
    }
}

TEST_CASE("float32 matmul's packed sgemm rounds each multiply-add once", "[linalg]") {
    // The AVX2 and AVX-512 tiles both sum c = fma(a, b, c) over k in order, so they give the bits
    // of std::fma in a loop; xsimd 8's AVX-512 batches have no fma of their own, and the v4 set
    // had run a multiply and an add (rounded twice; block_gemm.hpp's `fused`). Only the sets that
    // run the packed kernel (v3 and v4); k = 300 crosses a 256-long slice.
    const std::string_view level = tf::cpu_isa::active_level();
    if (level != "x86-64-v3" && level != "x86-64-v4") return;  // OpenBLAS runs it there
    setenv("TAPEFLOW_SGEMM", "packed", 1);
    const int64_t m = 40, n = 70, k = 300;
    const tf::Tensor a = tf::cast(random_f64({m, k}, -1, 1, 17), tf::float32);
    const tf::Tensor b = tf::cast(random_f64({k, n}, -1, 1, 18), tf::float32);
    const std::vector<float> y = tf::matmul(a, b).to_vector<float>();
    unsetenv("TAPEFLOW_SGEMM");
    const std::vector<float> av = a.to_vector<float>(), bv = b.to_vector<float>();
    int64_t differ = 0;
    for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
            float c = 0.0F;
            for (int64_t p = 0; p < k; ++p)
                c = std::fma(av[i * k + p], bv[p * n + j], c);
            differ += y[i * n + j] != c ? 1 : 0;
        }
    }
    CHECK(differ == 0);
}

TEST_CASE("packed sgemm with beta 1 continues C's sums", "[linalg]") {
    // conv2d's filter gradient sums blocks of pixels into one result: C = C0 + A B, and two
    // accumulating halves of k give the bits of one product over the whole k (and of C0 + AB).
    // Compiled here for the tests' own instruction set: the blocking, not the vector width.
    const int64_t m = 23, n = 37, k = 300;  // partial tiles, and k beyond one 256-long slice
    const std::vector<double> a64 = random_f64({k, m}, -1, 1, 14).to_vector<double>();  // A^T
    const std::vector<double> b64 = random_f64({k, n}, -1, 1, 15).to_vector<double>();
    const std::vector<double> c64 = random_f64({m, n}, -1, 1, 16).to_vector<double>();
    const std::vector<float> a(a64.begin(), a64.end()), b(b64.begin(), b64.end());
    const std::vector<float> c0(c64.begin(), c64.end());
    std::vector<float> whole = c0, halves = c0;
    tf::cpu::packed_sgemm(true, false, m, n, k, a.data(), m, b.data(), n, true, whole.data(), n);
    const int64_t k1 = 100;  // rows [0, k1) of A^T and B, then the rest
    tf::cpu::packed_sgemm(true, false, m, n, k1, a.data(), m, b.data(), n, true, halves.data(), n);
    tf::cpu::packed_sgemm(true,
                          false,
                          m,
                          n,
                          k - k1,
                          a.data() + k1 * m,
                          m,
                          b.data() + k1 * n,
                          n,
                          true,
                          halves.data(),
                          n);
    CHECK(halves == whole);
    std::vector<float> product(static_cast<std::size_t>(m * n), 7.0F);  // beta 0: overwritten
    tf::cpu::packed_sgemm(true, false, m, n, k, a.data(), m, b.data(), n, false, product.data(), n);
    for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
            double sum = 0;
            for (int64_t p = 0; p < k; ++p)
                sum += double(a[p * m + i]) * double(b[p * n + j]);
            const auto at = static_cast<std::size_t>(i * n + j);
            CHECK(product[at] == Approx(sum).margin(1e-4));
            CHECK(whole[at] == Approx(sum + double(c0[at])).margin(1e-4));
        }
    }
    // k = 0: beta 1 leaves C as it was, beta 0 zeroes it.
    std::vector<float> kept = c0;
    tf::cpu::packed_sgemm(false, false, m, n, 0, a.data(), 1, b.data(), n, true, kept.data(), n);
    CHECK(kept == c0);
    tf::cpu::packed_sgemm(false, false, m, n, 0, a.data(), 1, b.data(), n, false, kept.data(), n);
    CHECK(std::all_of(kept.begin(), kept.end(), [](float v) { return v == 0.0F; }));
}

TEST_CASE("TAPEFLOW_SGEMM picks the float32 matmul kernel; another value is warned about",
          "[linalg]") {
    static std::vector<std::string> warnings;
    warnings.clear();
    tf::logging::set_sink([](tf::logging::Level level, std::string_view message) {
        if (level == tf::logging::WARN) warnings.emplace_back(message);
    });
    setenv("TAPEFLOW_SGEMM", "packed", 1);
    CHECK(tf::cpu::prefer_packed_sgemm());
    setenv("TAPEFLOW_SGEMM", "openblas", 1);
    CHECK_FALSE(tf::cpu::prefer_packed_sgemm());
    setenv("TAPEFLOW_SGEMM", "fastest", 1);
    const bool by_core = tf::cpu::prefer_packed_sgemm();
    (void)tf::cpu::prefer_packed_sgemm();  // warned once, not at every call
    unsetenv("TAPEFLOW_SGEMM");
    tf::logging::set_sink(nullptr);
    CHECK(by_core == tf::cpu::prefer_packed_sgemm());  // the unknown value is ignored
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0].find("TAPEFLOW_SGEMM=fastest") != std::string::npos);
}

TEST_CASE("matmul shapes and dtypes", "[linalg]") {
    const tf::Tensor a = tf::constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
    const tf::Tensor b = tf::constant({{1.f, 0.f}, {0.f, 1.f}, {1.f, 1.f}});
    const tf::Tensor y = tf::matmul(a, b);
    CHECK(y.shape() == tf::Shape{2, 2});
    CHECK(y.to_vector<float>() == std::vector<float>{4.f, 5.f, 10.f, 11.f});
    CHECK(tf::matmul(a, a, false, true).shape() == tf::Shape{2, 2});
    CHECK(tf::matmul(a, a, true, false).shape() == tf::Shape{3, 3});
    CHECK(tf::matmul(tf::zeros({5, 1, 2, 3}), tf::zeros({4, 3, 7})).shape() ==
          tf::Shape{5, 4, 2, 7});
    const tf::Tensor i = tf::constant({{1, 2}, {3, 4}});
    CHECK(tf::matmul(i, i).to_vector<int32_t>() == std::vector<int32_t>{7, 10, 15, 22});
    // int32 products wrap on overflow, as in TensorFlow.
    const tf::Tensor big = tf::constant({{65536}});
    CHECK(tf::matmul(big, big).item<int32_t>() == 0);
}

TEST_CASE("matmul errors", "[linalg][errors]") {
    const tf::Tensor a = tf::zeros({2, 3});
    const tf::Tensor b = tf::zeros({4, 5});
    const tf::Tensor batch = tf::zeros({2, 2, 3});
    CHECK_THROWS_AS(tf::matmul(a, b), tf::errors::InvalidArgumentError);
    CHECK_THROWS_WITH(tf::matmul(a, b),
                      "Matrix size-incompatible: In[0]: [2,3], In[1]: [4,5] [Op:MatMul]");
    CHECK_THROWS_WITH(tf::matmul(a, a),
                      "Matrix size-incompatible: In[0]: [2,3], In[1]: [2,3] [Op:MatMul]");
    CHECK_NOTHROW(tf::matmul(a, a, false, true));
    CHECK_THROWS_WITH(tf::matmul(batch, b),
                      "Matrix size-incompatible: In[0]: [2,2,3], In[1]: [4,5] [Op:BatchMatMulV2]");
    CHECK_THROWS_WITH(tf::matmul(tf::zeros({3}), b),
                      "In[0] is not a matrix. Instead it has shape [3] [Op:MatMul]");
    CHECK_THROWS_WITH(tf::matmul(a, tf::zeros({3})),
                      "In[1] is not a matrix. Instead it has shape [3] [Op:MatMul]");
    CHECK_THROWS_WITH(tf::matmul(batch, tf::zeros({3})),
                      "In[1] ndims must be >= 2: 1 [Op:BatchMatMulV2]");
    CHECK_THROWS_WITH(tf::matmul(batch, tf::zeros({3, 3, 4})),
                      "In[0] and In[1] must have compatible batch dimensions: [2,2,3] vs. "
                      "[3,3,4] [Op:BatchMatMulV2]");
    CHECK_THROWS_WITH(tf::matmul(a, tf::zeros({3, 2}, tf::float64)),
                      "cannot compute MatMul as input #1(zero-based) was expected to be a float "
                      "tensor but is a double tensor [Op:MatMul]");
    const tf::Tensor flags = tf::zeros({2, 2}, tf::bool_);
    CHECK_THROWS_AS(tf::matmul(flags, flags), tf::errors::UnimplementedError);
    CHECK_THROWS_AS(tf::matmul(tf::Tensor(), a), tf::errors::InvalidArgumentError);
}
