// The shape ops (reshape, expand_dims, squeeze, transpose, concat, stack, unstack, split, tile,
// broadcast_to, stop_gradient, shape) and cast: TensorFlow's golden values and gradients, every
// dtype against naive index-arithmetic references, views, finite-difference gradients, higher
// order, and each error with TensorFlow's message. Tag: [array].
#include <numeric>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

#include "ops/dispatch.hpp"
#include "ops/op_def.hpp"
#include "support/golden.hpp"
#include "support/gradcheck.hpp"

namespace tf = tapeflow;
using Catch::Contains;
using Catch::Matchers::Message;
using tf::testing::check_gradients;
using tf::testing::golden_cases;
using tf::testing::random_f64;
using tf::testing::run_golden_case;
using Json = nlohmann::json;
using Dims = std::vector<int64_t>;

namespace {

const std::vector<tf::DType> kAllDTypes = {tf::float32,
                                           tf::float64,
                                           tf::int32,
                                           tf::int64,
                                           tf::uint8,
                                           tf::bool_,
                                           tf::float16,
                                           tf::bfloat16};

// Distinct values that every dtype holds exactly (bool gets a pattern of 0s and 1s).
tf::Tensor pattern(const tf::Shape& shape, tf::DType dtype, std::size_t start = 0) {
    std::vector<double> v(static_cast<std::size_t>(shape.num_elements()));
    for (std::size_t i = 0; i < v.size(); ++i) {
        const std::size_t k = i + start;
        v[i] = dtype == tf::bool_ ? static_cast<double>(k % 3 == 1)
                                  : static_cast<double>((k * 7) % 251);
    }
    return tf::constant(v, shape, dtype);
}

Dims unravel(int64_t linear, const Dims& dims) {
    Dims idx(dims.size());
    for (std::size_t k = dims.size(); k-- > 0;) {
        idx[k] = linear % dims[k];
        linear /= dims[k];
    }
    return idx;
}

int64_t ravel(const Dims& idx, const Dims& dims) {
    int64_t linear = 0;
    for (std::size_t k = 0; k < dims.size(); ++k)
        linear = linear * dims[k] + idx[k];
    return linear;
}

int64_t count(const Dims& dims) {
    return std::accumulate(dims.begin(), dims.end(), int64_t{1}, std::multiplies<>());
}

// Naive references: for every output element, the input element it comes from.
std::vector<double> ref_transpose(const std::vector<double>& x,
                                  const Dims& dims,
                                  const Dims& perm) {
    Dims out_dims;
    for (int64_t p : perm)
        out_dims.push_back(dims[p]);
    std::vector<double> out(x.size());
    for (int64_t o = 0; o < static_cast<int64_t>(out.size()); ++o) {
        const Dims oi = unravel(o, out_dims);
        Dims ii(dims.size());
        for (std::size_t k = 0; k < perm.size(); ++k)
            ii[perm[k]] = oi[k];
        out[o] = x[ravel(ii, dims)];
    }
    return out;
}

// Tile and broadcast: output index k maps to input index k % dims (dims left-padded with 1s).
std::vector<double> ref_repeat(const std::vector<double>& x, Dims dims, const Dims& out_dims) {
    dims.insert(dims.begin(), out_dims.size() - dims.size(), 1);
    std::vector<double> out(static_cast<std::size_t>(count(out_dims)));
    for (int64_t o = 0; o < static_cast<int64_t>(out.size()); ++o) {
        Dims idx = unravel(o, out_dims);
        for (std::size_t k = 0; k < idx.size(); ++k)
            idx[k] %= dims[k];
        out[o] = x[ravel(idx, dims)];
    }
    return out;
}

std::vector<double> ref_concat(const std::vector<std::vector<double>>& xs,
                               const std::vector<Dims>& dims,
                               int64_t axis) {
    Dims out_dims = dims[0];
    out_dims[axis] = 0;
    for (const Dims& d : dims)
        out_dims[axis] += d[axis];
    std::vector<double> out(static_cast<std::size_t>(count(out_dims)));
    for (int64_t o = 0; o < static_cast<int64_t>(out.size()); ++o) {
        Dims idx = unravel(o, out_dims);
        std::size_t i = 0;
        while (idx[axis] >= dims[i][axis])
            idx[axis] -= dims[i++][axis];
        out[o] = xs[i][ravel(idx, dims[i])];
    }
    return out;
}

std::vector<tf::Tensor> inputs_named(const tf::testing::GoldenCase& c,
                                     const std::vector<tf::Tensor>& in,
                                     const std::string& prefix) {
    std::vector<tf::Tensor> out;
    for (std::size_t i = 0; i < in.size(); ++i) {
        if (c.input_names[i].rfind(prefix, 0) == 0) out.push_back(in[i]);
    }
    return out;
}

Dims ints(const Json& j) {
    return j.get<Dims>();
}

tf::Axes axes_arg(const Json& j) {
    if (j.is_array()) return tf::Axes(j.get<Dims>());
    return tf::Axes(j.get<int64_t>());
}

}  // namespace

TEST_CASE("the shape ops have gradient rows, and kernels unless they are views", "[array]") {
    using tf::Op;
    for (Op op : {Op::reshape,
                  Op::expand_dims,
                  Op::squeeze,
                  Op::stop_gradient,
                  Op::transpose,
                  Op::concat,
                  Op::stack,
                  Op::unstack,
                  Op::split,
                  Op::split_v,
                  Op::tile,
                  Op::broadcast_to,
                  Op::shape}) {
        CAPTURE(tf::op_name(op));
        CHECK(tf::op_def(op).op == op);
        const bool view = op == Op::reshape || op == Op::expand_dims || op == Op::squeeze ||
                          op == Op::stop_gradient;
        CHECK(tf::op_dispatch(op) == (view ? tf::DispatchOn::none : tf::DispatchOn::input));
        CHECK(tf::kernel_registry().has(op, tf::DeviceType::cpu) == !view);
    }
    CHECK(tf::op_def(Op::stop_gradient).backward == nullptr);
    CHECK(tf::op_def(Op::shape).backward == nullptr);
    CHECK(tf::op_type(Op::concat) == "ConcatV2");
    CHECK(tf::op_type(Op::stack) == "Pack");
    CHECK(tf::op_type(Op::unstack) == "Unpack");
    CHECK(tf::op_type(Op::split_v) == "SplitV");
}

// ---- Golden cases (`tests/golden/ops.json`) ----

