// Reductions and scans: golden values and gradients (ops.json), finite-difference gradients for
// axis/keepdims combinations, every kernel path against a float64 reference, dtypes, edge cases
// (empty axes, ties, zeros in prod, axes {} vs an explicitly empty list) and TensorFlow's errors.
#include <algorithm>
#include <cmath>
#include <limits>

#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

#include "support/golden.hpp"
#include "support/gradcheck.hpp"

namespace tf = tapeflow;
using tf::testing::check_gradients;
using tf::testing::random_f64;

namespace {

using Json = nlohmann::json;
using Tensors = std::vector<tf::Tensor>;
using ReduceFn = tf::Tensor (*)(const tf::Tensor&, tf::Axes, bool);

tf::Axes axes_arg(const Json& args) {
    if (!args.contains("axis") || args["axis"].is_null()) return tf::Axes();
    if (args["axis"].is_array()) return tf::Axes(args["axis"].get<std::vector<int64_t>>());
    return tf::Axes(args["axis"].get<int64_t>());
}

void run_reduction_cases(const char* tf_op, ReduceFn fn) {
    for (const auto& c : tf::testing::golden_cases(tf_op)) {
        SECTION(c.id) {
            tf::testing::run_golden_case(c, [fn](const Tensors& in, const Json& args) {
                return Tensors{fn(in[0], axes_arg(args), args.value("keepdims", false))};
            });
        }
    }
}

std::vector<double> values_of(const tf::Tensor& t) {
    return t.to_vector<double>();
}

bool reduced(const std::vector<int64_t>& axes, std::size_t d) {
    return std::find(axes.begin(), axes.end(), static_cast<int64_t>(d)) != axes.end();
}

// Reference reduction in double over `axes` (non-negative) of a row-major tensor.
std::vector<double> reference(const std::vector<double>& x,
                              const std::vector<int64_t>& dims,
                              const std::vector<int64_t>& axes,
                              double init,
                              double (*combine)(double, double)) {
    int64_t out_n = 1;
    for (std::size_t d = 0; d < dims.size(); ++d) {
        if (!reduced(axes, d)) out_n *= dims[d];
    }
    std::vector<double> out(static_cast<std::size_t>(out_n), init);
    std::vector<int64_t> idx(dims.size(), 0);
    for (const double v : x) {
        int64_t o = 0;
        for (std::size_t d = 0; d < dims.size(); ++d) {
            if (!reduced(axes, d)) o = o * dims[d] + idx[d];
        }
        out[static_cast<std::size_t>(o)] = combine(out[static_cast<std::size_t>(o)], v);
        for (std::size_t d = dims.size(); d-- > 0;) {
            if (++idx[d] < dims[d]) break;
            idx[d] = 0;
        }
    }
    return out;
}

double add2(double a, double b) {
    return a + b;
}
double max2(double a, double b) {
    return std::max(a, b);
}
double min2(double a, double b) {
    return std::min(a, b);
}

// CHECKs |t - expected| <= atol + rtol |expected| element-wise; reports the first mismatch.
void check_values(const tf::Tensor& t,
                  const std::vector<double>& expected,
                  double rtol,
                  double atol = 0) {
    const std::vector<double> got = values_of(t);
    REQUIRE(got.size() == expected.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        if (!(std::abs(got[i] - expected[i]) <= atol + rtol * std::abs(expected[i]))) {
            FAIL_CHECK("element " << i << " is " << got[i] << ", expected " << expected[i]);
            return;
        }
    }
}

}  // namespace

// ---- Golden cases ----

TEST_CASE("reductions match the golden cases", "[reduce][golden]") {
    SECTION("reduce_sum") {
        run_reduction_cases("tf.math.reduce_sum", tf::reduce_sum);
    }
    SECTION("reduce_mean") {
        run_reduction_cases("tf.math.reduce_mean", tf::reduce_mean);
    }
    SECTION("reduce_max") {
        run_reduction_cases("tf.math.reduce_max", tf::reduce_max);
    }
    SECTION("reduce_min") {
        run_reduction_cases("tf.math.reduce_min", tf::reduce_min);
    }
    SECTION("reduce_prod") {
        run_reduction_cases("tf.math.reduce_prod", tf::reduce_prod);
    }
    SECTION("reduce_logsumexp") {
        run_reduction_cases("tf.math.reduce_logsumexp", tf::reduce_logsumexp);
    }
    SECTION("reduce_std") {
        run_reduction_cases("tf.math.reduce_std", tf::reduce_std);
    }
}

