// The indexing ops (slice, strided_slice, pad, gather, gather_nd, scatter_nd,
// unsorted_segment_sum): golden values and gradients from ops.json, strided_slice masks against
// NumPy results, gradients against finite differences (first and second order), sparse gather
// gradients, large inputs against serial references, and TensorFlow's error messages.
#include <numeric>

#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

#include "support/golden.hpp"
#include "support/gradcheck.hpp"

namespace tf = tapeflow;
using Catch::Contains;
using tf::testing::check_gradients;
using tf::testing::random_f64;

namespace {

using Ints = std::vector<int64_t>;

// 0, 1, 2, ... in `shape`.
tf::Tensor iota(const tf::Shape& shape, tf::DType dtype = tf::int32) {
    std::vector<double> v(static_cast<std::size_t>(shape.num_elements()));
    std::iota(v.begin(), v.end(), 0.0);
    return tf::constant(v, shape, dtype);
}

std::vector<int64_t> values(const tf::Tensor& t) {
    return t.to_vector<int64_t>();
}

Ints json_ints(const nlohmann::json& args, const char* key, Ints fallback = {}) {
    return args.contains(key) ? args.at(key).get<Ints>() : fallback;
}

int64_t json_int(const nlohmann::json& args, const char* key, int64_t fallback = 0) {
    return args.contains(key) && !args.at(key).is_null() ? args.at(key).get<int64_t>() : fallback;
}

// A strided slice spec in TensorFlow's mask form.
struct SliceSpec {
    Ints begin, end, strides;
    int64_t begin_mask = 0, end_mask = 0, ellipsis_mask = 0, new_axis_mask = 0,
            shrink_axis_mask = 0;
};

tf::Tensor apply_spec(const tf::Tensor& x, const SliceSpec& s) {
    return tf::strided_slice(x,
                             s.begin,
                             s.end,
                             s.strides,
                             s.begin_mask,
                             s.end_mask,
                             s.ellipsis_mask,
                             s.new_axis_mask,
                             s.shrink_axis_mask);
}

// Fixed weights 0.5, 0.6, ... 1.1, 0.5, ... (random ops give new values on every call).
tf::Tensor weights(const tf::Shape& shape) {
    std::vector<double> w(static_cast<std::size_t>(shape.num_elements()));
    for (std::size_t i = 0; i < w.size(); ++i)
        w[i] = 0.5 + 0.1 * static_cast<double>(i % 7);
    return tf::constant(w, shape);
}

// Second derivatives: the gradient of L = sum(f(x)^2 * w) is checked against finite differences,
// so the gradient formula of the op and that of its gradient op are both exercised.
tf::testing::TensorFn second_order(const std::function<tf::Tensor(const tf::Tensor&)>& f) {
    return [f](const std::vector<tf::Tensor>& in) {
        tf::GradientTape tape;
        tape.watch(in[0]);
        const tf::Tensor y = f(in[0]);
        const tf::Tensor w = weights(y.shape());
        const tf::Tensor loss = tf::reduce_sum(tf::square(y) * w);
        return tape.gradient(loss, in[0]).dense();
    };
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Golden cases (ops.json)
// ---------------------------------------------------------------------------------------------

TEST_CASE("tf.slice golden cases", "[indexing][golden]") {
    for (const auto& c : tf::testing::golden_cases("tf.slice")) {
        INFO(c.id);
        tf::testing::run_golden_case(
            c, [](const std::vector<tf::Tensor>& in, const nlohmann::json& args) {
                return std::vector<tf::Tensor>{
                    tf::slice(in[0], json_ints(args, "begin"), json_ints(args, "size"))};
            });
    }
}

TEST_CASE("tf.strided_slice golden cases", "[indexing][golden]") {
    for (const auto& c : tf::testing::golden_cases("tf.strided_slice")) {
        INFO(c.id);
        tf::testing::run_golden_case(
            c, [](const std::vector<tf::Tensor>& in, const nlohmann::json& a) {
                Ints strides = json_ints(a, "strides", Ints(json_ints(a, "begin").size(), 1));
                return std::vector<tf::Tensor>{tf::strided_slice(in[0],
                                                                 json_ints(a, "begin"),
                                                                 json_ints(a, "end"),
                                                                 strides,
                                                                 json_int(a, "begin_mask"),
                                                                 json_int(a, "end_mask"),
                                                                 json_int(a, "ellipsis_mask"),
                                                                 json_int(a, "new_axis_mask"),
                                                                 json_int(a, "shrink_axis_mask"))};
            });
    }
}

TEST_CASE("tf.pad golden cases", "[indexing][golden]") {
    for (const auto& c : tf::testing::golden_cases("tf.pad")) {
        INFO(c.id);
        tf::testing::run_golden_case(
            c, [](const std::vector<tf::Tensor>& in, const nlohmann::json& a) {
                std::vector<std::pair<int64_t, int64_t>> paddings;
                for (const auto& p : a.at("paddings"))
                    paddings.emplace_back(p.at(0).get<int64_t>(), p.at(1).get<int64_t>());
                const std::string mode =
                    a.contains("mode") ? a.at("mode").get<std::string>() : "CONSTANT";
                const double value =
                    a.contains("constant_values") ? a.at("constant_values").get<double>() : 0.0;
                return std::vector<tf::Tensor>{tf::pad(in[0], paddings, mode, value)};
            });
    }
}

TEST_CASE("tf.gather golden cases", "[indexing][golden]") {
    for (const auto& c : tf::testing::golden_cases("tf.gather")) {
        INFO(c.id);
        tf::testing::run_golden_case(
            c, [](const std::vector<tf::Tensor>& in, const nlohmann::json& a) {
                const int64_t batch_dims = json_int(a, "batch_dims");
                return std::vector<tf::Tensor>{
                    tf::gather(in[0], in[1], json_int(a, "axis", batch_dims), batch_dims)};
            });
    }
}

TEST_CASE("tf.gather_nd golden cases", "[indexing][golden]") {
    for (const auto& c : tf::testing::golden_cases("tf.gather_nd")) {
        INFO(c.id);
        tf::testing::run_golden_case(
            c, [](const std::vector<tf::Tensor>& in, const nlohmann::json& a) {
                return std::vector<tf::Tensor>{
                    tf::gather_nd(in[0], in[1], json_int(a, "batch_dims"))};
            });
    }
}

// ---------------------------------------------------------------------------------------------
// slice
// ---------------------------------------------------------------------------------------------

TEST_CASE("slice takes a block; size -1 runs to the end", "[indexing]") {
    const auto x = iota({3, 4});
    auto y = tf::slice(x, {1, 1}, {2, -1});
    CHECK(y.shape() == tf::Shape{2, 3});
    CHECK(values(y) == Ints{5, 6, 7, 9, 10, 11});
    CHECK(values(tf::slice(x, {0, 2}, {3, 1})) == Ints{2, 6, 10});
    CHECK(tf::slice(x, {3, 0}, {0, 4}).shape() == tf::Shape{0, 4});
    CHECK(values(tf::slice(x, {0, 0}, {-1, -1})) == values(x));
    // A contiguous block (a view of the input) and a strided one agree with element reads.
    const auto big = iota({5, 6, 7}, tf::float32);
    const auto rows = tf::slice(big, {2, 0, 0}, {2, 6, 7});
    CHECK(rows.to_vector<float>().front() == 84.f);
    CHECK(rows.to_vector<float>().back() == 167.f);
    const auto inner = tf::slice(big, {1, 2, 3}, {3, 2, 4});
    const auto v = inner.to_vector<float>();
    REQUIRE(v.size() == 24);
    for (int a = 0; a < 3; ++a) {
        for (int b = 0; b < 2; ++b) {
            for (int c = 0; c < 4; ++c) {
                CHECK(v[(a * 2 + b) * 4 + c] ==
                      static_cast<float>(((1 + a) * 6 + 2 + b) * 7 + 3 + c));
            }
        }
    }
}

TEST_CASE("contiguous slices are views that survive variable assignment", "[indexing]") {
    tf::Variable v(iota({4, 3}, tf::float32));
    const auto rows = tf::slice(v.value(), {1, 0}, {2, 3});
    const auto row = tf::strided_slice(v.value(), {2}, {3}, {1}, 0, 0, 0, 0, 1);
    v.assign(tf::zeros({4, 3}));
    CHECK(rows.to_vector<float>() == std::vector<float>{3, 4, 5, 6, 7, 8});
    CHECK(row.to_vector<float>() == std::vector<float>{6, 7, 8});
    CHECK(v.value().to_vector<float>() == std::vector<float>(12, 0.f));
}

TEST_CASE("slice works for every dtype and for scalars and empty tensors", "[indexing]") {
    for (auto dtype : {tf::float32,
                       tf::float64,
                       tf::int32,
                       tf::int64,
                       tf::uint8,
                       tf::bool_,
                       tf::float16,
                       tf::bfloat16}) {
        const auto x = iota({2, 3}, dtype);
        const auto y = tf::slice(x, {1, 1}, {1, 2});
        CHECK(y.dtype() == dtype);
        CHECK(y.cast(tf::int64).to_vector<int64_t>() ==
              (dtype == tf::bool_ ? Ints{1, 1} : Ints{4, 5}));
    }
    CHECK(tf::slice(tf::constant(3.f), {}, {}).item<float>() == 3.f);
    CHECK(tf::slice(tf::zeros({0, 3}), {0, 1}, {0, 2}).shape() == tf::Shape{0, 2});
    CHECK(tf::slice(tf::zeros({0, 3}), {0, 0}, {-1, -1}).shape() == tf::Shape{0, 3});
}

TEST_CASE("slice rejects bad begin and size with TensorFlow's messages", "[indexing][errors]") {
    const auto x = iota({2, 3});
    CHECK_THROWS_AS(tf::slice(x, {0, 0}, {3, 1}), tf::errors::InvalidArgumentError);
    CHECK_THROWS_WITH(tf::slice(x, {0, 0}, {3, 1}),
                      Contains("Expected size[0] in [0, 2], but got 3") && Contains("[Op:Slice]"));
    CHECK_THROWS_WITH(tf::slice(x, {1, 0}, {2, 1}),
                      Contains("Expected size[0] in [0, 1], but got 2"));
    CHECK_THROWS_WITH(tf::slice(x, {0, 4}, {1, 1}),
                      Contains("Expected begin[1] in [0, 3], but got 4"));
    CHECK_THROWS_WITH(tf::slice(x, {-1, 0}, {1, 1}),
                      Contains("Expected begin[0] in [0, 2], but got -1"));
    CHECK_THROWS_WITH(tf::slice(x, {0, 0}, {1, -2}),
                      Contains("Expected size[1] in [0, 3], but got -2"));
    CHECK_THROWS_WITH(tf::slice(x, {0}, {1, 1}),
                      Contains("Expected begin and size arguments to be 1-D tensors of size 2"));
    CHECK_THROWS_WITH(tf::slice(tf::zeros({0, 2}), {1, 0}, {0, 1}),
                      Contains("when input.dim_size(0) == 0"));
    CHECK_THROWS_AS(tf::slice(tf::Tensor(), {}, {}), tf::errors::InvalidArgumentError);
}

TEST_CASE("slice gradient pads with zeros; gradchecks", "[indexing][gradient]") {
    const auto x = random_f64({3, 4, 2});
    check_gradients(
        [](const std::vector<tf::Tensor>& in) {
            return tf::slice(in[0], {1, 0, 1}, {2, -1, 1});
        },
        {x});
    check_gradients(second_order([](const tf::Tensor& t) {
                        return tf::slice(t, {0, 1, 0}, {2, 2, 2});
                    }),
                    {x});
    tf::GradientTape tape;
    tape.watch(x);
    const auto y = tf::slice(x, {1, 1, 0}, {1, 2, 2});
    const auto g = tape.gradient(y, x).dense();
    CHECK(g.shape() == x.shape());
    CHECK(tf::reduce_sum(g).item<double>() == 4.0);
}

// ---------------------------------------------------------------------------------------------
// strided_slice
// ---------------------------------------------------------------------------------------------

TEST_CASE("strided_slice matches NumPy for masks, negative strides and clamping", "[indexing]") {
    const auto x = iota({2, 3, 4});
    struct Case {
        const char* numpy;
        SliceSpec spec;
        tf::Shape shape;
        Ints expected;
    };
    const Case cases[] = {
        {"x[:, 1:, ::2]",
         {{0, 1, 0}, {0, 0, 0}, {1, 1, 2}, 5, 7},
         {2, 2, 2},
         {4, 6, 8, 10, 16, 18, 20, 22}},
        {"x[::-1, ::-1, ::-1]",
         {{0, 0, 0}, {0, 0, 0}, {-1, -1, -1}, 7, 7},
         {2, 3, 4},
         {23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0}},
        {"x[-1, :, -2]", {{-1, 0, -2}, {0, 0, -1}, {1, 1, 1}, 2, 2, 0, 0, 5}, {3}, {14, 18, 22}},
        {"x[..., 1]", {{0, 1}, {0, 2}, {1, 1}, 0, 0, 1, 0, 2}, {2, 3}, {1, 5, 9, 13, 17, 21}},
        {"x[:, newaxis, 1:3]",
         {{0, 0, 1}, {0, 0, 3}, {1, 1, 1}, 1, 1, 0, 2, 0},
         {2, 1, 2, 4},
         {4, 5, 6, 7, 8, 9, 10, 11, 16, 17, 18, 19, 20, 21, 22, 23}},
        {"x[newaxis, ..., newaxis]",
         {{0, 0, 0}, {0, 0, 0}, {1, 1, 1}, 0, 0, 2, 5, 0},
         {1, 2, 3, 4, 1},
         {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}},
        {"x[:, 1:100, -100:2]",
         {{0, 1, -100}, {0, 100, 2}, {1, 1, 1}, 1, 1},
         {2, 2, 2},
         {4, 5, 8, 9, 16, 17, 20, 21}},
        {"x[1, 2:0:-1, 3:0:-2]",
         {{1, 2, 3}, {2, 0, 0}, {1, -1, -2}, 0, 0, 0, 0, 1},
         {2, 2},
         {23, 21, 19, 17}},
        {"x[:, 2:1, :]", {{0, 2, 0}, {0, 1, 0}, {1, 1, 1}, 5, 5}, {2, 0, 4}, {}},
        {"x[0, 10:-10:-1, 0]",
         {{0, 10, 0}, {1, -10, 1}, {1, -1, 1}, 0, 0, 0, 0, 5},
         {3},
         {8, 4, 0}},
        {"x[0, ..., 1:3]",
         {{0, 0, 1}, {1, 0, 3}, {1, 1, 1}, 0, 0, 2, 0, 1},
         {3, 2},
         {1, 2, 5, 6, 9, 10}},
        {"x[..., newaxis, 0]",
         {{0, 0, 0}, {0, 0, 1}, {1, 1, 1}, 0, 0, 1, 2, 4},
         {2, 3, 1},
         {0, 4, 8, 12, 16, 20}},
        {"x[1:, -2::-1]",
         {{1, -2}, {0, 0}, {1, -1}, 0, 3},
         {1, 2, 4},
         {16, 17, 18, 19, 12, 13, 14, 15}},
        {"x[:, -1:-4:-2, ::-3]",
         {{0, -1, 0}, {0, -4, 0}, {1, -2, -3}, 5, 5},
         {2, 2, 2},
         {11, 8, 3, 0, 23, 20, 15, 12}},
        {"x[1]",
         {{1}, {2}, {1}, 0, 0, 0, 0, 1},
         {3, 4},
         {12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}},
        {"x[:]", {{0}, {0}, {1}, 1, 1}, {2, 3, 4}, {0,  1,  2,  3,  4,  5,  6,  7,
                                                    8,  9,  10, 11, 12, 13, 14, 15,
                                                    16, 17, 18, 19, 20, 21, 22, 23}},
    };
    for (const Case& c : cases) {
        INFO(c.numpy);
        const auto y = apply_spec(x, c.spec);
        CHECK(y.shape() == c.shape);
        CHECK(values(y) == c.expected);
    }
    const auto v = iota({10});
    struct Case1 {
        const char* numpy;
        SliceSpec spec;
        Ints expected;
    };
    const Case1 cases1[] = {
        {"v[::-2]", {{0}, {0}, {-2}, 1, 1}, {9, 7, 5, 3, 1}},
        {"v[8:2:-3]", {{8}, {2}, {-3}}, {8, 5}},
        {"v[-3:]", {{-3}, {0}, {1}, 0, 1}, {7, 8, 9}},
        {"v[-1:-5:-1]", {{-1}, {-5}, {-1}}, {9, 8, 7, 6}},
        {"v[-100:100]", {{-100}, {100}, {1}}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
        {"v[100:-100:-1]", {{100}, {-100}, {-1}}, {9, 8, 7, 6, 5, 4, 3, 2, 1, 0}},
        {"v[5:5]", {{5}, {5}, {1}}, {}},
        {"v[7:3]", {{7}, {3}, {1}}, {}},
        {"v[-1]", {{-1}, {0}, {1}, 0, 0, 0, 0, 1}, {9}},
    };
    for (const Case1& c : cases1) {
        INFO(c.numpy);
        CHECK(values(apply_spec(v, c.spec)) == c.expected);
    }
    CHECK(apply_spec(v, {{-1}, {0}, {1}, 0, 0, 0, 0, 1}).shape() == tf::Shape{});
    // A scalar with an empty spec is itself.
    CHECK(tf::strided_slice(tf::constant(4.5), {}, {}, {}).item<double>() == 4.5);
}

TEST_CASE("strided_slice works for every dtype", "[indexing]") {
    for (auto dtype : {tf::float32,
                       tf::float64,
                       tf::int32,
                       tf::int64,
                       tf::uint8,
                       tf::bool_,
                       tf::float16,
                       tf::bfloat16}) {
        const auto y = tf::strided_slice(iota({4, 3}, dtype), {3, 0}, {0, 3}, {-2, 2});
        CHECK(y.dtype() == dtype);
        CHECK(y.cast(tf::int64).to_vector<int64_t>() ==
              (dtype == tf::bool_ ? Ints{1, 1, 1, 1} : Ints{9, 11, 3, 5}));
    }
}

TEST_CASE("strided_slice rejects bad specs with TensorFlow's messages", "[indexing][errors]") {
    const auto x = iota({2, 3});
    CHECK_THROWS_AS(tf::strided_slice(x, {0, 0}, {1, 1}, {1, 0}), tf::errors::InvalidArgumentError);
    CHECK_THROWS_WITH(tf::strided_slice(x, {0, 0}, {1, 1}, {1, 0}),
                      Contains("strides[1] must be non-zero") && Contains("[Op:StridedSlice]"));
    CHECK_THROWS_WITH(tf::strided_slice(x, {5}, {6}, {1}, 0, 0, 0, 0, 1),
                      Contains("slice index 5 of dimension 0 out of bounds."));
    CHECK_THROWS_WITH(tf::strided_slice(x, {-3}, {0}, {1}, 0, 0, 0, 0, 1),
                      Contains("slice index -1 of dimension 0 out of bounds."));
    CHECK_THROWS_WITH(tf::strided_slice(x, {0, 0, 0}, {1, 1, 1}, {1, 1, 1}),
                      Contains("Index out of range using input dim 2; input has only 2 dims"));
    CHECK_THROWS_WITH(tf::strided_slice(tf::constant(1.f), {0}, {1}, {1}),
                      Contains("Attempting to slice scalar input."));
    CHECK_THROWS_WITH(tf::strided_slice(x, {0, 0}, {1}, {1, 1}),
                      Contains("Expected begin, end, and strides to be 1D equal size tensors"));
    CHECK_THROWS_WITH(tf::strided_slice(x, {0, 0}, {1, 1}, {1, 1}, 0, 0, 3),
                      Contains("Multiple ellipses in slice spec not allowed"));
    CHECK_THROWS_WITH(tf::strided_slice(x, {1}, {2}, {-1}, 0, 0, 0, 0, 1),
                      Contains("only stride 1 allowed on non-range indexing."));
}

TEST_CASE("strided_slice gradients scatter back; gradchecks with masks", "[indexing][gradient]") {
    const auto x = random_f64({3, 4, 5});
    const SliceSpec specs[] = {
        {{0, 3, 4}, {0, 0, 0}, {1, -1, -2}, 1, 7},            // x[:, 3::-1, 4::-2]
        {{-1, 0, 1}, {0, 0, 4}, {1, 1, 2}, 2, 2, 0, 0, 1},    // x[-1, :, 1:4:2]
        {{0, 2}, {0, 0}, {1, -1}, 0, 2, 1, 0, 0},             // x[..., 2::-1]
        {{0, 0, -2}, {0, 0, -5}, {1, 1, -1}, 1, 1, 0, 2, 0},  // x[:, newaxis, -2:-5:-1]
        {{1, 0, 1}, {2, 0, 0}, {1, 1, 1}, 0, 4, 2, 0, 1},     // x[1, ..., 1:]
        {{2, 1}, {0, 3}, {-2, 1}, 0, 1},                      // x[2::-2, 1:3]
        {{0}, {0}, {1}, 1, 1},  // x[:] (the gradient scatters one contiguous run)
    };
    for (const SliceSpec& s : specs) {
        check_gradients([&s](const std::vector<tf::Tensor>& in) { return apply_spec(in[0], s); },
                        {x});
        check_gradients(second_order([&s](const tf::Tensor& t) { return apply_spec(t, s); }), {x});
    }
    // Each sliced element gets its upstream value once; the rest are zero.
    tf::GradientTape tape;
    tape.watch(x);
    const auto y = tf::strided_slice(x, {0, 0, 0}, {0, 0, 0}, {2, -1, 3}, 7, 7);
    const auto g = tape.gradient(y, x).dense();
    CHECK(g.shape() == x.shape());
    CHECK(tf::reduce_sum(g).item<double>() == static_cast<double>(y.num_elements()));
}

// ---------------------------------------------------------------------------------------------
// pad
// ---------------------------------------------------------------------------------------------

TEST_CASE("pad in CONSTANT, REFLECT and SYMMETRIC modes", "[indexing]") {
    const auto x = tf::constant({{1, 2, 3}, {4, 5, 6}});
    const auto r = tf::pad(x, {{1, 1}, {2, 2}}, "REFLECT");
    CHECK(r.shape() == tf::Shape{4, 7});
    CHECK(values(r) ==
          Ints{6, 5, 4, 5, 6, 5, 4, 3, 2, 1, 2, 3, 2, 1, 6, 5, 4, 5, 6, 5, 4, 3, 2, 1, 2, 3, 2, 1});
    const auto s = tf::pad(x, {{1, 1}, {2, 2}}, "SYMMETRIC");
    CHECK(values(s) ==
          Ints{2, 1, 1, 2, 3, 3, 2, 2, 1, 1, 2, 3, 3, 2, 5, 4, 4, 5, 6, 6, 5, 5, 4, 4, 5, 6, 6, 5});
    const auto c = tf::pad(x, {{1, 0}, {0, 2}}, "CONSTANT", 9);
    CHECK(c.shape() == tf::Shape{3, 5});
    CHECK(values(c) == Ints{9, 9, 9, 9, 9, 1, 2, 3, 9, 9, 4, 5, 6, 9, 9});
    CHECK(values(tf::pad(x, {{0, 0}, {1, 0}})) == Ints{0, 1, 2, 3, 0, 4, 5, 6});
    CHECK(values(tf::pad(x, {{1, 1}, {2, 2}}, "reflect")) ==
          values(r));  // the mode is upper-cased, as in TF
    // Other dtypes, scalars and empty inputs.
    CHECK(tf::pad(tf::constant({true}), {{1, 0}}, "CONSTANT", 1).to_vector<bool>() ==
          std::vector<bool>{true, true});
    CHECK(tf::pad(tf::constant({1.5f}, tf::float16), {{0, 1}}, "CONSTANT", 2)
              .cast(tf::float32)
              .to_vector<float>() == std::vector<float>{1.5f, 2.f});
    CHECK(tf::pad(tf::constant(2.0), {}).item<double>() == 2.0);
    CHECK(values(tf::pad(tf::zeros({0, 2}, tf::int32), {{1, 1}, {0, 1}}, "CONSTANT", 7)) ==
          Ints{7, 7, 7, 7, 7, 7});
    CHECK(values(tf::pad(tf::constant({1, 2, 3}), {{3, 3}}, "SYMMETRIC")) ==
          Ints{3, 2, 1, 1, 2, 3, 3, 2, 1});
    CHECK(values(tf::pad(tf::constant({1, 2, 3}), {{2, 2}}, "REFLECT")) ==
          Ints{3, 2, 1, 2, 3, 2, 1});
    // 3-D with padding on every axis, checked element by element.
    const auto big = iota({3, 4, 5}, tf::float64);
    const auto p = tf::pad(big, {{2, 1}, {1, 3}, {4, 2}}, "SYMMETRIC");
    const auto pv = p.to_vector<double>();
    const auto mirror = [](int64_t i, int64_t n) {
        return i < 0 ? -i - 1 : i >= n ? 2 * n - 1 - i : i;
    };
    for (int64_t a = 0; a < 6; ++a) {
        for (int64_t b = 0; b < 8; ++b) {
            for (int64_t c2 = 0; c2 < 11; ++c2) {
                const int64_t src =
                    (mirror(a - 2, 3) * 4 + mirror(b - 1, 4)) * 5 + mirror(c2 - 4, 5);
                CHECK(pv[(a * 8 + b) * 11 + c2] == static_cast<double>(src));
            }
        }
    }
}

TEST_CASE("pad rejects bad modes and paddings", "[indexing][errors]") {
    const auto x = tf::zeros({2, 3});
    CHECK_THROWS_AS(tf::pad(x, {{1, 1}, {1, 1}}, "WRAP"), tf::errors::InvalidArgumentError);
    CHECK_THROWS_WITH(tf::pad(x, {{1, 1}, {1, 1}}, "WRAP"),
                      Contains("\"CONSTANT\", \"REFLECT\", or \"SYMMETRIC\"") && Contains("WRAP"));
    CHECK_THROWS_WITH(
        tf::pad(x, {{1, 1}}),
        Contains("The first dimension of paddings must be the rank of inputs[1,2] [2,3]") &&
            Contains("[Op:Pad]"));
    CHECK_THROWS_WITH(tf::pad(x, {{-1, 0}, {0, 0}}),
                      Contains("Paddings must be non-negative: -1 0"));
    CHECK_THROWS_WITH(
        tf::pad(x, {{2, 0}, {0, 0}}, "REFLECT"),
        Contains("paddings must be less than the dimension size: 2, 0 not less than 2") &&
            Contains("[Op:MirrorPad]"));
    CHECK_THROWS_WITH(
        tf::pad(x, {{0, 0}, {0, 4}}, "SYMMETRIC"),
        Contains("paddings must be no greater than the dimension size: 0, 4 greater than 3"));
    CHECK_NOTHROW(tf::pad(x, {{2, 2}, {3, 3}}, "SYMMETRIC"));
    CHECK_THROWS_WITH(tf::pad(x, {{0, -1}, {0, 0}}, "SYMMETRIC"),
                      Contains("paddings must be non-negative: 0 -1"));
}

TEST_CASE("pad gradients for each mode, first and second order", "[indexing][gradient]") {
    const auto x = random_f64({3, 4});
    const std::vector<std::pair<int64_t, int64_t>> paddings{{2, 1}, {3, 2}};
    for (const char* mode : {"CONSTANT", "REFLECT", "SYMMETRIC"}) {
        INFO(mode);
        const auto f = [&paddings, mode](const tf::Tensor& t) {
            return tf::pad(t, paddings, mode, 0.5);
        };
        check_gradients([&f](const std::vector<tf::Tensor>& in) { return f(in[0]); }, {x});
        check_gradients(second_order(f), {x});
    }
    const auto x3 = random_f64({2, 3, 4}, -1, 1, 3);
    for (const char* mode : {"REFLECT", "SYMMETRIC"}) {
        INFO(mode);
        check_gradients(
            [mode](const std::vector<tf::Tensor>& in) {
                return tf::pad(in[0], {{1, 1}, {0, 2}, {3, 1}}, mode);
            },
            {x3});
    }
    // SYMMETRIC border of the full width: every element is copied twice more on that axis.
    tf::GradientTape tape;
    tape.watch(x);
    const auto y = tf::pad(x, {{0, 0}, {4, 4}}, "SYMMETRIC");
    CHECK(tape.gradient(y, x).dense().to_vector<double>() == std::vector<double>(12, 3.0));
}

// ---------------------------------------------------------------------------------------------
// gather
// ---------------------------------------------------------------------------------------------

TEST_CASE("gather along any axis, with batch_dims", "[indexing]") {
    const auto p = iota({2, 3, 4});
    const auto idx = tf::constant({{2, 0}, {1, 1}});
    const auto a1 = tf::gather(p, idx, 1);
    CHECK(a1.shape() == tf::Shape{2, 2, 2, 4});
    CHECK(values(a1) == Ints{8,  9,  10, 11, 0,  1,  2,  3,  4,  5,  6,  7,  4,  5,  6,  7,
                             20, 21, 22, 23, 12, 13, 14, 15, 16, 17, 18, 19, 16, 17, 18, 19});
    const auto a2 = tf::gather(p, tf::constant({int64_t{3}, int64_t{0}, int64_t{3}}), -1);
    CHECK(a2.shape() == tf::Shape{2, 3, 3});
    CHECK(values(a2) == Ints{3, 0, 3, 7, 4, 7, 11, 8, 11, 15, 12, 15, 19, 16, 19, 23, 20, 23});
    const auto b1 = tf::gather(p, idx, 1, 1);
    CHECK(b1.shape() == tf::Shape{2, 2, 4});
    CHECK(values(b1) == Ints{8, 9, 10, 11, 0, 1, 2, 3, 16, 17, 18, 19, 16, 17, 18, 19});
    const auto b2 = tf::gather(p, tf::constant({{3, 0, 1}, {0, 0, 2}}), 2, -1);
    CHECK(b2.shape() == tf::Shape{2, 3, 3});
    CHECK(values(b2) == Ints{3, 0, 1, 7, 4, 5, 11, 8, 9, 12, 12, 14, 16, 16, 18, 20, 20, 22});
    CHECK(values(tf::gather(p, tf::constant(1))) ==
          Ints{12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23});
    CHECK(tf::gather(p, tf::zeros({0}, tf::int32)).shape() == tf::Shape{0, 3, 4});
    CHECK(tf::gather(tf::constant({true, false}), tf::constant({1, 1, 0})).to_vector<bool>() ==
          std::vector<bool>{false, false, true});
}

TEST_CASE("gather rejects bad indices and axes", "[indexing][errors]") {
    const auto p = tf::zeros({5, 2});
    CHECK_THROWS_AS(tf::gather(p, tf::constant({0, 7})), tf::errors::InvalidArgumentError);
    CHECK_THROWS_WITH(tf::gather(p, tf::constant({0, 7})),
                      Contains("indices[1] = 7 is not in [0, 5)") && Contains("[Op:GatherV2]"));
    CHECK_THROWS_WITH(tf::gather(p, tf::constant({{0, 1}, {-1, 2}})),
                      Contains("indices[1,0] = -1 is not in [0, 5)"));
    CHECK_THROWS_WITH(tf::gather(p, tf::constant({0, 2}), 1),
                      Contains("indices[1] = 2 is not in [0, 2)"));
    CHECK_THROWS_WITH(tf::gather(p, tf::constant({0.f})),
                      Contains("indices must be int32 or int64, got float32"));
    CHECK_THROWS_WITH(tf::gather(p, tf::constant({0}), 2),
                      Contains("Expected axis in the range [-2, 2), but got 2"));
    CHECK_THROWS_WITH(tf::gather(tf::constant(1.f), tf::constant({0})),
                      Contains("params must be at least 1 dimensional"));
    CHECK_THROWS_WITH(tf::gather(p, tf::constant({{0}, {1}}), 0, 1),
                      Contains("batch_dims (1) must be less than or equal to axis (0)."));
    CHECK_THROWS_WITH(tf::gather(p, tf::constant({0}), 1, 2),
                      Contains("Expected batch_dims in the range [-1, 1], but got 2"));
    CHECK_THROWS_WITH(tf::gather(p, tf::constant({{0}, {1}}), 1, 1),
                      Contains("params.shape[0]: 5 should be equal to indices.shape[0]: 2"));
}

TEST_CASE("gather's params gradient is IndexedSlices along axis 0", "[indexing][gradient]") {
    const auto params = random_f64({5, 3});
    const auto indices = tf::constant({{4, 1}, {1, 0}});
    tf::GradientTape tape;
    tape.watch(params);
    const auto y = tf::gather(params, indices);
    CHECK(y.shape() == tf::Shape{2, 2, 3});
    const auto upstream = random_f64({2, 2, 3}, -1, 1, 9);
    tf::GradientOptions options;
    options.output_gradients = {upstream};
    const tf::Gradient g = tape.gradient(y, params, options);
    REQUIRE(g.is_sparse());
    const auto& s = g.sparse();
    CHECK(s.dense_shape == tf::Shape{5, 3});
    CHECK(s.indices.dtype() == tf::int32);
    CHECK(s.indices.shape() == tf::Shape{4});
    CHECK(values(s.indices) == Ints{4, 1, 1, 0});
    CHECK(s.values.shape() == tf::Shape{4, 3});
    CHECK(s.values.to_vector<double>() == upstream.to_vector<double>());
    // Densified: duplicates add up, untouched rows are zero.
    const auto d = g.dense().to_vector<double>();
    const auto u = upstream.to_vector<double>();
    for (int c = 0; c < 3; ++c) {
        CHECK(d[0 * 3 + c] == u[9 + c]);
        CHECK(d[1 * 3 + c] == Approx(u[3 + c] + u[6 + c]));
        CHECK(d[2 * 3 + c] == 0.0);
        CHECK(d[3 * 3 + c] == 0.0);
        CHECK(d[4 * 3 + c] == u[c]);
    }
    // A scalar index gives one slice.
    tf::GradientTape tape2;
    tape2.watch(params);
    const tf::Gradient g2 = tape2.gradient(tf::gather(params, tf::constant(int64_t{2})), params);
    REQUIRE(g2.is_sparse());
    CHECK(g2.sparse().values.shape() == tf::Shape{1, 3});
    CHECK(g2.sparse().indices.dtype() == tf::int64);
    CHECK(values(g2.sparse().indices) == Ints{2});
}

TEST_CASE("gather gradients along other axes and with batch_dims are dense",
          "[indexing][gradient]") {
    const auto p = random_f64({2, 3, 4});
    tf::GradientTape tape;
    tape.watch(p);
    const auto y = tf::gather(p, tf::constant({{2, 0}, {1, 1}}), 1, 1);
    const tf::Gradient g = tape.gradient(y, p);
    CHECK_FALSE(g.is_sparse());
    // Row 1 of batch 1 was gathered twice.
    const auto d = g.dense().to_vector<double>();
    CHECK(d[(1 * 3 + 1) * 4] == 2.0);
    CHECK(d[(1 * 3 + 0) * 4] == 0.0);
    CHECK(d[(0 * 3 + 2) * 4] == 1.0);
    CHECK(d[(0 * 3 + 1) * 4] == 0.0);

    const auto f = [](const tf::Tensor& idx, int64_t axis, int64_t batch_dims) {
        return [idx, axis, batch_dims](const std::vector<tf::Tensor>& in) {
            return tf::gather(in[0], idx, axis, batch_dims);
        };
    };
    check_gradients(f(tf::constant({1, 0, 1}), 0, 0), {p});
    check_gradients(f(tf::constant({{2, 0}, {1, 1}}), 1, 0), {p});
    check_gradients(f(tf::constant({3, 0, 3, 1}), 2, 0), {p});
    check_gradients(f(tf::constant({{2, 0, 2}, {1, 1, 0}}), 1, 1), {p});
    check_gradients(f(tf::constant({{3, 0}, {0, 2}}), 2, 1), {p});
    check_gradients(f(tf::constant(std::vector<int64_t>{1, 0, 2, 2, 0, 1}, {2, 3, 1}), 2, 2), {p});
    check_gradients(f(tf::constant(int64_t{2}), -1, 0), {p});
    // Second order through the sparse gradient (densified by unsorted_segment_sum).
    check_gradients(second_order([](const tf::Tensor& t) {
                        return tf::gather(t, tf::constant({1, 1, 0}));
                    }),
                    {p});
    check_gradients(second_order([](const tf::Tensor& t) {
                        return tf::gather(t, tf::constant({{2, 0}, {1, 1}}), 1, 1);
                    }),
                    {p});
}

// ---------------------------------------------------------------------------------------------
// gather_nd, scatter_nd
// ---------------------------------------------------------------------------------------------

TEST_CASE("gather_nd gathers elements and slices, with batch_dims", "[indexing]") {
    const auto p = iota({2, 3, 4});
    const auto rows = tf::gather_nd(p, tf::constant({{1, 2}, {0, 0}}));
    CHECK(rows.shape() == tf::Shape{2, 4});
    CHECK(values(rows) == Ints{20, 21, 22, 23, 0, 1, 2, 3});
    CHECK(values(tf::gather_nd(p, tf::constant({{1, 2, 3}, {0, 1, 0}}))) == Ints{23, 4});
    CHECK(values(tf::gather_nd(p, tf::constant({int64_t{1}, int64_t{1}}))) == Ints{16, 17, 18, 19});
    const auto b = tf::gather_nd(p, tf::constant(std::vector<int>{2, 0}, {2, 1, 1}), 1);
    CHECK(b.shape() == tf::Shape{2, 1, 4});
    CHECK(values(b) == Ints{8, 9, 10, 11, 12, 13, 14, 15});
    CHECK(values(tf::gather_nd(p, tf::constant({{1, 3}, {2, 0}}), 1)) == Ints{7, 20});
    CHECK(tf::gather_nd(p, tf::zeros({0, 2}, tf::int32)).shape() == tf::Shape{0, 4});
}

TEST_CASE("gather_nd and scatter_nd reject bad indices", "[indexing][errors]") {
    const auto p = tf::zeros({3, 3});
    CHECK_THROWS_WITH(tf::gather_nd(p, tf::constant({{0, 1}, {5, 0}})),
                      Contains("indices[1] = [5, 0] does not index into param shape [3,3]") &&
                          Contains("[Op:GatherNd]"));
    CHECK_THROWS_WITH(
        tf::gather_nd(p, tf::constant({{0, 1, 1}})),
        Contains("index innermost dimension length must be <= params rank; saw: 3 vs. 2"));
    CHECK_THROWS_WITH(tf::gather_nd(p, tf::constant(1)),
                      Contains("indices must be at least a vector"));
    CHECK_THROWS_WITH(tf::gather_nd(p, tf::constant({0.5})),
                      Contains("indices must be int32 or int64"));
    CHECK_THROWS_WITH(
        tf::scatter_nd(tf::constant({{0, 1}, {3, 0}}), tf::constant({1.f, 2.f}), {3, 3}),
        Contains("indices[1] = [3, 0] does not index into shape [3,3]") &&
            Contains("[Op:ScatterNd]"));
    CHECK_THROWS_WITH(tf::scatter_nd(tf::constant({{0}, {1}}), tf::constant({1.f, 2.f, 3.f}), {3}),
                      Contains("must match dimensions [0,1) of updates"));
    CHECK_THROWS_WITH(tf::scatter_nd(tf::constant({{0}}), tf::constant({{1.f, 2.f}}), {3, 3}),
                      Contains("Dimensions [1,2) of input[shape=[3,3]] = [3]"));
}

TEST_CASE("scatter_nd sums duplicates into zeros", "[indexing]") {
    const auto s = tf::scatter_nd(
        tf::constant({{4}, {3}, {1}, {7}, {3}}), tf::constant({9, 10, 11, 12, 5}), {8});
    CHECK(values(s) == Ints{0, 11, 0, 15, 9, 0, 0, 12});
    const auto m = tf::scatter_nd(
        tf::constant({{0}, {2}, {0}}), tf::constant({{1.0, 2.0}, {3.0, 4.0}, {5.0, 6.0}}), {3, 2});
    CHECK(m.to_vector<double>() == std::vector<double>{6, 8, 0, 0, 3, 4});
    CHECK(tf::scatter_nd(tf::zeros({0, 1}, tf::int64), tf::zeros({0}), {4}).to_vector<float>() ==
          std::vector<float>(4, 0.f));
}

TEST_CASE("gather_nd and scatter_nd gradients", "[indexing][gradient]") {
    const auto p = random_f64({3, 4, 2});
    const auto nd = [](const tf::Tensor& idx, int64_t batch_dims) {
        return [idx, batch_dims](const std::vector<tf::Tensor>& in) {
            return tf::gather_nd(in[0], idx, batch_dims);
        };
    };
    check_gradients(nd(tf::constant({{0, 1}, {2, 3}, {0, 1}}), 0), {p});
    check_gradients(nd(tf::constant({{1, 1, 1}, {2, 0, 0}, {1, 1, 1}}), 0), {p});
    check_gradients(nd(tf::constant({{2}, {2}}), 0), {p});
    check_gradients(nd(tf::constant(std::vector<int>{1, 1, 0, 0, 3, 1}, {3, 1, 2}), 1), {p});
    check_gradients(nd(tf::constant({{1}, {0}, {3}}), 1), {p});
    check_gradients(second_order([](const tf::Tensor& t) {
                        return tf::gather_nd(t, tf::constant({{0, 1}, {0, 1}}));
                    }),
                    {p});
    const auto idx = tf::constant({{1}, {3}, {1}});
    check_gradients(
        [idx](const std::vector<tf::Tensor>& in) {
            return tf::scatter_nd(idx, in[0], {5, 2});
        },
        {random_f64({3, 2})});
    check_gradients(second_order([idx](const tf::Tensor& t) {
                        return tf::scatter_nd(idx, t, {5, 2});
                    }),
                    {random_f64({3, 2})});
}

// ---------------------------------------------------------------------------------------------
// unsorted_segment_sum
// ---------------------------------------------------------------------------------------------

TEST_CASE("unsorted_segment_sum sums rows by id and drops ids out of range", "[indexing]") {
    const auto data = tf::constant({{1, 2}, {3, 4}, {5, 6}, {7, 8}, {9, 10}});
    const auto s = tf::unsorted_segment_sum(data, tf::constant({2, 0, 2, -1, 3}), 3);
    CHECK(s.shape() == tf::Shape{3, 2});
    CHECK(values(s) == Ints{3, 4, 0, 0, 6, 8});
    CHECK(values(tf::unsorted_segment_sum(
              tf::constant({1, 2, 3, 4}),
              tf::constant({int64_t{1}, int64_t{1}, int64_t{0}, int64_t{5}}),
              2)) == Ints{3, 3});
    // ids of the leading shape of data.
    const auto m =
        tf::unsorted_segment_sum(iota({2, 2, 3}, tf::float32), tf::constant({{0, 1}, {1, 1}}), 2);
    CHECK(m.shape() == tf::Shape{2, 3});
    CHECK(m.to_vector<float>() == std::vector<float>{0, 1, 2, 18, 21, 24});
    CHECK(values(tf::unsorted_segment_sum(tf::constant({1, 2}), tf::constant({0, 0}), 0)).empty());
    CHECK(tf::unsorted_segment_sum(tf::constant({1.5}, tf::float16), tf::constant({1}), 2)
              .cast(tf::float32)
              .to_vector<float>() == std::vector<float>{0.f, 1.5f});
    for (auto dtype : {tf::float32, tf::float64, tf::int32, tf::int64}) {
        CHECK(values(tf::unsorted_segment_sum(iota({4}, dtype), tf::constant({1, 0, 1, 1}), 2)) ==
              Ints{1, 5});
    }
}

TEST_CASE("unsorted_segment_sum rejects bad arguments", "[indexing][errors]") {
    const auto data = tf::zeros({3, 4});
    CHECK_THROWS_WITH(tf::unsorted_segment_sum(data, tf::constant({0, 1}), 2),
                      Contains("data.shape = [3,4] does not start with segment_ids.shape = [2]") &&
                          Contains("[Op:UnsortedSegmentSum]"));
    CHECK_THROWS_WITH(tf::unsorted_segment_sum(data, tf::constant({0, 1, 1}), -1),
                      Contains("Input num_segments == -1 must not be negative."));
    CHECK_THROWS_WITH(tf::unsorted_segment_sum(data, tf::constant({0.f, 1.f, 1.f}), 2),
                      Contains("segment_ids must be int32 or int64"));
}

TEST_CASE("unsorted_segment_sum gradient gathers by id; out-of-range ids get zeros",
          "[indexing][gradient]") {
    const auto ids = tf::constant({2, 0, -1, 2, 7, 1});
    const auto data = random_f64({6, 3});
    check_gradients(
        [ids](const std::vector<tf::Tensor>& in) {
            return tf::unsorted_segment_sum(in[0], ids, 3);
        },
        {data});
    check_gradients(
        second_order([ids](const tf::Tensor& t) { return tf::unsorted_segment_sum(t, ids, 3); }),
        {data});
    tf::GradientTape tape;
    tape.watch(data);
    const auto y = tf::unsorted_segment_sum(data, ids, 3);
    tf::GradientOptions options;
    options.output_gradients = {tf::constant({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}, {7.0, 8.0, 9.0}})};
    const auto g = tape.gradient(y, data, options).dense();
    CHECK(g.to_vector<double>() ==
          std::vector<double>{7, 8, 9, 1, 2, 3, 0, 0, 0, 7, 8, 9, 0, 0, 0, 4, 5, 6});
}

// ---------------------------------------------------------------------------------------------
// Large inputs: the parallel paths agree with serial references, bit for bit.
// ---------------------------------------------------------------------------------------------

TEST_CASE("large slices, pads and gathers match element-wise references", "[indexing][large]") {
    const int64_t n = 300;
    const int64_t m = 257;
    const auto x = iota({n, m}, tf::float32);
    const auto sl = tf::strided_slice(x, {5, 250}, {290, 3}, {3, -2}).to_vector<float>();
    int64_t k = 0;
    for (int64_t i = 5; i < 290; i += 3) {
        for (int64_t j = 250; j > 3; j -= 2)
            REQUIRE(sl[k++] == static_cast<float>(i * m + j));
    }
    CHECK(k == static_cast<int64_t>(sl.size()));
    const auto pv = tf::pad(x, {{3, 2}, {1, 4}}, "REFLECT").to_vector<float>();
    const auto reflect = [](int64_t i, int64_t len) {
        return i < 0 ? -i : i >= len ? 2 * len - 2 - i : i;
    };
    for (int64_t i = 0; i < n + 5; i += 7) {
        for (int64_t j = 0; j < m + 5; ++j) {
            REQUIRE(pv[i * (m + 5) + j] ==
                    static_cast<float>(reflect(i - 3, n) * m + reflect(j - 1, m)));
        }
    }
    std::vector<int64_t> idx(5000);
    for (std::size_t i = 0; i < idx.size(); ++i)
        idx[i] = static_cast<int64_t>((i * 7919) % n);
    const auto gv = tf::gather(x, tf::constant(idx, {5000})).to_vector<float>();
    for (std::size_t i = 0; i < idx.size(); i += 13) {
        for (int64_t j = 0; j < m; ++j)
            REQUIRE(gv[i * m + j] == static_cast<float>(idx[i] * m + j));
    }
}

TEST_CASE("large segment sums equal a serial sum in index order", "[indexing][large]") {
    // Both parallel splits (by column for wide rows, by segment for narrow ones) must add each
    // output's rows in increasing order, so float32 results are exact copies of a serial loop.
    for (const int64_t width : {1, 3, 1000}) {
        const int64_t n = width == 1000 ? 300 : 200000;
        const int64_t segments = 97;
        const auto data = tf::random::uniform({n, width}, -1, 1, tf::float32, 5);
        std::vector<int32_t> ids(static_cast<std::size_t>(n));
        for (int64_t i = 0; i < n; ++i)
            ids[i] = static_cast<int32_t>((i * 31 + i / 7) % (segments + 3)) - 1;
        const auto got =
            tf::unsorted_segment_sum(data, tf::constant(ids, {n}), segments).to_vector<float>();
        const auto d = data.to_vector<float>();
        std::vector<float> want(static_cast<std::size_t>(segments * width), 0.f);
        for (int64_t i = 0; i < n; ++i) {
            if (ids[i] < 0 || ids[i] >= segments) continue;
            for (int64_t c = 0; c < width; ++c)
                want[ids[i] * width + c] += d[i * width + c];
        }
        INFO("width " << width);
        CHECK(got == want);
    }
}