TEST_CASE("golden: reshape, expand_dims, squeeze", "[array][golden]") {
    for (const auto& c : golden_cases("tf.reshape")) {
        run_golden_case(c, [](const std::vector<tf::Tensor>& in, const Json& args) {
            return std::vector<tf::Tensor>{tf::reshape(in[0], ints(args.at("shape")))};
        });
    }
    for (const auto& c : golden_cases("tf.expand_dims")) {
        run_golden_case(c, [](const std::vector<tf::Tensor>& in, const Json& args) {
            return std::vector<tf::Tensor>{tf::expand_dims(in[0], args.at("axis").get<int64_t>())};
        });
    }
    for (const auto& c : golden_cases("tf.squeeze")) {
        run_golden_case(c, [](const std::vector<tf::Tensor>& in, const Json& args) {
            const tf::Axes axis = args.contains("axis") && !args.at("axis").is_null()
                                      ? axes_arg(args.at("axis"))
                                      : tf::Axes();
            return std::vector<tf::Tensor>{tf::squeeze(in[0], axis)};
        });
    }
}

TEST_CASE("golden: transpose", "[array][golden]") {
    for (const auto& c : golden_cases("tf.transpose")) {
        run_golden_case(c, [](const std::vector<tf::Tensor>& in, const Json& args) {
            const Dims perm = args.contains("perm") && !args.at("perm").is_null()
                                  ? ints(args.at("perm"))
                                  : Dims{};
            return std::vector<tf::Tensor>{tf::transpose(in[0], perm)};
        });
    }
}

TEST_CASE("golden: concat, stack, split", "[array][golden]") {
    for (const auto& c : golden_cases("tf.concat")) {
        run_golden_case(c, [&c](const std::vector<tf::Tensor>& in, const Json& args) {
            return std::vector<tf::Tensor>{
                tf::concat(inputs_named(c, in, "values["), args.at("axis").get<int64_t>())};
        });
    }
    for (const auto& c : golden_cases("tf.stack")) {
        run_golden_case(c, [&c](const std::vector<tf::Tensor>& in, const Json& args) {
            const int64_t axis = args.value("axis", int64_t{0});
            return std::vector<tf::Tensor>{tf::stack(inputs_named(c, in, "values["), axis)};
        });
    }
    for (const auto& c : golden_cases("tf.split")) {
        run_golden_case(c, [](const std::vector<tf::Tensor>& in, const Json& args) {
            const int64_t axis = args.value("axis", int64_t{0});
            const Json& n = args.at("num_or_size_splits");
            return n.is_array() ? tf::split(in[0], ints(n), axis)
                                : tf::split(in[0], n.get<int64_t>(), axis);
        });
    }
}

TEST_CASE("golden: tile, stop_gradient, cast", "[array][golden]") {
    for (const auto& c : golden_cases("tf.tile")) {
        run_golden_case(c, [](const std::vector<tf::Tensor>& in, const Json& args) {
            return std::vector<tf::Tensor>{tf::tile(in[0], ints(args.at("multiples")))};
        });
    }
    for (const auto& c : golden_cases("tf.stop_gradient")) {
        run_golden_case(c, [](const std::vector<tf::Tensor>& in, const Json&) {
            return std::vector<tf::Tensor>{tf::stop_gradient(in[0])};
        });
    }
    for (const auto& c : golden_cases("tf.cast")) {
        run_golden_case(c, [](const std::vector<tf::Tensor>& in, const Json& args) {
            return std::vector<tf::Tensor>{
                tf::cast(in[0], tf::parse_dtype(args.at("dtype").get<std::string>()))};
        });
    }
}

// ---- Forward values: every dtype against the naive references ----

TEST_CASE("reshape, expand_dims and squeeze keep the elements in order", "[array]") {
    for (tf::DType dtype : kAllDTypes) {
        INFO("dtype " << tf::dtype_name(dtype));
        const tf::Tensor x = pattern({2, 3, 4}, dtype);
        const std::vector<double> v = x.to_vector<double>();
        const tf::Tensor r = tf::reshape(x, {4, -1});
        CHECK(r.shape() == tf::Shape{4, 6});
        CHECK(r.dtype() == dtype);
        CHECK(r.to_vector<double>() == v);
        CHECK(tf::reshape(x, tf::Shape{24}).to_vector<double>() == v);
        CHECK(tf::reshape(x, Dims{-1}).shape() == tf::Shape{24});
        CHECK(tf::expand_dims(x, 1).shape() == tf::Shape{2, 1, 3, 4});
        CHECK(tf::expand_dims(x, -1).shape() == tf::Shape{2, 3, 4, 1});
        CHECK(tf::expand_dims(x, 3).shape() == tf::Shape{2, 3, 4, 1});
        CHECK(tf::expand_dims(x, -4).shape() == tf::Shape{1, 2, 3, 4});
        const tf::Tensor s = tf::squeeze(tf::reshape(x, {1, 2, 1, 12, 1}));
        CHECK(s.shape() == tf::Shape{2, 12});
        CHECK(s.to_vector<double>() == v);
        CHECK(tf::squeeze(tf::reshape(x, {1, 2, 1, 12, 1}), {0, -1}).shape() ==
              tf::Shape{2, 1, 12});
        CHECK(tf::squeeze(tf::reshape(x, {1, 24}), 0).shape() == tf::Shape{24});
    }
}

TEST_CASE("reshape infers -1 as TensorFlow does, also next to zero sizes", "[array]") {
    CHECK(tf::reshape(tf::zeros({0, 6}), {0, -1}).shape() == tf::Shape{0, 6});
    CHECK(tf::reshape(tf::zeros({3, 0}), {-1, 0}).shape() == tf::Shape{3, 0});
    CHECK(tf::reshape(tf::zeros({2, 3}), {-1}).shape() == tf::Shape{6});
    CHECK(tf::reshape(tf::constant(5.f), {1, 1}).shape() == tf::Shape{1, 1});
    CHECK(tf::reshape(tf::constant({5.f}), {}).shape() == tf::Shape{});
    CHECK(tf::reshape(tf::constant({5.f}), tf::Shape{}).item<float>() == 5.f);
    CHECK(tf::reshape(tf::zeros({2, 0, 3}), {0, 3, 2}).shape() == tf::Shape{0, 3, 2});
}

TEST_CASE("reshape refuses a -1 that an all-zero input cannot determine", "[array]") {
    // [0] -> [-1, 0]: any size fits the -1 (TensorFlow raises; it used to give [1, 0]).
    CHECK_THROWS_MATCHES(
        tf::reshape(tf::zeros({0}), {-1, 0}),
        tf::errors::InvalidArgumentError,
        Message("Reshape cannot infer the missing input size for an empty tensor unless all "
                "specified input sizes are non-zero [Op:Reshape]"));
    CHECK_THROWS_AS(tf::reshape(tf::zeros({0, 0}), {0, -1}), tf::errors::InvalidArgumentError);
    // A positive input size still determines it, and no zero size leaves nothing to guess.
    CHECK(tf::reshape(tf::zeros({0, 3}), {-1, 3}).shape() == tf::Shape{0, 3});
    CHECK(tf::reshape(tf::zeros({0}), {-1}).shape() == tf::Shape{0});
    CHECK(tf::reshape(tf::zeros({1, 0}), {-1, 0}).shape() == tf::Shape{1, 0});
}