TEST_CASE("argmax and cumsum match the golden cases", "[reduce][golden]") {
    for (const auto& c : tf::testing::golden_cases("tf.math.argmax")) {
        tf::testing::run_golden_case(c, [](const Tensors& in, const Json& args) {
            const tf::DType type = tf::parse_dtype(args.value("output_type", std::string("int64")));
            return Tensors{tf::argmax(in[0], args.value("axis", int64_t{0}), type)};
        });
    }
    for (const auto& c : tf::testing::golden_cases("tf.math.cumsum")) {
        tf::testing::run_golden_case(c, [](const Tensors& in, const Json& args) {
            return Tensors{tf::cumsum(in[0],
                                      args.value("axis", int64_t{0}),
                                      args.value("exclusive", false),
                                      args.value("reverse", false))};
        });
    }
}

// ---- Gradients against finite differences ----

TEST_CASE("reduction gradients match finite differences", "[reduce][gradcheck]") {
    const std::vector<std::pair<tf::Axes, bool>> combos = {
        {tf::Axes(), false},
        {tf::Axes(), true},
        {tf::Axes(0), false},
        {tf::Axes(1), true},
        {tf::Axes(-1), false},
        {tf::Axes({0, 2}), true},
        {tf::Axes({0, 2}), false},
        {tf::Axes({2, 1}), false},
        {tf::Axes(std::vector<int64_t>{}), false}};
    const std::vector<std::pair<std::string, ReduceFn>> ops = {{"sum", tf::reduce_sum},
                                                               {"mean", tf::reduce_mean},
                                                               {"max", tf::reduce_max},
                                                               {"min", tf::reduce_min},
                                                               {"prod", tf::reduce_prod},
                                                               {"logsumexp", tf::reduce_logsumexp},
                                                               {"variance", tf::reduce_variance},
                                                               {"std", tf::reduce_std}};
    // Distinct values away from 0: no ties (max/min), no zeros (prod), a nonzero spread (std).
    const tf::Tensor x = random_f64({2, 3, 4}, 0.5, 1.5, 7);
    for (const auto& [name, fn] : ops) {
        for (std::size_t i = 0; i < combos.size(); ++i) {
            INFO(name << ", combination " << i);
            const tf::Axes axes = combos[i].first;
            const bool keepdims = combos[i].second;
            const ReduceFn f = fn;
            if (name == "std" && !axes.all() && axes.list().empty()) continue;  // sqrt'(0) = inf
            check_gradients(
                [&](const Tensors& in) { return f(in[0], axes, keepdims); }, {x}, 1e-5, 1e-7);
        }
    }
}

TEST_CASE("scan gradients match finite differences", "[reduce][gradcheck]") {
    const tf::Tensor x = random_f64({3, 4}, 0.5, 1.5, 3);
    for (const int64_t axis : {0, 1, -1}) {
        for (const bool exclusive : {false, true}) {
            for (const bool reverse : {false, true}) {
                INFO("axis " << axis << " exclusive " << exclusive << " reverse " << reverse);
                check_gradients(
                    [&](const Tensors& in) { return tf::cumsum(in[0], axis, exclusive, reverse); },
                    {x});
                check_gradients(
                    [&](const Tensors& in) { return tf::cumprod(in[0], axis, exclusive, reverse); },
                    {x},
                    1e-5,
                    1e-7);
            }
        }
    }
}

TEST_CASE("second-order gradients of reductions", "[reduce][gradcheck]") {
    // The gradient formulas are tapeflow ops: differentiate the gradient itself.
    const tf::Tensor x = random_f64({3, 4}, 0.5, 1.5, 11);
    const std::vector<std::pair<std::string, ReduceFn>> ops = {{"sum", tf::reduce_sum},
                                                               {"mean", tf::reduce_mean},
                                                               {"prod", tf::reduce_prod},
                                                               {"logsumexp", tf::reduce_logsumexp},
                                                               {"variance", tf::reduce_variance},
                                                               {"max", tf::reduce_max}};
    for (const auto& [name, fn] : ops) {
        INFO(name);
        const ReduceFn f = fn;
        check_gradients(
            [f](const Tensors& in) {
                tf::GradientTape tape;
                tape.watch(in[0]);
                const tf::Tensor y = f(in[0] * in[0] * in[0], tf::Axes(1), false);
                return tf::Tensor(tape.gradient(y, in[0]));
            },
            {x},
            1e-5,
            1e-7);
    }
}

