// Creation and array ops: constant, fill, range, linspace, eye, one_hot, identity, cast.
// Values computed on the host (constant, range, linspace, eye) are built on the CPU and then copied
// to the default device; fill and one_hot run as kernels on the device itself.
#include <cmath>
#include <cstring>
#include <utility>

#include <tapeflow/ops/creation.hpp>

#include "core/dtype_dispatch.hpp"
#include "ops/apply.hpp"
#include "ops/number_conversion.hpp"
#include "ops/op_families.hpp"

namespace tapeflow {
namespace {

Tensor on_default_device(const Tensor& host) {
    return host.to(default_device());
}

// A host tensor whose element i is value(i) converted to `dtype` (as tf.cast converts). Allocated
// in the output dtype directly, so a size too large fails as that tensor's OOM.
template <class F>
Tensor host_tensor(const Shape& shape, DType dtype, F value) {
    Tensor t = Tensor::empty(shape, dtype);
    visit_dtype(dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        auto* out = static_cast<T*>(t.mutable_raw_data());
        for (int64_t i = 0; i < shape.num_elements(); ++i)
            out[i] = convert_element<T>(value(i));
    });
    return t;
}

// TensorFlow's Range kernel checks, for the double and the int64 overloads alike.
template <class T>
void check_range_direction(T start, T limit, T delta) {
    if (delta == 0) {
        throw errors::InvalidArgumentError(fmt::format("Requires delta != 0: {}", delta), "Range");
    }
    if ((delta > 0 && start > limit) || (delta < 0 && start < limit)) {
        throw errors::InvalidArgumentError(
            fmt::format("Requires start {} limit when delta {} 0: {}/{}",
                        delta > 0 ? "<=" : ">=",
                        delta > 0 ? ">" : "<",
                        start,
                        limit),
            "Range");
    }
}

}  // namespace

namespace detail {

Tensor make_constant(const void* values,
                     DType src_dtype,
                     std::size_t count,
                     const Shape& shape,
                     std::optional<DType> dtype) {
    if (shape.num_elements() < 0) Tensor::empty(shape, src_dtype);  // throws its error
    const auto n = static_cast<std::size_t>(shape.num_elements());
    if (count != n && count != 1) {
        throw errors::InvalidArgumentError(
            fmt::format("constant: {} values given for shape {}, which has {} elements (give "
                        "exactly that many, "
                        "or one value to fill the shape)",
                        count,
                        shape.str(),
                        n));
    }
    const std::size_t size = dtype_size(src_dtype);
    Tensor host = Tensor::empty(shape, src_dtype);
    auto* dst = static_cast<char*>(host.mutable_raw_data());
    if (count == n) {
        if (n != 0) std::memcpy(dst, values, n * size);
    } else {
        for (std::size_t i = 0; i < n; ++i)
            std::memcpy(dst + i * size, values, size);
    }
    if (dtype && *dtype != src_dtype) host = cast(host, *dtype);
    return on_default_device(host);
}

void throw_ragged(std::size_t expected, std::size_t got, int depth) {
    throw errors::InvalidArgumentError(fmt::format(
        "constant: non-rectangular initializer list: a list at depth {} has {} elements where {} "
        "were expected",
        depth,
        got,
        expected));
}

void throw_int_too_large(uint64_t value, const char* op) {
    throw errors::InvalidArgumentError(
        fmt::format("{} does not fit int64 (a Python int argument is int32 or int64)", value), op);
}

}  // namespace detail

Tensor fill(const Shape& shape, double value, DType dtype) {
    detail::check_number_fits(value, dtype, "Fill");
    return apply(Op::fill, {}, {shape, dtype}, Attrs().set("value", value));
}

Tensor fill(const Shape& shape, int64_t value) {
    if (std::in_range<int32_t>(value)) return fill(shape, static_cast<double>(value), DType::int32);
    // int64 values beyond 2^53 do not survive the double attr: built on the host instead.
    return detail::make_constant(&value, DType::int64, 1, shape, std::nullopt);
}

