// CPU kernel of TopKV2: each row of the last axis ranks its indices by (value descending, index
// ascending), a total order (NaN above every number), so the result is the same on any thread
// count and equal to the CUDA kernel's. k = 1 is a scan; k < n a partial sort (O(n log k)); k = n
// a full sort. Rows are spread over tapeflow's threads. Every real dtype (16-bit floats compare
// as float).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <type_traits>
#include <vector>

#include "core/dtype_dispatch.hpp"
#include "core/parallel.hpp"
#include "ops/op_families.hpp"

namespace tapeflow::cpu {
namespace {

// a ranks before b: larger value first, NaN largest, ties to the lower index.
template <class C>
bool before(C va, int32_t a, C vb, int32_t b) {
    if constexpr (std::is_floating_point_v<C>) {
        const bool na = std::isnan(va);
        const bool nb = std::isnan(vb);
        if (na || nb) return na && (!nb || a < b);
    }
    return va > vb || (va == vb && a < b);
}

void top_k_kernel(const KernelContext& ctx) {
    const Tensor& x = ctx.inputs[0];
    Tensor& values = ctx.outputs[0];
    Tensor& indices = ctx.outputs[1];
    const int64_t k = ctx.attrs.get<int64_t>("k");
    const int64_t n = x.shape()[-1];
    if (values.num_elements() == 0) return;
    const int64_t rows = values.num_elements() / k;
    visit_dtype(x.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        using C = compute_t<T>;
        const T* in = static_cast<const T*>(x.raw_data());
        T* out = static_cast<T*>(values.mutable_raw_data());
        auto* idx = static_cast<int32_t*>(indices.mutable_raw_data());
        const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(n, 1));
        parallel_for(rows, grain, [&](int64_t begin, int64_t end) {
            std::vector<int32_t> order(k == 1 ? 0 : static_cast<std::size_t>(n));
            std::vector<C> row(static_cast<std::size_t>(n));
            for (int64_t r = begin; r < end; ++r) {
                const T* xr = in + r * n;
                for (int64_t j = 0; j < n; ++j)
                    row[static_cast<std::size_t>(j)] = static_cast<C>(xr[j]);
                const auto cmp = [&](int32_t a, int32_t b) {
                    return before(
                        row[static_cast<std::size_t>(a)], a, row[static_cast<std::size_t>(b)], b);
                };
                if (k == 1) {
                    int32_t best = 0;
                    for (int32_t j = 1; j < n; ++j) {
                        if (cmp(j, best)) best = j;
                    }
                    out[r] = xr[best];
                    idx[r] = best;
                    continue;
                }
                std::iota(order.begin(), order.end(), 0);
                if (k < n) {
                    std::partial_sort(order.begin(), order.begin() + k, order.end(), cmp);
                } else {
                    std::sort(order.begin(), order.end(), cmp);
                }
                for (int64_t j = 0; j < k; ++j) {
                    const int32_t at = order[static_cast<std::size_t>(j)];
                    out[r * k + j] = xr[at];
                    idx[r * k + j] = at;
                }
            }
        });
    });
}

}  // namespace
}  // namespace tapeflow::cpu

namespace tapeflow {

void register_topk_cpu(KernelRegistry& r) {
    r.add(Op::top_k, DeviceType::cpu, cpu::top_k_kernel, kFloatTypes | kIntTypes);
}

}  // namespace tapeflow
