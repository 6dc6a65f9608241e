// Tests of the element-wise family: golden cases from ops.json, finite-difference gradient checks,
// forward values per dtype, fast paths against the general broadcasting path, TensorFlow's edge
// conventions and the errors. Run: build/tests/test_ops "[elementwise]".
// To add an op: add it to the golden table (if ops.json has cases), to a gradcheck list if it is
// differentiable, and give its TF edge cases their own TEST_CASE.
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

#include "support/golden.hpp"
#include "support/gradcheck.hpp"

namespace tf = tapeflow;
using tf::testing::check_gradients;
using tf::testing::random_f64;

namespace {

using Unary = tf::Tensor (*)(const tf::Tensor&);
using Binary = tf::Tensor (*)(const tf::Tensor&, const tf::Tensor&);

std::vector<double> values(const tf::Tensor& t) {
    return t.to_vector<double>();
}

tf::Tensor f64(const std::vector<double>& v, const tf::Shape& s) {
    return tf::constant(v, s);
}

// The host-side broadcast of t to `shape` (NumPy rules), independent of the library's kernels.
std::vector<double> host_broadcast(const tf::Tensor& t, const tf::Shape& shape) {
    const std::vector<double> v = values(t);
    const auto& od = shape.dims();
    const auto& id = t.shape().dims();
    const std::size_t rank = od.size();
    std::vector<double> out(static_cast<std::size_t>(shape.num_elements()));
    std::vector<int64_t> idx(rank, 0);
    for (std::size_t i = 0; i < out.size(); ++i) {
        int64_t flat = 0;
        for (std::size_t d = rank - id.size(); d < rank; ++d) {
            const int64_t dim = id[d - (rank - id.size())];
            flat = flat * dim + (dim == 1 ? 0 : idx[d]);
        }
        out[i] = v[static_cast<std::size_t>(flat)];
        for (std::size_t d = rank; d-- > 0;) {
            if (++idx[d] < od[d]) break;
            idx[d] = 0;
        }
    }
    return out;
}

tf::Tensor grad_of(const std::function<tf::Tensor(const tf::Tensor&)>& f,
                   const tf::Tensor& x,
                   const tf::Tensor& upstream = {}) {
    tf::GradientTape tape;
    tape.watch(x);
    const tf::Tensor y = f(x);
    tf::GradientOptions options;
    if (upstream.defined()) options.output_gradients = {upstream};
    return tape.gradient(y, x, options).dense();
}

std::string what_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "(no exception)";
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Golden cases (ops.json)
// ---------------------------------------------------------------------------------------------

TEST_CASE("golden cases of the element-wise ops", "[elementwise][golden]") {
    using Fn = std::function<tf::Tensor(const std::vector<tf::Tensor>&)>;
    auto bin = [](Binary f) -> Fn {
        return [f](const std::vector<tf::Tensor>& in) {
            return f(in[0], in[1]);
        };
    };
    auto un = [](Unary f) -> Fn {
        return [f](const std::vector<tf::Tensor>& in) {
            return f(in[0]);
        };
    };
    const std::vector<std::pair<std::string, Fn>> table = {
        {"tf.math.add", bin(tf::add)},
        {"tf.math.subtract", bin(tf::subtract)},
        {"tf.math.multiply", bin(tf::multiply)},
        {"tf.math.divide", bin(tf::divide)},
        {"tf.math.divide_no_nan", bin(tf::divide_no_nan)},
        {"tf.math.floordiv", bin(tf::floordiv)},
        {"tf.math.floormod", bin(tf::floormod)},
        {"tf.math.maximum", bin(tf::maximum)},
        {"tf.math.minimum", bin(tf::minimum)},
        {"tf.math.pow", bin(tf::pow)},
        {"tf.math.add_n",
         [](const std::vector<tf::Tensor>& in) {
             return tf::add_n(in);
         }},
        {"tf.math.abs", un(tf::abs)},
        {"tf.math.cos", un(tf::cos)},
        {"tf.math.erf", un(tf::erf)},
        {"tf.math.exp", un(tf::exp)},
        {"tf.math.expm1", un(tf::expm1)},
        {"tf.math.log", un(tf::log)},
        {"tf.math.negative", un(tf::negative)},
        {"tf.math.sigmoid", un(tf::sigmoid)},
        {"tf.math.sqrt", un(tf::sqrt)},
        {"tf.math.square", un(tf::square)},
        {"tf.math.tanh", un(tf::tanh)},
        {"tf.math.ceil", un(tf::ceil)},
        {"tf.where",
         [](const std::vector<tf::Tensor>& in) {
             return tf::where(in[0], in[1], in[2]);
         }},
    };
    int cases = 0;
    for (const auto& [op, fn] : table) {
        for (const auto& c : tf::testing::golden_cases(op)) {
            SECTION(c.id) {
                tf::testing::run_golden_case(
                    c, [fn = fn](const std::vector<tf::Tensor>& in, const nlohmann::json&) {
                        return std::vector<tf::Tensor>{fn(in)};
                    });
            }
            ++cases;
        }
    }
    CHECK(cases == 35);  // every case of ops.json whose op is in this family
}

// ---------------------------------------------------------------------------------------------
// Gradients against finite differences (float64), with broadcasting
// ---------------------------------------------------------------------------------------------

TEST_CASE("gradients of the binary ops match finite differences, with broadcasting",
          "[elementwise][gradcheck]") {
    struct Layout {
        tf::Shape x, y;
    };
    const std::vector<Layout> layouts = {
        {{2, 3}, {2, 3}},
        {{2, 3}, {3}},
        {{2, 1}, {1, 3}},
        {{}, {2, 3}},
        {{2, 3}, {}},
        {{2, 3}, {2, 1}},
    };
    struct Case {
        const char* name;
        Binary f;
        double xlo, xhi, ylo, yhi;
    };
    const std::vector<Case> ops = {
        {"add", tf::add, -1, 1, -1, 1},
        {"subtract", tf::subtract, -1, 1, -1, 1},
        {"multiply", tf::multiply, -1, 1, -1, 1},
        {"divide", tf::divide, -1, 1, 0.5, 2},
        {"divide_no_nan", tf::divide_no_nan, -1, 1, 0.5, 2},
        {"pow", tf::pow, 0.5, 2, -1.5, 1.5},
        {"maximum", tf::maximum, -1, 1, -1, 1},
        {"minimum", tf::minimum, -1, 1, -1, 1},
        {"squared_difference", tf::squared_difference, -1, 1, -1, 1},
        {"floormod", tf::floormod, 0.1, 0.9, 2.0, 3.0},  // x/y stays in (0, 1): no jumps
    };
    for (const Case& op : ops) {
        for (std::size_t l = 0; l < layouts.size(); ++l) {
            SECTION(std::string(op.name) + " layout " + std::to_string(l)) {
                const tf::Tensor x = random_f64(layouts[l].x, op.xlo, op.xhi, 10 + l);
                const tf::Tensor y = random_f64(layouts[l].y, op.ylo, op.yhi, 20 + l);
                check_gradients(
                    [&](const std::vector<tf::Tensor>& in) { return op.f(in[0], in[1]); }, {x, y});
            }
        }
    }
}

TEST_CASE("gradients of the unary ops match finite differences", "[elementwise][gradcheck]") {
    struct Case {
        const char* name;
        Unary f;
        double lo, hi;
    };
    const std::vector<Case> ops = {
        {"negative", tf::negative, -1, 1},
        {"abs", tf::abs, 0.1, 1},
        {"abs-negative", tf::abs, -1, -0.1},
        {"sign", tf::sign, 0.1, 1},
        {"exp", tf::exp, -1, 1},
        {"expm1", tf::expm1, -1, 1},
        {"log", tf::log, 0.5, 2},
        {"log1p", tf::log1p, -0.5, 1},
        {"sqrt", tf::sqrt, 0.5, 2},
        {"rsqrt", tf::rsqrt, 0.5, 2},
        {"square", tf::square, -1, 1},
        {"reciprocal", tf::reciprocal, 0.5, 2},
        {"sin", tf::sin, -2, 2},
        {"cos", tf::cos, -2, 2},
        {"tanh", tf::tanh, -2, 2},
        {"sigmoid", tf::sigmoid, -3, 3},
        {"erf", tf::erf, -2, 2},
        {"softplus", tf::softplus, -3, 3},
    };
    for (const Case& op : ops) {
        SECTION(op.name) {
            const tf::Tensor x = random_f64({2, 3}, op.lo, op.hi, 7);
            check_gradients([&](const std::vector<tf::Tensor>& in) { return op.f(in[0]); }, {x});
        }
    }
}

TEST_CASE("gradients of add_n and where match finite differences", "[elementwise][gradcheck]") {
    SECTION("add_n") {
        const tf::Tensor a = random_f64({2, 3}, -1, 1, 1);
        const tf::Tensor b = random_f64({2, 3}, -1, 1, 2);
        const tf::Tensor c = random_f64({2, 3}, -1, 1, 3);
        check_gradients([](const std::vector<tf::Tensor>& in) { return tf::add_n(in); }, {a, b, c});
        check_gradients(
            [](const std::vector<tf::Tensor>& in) {
                return tf::add_n({in[0], in[0], in[1]});
            },
            {a, b});
    }
    SECTION("where, three-way broadcasting") {
        const tf::Tensor cond = tf::constant(std::vector<bool>{true, false, true}, tf::Shape{3});
        const tf::Tensor x = random_f64({2, 1}, -1, 1, 4);
        const tf::Tensor y = random_f64({2, 3}, -1, 1, 5);
        check_gradients(
            [&](const std::vector<tf::Tensor>& in) { return tf::where(cond, in[0], in[1]); },
            {x, y});
        check_gradients(
            [&](const std::vector<tf::Tensor>& in) { return tf::where(cond, in[1], in[0]); },
            {x, y});
    }
    SECTION("a composite through the operators") {
        const tf::Tensor x = random_f64({3}, 0.5, 1.5, 6);
        const tf::Tensor y = random_f64({2, 3}, 0.5, 1.5, 7);
        check_gradients(
            [](const std::vector<tf::Tensor>& in) {
                return tf::sigmoid(in[0] * in[1] - 1.0) / (2.0 + tf::tanh(in[1])) +
                       tf::log(in[0]) * 3.0;
            },
            {x, y});
    }
}

TEST_CASE("second derivatives through the gradient formulas", "[elementwise][gradcheck]") {
    // d2/dx2 of each function at x, by nested tapes, against finite differences of the first
    // derivative computed by the tape.
    struct Case {
        const char* name;
        Unary f;
        double lo, hi;
    };
    const std::vector<Case> ops = {
        {"tanh", tf::tanh, -1, 1},
        {"sigmoid", tf::sigmoid, -2, 2},
        {"log", tf::log, 0.5, 2},
        {"sqrt", tf::sqrt, 0.5, 2},
        {"rsqrt", tf::rsqrt, 0.5, 2},
        {"erf", tf::erf, -1, 1},
        {"softplus", tf::softplus, -2, 2},
        {"reciprocal", tf::reciprocal, 0.5, 2},
        {"sin", tf::sin, -2, 2},
        {"expm1", tf::expm1, -1, 1},
        {"log1p", tf::log1p, 0, 1},
    };
    for (const Case& op : ops) {
        SECTION(op.name) {
            const tf::Tensor x = random_f64({4}, op.lo, op.hi, 9);
            check_gradients(
                [&](const std::vector<tf::Tensor>& in) {
                    tf::GradientTape inner;
                    inner.watch(in[0]);
                    const tf::Tensor y = op.f(in[0]);
                    return inner.gradient(y, in[0]).dense();
                },
                {x},
                1e-5,
                1e-7);
        }
    }
    SECTION("pow in both arguments") {
        const tf::Tensor x = random_f64({3}, 0.5, 2, 11);
        const tf::Tensor y = random_f64({3}, -1, 2, 12);
        check_gradients(
            [](const std::vector<tf::Tensor>& in) {
                tf::GradientTape inner;
                inner.watch(in);
                const tf::Tensor z = tf::pow(in[0], in[1]);
                const auto g = inner.gradient(z, in);
                return g[0].dense() + g[1].dense();
            },
            {x, y},
            1e-5,
            1e-7);
    }
}

// ---------------------------------------------------------------------------------------------
// Forward values per dtype
// ---------------------------------------------------------------------------------------------

TEST_CASE("binary ops on integers", "[elementwise]") {
    const auto a = tf::constant({7, -7, 7, -7, 0});
    const auto b = tf::constant({2, 2, -2, -2, 3});
    CHECK(tf::add(a, b).to_vector<int>() == std::vector<int>{9, -5, 5, -9, 3});
    CHECK(tf::subtract(a, b).to_vector<int>() == std::vector<int>{5, -9, 9, -5, -3});
    CHECK(tf::multiply(a, b).to_vector<int>() == std::vector<int>{14, -14, -14, 14, 0});
    CHECK(tf::divide(a, b).to_vector<double>() ==
          std::vector<double>{3.5, -3.5, -3.5, 3.5, 0});  // truediv: float64
    CHECK(tf::divide(a, b).dtype() == tf::float64);
    CHECK(tf::floordiv(a, b).to_vector<int>() == std::vector<int>{3, -4, -4, 3, 0});
    CHECK(tf::floormod(a, b).to_vector<int>() == std::vector<int>{1, 1, -1, -1, 0});
    CHECK(tf::maximum(a, b).to_vector<int>() == std::vector<int>{7, 2, 7, -2, 3});
    CHECK(tf::minimum(a, b).to_vector<int>() == std::vector<int>{2, -7, -2, -7, 0});
    CHECK(tf::squared_difference(a, b).to_vector<int>() == std::vector<int>{25, 81, 81, 25, 9});
    CHECK(tf::pow(a, tf::constant({2, 3, 0, 1, 5})).to_vector<int>() ==
          std::vector<int>{49, -343, 1, -7, 0});
    CHECK(tf::add(a, b).dtype() == tf::int32);

    const auto a64 = tf::constant(std::vector<int64_t>{int64_t{1} << 40, -5}, tf::Shape{2});
    const auto b64 = tf::constant(std::vector<int64_t>{3, 4}, tf::Shape{2});
    CHECK(tf::multiply(a64, b64).to_vector<int64_t>() ==
          std::vector<int64_t>{int64_t{3} << 40, -20});
    CHECK(tf::floordiv(a64, b64).to_vector<int64_t>() ==
          std::vector<int64_t>{(int64_t{1} << 40) / 3, -2});
    CHECK(tf::pow(b64, tf::constant(std::vector<int64_t>{30, 2}, tf::Shape{2}))
              .to_vector<int64_t>() == std::vector<int64_t>{205891132094649, 16});
    CHECK(tf::add(a64, b64).dtype() == tf::int64);

    const auto u = tf::constant(std::vector<uint8_t>{250, 3}, tf::Shape{2});
    const auto v = tf::constant(std::vector<uint8_t>{10, 2}, tf::Shape{2});
    CHECK(tf::add(u, v).to_vector<int>() == std::vector<int>{4, 5});  // wraps like uint8 in TF
    CHECK(tf::floordiv(u, v).to_vector<int>() == std::vector<int>{25, 1});
    CHECK(tf::add(u, v).dtype() == tf::uint8);
}

TEST_CASE("integer arithmetic wraps around instead of overflowing", "[elementwise]") {
    const int32_t mx = std::numeric_limits<int32_t>::max();
    const int32_t mn = std::numeric_limits<int32_t>::min();
    CHECK(tf::add(tf::constant(mx), tf::constant(1)).item<int32_t>() == mn);
    CHECK(tf::negative(tf::constant(mn)).item<int32_t>() == mn);
    CHECK(tf::abs(tf::constant(mn)).item<int32_t>() == mn);
    CHECK(tf::divide(tf::constant(mn), tf::constant(-1)).item<double>() == 2147483648.0);
    CHECK(tf::floordiv(tf::constant(mn), tf::constant(-1)).item<int32_t>() == mn);
    CHECK(tf::floormod(tf::constant(mn), tf::constant(-1)).item<int32_t>() == 0);
}

TEST_CASE("unary ops on integers", "[elementwise]") {
    const auto a = tf::constant({-3, 0, 5});
    CHECK(tf::negative(a).to_vector<int>() == std::vector<int>{3, 0, -5});
    CHECK(tf::abs(a).to_vector<int>() == std::vector<int>{3, 0, 5});
    CHECK(tf::sign(a).to_vector<int>() == std::vector<int>{-1, 0, 1});
    CHECK(tf::square(a).to_vector<int>() == std::vector<int>{9, 0, 25});
    CHECK(tf::round(a).to_vector<int>() == std::vector<int>{-3, 0, 5});
    const auto b = tf::constant(std::vector<int64_t>{-4, 2}, tf::Shape{2});
    CHECK(tf::abs(b).to_vector<int64_t>() == std::vector<int64_t>{4, 2});
    CHECK(tf::abs(b).dtype() == tf::int64);
    // TF has no integer kernel for the transcendental functions.
    CHECK_THROWS_AS(tf::exp(a), tf::errors::UnimplementedError);
    CHECK_THROWS_WITH(tf::sqrt(a), Catch::Contains("int32") && Catch::Contains("[Op:Sqrt]"));
}

TEST_CASE("unary math on float32 and float64", "[elementwise]") {
    const std::vector<double> xs = {-2.5, -1.0, -0.3, 0.0, 0.4, 1.0, 3.7};
    struct Case {
        Unary f;
        double (*ref)(double);
        bool positive_only;
    };
    const std::vector<std::pair<std::string, Case>> cases = {
        {"exp", {tf::exp, [](double v) { return std::exp(v); }, false}},
        {"expm1", {tf::expm1, [](double v) { return std::expm1(v); }, false}},
        {"log", {tf::log, [](double v) { return std::log(v); }, true}},
        {"log1p", {tf::log1p, [](double v) { return std::log1p(v); }, true}},
        {"sqrt", {tf::sqrt, [](double v) { return std::sqrt(v); }, true}},
        {"rsqrt", {tf::rsqrt, [](double v) { return 1 / std::sqrt(v); }, true}},
        {"sin", {tf::sin, [](double v) { return std::sin(v); }, false}},
        {"cos", {tf::cos, [](double v) { return std::cos(v); }, false}},
        {"tanh", {tf::tanh, [](double v) { return std::tanh(v); }, false}},
        {"sigmoid", {tf::sigmoid, [](double v) { return 1 / (1 + std::exp(-v)); }, false}},
        {"erf", {tf::erf, [](double v) { return std::erf(v); }, false}},
        {"softplus", {tf::softplus, [](double v) { return std::log1p(std::exp(v)); }, false}},
        {"floor", {tf::floor, [](double v) { return std::floor(v); }, false}},
        {"ceil", {tf::ceil, [](double v) { return std::ceil(v); }, false}},
        {"abs", {tf::abs, [](double v) { return std::abs(v); }, false}},
        {"negative", {tf::negative, [](double v) { return -v; }, false}},
        {"square", {tf::square, [](double v) { return v * v; }, false}},
        {"reciprocal", {tf::reciprocal, [](double v) { return 1 / v; }, true}},
    };
    for (const auto& [name, c] : cases) {
        std::vector<double> in;
        for (double v : xs) {
            if (!c.positive_only || v > 0) in.push_back(v);
        }
        const tf::Shape shape{static_cast<int64_t>(in.size())};
        SECTION(name) {
            const auto r64 = values(c.f(f64(in, shape)));
            const auto r32 = values(c.f(tf::constant(in, shape, tf::float32)));
            CHECK(c.f(tf::constant(in, shape, tf::float32)).dtype() == tf::float32);
            for (std::size_t i = 0; i < in.size(); ++i) {
                INFO(name << "(" << in[i] << ")");
                CHECK(r64[i] == Approx(c.ref(in[i])).epsilon(1e-14).margin(1e-300));
                // float32 against the exact function of the float32-rounded input
                const double want32 = c.ref(static_cast<double>(static_cast<float>(in[i])));
                CHECK(r32[i] == Approx(want32).epsilon(3e-7).margin(1e-7));
            }
        }
    }
}

TEST_CASE("float16 and bfloat16 compute through float", "[elementwise]") {
    for (tf::DType dt : {tf::float16, tf::bfloat16}) {
        const auto x = tf::constant(std::vector<double>{1.5, -2.0, 0.25}, tf::Shape{3}, dt);
        const auto y = tf::constant(std::vector<double>{0.5, 4.0, 2.0}, tf::Shape{3}, dt);
        CHECK(tf::add(x, y).dtype() == dt);
        CHECK(values(tf::add(x, y)) == std::vector<double>{2.0, 2.0, 2.25});
        CHECK(values(tf::multiply(x, y)) == std::vector<double>{0.75, -8.0, 0.5});
        CHECK(values(tf::maximum(x, y)) == std::vector<double>{1.5, 4.0, 2.0});
        CHECK(values(tf::abs(x)) == std::vector<double>{1.5, 2.0, 0.25});
        CHECK(values(tf::exp(tf::constant(std::vector<double>{0.0}, tf::Shape{1}, dt))) ==
              std::vector<double>{1.0});
        CHECK(values(tf::sqrt(y))[1] == 2.0);
        CHECK(tf::less(x, y).to_vector<bool>() == std::vector<bool>{false, true, true});
        CHECK(values(tf::where(tf::less(x, y), x, y)) == std::vector<double>{0.5, -2.0, 0.25});
        CHECK(values(tf::add_n({x, y, x})) == std::vector<double>{3.5, 0.0, 2.5});
        // The gradient flows in the 16-bit dtype too.
        const tf::Tensor g = grad_of([](const tf::Tensor& t) { return tf::square(t); }, x);
        CHECK(g.dtype() == dt);
        CHECK(values(g) == std::vector<double>{3.0, -4.0, 0.5});
    }
}

TEST_CASE("comparisons give bool tensors and broadcast", "[elementwise]") {
    const auto x = tf::constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
    const auto y = tf::constant({2.f, 2.f, 7.f});
    CHECK(tf::equal(x, y).dtype() == tf::bool_);
    CHECK(tf::equal(x, y).shape() == tf::Shape{2, 3});
    CHECK(tf::equal(x, y).to_vector<bool>() ==
          std::vector<bool>{false, true, false, false, false, false});
    CHECK(tf::not_equal(x, y).to_vector<bool>() ==
          std::vector<bool>{true, false, true, true, true, true});
    CHECK(tf::less(x, y).to_vector<bool>() ==
          std::vector<bool>{true, false, true, false, false, true});
    CHECK(tf::less_equal(x, y).to_vector<bool>() ==
          std::vector<bool>{true, true, true, false, false, true});
    CHECK(tf::greater(x, y).to_vector<bool>() ==
          std::vector<bool>{false, false, false, true, true, false});
    CHECK(tf::greater_equal(x, y).to_vector<bool>() ==
          std::vector<bool>{false, true, false, true, true, false});
    const auto i = tf::constant({1, 5});
    CHECK(tf::less(i, tf::constant(3)).to_vector<bool>() == std::vector<bool>{true, false});
    const auto nan = tf::constant({std::nan(""), 1.0});
    CHECK(tf::equal(nan, nan).to_vector<bool>() == std::vector<bool>{false, true});
    CHECK(tf::not_equal(nan, nan).to_vector<bool>() == std::vector<bool>{true, false});
    const auto b = tf::constant(std::vector<bool>{true, false}, tf::Shape{2});
    CHECK(tf::equal(b, tf::constant(true)).to_vector<bool>() == std::vector<bool>{true, false});
}

TEST_CASE("logical ops and where", "[elementwise]") {
    const auto a = tf::constant(std::vector<bool>{true, true, false, false}, tf::Shape{4});
    const auto b = tf::constant(std::vector<bool>{true, false, true, false}, tf::Shape{4});
    CHECK(tf::logical_and(a, b).to_vector<bool>() == std::vector<bool>{true, false, false, false});
    CHECK(tf::logical_or(a, b).to_vector<bool>() == std::vector<bool>{true, true, true, false});
    CHECK(tf::logical_not(a).to_vector<bool>() == std::vector<bool>{false, false, true, true});
    CHECK(tf::logical_and(tf::reshape(a, {2, 2}), tf::constant(true)).to_vector<bool>() ==
          std::vector<bool>{true, true, false, false});

    const auto cond = tf::constant(std::vector<bool>{true, false}, tf::Shape{2, 1});
    const auto x = tf::constant({1, 2, 3});
    const auto y = tf::constant(-1);
    const auto w = tf::where(cond, x, y);
    CHECK(w.shape() == tf::Shape{2, 3});
    CHECK(w.dtype() == tf::int32);
    CHECK(w.to_vector<int>() == std::vector<int>{1, 2, 3, -1, -1, -1});
    CHECK(tf::where(b, a, tf::constant(true)).to_vector<bool>() ==
          std::vector<bool>{true, true, false, true});
    const auto c2 = tf::constant(std::vector<bool>{false, true}, tf::Shape{2});
    const auto xd = tf::constant(std::vector<double>{1.5, 2.5}, tf::Shape{2});
    CHECK(values(tf::where(c2, xd, tf::constant(0.0))) == std::vector<double>{0.0, 2.5});
    const auto xl = tf::constant(std::vector<int64_t>{7, 8}, tf::Shape{2});
    CHECK(tf::where(c2, xl, tf::constant(int64_t{0})).to_vector<int64_t>() ==
          std::vector<int64_t>{0, 8});
}

TEST_CASE("the operators and scalar_like", "[elementwise]") {
    const auto x = tf::constant({1.f, 2.f, 4.f});
    CHECK(values(x + 1) == std::vector<double>{2, 3, 5});
    CHECK(values(1.5 + x) == std::vector<double>{2.5, 3.5, 5.5});
    CHECK(values(x - 1) == std::vector<double>{0, 1, 3});
    CHECK(values(10 - x) == std::vector<double>{9, 8, 6});
    CHECK(values(x * 2) == std::vector<double>{2, 4, 8});
    CHECK(values(3 * x) == std::vector<double>{3, 6, 12});
    CHECK(values(x / 2) == std::vector<double>{0.5, 1, 2});
    CHECK(values(4 / x) == std::vector<double>{4, 2, 1});
    CHECK(values(-x) == std::vector<double>{-1, -2, -4});
    CHECK(values(x + x * x - x / x) == std::vector<double>{1, 5, 19});
    CHECK((x + 1).dtype() == tf::float32);
    const auto i = tf::constant({7, -7});
    CHECK((i / 2).to_vector<double>() == std::vector<double>{3.5, -3.5});  // truediv: float64
    CHECK((i + 2).to_vector<int>() == std::vector<int>{9, -5});  // the scalar takes the dtype
    // A floating-point number with an integer tensor raises, as in TensorFlow
    // (tests/ops/test_dtype_rules.cpp has the rest of the rules).
    CHECK_THROWS_WITH(i + 2.9, "Cannot convert 2.9 to EagerTensor of dtype int32");
    const auto s = tf::scalar_like(tf::constant(std::vector<int64_t>{1}, tf::Shape{1}), 3.9);
    CHECK(s.shape() == tf::Shape{});
    CHECK(s.dtype() == tf::int64);
    CHECK(s.item<int64_t>() == 3);
    CHECK(tf::scalar_like(tf::constant(true), 0.0).item<bool>() == false);
    CHECK(tf::scalar_like(tf::constant(1.0f, tf::float16), 0.5).item<float>() == 0.5f);
}

TEST_CASE("empty tensors and scalars", "[elementwise]") {
    const auto e = tf::zeros({0, 3});
    CHECK(tf::add(e, tf::constant({1.f, 2.f, 3.f})).shape() == tf::Shape{0, 3});
    CHECK(tf::exp(e).shape() == tf::Shape{0, 3});
    CHECK(tf::where(tf::constant(true), e, tf::constant(1.f)).shape() == tf::Shape{0, 3});
    CHECK(tf::add_n({e, e}).shape() == tf::Shape{0, 3});
    CHECK(tf::divide(tf::zeros({0}, tf::int32), tf::zeros({0}, tf::int32)).shape() == tf::Shape{0});
    CHECK(tf::divide(tf::zeros({0}, tf::int32), tf::zeros({0}, tf::int32)).dtype() == tf::float64);
    CHECK(tf::add(tf::constant(1.f), tf::constant(2.f)).shape() == tf::Shape{});
    CHECK(tf::add(tf::constant(1.f), tf::constant(2.f)).item<float>() == 3.f);
    CHECK(tf::multiply(tf::ones({1, 1}), tf::constant(2.f)).shape() == tf::Shape{1, 1});
    CHECK(tf::add(tf::ones({1}), tf::ones({1, 1, 1})).shape() == tf::Shape{1, 1, 1});
}

TEST_CASE("add_n sums left to right", "[elementwise]") {
    const auto a = tf::constant({1, 2});
    CHECK(tf::add_n({a}).to_vector<int>() == std::vector<int>{1, 2});
    CHECK(tf::add_n({a, a, a, a, a}).to_vector<int>() == std::vector<int>{5, 10});
    const auto big = random_f64({70001}, -1, 1, 3);
    const auto big2 = random_f64({70001}, -1, 1, 4);
    const auto sum = values(tf::add_n({big, big2, big, big2}));
    const auto va = values(big);
    const auto vb = values(big2);
    for (std::size_t i = 0; i < va.size(); ++i)
        REQUIRE(sum[i] == ((va[i] + vb[i]) + va[i]) + vb[i]);
}

// ---------------------------------------------------------------------------------------------
// Fast paths against the general broadcasting path and a host reference
// ---------------------------------------------------------------------------------------------

TEST_CASE("every broadcast layout agrees with an explicit broadcast", "[elementwise]") {
    // Sizes past the parallel grain and odd lengths, so chunk edges fall inside runs.
    struct Layout {
        const char* name;
        tf::Shape x, y;
    };
    const std::vector<Layout> layouts = {
        {"same shape", {301, 257}, {301, 257}},
        {"scalar right", {301, 257}, {}},
        {"scalar left", {}, {301, 257}},
        {"row [R,C] op [C]", {301, 257}, {257}},
        {"row [R,C] op [1,C]", {301, 257}, {1, 257}},
        {"row [C] op [R,C]", {257}, {301, 257}},
        {"column [R,C] op [R,1]", {301, 257}, {301, 1}},
        {"column [R,1] op [R,C]", {301, 1}, {301, 257}},
        {"outer [R,1] op [1,C]", {301, 1}, {1, 257}},
        {"3-d [A,1,C] op [B,1]", {7, 1, 129}, {33, 1}},
        {"4-d mixed", {3, 1, 5, 1}, {1, 4, 5, 7}},
        {"short rows [N,3] op [N,1]", {20001, 3}, {20001, 1}},
    };
    const std::vector<std::pair<const char*, Binary>> ops = {
        {"add", tf::add},
        {"subtract", tf::subtract},
        {"multiply", tf::multiply},
        {"divide", tf::divide},
        {"maximum", tf::maximum},
        {"minimum", tf::minimum},
        {"pow", tf::pow},
        {"floormod", tf::floormod},
        {"squared_difference", tf::squared_difference},
        {"greater", tf::greater},
        {"equal", tf::equal},
    };
    for (const Layout& l : layouts) {
        SECTION(l.name) {
            const tf::Shape out = tf::broadcast_shapes(l.x, l.y);
            const tf::Tensor x = random_f64(l.x, 0.5, 2, 31);
            const tf::Tensor y = random_f64(l.y, 0.5, 2, 32);
            const tf::Tensor xb = f64(host_broadcast(x, out), out);
            const tf::Tensor yb = f64(host_broadcast(y, out), out);
            for (const auto& [name, f] : ops) {
                INFO(name);
                const tf::Tensor fast = f(x, y);
                REQUIRE(fast.shape() == out);
                // Bitwise equal: the same functor on the same values, whatever the loop.
                CHECK(values(fast) == values(f(xb, yb)));
                CHECK(values(f(x.cast(tf::float32), y.cast(tf::float32))) ==
                      values(f(xb.cast(tf::float32), yb.cast(tf::float32))));
            }
            // and against a host reference
            const auto got = values(tf::add(x, y));
            const auto hx = host_broadcast(x, out);
            const auto hy = host_broadcast(y, out);
            for (std::size_t i = 0; i < got.size(); ++i)
                REQUIRE(got[i] == hx[i] + hy[i]);
            const tf::Tensor c = tf::greater(x, tf::constant(1.2));
            CHECK(values(tf::where(c, x, y)) ==
                  values(tf::where(tf::greater(xb, tf::constant(1.2)), xb, yb)));
        }
    }
    SECTION("integers") {
        const tf::Tensor x = tf::cast(random_f64({301, 257}, -100, 100, 41), tf::int32);
        const tf::Tensor y = tf::cast(random_f64({301, 1}, 1, 9, 42), tf::int32);
        const tf::Shape out{301, 257};
        const tf::Tensor yb = tf::cast(f64(host_broadcast(y, out), out), tf::int32);
        for (Binary f :
             {tf::add, tf::multiply, tf::floordiv, tf::floormod, tf::divide, tf::maximum}) {
            CHECK(f(x, y).to_vector<int>() == f(x, yb).to_vector<int>());
        }
    }
}

TEST_CASE("SIMD unary results do not depend on position or chunking", "[elementwise]") {
    // A long tensor runs in parallel chunks with SIMD bodies and padded tails; each element must
    // come out exactly as when computed alone.
    const tf::Tensor x = random_f64({100003}, -3, 3, 51);
    const auto xv = values(x);
    for (Unary f : {tf::exp, tf::tanh, tf::sigmoid, tf::erf, tf::softplus, tf::sin, tf::expm1}) {
        for (tf::DType dt : {tf::float32, tf::float64}) {
            const auto all = values(f(x.cast(dt)));
            for (std::size_t i : {std::size_t{0},
                                  std::size_t{5},
                                  std::size_t{32768},
                                  std::size_t{65541},
                                  std::size_t{100002}}) {
                const tf::Tensor one = tf::constant(std::vector<double>{xv[i]}, tf::Shape{1}, dt);
                CHECK(values(f(one))[0] == all[i]);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// TensorFlow's edge conventions
// ---------------------------------------------------------------------------------------------

TEST_CASE("maximum and minimum: ties send the gradient to the first argument", "[elementwise]") {
    const auto x = f64({1, 2, 3}, {3});
    const auto y = f64({1, 5, 0}, {3});
    tf::GradientTape tape(true);
    tape.watch(std::vector<tf::Tensor>{x, y});
    const auto mx = tf::maximum(x, y);
    const auto mn = tf::minimum(x, y);
    const auto gmax = tape.gradient(mx, std::vector<tf::Tensor>{x, y});
    const auto gmin = tape.gradient(mn, std::vector<tf::Tensor>{x, y});
    CHECK(values(gmax[0]) == std::vector<double>{1, 0, 1});
    CHECK(values(gmax[1]) == std::vector<double>{0, 1, 0});
    CHECK(values(gmin[0]) == std::vector<double>{1, 1, 0});
    CHECK(values(gmin[1]) == std::vector<double>{0, 0, 1});
    // NaN propagates from either side.
    const auto n = f64({std::nan(""), 1}, {2});
    const auto one = f64({1, std::nan("")}, {2});
    for (double v : values(tf::maximum(n, one)))
        CHECK(std::isnan(v));
    for (double v : values(tf::minimum(one, n)))
        CHECK(std::isnan(v));
}

TEST_CASE("sqrt at 0: gradient inf, or 0 without upstream", "[elementwise]") {
    const auto x = f64({0, 0, 4}, {3});
    const auto g = grad_of([](const tf::Tensor& t) { return tf::sqrt(t); }, x, f64({1, 0, 1}, {3}));
    const auto v = values(g);
    CHECK(std::isinf(v[0]));
    CHECK(v[0] > 0);
    CHECK(v[1] == 0);
    CHECK(v[2] == 0.25);
}

TEST_CASE("pow: x = 0 and negative bases", "[elementwise]") {
    const auto x = f64({0, 0, -2, 2}, {4});
    const auto y = f64({0, 2, 3, 0.5}, {4});
    const auto z = values(tf::pow(x, y));
    CHECK(z[0] == 1);
    CHECK(z[1] == 0);
    CHECK(z[2] == -8);
    CHECK(z[3] == Approx(std::sqrt(2.0)));
    CHECK(std::isnan(values(tf::pow(f64({-2}, {1}), f64({0.5}, {1})))[0]));
    tf::GradientTape tape;
    tape.watch(std::vector<tf::Tensor>{x, y});
    const auto g = tape.gradient(tf::pow(x, y), std::vector<tf::Tensor>{x, y});
    const auto gx = values(g[0]);
    const auto gy = values(g[1]);
    CHECK(std::isnan(gx[0]));  // 0 * 0^-1, as TensorFlow
    CHECK(gx[1] == 0);         // 2 * 0^1
    CHECK(gx[2] == 12);        // 3 * (-2)^2
    CHECK(gy[0] == 0);         // x <= 0: log masked to 0
    CHECK(gy[1] == 0);
    CHECK(gy[2] == 0);
    CHECK(gy[3] == Approx(std::sqrt(2.0) * std::log(2.0)));
}

TEST_CASE("divide_no_nan gives 0 where y == 0, for values and gradients", "[elementwise]") {
    const double inf = std::numeric_limits<double>::infinity();
    const auto x = f64({1, 0, inf, std::nan(""), 6}, {5});
    const auto y = f64({0, 0, 0, 0, 3}, {5});
    CHECK(values(tf::divide_no_nan(x, y)) == std::vector<double>{0, 0, 0, 0, 2});
    const auto xs = f64({3}, {1});
    tf::GradientTape tape;
    tape.watch(std::vector<tf::Tensor>{xs, y});
    const auto g = tape.gradient(tf::divide_no_nan(xs, y), std::vector<tf::Tensor>{xs, y});
    CHECK(values(g[0]) == std::vector<double>{1.0 / 3});
    CHECK(values(g[1]) == std::vector<double>{0, 0, 0, 0, -1.0 / 3});
    CHECK(values(tf::divide(f64({1, -1, 0}, {3}), f64({0, 0, 0}, {3})))[0] == inf);
}

TEST_CASE("floormod takes the sign of the divisor; floordiv rounds down", "[elementwise]") {
    const auto x = f64({7, -7, 7, -7, 5.5, -0.5}, {6});
    const auto y = f64({3, 3, -3, -3, 2, 2}, {6});
    CHECK(values(tf::floormod(x, y)) == std::vector<double>{1, 2, -2, -1, 1.5, 1.5});
    CHECK(values(tf::floordiv(x, y)) == std::vector<double>{2, -3, -3, 2, 2, -1});
    const auto xi = tf::constant({7, -7, 7, -7});
    const auto yi = tf::constant({3, 3, -3, -3});
    CHECK(tf::floormod(xi, yi).to_vector<int>() == std::vector<int>{1, 2, -2, -1});
    CHECK(tf::floordiv(xi, yi).to_vector<int>() == std::vector<int>{2, -3, -3, 2});
    // Gradients: floormod (g, -g floor(x/y)); floordiv has none.
    tf::GradientTape tape(true);
    tape.watch(std::vector<tf::Tensor>{x, y});
    const auto gm = tape.gradient(tf::floormod(x, y), std::vector<tf::Tensor>{x, y});
    const auto gd = tape.gradient(tf::floordiv(x, y), std::vector<tf::Tensor>{x, y});
    CHECK(values(gm[0]) == std::vector<double>{1, 1, 1, 1, 1, 1});
    CHECK(values(gm[1]) == std::vector<double>{-2, 3, 3, -2, -2, 1});
    CHECK_FALSE(gd[0].defined());
    CHECK_FALSE(gd[1].defined());
}

TEST_CASE("round is half to even; floor, ceil and round have no gradient", "[elementwise]") {
    const auto x = f64({0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4, 2.6}, {8});
    CHECK(values(tf::round(x)) == std::vector<double>{0, 2, 2, -0, -2, -2, 2, 3});
    CHECK(values(tf::round(x.cast(tf::float32))) == std::vector<double>{0, 2, 2, -0, -2, -2, 2, 3});
    CHECK(values(tf::floor(x)) == std::vector<double>{0, 1, 2, -1, -2, -3, 2, 2});
    CHECK(values(tf::ceil(x)) == std::vector<double>{1, 2, 3, -0, -1, -2, 3, 3});
    for (Unary f : {tf::floor, tf::ceil, tf::round}) {
        tf::GradientTape tape;
        tape.watch(x);
        CHECK_FALSE(tape.gradient(f(x), x).defined());
    }
}

TEST_CASE("sign: sign(0) = 0, gradient zeros (not None); abs' = sign", "[elementwise]") {
    const auto x = f64({-2, 0, 3}, {3});
    CHECK(values(tf::sign(x)) == std::vector<double>{-1, 0, 1});
    CHECK(std::isnan(values(tf::sign(f64({std::nan("")}, {1})))[0]));
    const auto gs = grad_of([](const tf::Tensor& t) { return tf::sign(t); }, x);
    REQUIRE(gs.defined());
    CHECK(values(gs) == std::vector<double>{0, 0, 0});
    CHECK(values(grad_of([](const tf::Tensor& t) { return tf::abs(t); }, x)) ==
          std::vector<double>{-1, 0, 1});
}

TEST_CASE("comparisons, logic and integer inputs have no gradient; where none to cond",
          "[elementwise]") {
    const auto x = f64({1, 2}, {2});
    {
        tf::GradientTape tape;
        tape.watch(x);
        const auto c = tf::less(x, tf::constant(1.5));
        CHECK_FALSE(tape.gradient(tf::cast(c, tf::float64), x).defined());
    }
    {
        const auto i = tf::constant({1, 2});
        tf::GradientTape tape;
        tape.watch(i);
        CHECK_FALSE(tape.gradient(tf::add(i, i), i).defined());
    }
    {
        const auto c = tf::constant(std::vector<bool>{true, false}, tf::Shape{2});
        const auto y = f64({5, 6}, {2});
        tf::GradientTape tape;
        tape.watch(std::vector<tf::Tensor>{x, y});
        const auto g = tape.gradient(tf::where(c, x, y), std::vector<tf::Tensor>{x, y});
        CHECK(values(g[0]) == std::vector<double>{1, 0});
        CHECK(values(g[1]) == std::vector<double>{0, 1});
    }
}

TEST_CASE("softplus is stable for large |x|", "[elementwise]") {
    const auto x = f64({-1000, -40, 0, 40, 1000}, {5});
    const auto v = values(tf::softplus(x));
    CHECK(v[0] == 0);
    CHECK(v[1] == Approx(std::exp(-40.0)).epsilon(1e-12));
    CHECK(v[2] == Approx(std::log(2.0)));
    CHECK(v[3] == 40);
    CHECK(v[4] == 1000);
    const auto g = values(grad_of([](const tf::Tensor& t) { return tf::softplus(t); }, x));
    CHECK(g[0] == 0);
    CHECK(g[2] == 0.5);
    CHECK(g[4] == 1);
    const auto s = values(tf::sigmoid(x));
    CHECK(s[0] == 0);
    CHECK(s[4] == 1);
}

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

TEST_CASE("incompatible shapes raise TensorFlow's message", "[elementwise][errors]") {
    const auto a = tf::ones({2, 3});
    const auto b = tf::ones({4});
    CHECK_THROWS_AS(tf::add(a, b), tf::errors::InvalidArgumentError);
    CHECK(what_of([&] { (void)tf::add(a, b); }) == "Incompatible shapes: [2,3] vs. [4] [Op:AddV2]");
    CHECK(what_of([&] { (void)(a * b); }) == "Incompatible shapes: [2,3] vs. [4] [Op:Mul]");
    CHECK(what_of([&] { (void)tf::less(a, b); }) == "Incompatible shapes: [2,3] vs. [4] [Op:Less]");
    CHECK_THROWS_WITH(tf::where(tf::constant(std::vector<bool>{true, false}, tf::Shape{2}), a, a),
                      Catch::Contains("must be broadcastable") && Catch::Contains("[Op:SelectV2]"));
    CHECK_THROWS_WITH(tf::where(tf::constant(true), a, b),
                      "then [2,3] and else [4] must be broadcastable [Op:SelectV2]");
}

TEST_CASE("mismatched dtypes name both dtypes and the op", "[elementwise][errors]") {
    const auto f = tf::constant({1.f, 2.f});
    const auto i = tf::constant({1, 2});
    CHECK_THROWS_AS(tf::add(f, i), tf::errors::InvalidArgumentError);
    const std::string what = what_of([&] { (void)tf::add(f, i); });
    CHECK_THAT(what,
               Catch::Contains("a float tensor") && Catch::Contains("int32") &&
                   Catch::Contains("AddV2") && Catch::EndsWith("[Op:AddV2]"));
    CHECK_THROWS_WITH(tf::pow(i, f),
                      Catch::Contains("int32") && Catch::Contains("a float tensor") &&
                          Catch::Contains("[Op:Pow]"));
    CHECK_THROWS_WITH(tf::equal(f, i), Catch::Contains("[Op:Equal]"));
    CHECK_THROWS_WITH(tf::add_n({f, i}), Catch::Contains("int32") && Catch::Contains("[Op:AddN]"));
    CHECK_THROWS_WITH(tf::where(tf::constant(true), f, i), Catch::Contains("[Op:SelectV2]"));
    CHECK_THROWS_AS(f + tf::constant(1.0), tf::errors::InvalidArgumentError);  // float32 + float64
}

TEST_CASE("logical ops and where need bool", "[elementwise][errors]") {
    const auto f = tf::constant({1.f, 0.f});
    const auto b = tf::constant(std::vector<bool>{true, false}, tf::Shape{2});
    CHECK_THROWS_AS(tf::logical_and(f, b), tf::errors::InvalidArgumentError);
    CHECK_THROWS_AS(tf::logical_or(b, f), tf::errors::InvalidArgumentError);
    CHECK_THROWS_AS(tf::logical_not(f), tf::errors::InvalidArgumentError);
    CHECK_THROWS_WITH(tf::logical_and(f, b),
                      Catch::Contains("bool") && Catch::Contains("a float tensor") &&
                          Catch::Contains("[Op:LogicalAnd]"));
    CHECK_THROWS_WITH(tf::logical_not(f), Catch::Contains("[Op:LogicalNot]"));
    CHECK_THROWS_WITH(tf::where(f, f, f),
                      Catch::Contains("bool") && Catch::Contains("[Op:SelectV2]"));
    CHECK_THROWS_AS(tf::less(b, b), tf::errors::UnimplementedError);  // TF has no Less for bool
}

TEST_CASE("integer division by zero and negative integer powers raise", "[elementwise][errors]") {
    const auto x = tf::constant({1, 2});
    const auto z = tf::constant({1, 0});
    CHECK_THROWS_WITH(tf::floordiv(x, z), "Integer division by zero [Op:FloorDiv]");
    CHECK_THROWS_WITH(tf::floormod(x, tf::constant(0)), "Integer division by zero [Op:FloorMod]");
    // divide is truediv: the integers become float64 first, so x / 0 is inf (TensorFlow's too).
    CHECK(std::isinf(tf::divide(x, z).to_vector<double>()[1]));
    CHECK_THROWS_WITH(tf::pow(x, tf::constant({2, -1})),
                      "Integers to negative integer powers are not allowed [Op:Pow]");
    // Float division by zero is IEEE.
    CHECK(std::isinf(tf::divide(tf::constant(1.f), tf::constant(0.f)).item<float>()));
}

TEST_CASE("add_n and undefined inputs", "[elementwise][errors]") {
    const auto a = tf::ones({2, 2});
    CHECK_THROWS_AS(tf::add_n({}), tf::errors::InvalidArgumentError);
    CHECK_THROWS_WITH(tf::add_n({a, tf::ones({3})}),
                      "Inputs to operation AddN of type AddN must have the same size and shape.  "
                      "Input 0: [2,2] != input 1: [3] [Op:AddN]");
    CHECK_THROWS_AS(tf::add(a, tf::Tensor()), tf::errors::InvalidArgumentError);
    CHECK_THROWS_AS(tf::exp(tf::Tensor()), tf::errors::InvalidArgumentError);
    CHECK_THROWS_AS(tf::add_n({a, tf::Tensor()}), tf::errors::InvalidArgumentError);
    CHECK_THROWS_AS(tf::scalar_like(tf::Tensor(), 1), tf::errors::InvalidArgumentError);
}
