// CPU kernels of MatMul and BatchMatMulV2. float32/float64 products go to gemm_route.hpp (the
// packed sgemm or OpenBLAS) with the transposes passed as flags (never copied); float16/bfloat16
// go through float32; int32/int64 use a plain loop. A batch folds into one gemm when it can (B
// shared, A not transposed); otherwise whole products go to the threads. Large products are cut
// into slices that their shape alone fixes (gemm_slices), so the bits never depend on the threads.
#include <algorithm>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

#include <cblas.h>

#include "core/dtype_dispatch.hpp"
#include "core/parallel.hpp"
#include "kernels/cpu/gemm_route.hpp"
#include "ops/apply.hpp"
#include "ops/op_families.hpp"

namespace tapeflow::cpu {
namespace {

constexpr int64_t kParallelFlops = 1 << 18;  // multiply-adds per thread before a loop goes parallel

// One call's products: C[i] = op(A[a_index[i]]) op(B[b_index[i]]) for each output batch i
// (the index lists stay empty for a single product).
struct Gemm {
    int64_t batch = 1;
    int64_t m = 0;
    int64_t n = 0;
    int64_t k = 0;
    bool ta = false;
    bool tb = false;
    std::vector<int64_t> a_index;
    std::vector<int64_t> b_index;
    int64_t a_count = 1;  // matrices in A and in B (before broadcasting)
    int64_t b_count = 1;
};

std::vector<int64_t> batch_dims(const Shape& s) {
    return std::vector<int64_t>(s.dims().begin(), s.dims().end() - 2);
}

// For each output batch (row-major over `out`), the index of the matrix of an operand with batch
// dims `in` (right-aligned, size-1 dims broadcast).
std::vector<int64_t> broadcast_index(const std::vector<int64_t>& out,
                                     const std::vector<int64_t>& in) {
    const std::size_t rank = out.size();
    const std::size_t lead = rank - in.size();
    std::vector<int64_t> stride(rank, 0);
    int64_t s = 1;
    for (std::size_t d = rank; d-- > lead;) {
        const int64_t size = in[d - lead];
        stride[d] = size == 1 ? 0 : s;
        s *= size;
    }
    int64_t total = 1;
    for (const int64_t d : out)
        total *= d;
    std::vector<int64_t> index(static_cast<std::size_t>(total));
    std::vector<int64_t> digit(rank, 0);
    int64_t current = 0;
    for (int64_t i = 0; i < total; ++i) {
        index[static_cast<std::size_t>(i)] = current;
        for (std::size_t d = rank; d-- > 0;) {  // odometer step
            current += stride[d];
            if (++digit[d] < out[d]) break;
            current -= stride[d] * out[d];
            digit[d] = 0;
        }
    }
    return index;
}

Gemm plan_gemm(const KernelContext& ctx) {
    const Tensor& a = ctx.inputs[0];
    const Tensor& b = ctx.inputs[1];
    const Tensor& c = ctx.outputs[0];
    Gemm g;
    if (ctx.op == Op::matmul) {
        g.ta = ctx.attrs.get<bool>("transpose_a");
        g.tb = ctx.attrs.get<bool>("transpose_b");
    } else {
        g.ta = ctx.attrs.get<bool>("adj_x");
        g.tb = ctx.attrs.get<bool>("adj_y");
    }
    g.m = c.shape()[-2];
    g.n = c.shape()[-1];
    g.k = a.shape()[g.ta ? -2 : -1];
    for (const int64_t d : {g.m, g.n, g.k}) {
        if (d > std::numeric_limits<blasint>::max() / 2) {
            op_fail(ctx.op, "matrix dimension {} is too large for BLAS", d);
        }
    }
    if (c.rank() == 2) return g;  // one product: no batch indices to plan
    const std::vector<int64_t> out = batch_dims(c.shape());
    const std::vector<int64_t> in_a = batch_dims(a.shape());
    const std::vector<int64_t> in_b = batch_dims(b.shape());
    for (const int64_t d : out)
        g.batch *= d;
    for (const int64_t d : in_a)
        g.a_count *= d;
    for (const int64_t d : in_b)
        g.b_count *= d;
    g.a_index = broadcast_index(out, in_a);
    g.b_index = broadcast_index(out, in_b);
    return g;
}

// C = op(A) op(B) for one product of floats or doubles, row-major, cut as gemm_slices says;
// `on_threads`: the slices shared by the threads, else all on the calling thread (the same bits).
template <class T>
void one_product(const T* a,
                 const T* b,
                 T* c,
                 int64_t m,
                 int64_t n,
                 int64_t k,
                 bool ta,
                 bool tb,
                 bool on_threads = true) {
    const int64_t lda = std::max<int64_t>(1, ta ? m : k);
    const int64_t ldb = std::max<int64_t>(1, tb ? k : n);
    const int64_t ldc = std::max<int64_t>(1, n);
    routed_parallel_gemm<T>(ta, tb, m, n, k, a, lda, b, ldb, c, ldc, on_threads);
}

template <class T>
void run_blas(const Gemm& g, const T* a, const T* b, T* c) {
    const int64_t a_size = g.m * g.k;
    const int64_t b_size = g.k * g.n;
    const int64_t c_size = g.m * g.n;
    if (c_size == 0 || g.batch == 0) return;
    if (g.k == 0) {
        std::fill(c, c + g.batch * c_size, T(0));
        return;
    }
    if (g.batch == 1) {
        one_product(a, b, c, g.m, g.n, g.k, g.ta, g.tb);
        return;
    }
    // One B for every batch and A's batches in order, untransposed: the batch is just more rows.
    if (g.b_count == 1 && g.a_count == g.batch && !g.ta &&
        g.batch * g.m <= std::numeric_limits<blasint>::max() / 2) {
        one_product(a, b, c, g.batch * g.m, g.n, g.k, false, g.tb);
        return;
    }
    const auto product = [&](int64_t i, bool on_threads) {
        const auto at = static_cast<std::size_t>(i);
        one_product(a + g.a_index[at] * a_size,
                    b + g.b_index[at] * b_size,
                    c + i * c_size,
                    g.m,
                    g.n,
                    g.k,
                    g.ta,
                    g.tb,
                    on_threads);
    };
    const double mnk = static_cast<double>(a_size) * static_cast<double>(g.n);
    if (g.batch < cpu_threads() && mnk > kThreadedGemmMnk) {  // a few large products: slice each
        for (int64_t i = 0; i < g.batch; ++i)
            product(i, true);
        return;
    }
    // Whole products on the threads, at least kParallelFlops multiply-adds per unit of work.
    const int64_t per_unit =
        mnk >= kParallelFlops ? 1 : std::max<int64_t>(1, kParallelFlops / (a_size * g.n));
    parallel_routed_gemms<T>(
        (g.batch + per_unit - 1) / per_unit, g.m, g.n, g.k, [&](int64_t begin, int64_t end) {
            for (int64_t i = begin * per_unit; i < std::min(g.batch, end * per_unit); ++i) {
                product(i, false);
            }
        });
}

// 16-bit floats: convert to float32, multiply with sgemm, convert back.
template <class T>
void run_half(const Gemm& g, const Tensor& a, const Tensor& b, const Tensor& c) {
    auto to_float = [](const Tensor& t) {
        const T* p = static_cast<const T*>(t.raw_data());
        std::vector<float> out(static_cast<std::size_t>(t.num_elements()));
        for (std::size_t i = 0; i < out.size(); ++i)
            out[i] = static_cast<float>(p[i]);
        return out;
    };
    const std::vector<float> fa = to_float(a);
    const std::vector<float> fb = to_float(b);
    std::vector<float> fc(static_cast<std::size_t>(c.num_elements()));
    run_blas(g, fa.data(), fb.data(), fc.data());
    T* out = static_cast<T*>(c.mutable_raw_data());
    for (std::size_t i = 0; i < fc.size(); ++i)
        out[i] = T(fc[i]);
}

// Integers: row i of C at a time, in unsigned arithmetic so that overflow wraps as in TensorFlow.
template <class T>
void run_int(const Gemm& g, const T* a, const T* b, T* c) {
    using U = std::make_unsigned_t<T>;
    const int64_t m = g.m;
    const int64_t n = g.n;
    const int64_t k = g.k;
    if (g.batch * m * n == 0) return;
    const int64_t grain = std::max<int64_t>(1, kParallelFlops / std::max<int64_t>(1, n * k));
    parallel_for(g.batch * m, grain, [&](int64_t begin, int64_t end) {
        const auto a_row = std::make_unique_for_overwrite<U[]>(static_cast<std::size_t>(k));
        const auto c_row = std::make_unique_for_overwrite<U[]>(static_cast<std::size_t>(n));
        for (int64_t row = begin; row < end; ++row) {
            const int64_t i = row % m;
            const auto batch = static_cast<std::size_t>(row / m);
            const T* pa =
                a + (g.a_index.empty() ? 0 : g.a_index[batch]) * m * k;  // empty: one product
            const T* pb = b + (g.b_index.empty() ? 0 : g.b_index[batch]) * k * n;
            for (int64_t p = 0; p < k; ++p) {  // row i of op(A)
                a_row[p] = static_cast<U>(g.ta ? pa[p * m + i] : pa[i * k + p]);
            }
            if (g.tb) {  // B is [n, k]: dot products of contiguous rows
                for (int64_t j = 0; j < n; ++j) {
                    const T* pbj = pb + j * k;
                    U sum = 0;
                    for (int64_t p = 0; p < k; ++p) {
                        sum += static_cast<U>(a_row[p] * static_cast<U>(pbj[p]));
                    }
                    c_row[j] = sum;
                }
            } else {  // B is [k, n]: add scaled rows of B
                std::fill(c_row.get(), c_row.get() + n, U(0));
                for (int64_t p = 0; p < k; ++p) {
                    const U s = a_row[p];
                    const T* pbp = pb + p * n;
                    for (int64_t j = 0; j < n; ++j) {
                        c_row[j] += static_cast<U>(s * static_cast<U>(pbp[j]));
                    }
                }
            }
            T* pc = c + row * n;
            for (int64_t j = 0; j < n; ++j)
                pc[j] = static_cast<T>(c_row[j]);
        }
    });
}

void matmul_kernel(const KernelContext& ctx) {
    const Gemm g = plan_gemm(ctx);
    const Tensor& a = ctx.inputs[0];
    const Tensor& b = ctx.inputs[1];
    const Tensor& c = ctx.outputs[0];
    visit_dtype(a.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
            run_blas(g,
                     static_cast<const T*>(a.raw_data()),
                     static_cast<const T*>(b.raw_data()),
                     static_cast<T*>(c.mutable_raw_data()));
        } else if constexpr (is_half_v<T>) {
            run_half<T>(g, a, b, c);
        } else if constexpr (std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>) {
            run_int(g,
                    static_cast<const T*>(a.raw_data()),
                    static_cast<const T*>(b.raw_data()),
                    static_cast<T*>(c.mutable_raw_data()));
        }
    });
}

}  // namespace
}  // namespace tapeflow::cpu

namespace tapeflow {

void register_linalg_cpu(KernelRegistry& r) {
    using namespace cpu;
    constexpr auto kCpu = DeviceType::cpu;
    constexpr DTypeSet kMatmulTypes = kFloatTypes | DTypeSet{DType::int32, DType::int64};
    r.add(Op::matmul, kCpu, matmul_kernel, kMatmulTypes);
    r.add(Op::batch_matmul, kCpu, matmul_kernel, kMatmulTypes);
}

}  // namespace tapeflow