TEST_CASE("reduce_max and reduce_min split the gradient among ties", "[reduce]") {
    const tf::Tensor x = tf::constant({{1.0, 3.0, 3.0}, {2.0, 2.0, 2.0}});
    tf::Gradient gmax;
    tf::Gradient gmin;
    {
        tf::GradientTape tape(/*persistent=*/true);
        tape.watch(x);
        const tf::Tensor ymax = tf::reduce_max(x, 1);
        const tf::Tensor ymin = tf::reduce_min(x);
        const tf::StopRecording pause = tape.stop_recording();
        gmax = tape.gradient(ymax, x);
        gmin = tape.gradient(ymin, x);
    }
    check_values(gmax, {0, 0.5, 0.5, 1.0 / 3, 1.0 / 3, 1.0 / 3}, 1e-15);
    check_values(gmin, {1, 0, 0, 0, 0, 0}, 0);
}

TEST_CASE("reduce_prod gradient with zeros", "[reduce]") {
    // One zero: the product of the others at the zero, 0 elsewhere. Two zeros: all 0.
    const tf::Tensor x = tf::constant({{2.0, 0.0, 3.0}, {0.0, 5.0, 0.0}});
    {
        tf::GradientTape tape;
        tape.watch(x);
        const tf::Tensor y = tf::reduce_prod(x, 1);
        check_values(y, {0, 0}, 0);
        check_values(tape.gradient(y, x), {0, 6, 0, 0, 0, 0}, 0);
    }
    {  // several reduced axes (moved to the front by a transpose) with one zero
        const tf::Tensor z =
            tf::reshape(tf::constant({1.0, 2.0, 3.0, 0.0, 5.0, 6.0, 7.0, 8.0}), {2, 2, 2});
        tf::GradientTape tape;
        tape.watch(z);
        const tf::Tensor y = tf::reduce_prod(z, {0, 2});  // groups {1,2,5,6} and {3,0,7,8}
        check_values(y, {60, 0}, 0);
        check_values(tape.gradient(y, z), {60, 30, 0, 3 * 7 * 8, 12, 10, 0, 0}, 1e-15);
    }
}

// ---- Kernel paths against a float64 reference ----

TEST_CASE("reduction kernels agree with a float64 reference on every layout", "[reduce]") {
    struct Layout {
        std::vector<int64_t> dims;
        std::vector<int64_t> axes;
    };
    const std::vector<Layout> layouts = {
        {{100003}, {0}},               // one long row: blocks whose partials combine in order
        {{3, 70001}, {1}},             // long rows
        {{70001, 3}, {0}},             // many short rows accumulated in row blocks
        {{257, 129}, {0}},             // rows accumulated into an output row
        {{257, 129}, {1}},             // contiguous rows
        {{5, 300, 7}, {1}},            // a middle axis
        {{3, 9000}, {0}},              // output rows wider than one column chunk
        {{4, 5, 6, 7}, {0, 2}},        // reduced, kept, reduced, kept
        {{4, 5, 6, 7}, {1, 3}},        // kept, reduced, kept, reduced: two stages
        {{4, 5, 6, 7}, {0, 1, 3}},     // reduced, kept, reduced
        {{3, 1, 4, 1, 5}, {1, 3, 4}},  // size-1 axes dropped before grouping
        {{2, 5000, 9}, {0, 2}},
        {{6000, 2, 7}, {0}},
    };
    for (const Layout& l : layouts) {
        INFO("dims " << tf::Shape(l.dims).debug_string() << ", axes "
                     << tf::Shape(l.axes).debug_string());
        const tf::Tensor x64 = random_f64(tf::Shape(l.dims), -1, 1, 5);
        const tf::Tensor x32 = tf::cast(x64, tf::float32);
        const std::vector<double> v32 = values_of(x32);
        const tf::Axes axes(l.axes);
        const std::vector<double> sum = reference(v32, l.dims, l.axes, 0.0, add2);
        int64_t count = 1;
        for (const int64_t a : l.axes)
            count *= l.dims[static_cast<std::size_t>(a)];
        std::vector<double> mean = sum;
        for (double& v : mean)
            v /= static_cast<double>(count);
        check_values(tf::reduce_sum(x32, axes), sum, 1e-4, 1e-4);
        check_values(tf::reduce_mean(x32, axes), mean, 1e-4, 1e-6);
        check_values(tf::reduce_max(x32, axes), reference(v32, l.dims, l.axes, -INFINITY, max2), 0);
        check_values(tf::reduce_min(x32, axes), reference(v32, l.dims, l.axes, INFINITY, min2), 0);
        const std::vector<double> sum64 = reference(values_of(x64), l.dims, l.axes, 0.0, add2);
        check_values(tf::reduce_sum(x64, axes), sum64, 1e-12, 1e-12);
        // Integers are exact.
        const tf::Tensor xi = tf::cast(x64 * 1000.0, tf::int32);
        const std::vector<double> vi = values_of(xi);
        check_values(tf::reduce_sum(xi, axes), reference(vi, l.dims, l.axes, 0.0, add2), 0);
        check_values(tf::reduce_max(tf::cast(xi, tf::int64), axes),
                     reference(vi, l.dims, l.axes, -INFINITY, max2),
                     0);
    }
}