TEST_CASE("reshape takes a tf::Shape with one -1", "[array]") {
    const tf::Tensor x = tf::range(0.f, 6.f);
    const tf::Tensor y = tf::reshape(x, tf::Shape{3, -1});
    CHECK(y.shape() == tf::Shape{3, 2});
    CHECK(y.to_vector<float>() == x.to_vector<float>());
    CHECK(tf::reshape(x, tf::Shape{-1}).shape() == tf::Shape{6});
    CHECK(tf::reshape(x, tf::Shape{-1, 1, 3}).shape() == tf::Shape{2, 1, 3});
    CHECK(tf::reshape(tf::zeros({0, 6}), tf::Shape{0, -1}).shape() == tf::Shape{0, 6});
    // The gradient flows back to x's shape.
    tf::GradientTape tape;
    tape.watch(x);
    const tf::Tensor g = tape.gradient(tf::reshape(x, tf::Shape{-1, 2}) * 2.f, x).dense();
    CHECK(g.shape() == tf::Shape{6});
    CHECK(g.to_vector<float>() == std::vector<float>(6, 2.f));
}

TEST_CASE("transpose matches the reference for every dtype and path", "[array]") {
    const std::vector<std::pair<Dims, Dims>> cases = {
        {{3, 5}, {1, 0}},                    // 2-D blocked
        {{2, 3, 4}, {0, 2, 1}},              // batched last-two swap
        {{2, 3, 4}, {2, 0, 1}},              // merges to a 2-D swap
        {{2, 3, 4}, {1, 0, 2}},              // contiguous runs
        {{2, 3, 4, 5}, {3, 1, 0, 2}},        // general
        {{2, 1, 3, 1, 4}, {4, 3, 0, 2, 1}},  // size-1 axes dropped
        {{4, 3, 2, 5}, {1, 3, 0, 2}},
        {{5}, {0}},
        {{}, {}},
    };
    for (tf::DType dtype : kAllDTypes) {
        for (const auto& [dims, perm] : cases) {
            INFO("dtype " << tf::dtype_name(dtype) << " shape " << tf::Shape(dims).str() << " perm "
                          << tf::Shape(perm).str());
            const tf::Tensor x = pattern(tf::Shape(dims), dtype);
            const tf::Tensor y = tf::transpose(x, perm);
            CHECK(y.dtype() == dtype);
            CHECK(y.to_vector<double>() == ref_transpose(x.to_vector<double>(), dims, perm));
        }
    }
    const tf::Tensor m = pattern({2, 3, 4}, tf::int32);
    CHECK(tf::transpose(m).shape() == tf::Shape{4, 3, 2});
    CHECK(tf::transpose(m).to_vector<double>() ==
          ref_transpose(m.to_vector<double>(), {2, 3, 4}, {2, 1, 0}));
}

TEST_CASE("large transposes, parallel and blocked, match the reference", "[array]") {
    const std::vector<std::pair<Dims, Dims>> cases = {
        {{257, 1031}, {1, 0}},
        {{3, 130, 67}, {0, 2, 1}},
        {{64, 33, 40}, {2, 0, 1}},
        {{40, 33, 64}, {1, 2, 0}},
        {{7, 9, 11, 13, 5}, {4, 2, 0, 3, 1}},
        {{600, 2, 150}, {1, 0, 2}},
    };
    for (tf::DType dtype : {tf::float32, tf::float64, tf::uint8, tf::float16}) {
        for (const auto& [dims, perm] : cases) {
            INFO("dtype " << tf::dtype_name(dtype) << " shape " << tf::Shape(dims).str());
            const tf::Tensor x = pattern(tf::Shape(dims), dtype);
            CHECK(tf::transpose(x, perm).to_vector<double>() ==
                  ref_transpose(x.to_vector<double>(), dims, perm));
        }
    }
}

TEST_CASE("concat matches the reference along every axis and dtype", "[array]") {
    for (tf::DType dtype : kAllDTypes) {
        for (int64_t axis = -3; axis < 3; ++axis) {
            INFO("dtype " << tf::dtype_name(dtype) << " axis " << axis);
            const int64_t a = axis < 0 ? axis + 3 : axis;
            std::vector<Dims> dims(3, Dims{2, 3, 4});
            dims[1][a] = 1;
            dims[2][a] = 5;
            std::vector<tf::Tensor> xs;
            std::vector<std::vector<double>> vs;
            for (std::size_t i = 0; i < dims.size(); ++i) {
                xs.push_back(pattern(tf::Shape(dims[i]), dtype, 100 * i + 1));
                vs.push_back(xs.back().to_vector<double>());
            }
            const tf::Tensor y = tf::concat(xs, axis);
            Dims out_dims = dims[0];
            out_dims[a] += 1 + 5;
            CHECK(y.shape() == tf::Shape(out_dims));
            CHECK(y.dtype() == dtype);
            CHECK(y.to_vector<double>() == ref_concat(vs, dims, a));
        }
    }
}

TEST_CASE("large concat and split use the parallel copies", "[array]") {
    for (int64_t axis : {0, 1, 2}) {
        INFO("axis " << axis);
        std::vector<Dims> dims(4, Dims{40, 50, 60});
        for (std::size_t i = 0; i < dims.size(); ++i)
            dims[i][axis] = static_cast<int64_t>(7 + 13 * i);
        std::vector<tf::Tensor> xs;
        std::vector<std::vector<double>> vs;
        Dims sizes;
        for (const Dims& d : dims) {
            xs.push_back(random_f64(tf::Shape(d), -1, 1, 10 + sizes.size()));
            vs.push_back(xs.back().to_vector<double>());
            sizes.push_back(d[axis]);
        }
        const tf::Tensor y = tf::concat(xs, axis);
        CHECK(y.to_vector<double>() == ref_concat(vs, dims, axis));
        const std::vector<tf::Tensor> parts = tf::split(y, sizes, axis);
        REQUIRE(parts.size() == xs.size());
        for (std::size_t i = 0; i < parts.size(); ++i)
            CHECK(parts[i].to_vector<double>() == vs[i]);
    }
    // Few, huge rows: two rows of 1 MB each.
    const tf::Tensor a = random_f64({2, 131072}, -1, 1, 3);
    const tf::Tensor b = random_f64({2, 131072}, -1, 1, 4);
    const tf::Tensor y = tf::concat({a, b}, 1);
    CHECK(y.to_vector<double>() == ref_concat({a.to_vector<double>(), b.to_vector<double>()},
                                              {{2, 131072}, {2, 131072}},
                                              1));
    const auto halves = tf::split(y, 2, 1);
    CHECK(halves[0].to_vector<double>() == a.to_vector<double>());
    CHECK(halves[1].to_vector<double>() == b.to_vector<double>());
}

