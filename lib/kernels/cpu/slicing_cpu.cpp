// CPU kernels of the slicing ops: slice, strided_slice(_grad), pad, mirror_pad(_grad). Copies move
// raw bytes (contiguous runs by memcpy), so one instantiation serves every dtype; only
// MirrorPadGrad, which adds, is typed. Gathers and scatters: gather_cpu.cpp.
#include <cstring>
#include <string>
#include <vector>

#include <fmt/ranges.h>

#include "core/dtype_dispatch.hpp"
#include "core/parallel.hpp"
#include "kernels/cpu/index_copy.hpp"
#include "kernels/cpu/kernels_cpu.hpp"
#include "ops/apply.hpp"
#include "ops/op_families.hpp"

namespace tapeflow::cpu {
namespace {

using namespace index_copy;

// ---- strided boxes: slice, strided_slice, strided_slice_grad ----

// A strided box of a row-major tensor: per axis, the first index, the step and the count taken.
struct Box {
    Dims extent, begin, stride, size;
};

// Moves the elements of `box` between the full tensor and a dense row-major buffer of the box's
// shape: full -> dense for slicing, dense -> full (`kScatter`) for StridedSliceGrad. Trailing axes
// taken whole merge into one contiguous run, so a typical slice is one memcpy per row.
// Copies `count` runs of `Bytes` bytes between `strided` (runs `step` bytes apart) and `packed`
// (runs back to back); a fixed size compiles to one load and store per run.
template <bool kScatter, std::size_t Bytes>
void copy_line_fixed(char* strided, int64_t step, char* packed, int64_t count) {
    for (int64_t i = 0; i < count; ++i, strided += step, packed += Bytes) {
        if constexpr (kScatter) {
            std::memcpy(strided, packed, Bytes);
        } else {
            std::memcpy(packed, strided, Bytes);
        }
    }
}

template <bool kScatter>
void copy_line(char* strided, int64_t step, char* packed, std::size_t run_bytes, int64_t count) {
    switch (run_bytes) {
        case 1:
            return copy_line_fixed<kScatter, 1>(strided, step, packed, count);
        case 2:
            return copy_line_fixed<kScatter, 2>(strided, step, packed, count);
        case 4:
            return copy_line_fixed<kScatter, 4>(strided, step, packed, count);
        case 8:
            return copy_line_fixed<kScatter, 8>(strided, step, packed, count);
        default:
            break;
    }
    for (int64_t i = 0; i < count; ++i, strided += step, packed += run_bytes) {
        if constexpr (kScatter) {
            std::memcpy(strided, packed, run_bytes);
        } else {
            std::memcpy(packed, strided, run_bytes);
        }
    }
}

// Moves the elements of `box` between the full tensor and a dense row-major buffer of the box's
// shape: full -> dense for slicing, dense -> full (`kScatter`) for StridedSliceGrad. Trailing axes
// taken whole merge into one contiguous run, so a typical slice is one memcpy per row; the last
// iterated axis is a tight strided loop ("line"), and lines are split among threads.
template <bool kScatter>
void box_copy(char* full, char* dense, const Box& box, std::size_t esize) {
    const auto rank = static_cast<int64_t>(box.extent.size());
    const int64_t total = product(box.size, 0, box.size.size());
    if (total == 0) return;
    Dims full_stride(static_cast<std::size_t>(rank));
    int64_t acc = 1;
    for (int64_t d = rank - 1; d >= 0; --d) {
        full_stride[d] = acc;
        acc *= box.extent[d];
    }
    int64_t k = rank - 1;
    int64_t block = 1;
    while (k >= 0 && box.begin[k] == 0 && box.stride[k] == 1 && box.size[k] == box.extent[k]) {
        block *= box.extent[k];
        --k;
    }
    // The run: axis k joins it when it steps by 1; otherwise it is iterated like the outer axes.
    int64_t run = block;
    int64_t base = 0;
    int64_t outer = k + 1;
    if (k >= 0 && box.stride[k] == 1) {
        run = box.size[k] * block;
        base = box.begin[k] * full_stride[k];
        outer = k;
    }
    const auto run_bytes = static_cast<std::size_t>(run) * esize;
    const auto ebytes = static_cast<int64_t>(esize);
    if (outer == 0) {  // one run: split its bytes among threads
        char* f = full + base * ebytes;
        parallel_for(static_cast<int64_t>(run_bytes), kGrainBytes, [&](int64_t lo, int64_t hi) {
            const auto n = static_cast<std::size_t>(hi - lo);
            if constexpr (kScatter) {
                std::memcpy(f + lo, dense + lo, n);
            } else {
                std::memcpy(dense + lo, f + lo, n);
            }
        });
        return;
    }
    const int64_t last = outer - 1;
    const int64_t len = box.size[last];  // runs per line
    const int64_t step = box.stride[last] * full_stride[last] * ebytes;
    const int64_t lines = total / run / len;
    const int64_t line_bytes = len * static_cast<int64_t>(run_bytes);
    parallel_for(lines, grain_for(line_bytes), [&](int64_t lo, int64_t hi) {
        Dims idx(static_cast<std::size_t>(last));
        int64_t rest = lo;
        for (int64_t d = last - 1; d >= 0; --d) {
            idx[d] = rest % box.size[d];
            rest /= box.size[d];
        }
        int64_t offset = base + box.begin[last] * full_stride[last];
        for (int64_t d = 0; d < last; ++d) {
            offset += (box.begin[d] + idx[d] * box.stride[d]) * full_stride[d];
        }
        for (int64_t line = lo; line < hi; ++line) {
            copy_line<kScatter>(
                full + offset * ebytes, step, dense + line * line_bytes, run_bytes, len);
            for (int64_t d = last - 1; d >= 0; --d) {
                offset += box.stride[d] * full_stride[d];
                if (++idx[d] < box.size[d]) break;
                offset -= box.size[d] * box.stride[d] * full_stride[d];
                idx[d] = 0;
            }
        }
    });
}

void slice_kernel(const KernelContext& ctx) {
    const Tensor& x = ctx.inputs[0];
    const Box box{x.shape().dims(),
                  ctx.attrs.get<Dims>("begin"),
                  Dims(x.shape().dims().size(), 1),
                  ctx.attrs.get<Dims>("size")};
    box_copy<false>(static_cast<char*>(const_cast<void*>(x.raw_data())),
                    static_cast<char*>(ctx.outputs[0].mutable_raw_data()),
                    box,
                    dtype_size(x.dtype()));
}

Box strided_box(const Shape& full, const Attrs& attrs) {
    return {full.dims(),
            attrs.get<Dims>("proc_begin"),
            attrs.get<Dims>("proc_strides"),
            attrs.get<Dims>("proc_sizes")};
}

void strided_slice_kernel(const KernelContext& ctx) {
    const Tensor& x = ctx.inputs[0];
    box_copy<false>(static_cast<char*>(const_cast<void*>(x.raw_data())),
                    static_cast<char*>(ctx.outputs[0].mutable_raw_data()),
                    strided_box(x.shape(), ctx.attrs),
                    dtype_size(x.dtype()));
}

// Zeros of the input's shape with dy written at the sliced positions (each position once: steps
// are non-zero, so no two box elements share an input element).
void strided_slice_grad_kernel(const KernelContext& ctx) {
    const Tensor& dy = ctx.inputs[0];
    const Tensor& out = ctx.outputs[0];
    auto* o = static_cast<char*>(out.mutable_raw_data());
    const auto bytes = static_cast<int64_t>(out.nbytes());
    parallel_for(bytes, kGrainBytes, [&](int64_t lo, int64_t hi) {
        std::memset(o + lo, 0, static_cast<std::size_t>(hi - lo));
    });
    box_copy<true>(o,
                   static_cast<char*>(const_cast<void*>(dy.raw_data())),
                   strided_box(out.shape(), ctx.attrs),
                   dtype_size(dy.dtype()));
}

// ---- pad ----

// Visits the output rows (all axes but the last) in parallel, passing each row's index and the
// coordinates of its leading axes.
template <class F>
void for_each_row(const Dims& out_dims, int64_t row_bytes, F&& row_fn) {
    const std::size_t lead = out_dims.size() - 1;
    const int64_t rows = product(out_dims, 0, lead);
    parallel_for(rows, grain_for(row_bytes), [&](int64_t lo, int64_t hi) {
        Dims idx(lead);
        int64_t rest = lo;
        for (std::size_t d = lead; d-- > 0;) {
            idx[d] = rest % out_dims[d];
            rest /= out_dims[d];
        }
        for (int64_t r = lo; r < hi; ++r) {
            row_fn(r, idx);
            for (std::size_t d = lead; d-- > 0;) {
                if (++idx[d] < out_dims[d]) break;
                idx[d] = 0;
            }
        }
    });
}

// Each output row is padding only, or padding + one input row (memcpy) + padding. The padding
// bytes come from one precomputed row of the constant.
void pad_kernel(const KernelContext& ctx) {
    const Tensor& x = ctx.inputs[0];
    const Tensor& y = ctx.outputs[0];
    const auto& paddings = ctx.attrs.get<Dims>("paddings");
    const std::size_t esize = dtype_size(x.dtype());
    if (y.num_elements() == 0) return;
    if (x.rank() == 0) {
        std::memcpy(y.mutable_raw_data(), x.raw_data(), esize);
        return;
    }
    const Dims& in = x.shape().dims();
    const Dims& out = y.shape().dims();
    const std::size_t last = in.size() - 1;
    const int64_t width = out[last];
    std::vector<char> pattern(static_cast<std::size_t>(width) * esize);
    visit_dtype(y.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T value = convert_element<T>(ctx.attrs.get<double>("constant_values"));
        for (int64_t i = 0; i < width; ++i) {
            std::memcpy(pattern.data() + i * esize, &value, esize);
        }
    });
    const auto* src = static_cast<const char*>(x.raw_data());
    auto* dst = static_cast<char*>(y.mutable_raw_data());
    const auto before = static_cast<std::size_t>(paddings[2 * last]) * esize;
    const auto in_bytes = static_cast<std::size_t>(in[last]) * esize;
    const std::size_t row_bytes = static_cast<std::size_t>(width) * esize;
    for_each_row(out, static_cast<int64_t>(row_bytes), [&](int64_t r, const Dims& idx) {
        char* row = dst + r * static_cast<int64_t>(row_bytes);
        int64_t src_row = 0;
        for (std::size_t d = 0; d < last; ++d) {
            const int64_t i = idx[d] - paddings[2 * d];
            if (i < 0 || i >= in[d]) {
                std::memcpy(row, pattern.data(), row_bytes);
                return;
            }
            src_row = src_row * in[d] + i;
        }
        std::memcpy(row, pattern.data(), before);
        if (in_bytes != 0) {
            std::memcpy(row + before, src + src_row * static_cast<int64_t>(in_bytes), in_bytes);
        }
        std::memcpy(row + before + in_bytes, pattern.data(), row_bytes - before - in_bytes);
    });
}

// For each axis, the input index every output index copies. REFLECT mirrors without the edge
// (offset 1), SYMMETRIC with it (offset 0), as TensorFlow's MirrorPad.
std::vector<Dims> mirror_maps(const Dims& in, const Dims& paddings, bool reflect) {
    const int64_t offset = reflect ? 1 : 0;
    std::vector<Dims> maps(in.size());
    for (std::size_t d = 0; d < in.size(); ++d) {
        const int64_t n = in[d];
        const int64_t before = paddings[2 * d];
        const int64_t out = n + before + paddings[2 * d + 1];
        maps[d].resize(static_cast<std::size_t>(out));
        for (int64_t o = 0; o < out; ++o) {
            const int64_t i = o - before;
            maps[d][o] = i < 0 ? -i - 1 + offset : i >= n ? 2 * n - 1 - offset - i : i;
        }
    }
    return maps;
}

void mirror_pad_kernel(const KernelContext& ctx) {
    const Tensor& x = ctx.inputs[0];
    const Tensor& y = ctx.outputs[0];
    const auto& paddings = ctx.attrs.get<Dims>("paddings");
    const bool reflect = ctx.attrs.get<std::string>("mode") == "REFLECT";
    const std::size_t esize = dtype_size(x.dtype());
    if (y.num_elements() == 0) return;
    if (x.rank() == 0) {
        std::memcpy(y.mutable_raw_data(), x.raw_data(), esize);
        return;
    }
    const Dims& in = x.shape().dims();
    const Dims& out = y.shape().dims();
    const std::size_t last = in.size() - 1;
    const std::vector<Dims> maps = mirror_maps(in, paddings, reflect);
    const auto* src = static_cast<const char*>(x.raw_data());
    auto* dst = static_cast<char*>(y.mutable_raw_data());
    const int64_t before = paddings[2 * last];
    const int64_t n = in[last];
    const int64_t width = out[last];
    for_each_row(out, width * static_cast<int64_t>(esize), [&](int64_t r, const Dims& idx) {
        int64_t src_row = 0;
        for (std::size_t d = 0; d < last; ++d) {
            src_row = src_row * in[d] + maps[d][idx[d]];
        }
        const char* s = src + src_row * n * static_cast<int64_t>(esize);
        char* row = dst + r * width * static_cast<int64_t>(esize);
        for (int64_t o = 0; o < before; ++o) {
            copy_bytes(row + o * esize, s + maps[last][o] * esize, esize);
        }
        std::memcpy(row + before * esize, s, static_cast<std::size_t>(n) * esize);
        for (int64_t o = before + n; o < width; ++o) {
            copy_bytes(row + o * esize, s + maps[last][o] * esize, esize);
        }
    });
}

// Folds one axis at a time: element i of the narrower result sums every element of the wider
// buffer whose mirror map lands on i, in increasing order (deterministic, race-free: each output
// element is written by one thread).
void mirror_pad_grad_kernel(const KernelContext& ctx) {
    const Tensor& g = ctx.inputs[0];
    const Tensor& y = ctx.outputs[0];
    const auto& paddings = ctx.attrs.get<Dims>("paddings");
    const bool reflect = ctx.attrs.get<std::string>("mode") == "REFLECT";
    const Dims& out = y.shape().dims();
    const std::vector<Dims> maps = mirror_maps(out, paddings, reflect);
    visit_dtype(g.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (!std::is_same_v<T, bool>) {
            using Acc = compute_t<T>;
            const T* gp = static_cast<const T*>(g.raw_data());
            std::vector<Acc> cur(static_cast<std::size_t>(g.num_elements()));
            for (std::size_t e = 0; e < cur.size(); ++e)
                cur[e] = static_cast<Acc>(gp[e]);
            Dims shape = g.shape().dims();
            for (std::size_t d = 0; d < out.size(); ++d) {
                if (shape[d] == out[d]) continue;
                std::vector<Dims> sources(static_cast<std::size_t>(out[d]));
                for (int64_t j = 0; j < shape[d]; ++j)
                    sources[maps[d][j]].push_back(j);
                const int64_t outer = product(shape, 0, d);
                const int64_t inner = product(shape, d + 1, shape.size());
                std::vector<Acc> next(static_cast<std::size_t>(outer * out[d] * inner));
                parallel_for(outer * out[d],
                             std::max<int64_t>(1, kGrain / std::max<int64_t>(inner, 1)),
                             [&](int64_t lo, int64_t hi) {
                                 for (int64_t r = lo; r < hi; ++r) {
                                     const int64_t o = r / out[d];
                                     const int64_t i = r % out[d];
                                     Acc* dst = next.data() + r * inner;
                                     std::fill(dst, dst + inner, Acc(0));
                                     for (int64_t j : sources[i]) {
                                         const Acc* s = cur.data() + (o * shape[d] + j) * inner;
                                         for (int64_t e = 0; e < inner; ++e)
                                             dst[e] += s[e];
                                     }
                                 }
                             });
                cur.swap(next);
                shape[d] = out[d];
            }
            T* yp = static_cast<T*>(y.mutable_raw_data());
            for (std::size_t e = 0; e < cur.size(); ++e)
                yp[e] = convert_element<T>(cur[e]);
        }
    });
}

}  // namespace
}  // namespace tapeflow::cpu

namespace tapeflow {

void register_slicing_cpu(KernelRegistry& r) {
    using namespace cpu;
    constexpr auto kCpu = DeviceType::cpu;
    constexpr DTypeSet kSumTypes = kFloatTypes | DTypeSet{DType::int32, DType::int64, DType::uint8};
    r.add(Op::slice, kCpu, slice_kernel, kAllTypes);
    r.add(Op::strided_slice, kCpu, strided_slice_kernel, kAllTypes);
    r.add(Op::strided_slice_grad, kCpu, strided_slice_grad_kernel, kAllTypes);
    r.add(Op::pad, kCpu, pad_kernel, kAllTypes);
    r.add(Op::mirror_pad, kCpu, mirror_pad_kernel, kAllTypes);
    r.add(Op::mirror_pad_grad, kCpu, mirror_pad_grad_kernel, kSumTypes);
}

}  // namespace tapeflow