TEST_CASE("float32 sums of many elements stay accurate", "[reduce]") {
    const int64_t n = 1 << 22;
    const tf::Tensor x = tf::fill({n}, 0.1, tf::float32);
    const double expected = static_cast<double>(n) * static_cast<double>(0.1f);
    CHECK(std::abs(tf::reduce_sum(x).item<float>() - expected) <= 1e-6 * expected);
    CHECK(std::abs(tf::reduce_mean(x).item<float>() - 0.1f) <= 1e-6);
    const tf::Tensor col = tf::reduce_sum(tf::reshape(x, {1 << 16, 64}), 0);
    CHECK(std::abs(col.to_vector<float>()[5] - 65536 * 0.1f) <= 1e-5 * 65536 * 0.1f);
}

TEST_CASE("reduce_max and reduce_min propagate NaN", "[reduce]") {
    std::vector<float> v(100, 1.0f);
    v[37] = std::numeric_limits<float>::quiet_NaN();
    const tf::Tensor x = tf::constant(v, {100});
    CHECK(std::isnan(tf::reduce_max(x).item<float>()));
    CHECK(std::isnan(tf::reduce_min(x).item<float>()));
    const std::vector<float> col = tf::reduce_max(tf::reshape(x, {25, 4}), 0).to_vector<float>();
    CHECK(std::isnan(col[1]));
    CHECK(col[0] == 1.0f);
}

// ---- Dtypes ----

TEST_CASE("integer, bool and 16-bit reductions", "[reduce]") {
    using I32 = std::vector<int32_t>;
    const tf::Tensor i32 = tf::constant({{1, 2, 3}, {4, 5, 6}});
    CHECK(tf::reduce_sum(i32).dtype() == tf::int32);
    CHECK(tf::reduce_sum(i32).item<int32_t>() == 21);
    CHECK(tf::reduce_sum(i32, 0).to_vector<int32_t>() == I32{5, 7, 9});
    CHECK(tf::reduce_prod(i32, 1).to_vector<int32_t>() == I32{6, 120});
    CHECK(tf::reduce_mean(i32, 1).to_vector<int32_t>() == I32{2, 5});  // truncating division
    CHECK(tf::reduce_max(i32, 0).to_vector<int32_t>() == I32{4, 5, 6});
    CHECK(tf::reduce_min(i32).item<int32_t>() == 1);
    CHECK(tf::cumsum(tf::constant({1, 2, 3}), 0).to_vector<int32_t>() == I32{1, 3, 6});
    const tf::Tensor i64 = tf::cast(i32, tf::int64) + int64_t{3000000000};
    CHECK(tf::reduce_sum(i64).dtype() == tf::int64);
    CHECK(tf::reduce_sum(i64).item<int64_t>() == 18000000021);
    // int32 overflow wraps as in TensorFlow.
    const tf::Tensor big = tf::constant({2147483647, 1});
    CHECK(tf::reduce_sum(big).item<int32_t>() == std::numeric_limits<int32_t>::min());
    CHECK(tf::reduce_sum(tf::constant({200, 100}, tf::uint8)).item<int32_t>() == 44);

    using Bools = std::vector<bool>;
    const tf::Tensor b = tf::constant({{true, false, true}, {true, true, true}});
    CHECK(tf::reduce_any(b, 1).to_vector<bool>() == Bools{true, true});
    CHECK(tf::reduce_all(b, 1).to_vector<bool>() == Bools{false, true});
    CHECK(tf::reduce_all(b, 0).to_vector<bool>() == Bools{true, false, true});
    CHECK_FALSE(tf::reduce_all(b).item<bool>());
    CHECK(tf::reduce_any(b).item<bool>());
    CHECK_FALSE(tf::reduce_any(tf::zeros({0}, tf::bool_)).item<bool>());
    CHECK(tf::reduce_all(tf::zeros({0}, tf::bool_)).item<bool>());

    const tf::Tensor h = tf::cast(tf::constant({{1.f, 2.f}, {3.f, 4.f}}), tf::float16);
    CHECK(tf::reduce_sum(h).dtype() == tf::float16);
    CHECK(tf::cast(tf::reduce_sum(h, 0), tf::float32).to_vector<float>() ==
          std::vector<float>{4.f, 6.f});
    CHECK(tf::cast(tf::reduce_mean(tf::cast(h, tf::bfloat16)), tf::float32).item<float>() == 2.5f);
    CHECK(tf::cast(tf::reduce_max(h, 1), tf::float32).to_vector<float>() ==
          std::vector<float>{2.f, 4.f});
}