TEST_CASE("concat with empty inputs and a single input", "[array]") {
    const tf::Tensor a = tf::zeros({0, 2}, tf::float64);
    const tf::Tensor b = tf::constant({{1.0, 2.0}, {3.0, 4.0}});
    const tf::Tensor y = tf::concat({a, b, a}, 0);
    CHECK(y.shape() == tf::Shape{2, 2});
    CHECK(y.to_vector<double>() == std::vector<double>{1, 2, 3, 4});
    CHECK(tf::concat({a, a}, 0).shape() == tf::Shape{0, 2});
    CHECK(tf::concat({a, a}, 1).shape() == tf::Shape{0, 4});
    CHECK(tf::concat({b}, 1).to_vector<double>() == b.to_vector<double>());
    const tf::Tensor c = tf::constant({{5.0}, {6.0}});
    CHECK(tf::concat({b, tf::zeros({2, 0}, tf::float64), c}, 1).to_vector<double>() ==
          std::vector<double>{1, 2, 5, 3, 4, 6});
}

namespace {

// The elements of x (dims) with index in [start, start + len) along axis.
std::vector<double> ref_slice(
    const std::vector<double>& x, const Dims& dims, int64_t axis, int64_t start, int64_t len) {
    Dims out_dims = dims;
    out_dims[axis] = len;
    std::vector<double> out(static_cast<std::size_t>(count(out_dims)));
    for (int64_t o = 0; o < static_cast<int64_t>(out.size()); ++o) {
        Dims idx = unravel(o, out_dims);
        idx[axis] += start;
        out[o] = x[ravel(idx, dims)];
    }
    return out;
}

}  // namespace

TEST_CASE("stack and unstack along every axis and dtype", "[array]") {
    for (tf::DType dtype : kAllDTypes) {
        for (int64_t axis = -3; axis < 3; ++axis) {
            INFO("dtype " << tf::dtype_name(dtype) << " axis " << axis);
            const int64_t a = axis < 0 ? axis + 3 : axis;
            std::vector<tf::Tensor> xs;
            std::vector<std::vector<double>> vs;
            for (std::size_t i = 0; i < 3; ++i) {
                xs.push_back(pattern({2, 4}, dtype, 50 * i + 2));
                vs.push_back(xs.back().to_vector<double>());
            }
            Dims one = {2, 4};
            one.insert(one.begin() + a, 1);
            const tf::Tensor y = tf::stack(xs, axis);
            Dims out_dims = {2, 4};
            out_dims.insert(out_dims.begin() + a, 3);
            CHECK(y.shape() == tf::Shape(out_dims));
            CHECK(y.dtype() == dtype);
            CHECK(y.to_vector<double>() == ref_concat(vs, {one, one, one}, a));
            const std::vector<tf::Tensor> back = tf::unstack(y, axis);
            REQUIRE(back.size() == 3);
            for (std::size_t i = 0; i < 3; ++i) {
                CHECK(back[i].shape() == tf::Shape{2, 4});
                CHECK(back[i].dtype() == dtype);
                CHECK(back[i].to_vector<double>() == vs[i]);
            }
        }
    }
    CHECK(tf::stack({tf::constant(1.f), tf::constant(2.f)}).to_vector<float>() ==
          std::vector<float>{1, 2});
    CHECK(tf::unstack(tf::zeros({0, 3})).empty());
    CHECK(tf::unstack(tf::zeros({3, 0}), 1).empty());
    CHECK(tf::unstack(tf::zeros({2, 0}), 0).size() == 2);
    CHECK(tf::stack({tf::zeros({0, 2}), tf::zeros({0, 2})}, 1).shape() == tf::Shape{0, 2, 2});
}

TEST_CASE("split into equal parts and into sizes, for every dtype", "[array]") {
    for (tf::DType dtype : kAllDTypes) {
        INFO("dtype " << tf::dtype_name(dtype));
        const Dims dims = {4, 6, 3};
        const tf::Tensor x = pattern(tf::Shape(dims), dtype);
        const std::vector<double> v = x.to_vector<double>();
        for (int64_t axis = 0; axis < 3; ++axis) {
            INFO("axis " << axis);
            const std::vector<tf::Tensor> parts = tf::split(x, dims[axis] == 3 ? 3 : 2, axis);
            const int64_t len = dims[axis] == 3 ? 1 : dims[axis] / 2;
            for (std::size_t i = 0; i < parts.size(); ++i) {
                CHECK(parts[i].dtype() == dtype);
                CHECK(parts[i].to_vector<double>() ==
                      ref_slice(v, dims, axis, static_cast<int64_t>(i) * len, len));
            }
        }
        const std::vector<tf::Tensor> sized = tf::split(x, Dims{1, -1, 0, 2}, -2);
        REQUIRE(sized.size() == 4);
        CHECK(sized[0].shape() == tf::Shape{4, 1, 3});
        CHECK(sized[1].shape() == tf::Shape{4, 3, 3});
        CHECK(sized[2].shape() == tf::Shape{4, 0, 3});
        CHECK(sized[3].shape() == tf::Shape{4, 2, 3});
        CHECK(sized[1].to_vector<double>() == ref_slice(v, dims, 1, 1, 3));
        CHECK(sized[3].to_vector<double>() == ref_slice(v, dims, 1, 4, 2));
    }
    const auto whole = tf::split(tf::constant({1, 2, 3}), 1);
    REQUIRE(whole.size() == 1);
    CHECK(whole[0].to_vector<int>() == std::vector<int>{1, 2, 3});
    CHECK(tf::split(tf::zeros({0, 4}), 2, 1)[1].shape() == tf::Shape{0, 2});
}

