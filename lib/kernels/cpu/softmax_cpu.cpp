// CPU kernels of Softmax and LogSoftmax (along any axis) and of the fused softmax cross-entropy
// losses: every row subtracts its maximum before exp (never overflows) and takes exp through xsimd
// batches. Rows are split across threads, each row computed whole by one thread, so results do
// not depend on the thread count. float32 and float64.
#include <cmath>
#include <limits>
#include <vector>

#include <xsimd/xsimd.hpp>

#include "core/dtype_dispatch.hpp"
#include "core/parallel.hpp"
#include "kernels/cpu/exp_shifted.hpp"
#include "ops/apply.hpp"
#include "ops/op_families.hpp"

namespace tapeflow::cpu {
namespace {

constexpr DTypeSet kSoftmaxTypes{DType::float32, DType::float64};
constexpr int64_t kRowGrain = 1 << 14;  // elements per thread before rows go parallel

template <class T>
T row_max(const T* x, int64_t n) {
    T m = -std::numeric_limits<T>::infinity();
    for (int64_t i = 0; i < n; ++i)
        m = x[i] > m || std::isnan(x[i]) ? x[i] : m;
    return m;
}

// The rows of a [outer, n, inner] tensor along its middle axis.
struct Rows {
    int64_t outer = 1, n = 1, inner = 1;
};

Rows rows_of(const Shape& s, int64_t axis) {
    Rows r;
    for (int64_t d = 0; d < s.rank(); ++d) {
        if (d < axis) r.outer *= s[d];
        if (d > axis) r.inner *= s[d];
    }
    r.n = s[axis];
    return r;
}

template <bool kLog>
void softmax_kernel(const KernelContext& ctx) {
    const Tensor& x = ctx.inputs[0];
    const Rows r = rows_of(x.shape(), ctx.attrs.get<int64_t>("axis"));
    if (x.num_elements() == 0) return;
    visit_dtype(x.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
            const auto* in = static_cast<const T*>(x.raw_data());
            auto* out = static_cast<T*>(ctx.outputs[0].mutable_raw_data());
            const int64_t grain = std::max<int64_t>(1, kRowGrain / r.n);
            if (r.inner == 1) {
                parallel_for(r.outer, grain, [&](int64_t begin, int64_t end) {
                    for (int64_t row = begin; row < end; ++row) {
                        const T* xr = in + row * r.n;
                        T* yr = out + row * r.n;
                        const T m = row_max(xr, r.n);
                        const T sum = exp_shifted(xr, m, yr, r.n);
                        if constexpr (kLog) {
                            const T lse = m + std::log(sum);
                            for (int64_t i = 0; i < r.n; ++i)
                                yr[i] = xr[i] - lse;
                        } else {
                            const T inv = T(1) / sum;
                            for (int64_t i = 0; i < r.n; ++i)
                                yr[i] *= inv;
                        }
                    }
                });
                return;
            }
            // Strided rows (axis not last): plain loops over the column of each (outer, inner).
            parallel_for(r.outer * r.inner, grain, [&](int64_t begin, int64_t end) {
                for (int64_t k = begin; k < end; ++k) {
                    const int64_t base = (k / r.inner) * r.n * r.inner + k % r.inner;
                    T m = -std::numeric_limits<T>::infinity();
                    for (int64_t i = 0; i < r.n; ++i) {
                        const T v = in[base + i * r.inner];
                        m = v > m || std::isnan(v) ? v : m;
                    }
                    T sum = 0;
                    for (int64_t i = 0; i < r.n; ++i) {
                        const T e = std::exp(in[base + i * r.inner] - m);
                        out[base + i * r.inner] = e;
                        sum += e;
                    }
                    const T lse = m + std::log(sum);
                    for (int64_t i = 0; i < r.n; ++i) {
                        T& y = out[base + i * r.inner];
                        y = kLog ? in[base + i * r.inner] - lse : y / sum;
                    }
                }
            });
        }
    });
}