TEST_CASE("argmax and argmin", "[reduce]") {
    const tf::Tensor x = tf::constant({{1.f, 9.f, 9.f, 0.f}, {7.f, 2.f, 7.f, 0.f}});
    const tf::Tensor a1 = tf::argmax(x, 1, tf::int32);
    CHECK(a1.dtype() == tf::int32);
    CHECK(a1.to_vector<int32_t>() == std::vector<int32_t>{1, 0});  // the first index on ties
    CHECK(tf::argmax(x).dtype() == tf::int64);
    CHECK(tf::argmax(x).to_vector<int64_t>() == std::vector<int64_t>{1, 0, 0, 0});
    CHECK(tf::argmin(x, -1).to_vector<int64_t>() == std::vector<int64_t>{3, 3});
    CHECK(tf::argmin(x, 0).to_vector<int64_t>() == std::vector<int64_t>{0, 1, 1, 0});
    CHECK(tf::argmax(tf::constant({3, 1, 3}), 0).item<int64_t>() == 0);
    CHECK(tf::math::argmin(tf::constant({3, 1, 1}), 0).item<int64_t>() == 1);
    // No gradient flows through an index.
    const tf::Tensor f = tf::constant({1.0, 2.0});
    tf::GradientTape tape;
    tape.watch(f);
    const tf::Tensor i = tf::argmax(f, 0);
    CHECK_FALSE(tape.gradient(tf::cast(i, tf::float64), f).defined());
}

TEST_CASE("cumsum and cumprod variants", "[reduce]") {
    const tf::Tensor x = tf::constant({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}});
    check_values(tf::cumsum(x, 1), {1, 3, 6, 4, 9, 15}, 0);
    check_values(tf::cumsum(x, 1, /*exclusive=*/true), {0, 1, 3, 0, 4, 9}, 0);
    check_values(tf::cumsum(x, 1, false, /*reverse=*/true), {6, 5, 3, 15, 11, 6}, 0);
    check_values(tf::cumsum(x, 1, true, true), {5, 3, 0, 11, 6, 0}, 0);
    check_values(tf::cumsum(x, 0), {1, 2, 3, 5, 7, 9}, 0);
    check_values(tf::cumprod(x, 1), {1, 2, 6, 4, 20, 120}, 0);
    check_values(tf::cumprod(x, -1, true, true), {6, 3, 1, 30, 6, 1}, 0);
    CHECK(tf::cumsum(tf::zeros({0, 3})).shape() == tf::Shape{0, 3});
}

// ---- Edge cases ----

TEST_CASE("reductions over empty axes give the identity", "[reduce]") {
    const tf::Tensor e = tf::zeros({0, 3});
    check_values(tf::reduce_sum(e, 0), {0, 0, 0}, 0);
    check_values(tf::reduce_prod(e, 0), {1, 1, 1}, 0);
    CHECK(tf::reduce_max(e, 0).to_vector<float>() == std::vector<float>(3, -INFINITY));
    CHECK(tf::reduce_min(e, 0).to_vector<float>() == std::vector<float>(3, INFINITY));
    CHECK(std::isnan(tf::reduce_mean(e).item<float>()));
    CHECK(tf::reduce_sum(e, 1).shape() == tf::Shape{0});
    CHECK(tf::reduce_max(tf::zeros({0}, tf::int32)).item<int32_t>() ==
          std::numeric_limits<int32_t>::lowest());
    CHECK(tf::reduce_min(tf::zeros({0}, tf::int64)).item<int64_t>() ==
          std::numeric_limits<int64_t>::max());
}