TEST_CASE("tile and broadcast_to match the reference for every dtype", "[array]") {
    const std::vector<std::pair<Dims, Dims>> tiles = {
        {{2, 3}, {2, 1}},
        {{2, 3}, {1, 3}},
        {{2, 3}, {3, 2}},
        {{1, 3, 1}, {4, 1, 5}},
        {{2, 1, 2}, {2, 3, 2}},
        {{3}, {0}},
        {{}, {}},
        {{2, 3}, {1, 1}},
    };
    for (tf::DType dtype : kAllDTypes) {
        for (const auto& [dims, multiples] : tiles) {
            INFO("dtype " << tf::dtype_name(dtype) << " shape " << tf::Shape(dims).str()
                          << " multiples " << tf::Shape(multiples).str());
            const tf::Tensor x = pattern(tf::Shape(dims), dtype);
            const tf::Tensor y = tf::tile(x, multiples);
            Dims out_dims;
            for (std::size_t i = 0; i < dims.size(); ++i)
                out_dims.push_back(dims[i] * multiples[i]);
            CHECK(y.shape() == tf::Shape(out_dims));
            CHECK(y.dtype() == dtype);
            CHECK(y.to_vector<double>() == ref_repeat(x.to_vector<double>(), dims, out_dims));
        }
    }
    const std::vector<std::pair<Dims, Dims>> broadcasts = {
        {{3}, {2, 3}},
        {{2, 1}, {2, 4}},
        {{1, 3, 1}, {2, 3, 4}},
        {{}, {2, 2}},
        {{2, 1, 3}, {4, 2, 5, 3}},
        {{1}, {1, 1}},
        {{3}, {0, 3}},
        {{2, 3}, {2, 3}},
    };
    for (tf::DType dtype : kAllDTypes) {
        for (const auto& [dims, out_dims] : broadcasts) {
            INFO("dtype " << tf::dtype_name(dtype) << " shape " << tf::Shape(dims).str() << " to "
                          << tf::Shape(out_dims).str());
            const tf::Tensor x = pattern(tf::Shape(dims), dtype, 3);
            const tf::Tensor y = tf::broadcast_to(x, tf::Shape(out_dims));
            CHECK(y.shape() == tf::Shape(out_dims));
            CHECK(y.dtype() == dtype);
            CHECK(y.to_vector<double>() == ref_repeat(x.to_vector<double>(), dims, out_dims));
        }
    }
}

TEST_CASE("large tiles and broadcasts fill in parallel", "[array]") {
    const std::vector<std::pair<Dims, Dims>> tiles = {
        {{1}, {300000}},
        {{300000}, {3}},
        {{3, 1}, {1, 100000}},
        {{70, 90, 3}, {3, 2, 5}},
        {{1000, 7}, {40, 1}},
    };
    for (const auto& [dims, multiples] : tiles) {
        INFO("shape " << tf::Shape(dims).str() << " multiples " << tf::Shape(multiples).str());
        const tf::Tensor x = pattern(tf::Shape(dims), tf::float32, 5);
        Dims out_dims;
        for (std::size_t i = 0; i < dims.size(); ++i)
            out_dims.push_back(dims[i] * multiples[i]);
        CHECK(tf::tile(x, multiples).to_vector<double>() ==
              ref_repeat(x.to_vector<double>(), dims, out_dims));
    }
    const tf::Tensor row = pattern({1, 513}, tf::float64, 1);
    CHECK(tf::broadcast_to(row, {700, 513}).to_vector<double>() ==
          ref_repeat(row.to_vector<double>(), {1, 513}, {700, 513}));
    const tf::Tensor col = pattern({700, 1}, tf::int64, 1);
    CHECK(tf::broadcast_to(col, {3, 700, 513}).to_vector<double>() ==
          ref_repeat(col.to_vector<double>(), {700, 1}, {3, 700, 513}));
}

TEST_CASE("shape returns the dims as an int32 vector", "[array]") {
    const tf::Tensor s = tf::shape(tf::zeros({2, 0, 5}, tf::bool_));
    CHECK(s.dtype() == tf::int32);
    CHECK(s.shape() == tf::Shape{3});
    CHECK(s.to_vector<int>() == std::vector<int>{2, 0, 5});
    CHECK(tf::shape(tf::constant(1.0)).shape() == tf::Shape{0});
}

TEST_CASE("stop_gradient is the identity in the forward pass", "[array]") {
    for (tf::DType dtype : kAllDTypes) {
        const tf::Tensor x = pattern({3, 2}, dtype);
        const tf::Tensor y = tf::stop_gradient(x);
        CHECK(y.dtype() == dtype);
        CHECK(y.shape() == x.shape());
        CHECK(y.to_vector<double>() == x.to_vector<double>());
    }
}

// ---- Views ----

TEST_CASE("reshape-like ops are views that share the input's storage", "[array][views]") {
    const tf::Tensor x = tf::constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
    const void* p = x.raw_data();
    CHECK(tf::reshape(x, {3, 2}).raw_data() == p);
    CHECK(tf::reshape(x, tf::Shape{6}).raw_data() == p);
    CHECK(tf::expand_dims(x, 0).raw_data() == p);
    CHECK(tf::squeeze(tf::expand_dims(x, 2)).raw_data() == p);
    CHECK(tf::stop_gradient(x).raw_data() == p);
    CHECK(tf::tile(x, {1, 1}).raw_data() == p);
    CHECK(tf::broadcast_to(x, {1, 2, 3}).raw_data() == p);
    CHECK(tf::transpose(tf::reshape(x, {1, 2, 1, 3}), {2, 1, 0, 3}).raw_data() == p);
    CHECK(tf::concat({x}, 0).raw_data() == p);
    CHECK(tf::stack({x}, 1).raw_data() == p);
    CHECK(tf::stack({x}, 1).shape() == tf::Shape{2, 1, 3});
    // A view is a new value: it has its own id, so tapes tell it from its input.
    CHECK(tf::reshape(x, {3, 2}).id() != x.id());

    const auto rows = tf::unstack(x);
    REQUIRE(rows.size() == 2);
    CHECK(rows[0].raw_data() == p);
    CHECK(rows[1].raw_data() == static_cast<const float*>(p) + 3);
    const auto halves = tf::split(tf::reshape(x, {1, 6}), Dims{2, 4}, 1);
    CHECK(halves[0].raw_data() == p);
    CHECK(halves[1].raw_data() == static_cast<const float*>(p) + 2);
    CHECK(halves[1].to_vector<float>() == std::vector<float>{3, 4, 5, 6});
    // Pieces that are not contiguous are copies.
    CHECK(tf::unstack(x, 1)[0].raw_data() != p);
    CHECK(tf::transpose(x).raw_data() != p);
}