// Loss and the per-row log-sum-exp of logits [rows, n]; `scratch` holds n values per thread.
template <class T, class RowFn>
void for_each_xent_row(const Tensor& logits, const RowFn& fn) {
    const int64_t n = logits.shape().rank() == 0 ? 1 : logits.shape()[-1];
    const int64_t rows = n == 0 ? 0 : logits.num_elements() / n;
    const auto* in = static_cast<const T*>(logits.raw_data());
    parallel_for(rows,
                 std::max<int64_t>(1, kRowGrain / std::max<int64_t>(n, 1)),
                 [&](int64_t begin, int64_t end) {
                     std::vector<T> scratch(static_cast<std::size_t>(n));
                     for (int64_t row = begin; row < end; ++row) {
                         const T* xr = in + row * n;
                         const T m = row_max(xr, n);
                         const T sum = exp_shifted(xr, m, scratch.data(), n);
                         fn(row, xr, scratch.data(), m + std::log(sum), sum);
                     }
                 });
}

// loss = sum(labels * (lse - x)) per row (TensorFlow's SoftmaxXentWithLogitsOp).
void softmax_xent_kernel(const KernelContext& ctx) {
    const Tensor& logits = ctx.inputs[0];
    visit_dtype(logits.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
            const int64_t n = logits.shape()[-1];
            const auto* z = static_cast<const T*>(ctx.inputs[1].raw_data());
            auto* loss = static_cast<T*>(ctx.outputs[0].mutable_raw_data());
            if (n == 0) std::fill(loss, loss + ctx.outputs[0].num_elements(), T(0));
            for_each_xent_row<T>(logits, [&](int64_t row, const T* xr, const T*, T lse, T) {
                const T* zr = z + row * n;
                T acc = 0;
                for (int64_t i = 0; i < n; ++i)
                    acc += zr[i] * (lse - xr[i]);
                loss[row] = acc;
            });
        }
    });
}

// loss = lse - x[label] per row. The wrapper has checked that every label is in [0, n).
void sparse_xent_kernel(const KernelContext& ctx) {
    const Tensor& logits = ctx.inputs[0];
    const bool i32 = ctx.inputs[1].dtype() == DType::int32;
    visit_dtype(logits.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
            const auto* l32 = static_cast<const int32_t*>(ctx.inputs[1].raw_data());
            const auto* l64 = static_cast<const int64_t*>(ctx.inputs[1].raw_data());
            auto* loss = static_cast<T*>(ctx.outputs[0].mutable_raw_data());
            for_each_xent_row<T>(logits, [&](int64_t row, const T* xr, const T*, T lse, T) {
                const int64_t label = i32 ? l32[row] : l64[row];
                loss[row] = lse - xr[label];
            });
        }
    });
}

// softmax(x) - onehot(label) per row: the backprop of the sparse loss, in one pass.
void sparse_xent_grad_kernel(const KernelContext& ctx) {
    const Tensor& logits = ctx.inputs[0];
    const bool i32 = ctx.inputs[1].dtype() == DType::int32;
    visit_dtype(logits.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
            const int64_t n = logits.shape()[-1];
            const auto* l32 = static_cast<const int32_t*>(ctx.inputs[1].raw_data());
            const auto* l64 = static_cast<const int64_t*>(ctx.inputs[1].raw_data());
            auto* out = static_cast<T*>(ctx.outputs[0].mutable_raw_data());
            for_each_xent_row<T>(logits, [&](int64_t row, const T*, const T* e, T, T sum) {
                T* yr = out + row * n;
                const T inv = T(1) / sum;
                for (int64_t i = 0; i < n; ++i)
                    yr[i] = e[i] * inv;
                yr[i32 ? l32[row] : l64[row]] -= T(1);
            });
        }
    });
}

}  // namespace
}  // namespace tapeflow::cpu

namespace tapeflow {

void register_softmax_cpu(KernelRegistry& r) {
    using namespace cpu;
    constexpr auto kCpu = DeviceType::cpu;
    r.add(Op::softmax, kCpu, softmax_kernel<false>, kSoftmaxTypes);
    r.add(Op::log_softmax, kCpu, softmax_kernel<true>, kSoftmaxTypes);
    r.add(Op::softmax_xent, kCpu, softmax_xent_kernel, kSoftmaxTypes);
    r.add(Op::sparse_softmax_xent, kCpu, sparse_xent_kernel, kSoftmaxTypes);
    r.add(Op::sparse_xent_grad, kCpu, sparse_xent_grad_kernel, kSoftmaxTypes);
}

}  // namespace tapeflow