TEST_CASE("keepdims shapes, negative axes, all axes vs no axes", "[reduce]") {
    const tf::Tensor x = random_f64({2, 3, 4});
    CHECK(tf::reduce_sum(x).shape() == tf::Shape{});
    CHECK(tf::reduce_sum(x, {}, true).shape() == tf::Shape{1, 1, 1});
    CHECK(tf::reduce_sum(x, tf::Axes(), true).shape() == tf::Shape{1, 1, 1});
    CHECK(tf::reduce_sum(x, 1).shape() == tf::Shape{2, 4});
    CHECK(tf::reduce_sum(x, 1, true).shape() == tf::Shape{2, 1, 4});
    CHECK(tf::reduce_mean(x, {-1, 0}, true).shape() == tf::Shape{1, 3, 1});
    CHECK(tf::reduce_max(x, {-1, 0}).shape() == tf::Shape{3});
    check_values(tf::reduce_sum(x, -2), values_of(tf::reduce_sum(x, 1)), 0);
    // An explicitly empty list reduces nothing: the values come back unchanged.
    const tf::Axes none(std::vector<int64_t>{});
    for (ReduceFn fn :
         {tf::reduce_sum, tf::reduce_mean, tf::reduce_max, tf::reduce_min, tf::reduce_prod}) {
        const tf::Tensor y = fn(x, none, false);
        CHECK(y.shape() == x.shape());
        check_values(y, values_of(x), 0);
    }
    const tf::Tensor b = tf::constant({true, false});
    CHECK(tf::reduce_any(b, none).to_vector<bool>() == std::vector<bool>{true, false});
    // A scalar reduces over all (that is, no) axes to itself.
    CHECK(tf::reduce_sum(tf::constant(2.5)).item<double>() == 2.5);
    // Size-1 axes: the values are unchanged, and the gradient flows.
    const tf::Tensor col = random_f64({3, 1});
    tf::GradientTape tape;
    tape.watch(col);
    const tf::Tensor s = tf::reduce_sum(col, 1);
    CHECK(s.shape() == tf::Shape{3});
    check_values(s, values_of(col), 0);
    check_values(tape.gradient(s, col), {1, 1, 1}, 0);
}

// ---- Errors ----

TEST_CASE("reduction argument errors", "[reduce][errors]") {
    const tf::Tensor x = tf::zeros({2, 3});
    CHECK_THROWS_AS(tf::reduce_sum(x, 2), tf::errors::InvalidArgumentError);
    CHECK_THROWS_WITH(tf::reduce_sum(x, 2),
                      "Invalid reduction dimension (2 for input with 2 dimension(s) [Op:Sum]");
    CHECK_THROWS_WITH(tf::reduce_max(x, -3),
                      "Invalid reduction dimension (-3 for input with 2 dimension(s) [Op:Max]");
    CHECK_THROWS_WITH(
        tf::reduce_mean(x, {0, 0}),
        "Invalid reduction arguments: Axes contains duplicate dimension: 0 [Op:Mean]");
    CHECK_THROWS_WITH(
        tf::reduce_prod(x, {1, -1}),
        "Invalid reduction arguments: Axes contains duplicate dimension: 1 [Op:Prod]");
    CHECK_THROWS_AS(tf::reduce_min(tf::constant(1.0), 0), tf::errors::InvalidArgumentError);
    CHECK_THROWS_WITH(tf::argmax(x, 2),
                      "Expected dimension in the range [-2, 2), but got 2 [Op:ArgMax]");
    CHECK_THROWS_WITH(tf::argmin(tf::zeros({0, 3}), 0),
                      "Reduction axis 0 is empty in shape [0,3] [Op:ArgMin]");
    CHECK_THROWS_AS(tf::argmax(x, 0, tf::float32), tf::errors::InvalidArgumentError);
    CHECK_THROWS_WITH(tf::cumsum(x, -3),
                      "ScanOp: Expected scan axis in the range [-2, 2), but got -3 [Op:Cumsum]");
    CHECK_THROWS_AS(tf::reduce_variance(tf::constant({1, 2})), tf::errors::InvalidArgumentError);
    // Dtypes the op does not take have no kernel.
    CHECK_THROWS_AS(tf::reduce_any(x), tf::errors::UnimplementedError);
    CHECK_THROWS_AS(tf::reduce_sum(tf::constant({true, false})), tf::errors::UnimplementedError);
    CHECK_THROWS_AS(tf::reduce_sum(tf::Tensor()), tf::errors::InvalidArgumentError);
}