TEST_CASE("views stay valid after their source is gone", "[array][views]") {
    tf::Tensor r;
    tf::Tensor e;
    std::vector<tf::Tensor> rows;
    tf::Tensor second_of_view;
    {
        const tf::Tensor x = tf::range(0, 12, 1, tf::int64);
        r = tf::reshape(x, {3, 4});
        e = tf::expand_dims(tf::squeeze(tf::reshape(x, {1, 12})), 0);
        rows = tf::unstack(r);
        second_of_view = tf::reshape(rows[1], {2, 2});  // a view of a view at an offset
    }
    CHECK(r.to_vector<int64_t>() == std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
    CHECK(e.shape() == tf::Shape{1, 12});
    CHECK(e.to_vector<int64_t>()[11] == 11);
    CHECK(rows[2].to_vector<int64_t>() == std::vector<int64_t>{8, 9, 10, 11});
    CHECK(second_of_view.to_vector<int64_t>() == std::vector<int64_t>{4, 5, 6, 7});
    CHECK(second_of_view.raw_data() == rows[1].raw_data());
    // Copying ops read views at their offset correctly.
    CHECK(tf::transpose(second_of_view).to_vector<int64_t>() == std::vector<int64_t>{4, 6, 5, 7});
    CHECK(tf::concat({rows[2], rows[1]}, 0).to_vector<int64_t>() ==
          std::vector<int64_t>{8, 9, 10, 11, 4, 5, 6, 7});
    CHECK(tf::tile(rows[1], {2}).to_vector<int64_t>() ==
          std::vector<int64_t>{4, 5, 6, 7, 4, 5, 6, 7});
}

// ---- Gradients ----

TEST_CASE("gradcheck: reshape, expand_dims, squeeze", "[array][grad]") {
    check_gradients(
        [](const std::vector<tf::Tensor>& in) {
            return tf::reshape(in[0], {3, -1});
        },
        {random_f64({2, 3, 2})});
    check_gradients([](const std::vector<tf::Tensor>& in) { return tf::expand_dims(in[0], 1); },
                    {random_f64({2, 3})});
    check_gradients([](const std::vector<tf::Tensor>& in) { return tf::squeeze(in[0], {0}); },
                    {random_f64({1, 3, 1})});
    check_gradients([](const std::vector<tf::Tensor>& in) { return tf::squeeze(in[0]); },
                    {random_f64({1, 3, 1, 2})});
}

TEST_CASE("gradcheck: transpose", "[array][grad]") {
    for (const Dims& perm : {Dims{1, 0, 2}, Dims{2, 0, 1}, Dims{1, 2, 0}, Dims{0, 2, 1}, Dims{}}) {
        INFO("perm " << tf::Shape(perm).str());
        check_gradients(
            [&](const std::vector<tf::Tensor>& in) { return tf::transpose(in[0], perm); },
            {random_f64({2, 3, 4})});
    }
}

TEST_CASE("gradcheck: concat, stack, unstack, split", "[array][grad]") {
    for (int64_t axis : {0, 1, -1}) {
        INFO("axis " << axis);
        const int64_t a = axis < 0 ? axis + 2 : axis;
        Dims d0 = {2, 3};
        Dims d1 = {2, 3};
        d1[a] = 1;
        check_gradients([&](const std::vector<tf::Tensor>& in) { return tf::concat(in, axis); },
                        {random_f64(tf::Shape(d0), -1, 1, 1),
                         random_f64(tf::Shape(d1), -1, 1, 2),
                         random_f64(tf::Shape(d0), -1, 1, 3)});
    }
    for (int64_t axis : {0, 1, 2, -1}) {
        INFO("stack axis " << axis);
        check_gradients([&](const std::vector<tf::Tensor>& in) { return tf::stack(in, axis); },
                        {random_f64({2, 3}, -1, 1, 1), random_f64({2, 3}, -1, 1, 2)});
    }
    for (int64_t axis : {0, 1}) {
        INFO("unstack axis " << axis);
        // Reversed order, and only some outputs used: the others get zero gradients.
        check_gradients(
            [&](const std::vector<tf::Tensor>& in) {
                const auto parts = tf::unstack(in[0], axis);
                return tf::stack({parts[2], parts[0]}, 0);
            },
            {random_f64({3, 3})});
    }
    check_gradients(
        [](const std::vector<tf::Tensor>& in) {
            const auto parts = tf::split(in[0], 2, 1);
            return tf::concat({parts[1], parts[0]}, 1);
        },
        {random_f64({2, 4})});
    check_gradients(
        [](const std::vector<tf::Tensor>& in) {
            const auto parts = tf::split(in[0], Dims{1, -1, 2}, 0);
            return tf::concat({parts[2], parts[0]}, 0);
        },
        {random_f64({5, 2})});
}

TEST_CASE("gradcheck: tile and broadcast_to", "[array][grad]") {
    check_gradients(
        [](const std::vector<tf::Tensor>& in) {
            return tf::tile(in[0], {2, 1, 3});
        },
        {random_f64({2, 2, 2})});
    check_gradients([](const std::vector<tf::Tensor>& in) { return tf::tile(in[0], {3}); },
                    {random_f64({2})});
    check_gradients(
        [](const std::vector<tf::Tensor>& in) {
            return tf::broadcast_to(in[0], {2, 3, 2});
        },
        {random_f64({3, 1})});
    check_gradients(
        [](const std::vector<tf::Tensor>& in) {
            return tf::broadcast_to(in[0], {2, 3});
        },
        {random_f64({})});
}

TEST_CASE("gradients of views and of ops with zero-size pieces", "[array][grad]") {
    const tf::Tensor x = random_f64({2, 3});
    {
        tf::GradientTape tape;
        tape.watch(x);
        const tf::Tensor y = tf::concat({x, tf::zeros({0, 3}, tf::float64)}, 0);  // a view of x
        const tf::Tensor g = tape.gradient(y, x);
        CHECK(g.shape() == tf::Shape{2, 3});
        CHECK(g.to_vector<double>() == std::vector<double>(6, 1.0));
    }
    {
        tf::GradientTape tape;
        tape.watch(x);
        const tf::Tensor t = tf::tile(x, {1, 1});  // a view of x
        CHECK(tape.gradient(t, x).dense().to_vector<double>() == std::vector<double>(6, 1.0));
    }
    {
        tf::GradientTape tape;
        tape.watch(x);
        const auto parts = tf::split(x, Dims{0, 3, 0}, 1);
        CHECK(parts[0].shape() == tf::Shape{2, 0});
        CHECK(tape.gradient(parts[1], x).dense().to_vector<double>() ==
              std::vector<double>(6, 1.0));
    }
}

TEST_CASE("stop_gradient and shape have no gradient", "[array][grad]") {
    const tf::Tensor x = tf::constant({1.0, 2.0});
    {
        tf::GradientTape tape;
        tape.watch(x);
        const tf::Tensor y = tf::stop_gradient(x);
        CHECK_FALSE(tape.gradient(y, x).defined());
    }
    {
        // Another path from the same input still contributes.
        tf::GradientTape tape;
        tape.watch(x);
        const tf::Tensor y = tf::concat({tf::stop_gradient(x), x}, 0);
        CHECK(tape.gradient(y, x).dense().to_vector<double>() == std::vector<double>{1, 1});
    }
    {
        tf::GradientTape tape;
        tape.watch(x);
        const tf::Tensor s = tf::shape(x);
        CHECK(s.to_vector<int>() == std::vector<int>{2});
        CHECK_FALSE(tape.gradient(s, x).defined());
    }
}

TEST_CASE("gradients of the shape ops are differentiable again", "[array][grad]") {
    // For a linear op y = A x, g = A^T v; the gradient of <g, w> w.r.t. v is A w.
    const tf::Tensor x = random_f64({2, 3}, -1, 1, 1);
    const tf::Tensor v = random_f64({3, 2, 2}, -1, 1, 2);
    const tf::Tensor w = random_f64({2, 3}, -1, 1, 3);
    const auto op = [](const tf::Tensor& t) {
        return tf::tile(tf::transpose(t), {1, 2});
    };
    tf::GradientTape outer;
    outer.watch(v);
    tf::Tensor g;
    {
        tf::GradientTape inner;
        inner.watch(x);
        const tf::Tensor y = tf::reshape(op(x), {3, 2, 2});
        tf::GradientOptions options;
        options.output_gradients = {v};
        g = inner.gradient(y, x, options).dense();
    }
    tf::GradientOptions options;
    options.output_gradients = {w};
    const tf::Tensor hv = outer.gradient(g, v, options).dense();
    CHECK(hv.shape() == tf::Shape{3, 2, 2});
    CHECK(hv.to_vector<double>() == op(w).to_vector<double>());
}

TEST_CASE("integer and bool inputs get no gradient", "[array][grad]") {
    const tf::Tensor i = tf::constant({1, 2, 3});
    const tf::Tensor f = tf::constant({1.0, 2.0, 3.0});
    tf::GradientTape tape;
    tape.watch(f);
    const tf::Tensor y = tf::tile(f, {2});
    const tf::Tensor z = tf::tile(i, {2});
    CHECK(z.to_vector<int>() == std::vector<int>{1, 2, 3, 1, 2, 3});
    CHECK(tape.gradient(y, f).dense().to_vector<double>() == std::vector<double>{2, 2, 2});
}

// ---- Errors: TensorFlow's messages, naming the op ----

TEST_CASE("reshape errors", "[array][errors]") {
    const tf::Tensor x = tf::zeros({2, 3});
    CHECK_THROWS_MATCHES(
        tf::reshape(x, {2, 4}),
        tf::errors::InvalidArgumentError,
        Message("Input to reshape is a tensor with 6 values, but the requested shape has 8 "
                "[Op:Reshape]"));
    CHECK_THROWS_MATCHES(
        tf::reshape(x, tf::Shape{8}),
        tf::errors::InvalidArgumentError,
        Message("Input to reshape is a tensor with 6 values, but the requested shape has 8 "
                "[Op:Reshape]"));
    CHECK_THROWS_MATCHES(
        tf::reshape(x, {4, -1}),
        tf::errors::InvalidArgumentError,
        Message("Input to reshape is a tensor with 6 values, but the requested shape "
                "requires a multiple of 4 [Op:Reshape]"));
    CHECK_THROWS_MATCHES(tf::reshape(x, {-1, -1}),
                         tf::errors::InvalidArgumentError,
                         Message("Only one input size may be -1, not both 0 and 1 [Op:Reshape]"));
    CHECK_THROWS_MATCHES(tf::reshape(x, tf::Shape{-1, -1}),
                         tf::errors::InvalidArgumentError,
                         Message("Only one input size may be -1, not both 0 and 1 [Op:Reshape]"));
    CHECK_THROWS_MATCHES(
        tf::reshape(x, tf::Shape{4, -1}),
        tf::errors::InvalidArgumentError,
        Message("Input to reshape is a tensor with 6 values, but the requested shape "
                "requires a multiple of 4 [Op:Reshape]"));
    CHECK_THROWS_MATCHES(tf::reshape(x, Dims{3, -2}),
                         tf::errors::InvalidArgumentError,
                         Message("Size 1 must be non-negative, not -2 [Op:Reshape]"));
    CHECK_THROWS_AS(tf::reshape(tf::Tensor(), {2}), tf::errors::InvalidArgumentError);
    CHECK_THROWS_WITH(tf::reshape(tf::Tensor(), {2}),
                      Contains("undefined") && Contains("[Op:Reshape]"));
}

TEST_CASE("expand_dims and squeeze errors", "[array][errors]") {
    const tf::Tensor x = tf::zeros({2, 3});
    CHECK_THROWS_MATCHES(
        tf::expand_dims(x, 3),
        tf::errors::InvalidArgumentError,
        Message("Tried to expand dim index 3 for tensor with 2 dimensions. [Op:ExpandDims]"));
    CHECK_THROWS_MATCHES(
        tf::expand_dims(x, -4),
        tf::errors::InvalidArgumentError,
        Message("Tried to expand dim index -4 for tensor with 2 dimensions. [Op:ExpandDims]"));
    CHECK_THROWS_MATCHES(
        tf::squeeze(tf::zeros({1, 3}), 1),
        tf::errors::InvalidArgumentError,
        Message("Can not squeeze dim[1], expected a dimension of 1, got 3 [Op:Squeeze]"));
    CHECK_THROWS_MATCHES(
        tf::squeeze(tf::zeros({1, 3}), -1),
        tf::errors::InvalidArgumentError,
        Message("Can not squeeze dim[1], expected a dimension of 1, got 3 [Op:Squeeze]"));
    CHECK_THROWS_MATCHES(
        tf::squeeze(x, 2),
        tf::errors::InvalidArgumentError,
        Message("Tried to squeeze dim index 2 for tensor with 2 dimensions. [Op:Squeeze]"));
    CHECK_THROWS_WITH(tf::expand_dims(tf::Tensor(), 0), Contains("[Op:ExpandDims]"));
    CHECK_THROWS_WITH(tf::squeeze(tf::Tensor()), Contains("[Op:Squeeze]"));
}

TEST_CASE("transpose errors", "[array][errors]") {
    const tf::Tensor x = tf::zeros({2, 3});
    CHECK_THROWS_MATCHES(
        tf::transpose(x, {1, 0, 2}),
        tf::errors::InvalidArgumentError,
        Message("transpose expects a vector of size 2. But input(1) is a vector of size 3 "
                "[Op:Transpose]"));
    CHECK_THROWS_MATCHES(tf::transpose(x, {0, 2}),
                         tf::errors::InvalidArgumentError,
                         Message("2 is out of range [0 .. 2) [Op:Transpose]"));
    CHECK_THROWS_MATCHES(tf::transpose(x, {-1, 0}),
                         tf::errors::InvalidArgumentError,
                         Message("-1 is out of range [0 .. 2) [Op:Transpose]"));
    CHECK_THROWS_MATCHES(tf::transpose(x, {0, 0}),
                         tf::errors::InvalidArgumentError,
                         Message("1 is missing from {0,0}. [Op:Transpose]"));
}

TEST_CASE("concat and stack errors", "[array][errors]") {
    const tf::Tensor a = tf::zeros({2, 3});
    CHECK_THROWS_MATCHES(
        tf::concat({a, tf::zeros({3})}, 0),
        tf::errors::InvalidArgumentError,
        Message("ConcatOp : Ranks of all input tensors should match: shape[0] = [2,3] vs. "
                "shape[1] = [3] [Op:ConcatV2]"));
    CHECK_THROWS_MATCHES(
        tf::concat({a, tf::zeros({2, 4})}, 0),
        tf::errors::InvalidArgumentError,
        Message("ConcatOp : Dimension 1 in both shapes must be equal: shape[0] = [2,3] vs. "
                "shape[1] = [2,4] [Op:ConcatV2]"));
    CHECK_THROWS_MATCHES(
        tf::concat({a, a}, 2),
        tf::errors::InvalidArgumentError,
        Message("ConcatOp : Expected concatenating dimensions in the range [-2, 2), but got 2 "
                "[Op:ConcatV2]"));
    CHECK_THROWS_MATCHES(
        tf::concat({a, tf::zeros({2, 3}, tf::int32)}, 0),
        tf::errors::InvalidArgumentError,
        Message("cannot compute ConcatV2 as input #1(zero-based) was expected to be a float "
                "tensor but is a int32 tensor [Op:ConcatV2]"));
    CHECK_THROWS_WITH(tf::concat({tf::constant(1.f), tf::constant(2.f)}, 0),
                      Contains("use stack") && Contains("[Op:ConcatV2]"));
    CHECK_THROWS_WITH(tf::concat({}, 0), Contains("[Op:ConcatV2]"));
    CHECK_THROWS_WITH(tf::concat({a, tf::Tensor()}, 0),
                      Contains("undefined") && Contains("[Op:ConcatV2]"));

    CHECK_THROWS_MATCHES(
        tf::stack({a, tf::zeros({3, 2})}),
        tf::errors::InvalidArgumentError,
        Message("Shapes of all inputs must match: values[0].shape = [2,3] != values[1].shape "
                "= [3,2] [Op:Pack]"));
    CHECK_THROWS_MATCHES(tf::stack({a, a}, 3),
                         tf::errors::InvalidArgumentError,
                         Message("axis = 3 not in [-3, 3) [Op:Pack]"));
    CHECK_THROWS_MATCHES(
        tf::stack({a, tf::zeros({2, 3}, tf::bool_)}),
        tf::errors::InvalidArgumentError,
        Message("cannot compute Pack as input #1(zero-based) was expected to be a float "
                "tensor but is a bool tensor [Op:Pack]"));
    CHECK_THROWS_WITH(tf::stack({}), Contains("[Op:Pack]"));
}

TEST_CASE("unstack and split errors", "[array][errors]") {
    const tf::Tensor x = tf::zeros({2, 4});
    CHECK_THROWS_MATCHES(tf::unstack(x, 2),
                         tf::errors::InvalidArgumentError,
                         Message("axis = 2 not in [-2, 2) [Op:Unpack]"));
    CHECK_THROWS_MATCHES(tf::unstack(tf::constant(1.f)),
                         tf::errors::InvalidArgumentError,
                         Message("axis = 0 not in [0, 0) [Op:Unpack]"));
    CHECK_THROWS_MATCHES(
        tf::split(x, 3, 1),
        tf::errors::InvalidArgumentError,
        Message("Number of ways to split should evenly divide the split dimension, but got "
                "split_dim 1 (size = 4) and num_split 3 [Op:Split]"));
    CHECK_THROWS_MATCHES(tf::split(x, 0, 1),
                         tf::errors::InvalidArgumentError,
                         Message("Number of ways to split should be > 0, but got 0 [Op:Split]"));
    CHECK_THROWS_MATCHES(
        tf::split(x, 2, 2),
        tf::errors::InvalidArgumentError,
        Message("-input rank(-2) <= split_dim < input rank (2), but got 2 [Op:Split]"));
    CHECK_THROWS_MATCHES(
        tf::split(x, Dims{1, 2}, 1),
        tf::errors::InvalidArgumentError,
        Message("Determined shape must either match input shape along split_dim exactly if "
                "fully specified, or be less than the size of the input along split_dim if "
                "not fully specified.  Got: 3 [Op:SplitV]"));
    CHECK_THROWS_MATCHES(
        tf::split(x, Dims{5, -1}, 1),
        tf::errors::InvalidArgumentError,
        Message("Determined shape must either match input shape along split_dim exactly if "
                "fully specified, or be less than the size of the input along split_dim if "
                "not fully specified.  Got: 5 [Op:SplitV]"));
    CHECK_THROWS_MATCHES(tf::split(x, Dims{-1, -1}, 1),
                         tf::errors::InvalidArgumentError,
                         Message("There can only be one -1 in the input. [Op:SplitV]"));
    CHECK_THROWS_MATCHES(tf::split(x, Dims{6, -2}, 1),
                         tf::errors::InvalidArgumentError,
                         Message("Split size at index 1 must be >= 0. Got: -2 [Op:SplitV]"));
    CHECK_THROWS_WITH(tf::split(x, Dims{}, 1), Contains("[Op:SplitV]"));
}

TEST_CASE("tile, broadcast_to, stop_gradient and shape errors", "[array][errors]") {
    const tf::Tensor x = tf::zeros({2, 3});
    CHECK_THROWS_MATCHES(
        tf::tile(x, {2}),
        tf::errors::InvalidArgumentError,
        Message("Expected multiples argument to be a vector of length 2 but got length 1 "
                "[Op:Tile]"));
    CHECK_THROWS_MATCHES(tf::tile(x, {1, -1}),
                         tf::errors::InvalidArgumentError,
                         Message("Expected multiples[1] >= 0, but got -1 [Op:Tile]"));
    CHECK_THROWS_MATCHES(
        tf::broadcast_to(x, {4, 3}),
        tf::errors::InvalidArgumentError,
        Message("Unable to broadcast tensor of shape [2,3] to tensor of shape [4,3] "
                "[Op:BroadcastTo]"));
    CHECK_THROWS_MATCHES(
        tf::broadcast_to(x, {3}),
        tf::errors::InvalidArgumentError,
        Message("Rank of input (2) must be no greater than rank of output shape (1). "
                "[Op:BroadcastTo]"));
    CHECK_THROWS_WITH(tf::stop_gradient(tf::Tensor()), Contains("[Op:StopGradient]"));
    CHECK_THROWS_WITH(tf::shape(tf::Tensor()), Contains("[Op:Shape]"));
}