Tensor zeros(const Shape& shape, DType dtype) {
    return fill(shape, 0.0, dtype);
}

Tensor ones(const Shape& shape, DType dtype) {
    return fill(shape, 1.0, dtype);
}

Tensor zeros_like(const Tensor& like) {
    const DeviceScope scope(like.device());
    return zeros(like.shape(), like.dtype());
}

Tensor ones_like(const Tensor& like) {
    const DeviceScope scope(like.device());
    return ones(like.shape(), like.dtype());
}

Tensor range(double start, double limit, double delta, DType dtype) {
    if (!std::isfinite(start) || !std::isfinite(limit) || !std::isfinite(delta)) {
        throw errors::InvalidArgumentError(
            fmt::format(
                "start, limit and delta must be finite, got {}, {}, {}", start, limit, delta),
            "Range");
    }
    if (is_integer(dtype)) {  // TensorFlow converts the arguments to the output type first
        start = std::trunc(start);
        limit = std::trunc(limit);
        delta = std::trunc(delta);
    }
    check_range_direction(start, limit, delta);
    // (limit - start) / delta can overflow to inf (range(0, 1e300, 1e-300)).
    const int64_t n = checked_count(std::ceil(std::abs((limit - start) / delta)), "Range");
    return on_default_device(host_tensor(
        Shape{n}, dtype, [&](int64_t i) { return start + static_cast<double>(i) * delta; }));
}

namespace {

// tf.range's arguments become tensors of the requested dtype before the op runs: an integer dtype
// that cannot hold one is TensorFlow's conversion error.
void check_range_arg(int64_t v, DType dtype) {
    const bool fits = dtype == DType::int32   ? std::in_range<int32_t>(v)
                      : dtype == DType::uint8 ? std::in_range<uint8_t>(v)
                                              : true;
    if (!fits) detail::cannot_convert(std::to_string(v), dtype, "Range");
}

}  // namespace

Tensor range(int64_t start, int64_t limit, int64_t delta) {
    const bool small = std::in_range<int32_t>(start) && std::in_range<int32_t>(limit) &&
                       std::in_range<int32_t>(delta);
    return range(start, limit, delta, small ? DType::int32 : DType::int64);
}

Tensor range(int64_t limit) {
    return range(0, limit, 1);
}

Tensor range(int64_t start, int64_t limit, int64_t delta, DType dtype) {
    if (!is_integer(dtype)) {
        return range(static_cast<double>(start),
                     static_cast<double>(limit),
                     static_cast<double>(delta),
                     dtype);
    }
    for (int64_t v : {start, limit, delta})
        check_range_arg(v, dtype);
    check_range_direction(start, limit, delta);
    // |limit - start| and the count in unsigned 64-bit arithmetic: no overflow for any int64 pair.
    const uint64_t span = delta > 0 ? static_cast<uint64_t>(limit) - static_cast<uint64_t>(start)
                                    : static_cast<uint64_t>(start) - static_cast<uint64_t>(limit);
    const uint64_t step =
        delta > 0 ? static_cast<uint64_t>(delta) : 0 - static_cast<uint64_t>(delta);
    const uint64_t count = span / step + (span % step != 0 ? 1 : 0);
    const int64_t n = checked_count(static_cast<double>(count), "Range");
    Tensor t = Tensor::empty(Shape{n}, dtype);
    visit_dtype(dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_integral_v<T>) {
            auto* out = static_cast<T*>(t.mutable_raw_data());
            // start + i * delta lies between start and limit, but i * delta alone may not fit
            // int64 (range(INT64_MIN, INT64_MAX, INT64_MAX)): summed modulo 2^64.
            for (int64_t i = 0; i < n; ++i) {
                out[i] = static_cast<T>(
                    static_cast<int64_t>(static_cast<uint64_t>(start) +
                                         static_cast<uint64_t>(i) * static_cast<uint64_t>(delta)));
            }
        }
    });
    return on_default_device(t);
}

Tensor linspace(double start, double stop, int64_t num, DType dtype) {
    if (num <= 0) {
        throw errors::InvalidArgumentError(fmt::format("Requires num > 0: {}", num), "LinSpace");
    }
    const double step = num > 1 ? (stop - start) / static_cast<double>(num - 1) : 0.0;
    return on_default_device(host_tensor(Shape{num}, dtype, [&](int64_t i) {
        // The exact endpoint, as TensorFlow computes it.
        return num > 1 && i == num - 1 ? stop : start + static_cast<double>(i) * step;
    }));
}

Tensor eye(int64_t n, DType dtype) {
    if (n < 0) {
        throw errors::InvalidArgumentError(fmt::format("eye: num_rows must be >= 0, got {}", n),
                                           "Eye");
    }
    const Shape shape = op_shape({n, n}, "Eye");  // checks n * n
    return on_default_device(
        host_tensor(shape, dtype, [n](int64_t i) { return i / n == i % n ? 1.0 : 0.0; }));
}

Tensor one_hot(const Tensor& indices,
               int64_t depth,
               double on_value,
               double off_value,
               int64_t axis,
               DType dtype) {
    if (!indices.defined()) op_fail(Op::one_hot, "indices is an undefined tensor");
    if (!is_integer(indices.dtype())) {
        op_fail(Op::one_hot,
                "indices must be int32, int64 or uint8, got {}",
                dtype_name(indices.dtype()));
    }
    if (depth < 0) op_fail(Op::one_hot, "depth must be non-negative, got: {}", depth);
    const int64_t rank = indices.rank();
    if (axis < -1 || axis > rank) {
        op_fail(Op::one_hot,
                "Expected axis to be -1 or between [0, {}).  But received: {}",
                rank + 1,
                axis);
    }
    detail::check_number_fits(on_value, dtype, "OneHot");
    detail::check_number_fits(off_value, dtype, "OneHot");
    const int64_t where = axis == -1 ? rank : axis;
    std::vector<int64_t> dims = indices.shape().dims();
    dims.insert(dims.begin() + where, depth);
    return apply(Op::one_hot,
                 {indices},
                 {op_shape(dims, op_type(Op::one_hot)), dtype},
                 Attrs()
                     .set("depth", depth)
                     .set("axis", where)
                     .set("on_value", on_value)
                     .set("off_value", off_value));
}

Tensor identity(const Tensor& x) {
    if (!x.defined()) op_fail(Op::identity, "input is an undefined tensor");
    return apply(Op::identity, {x}, {x.shape(), x.dtype()});
}

namespace {

// A float-to-float cast casts the tangent; integer outputs carry none (the engine drops them).
Tangents cast_jvp(const JvpCtx& c) {
    if (!is_floating(c.out[0].dtype())) return {Tensor()};
    return {cast(c.t(0), c.out[0].dtype())};
}

const OpDef kCreationOps[] = {
    {Op::identity,
     Save::nothing,
     [](const GradCtx& c) -> Grads { return {c.grad()}; },
     kBatchable,
     jvp_self_adjoint},
    // Cast: the gradient casts back when both dtypes are floating; integer casts cut the graph.
    {Op::cast,
     Save::nothing,
     [](const GradCtx& c) -> Grads {
         const DType from = c.in_meta[0].dtype;
         if (!is_floating(from) || !is_floating(c.out_meta[0].dtype)) return {Gradient()};
         return {cast(c.grad(), from)};
     },
     kBatchable,
     cast_jvp},
    {Op::fill, Save::nothing, nullptr},
    {Op::one_hot, Save::nothing, nullptr},
};

}  // namespace

std::span<const OpDef> creation_op_defs() {
    return kCreationOps;
}

Tensor cast(const Tensor& x, DType dtype) {
    if (!x.defined()) op_fail(Op::cast, "input is an undefined tensor");
    return apply(Op::cast, {x}, {x.shape(), dtype});
}

}  // namespace tapeflow
