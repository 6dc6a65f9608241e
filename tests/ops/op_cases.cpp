// The op-case table (op_cases.hpp): the rows, the input generator and the comparison.
//
// A row is a Case: {name, covers, inputs, dtypes, f, grad}
//   name     unique, "family/variant" style ("conv2d/strided_same"); the suites add "/<dtype>"
//   covers   the ops of op_list.def the row runs (test_registry.cpp: every op needs a row)
//   inputs   one In{shape, Kind, optional dtype} per input; values drawn as Kind says, cast to the
//            In's dtype or else to the dtype the row runs in
//   dtypes   the dtypes the row runs in (kF32, kFloats, kNums, kAll, ...)
//   f        inputs -> outputs, with public tapeflow calls (any number of outputs)
//   grad     true: the float outputs are differentiable in the float inputs; the finite-difference
//            check (float64) and the parity suite's gradient comparison then run on the row
// One-input element-wise ops use unary(name, op, kind, dtypes, fn, grad), two-input ones
// binary(...) (three rows: broadcast, same shape, scalar). Add rows in the op's family section.
#include "ops/op_cases.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <tuple>

#include <tapeflow/ops/conv.hpp>
#include <tapeflow/ops/sort.hpp>

#include "ops/apply.hpp"
#include "ops/rnn.hpp"
#include "ops/training_ops.hpp"

namespace tapeflow::op_cases {
namespace {

namespace tf = tapeflow;

const std::vector<tf::DType> kF32{tf::float32};
const std::vector<tf::DType> kFloats{tf::float32, tf::float64, tf::float16, tf::bfloat16};
const std::vector<tf::DType> kNums{
    tf::float32, tf::float64, tf::float16, tf::bfloat16, tf::int32, tf::int64};
const std::vector<tf::DType> kAll{tf::float32,
                                  tf::float64,
                                  tf::float16,
                                  tf::bfloat16,
                                  tf::int32,
                                  tf::int64,
                                  tf::uint8,
                                  tf::bool_};

// The ops of current models: top_k (and sort, argsort on it), the depthwise convolution family,
// conv2d_transpose and einsum (composites, checked for their gradients on the GPU).
void add_model_op_cases(std::vector<Case>& c) {
    using V = std::vector<Tensor>;
    const std::vector<tf::DType> kReal{tf::float32, tf::float64};
    std::vector<tf::DType> real_numbers = kNums;
    real_numbers.push_back(tf::uint8);
    c.push_back({"top_k",
                 {Op::top_k},
                 {{{5, 300}, Kind::small_int}},
                 real_numbers,
                 [](const V& x) {  // many ties: indices must agree too
                     const auto [v, i] = tf::math::top_k(x[0], 7);
                     const auto [fv, fi] = tf::math::top_k(x[0], 300);
                     return V{v, i, fv, fi, tf::math::top_k(x[0]).second};
                 },
                 false});
    c.push_back({"top_k/grad",
                 {Op::top_k},
                 {{{4, 3, 50}}},
                 kFloats,
                 [](const V& x) { return V{tf::math::top_k(x[0], 5).first}; },
                 true});
    c.push_back({"sort",
                 {Op::top_k},
                 {{{6, 40}}},
                 kFloats,
                 [](const V& x) {
                     return V{tf::sort(x[0], 0), tf::sort(x[0], -1, "DESCENDING")};
                 },
                 true});
    c.push_back({"argsort",
                 {Op::top_k},
                 {{{6, 40}, Kind::small_int}},
                 kNums,
                 [](const V& x) {
                     return V{tf::argsort(x[0], 0), tf::argsort(x[0], 1, "DESCENDING")};
                 },
                 false});
    const std::vector<Op> depthwise_ops{Op::depthwise_conv2d,
                                        Op::depthwise_conv2d_backprop_input,
                                        Op::depthwise_conv2d_backprop_filter};
    c.push_back({"depthwise_conv2d/same",
                 depthwise_ops,
                 {{{2, 7, 8, 3}}, {{3, 2, 3, 2}}},
                 kReal,
                 [](const V& x) { return V{tf::nn::depthwise_conv2d(x[0], x[1], 1, "SAME")}; },
                 true});
    c.push_back(
        {"depthwise_conv2d/strided_dilated",
         depthwise_ops,
         {{{2, 9, 10, 4}}, {{3, 3, 4, 1}}},
         kReal,
         [](const V& x) {
             return V{tf::nn::depthwise_conv2d(x[0], x[1], {2, 1}, "VALID", "NHWC", {1, 2})};
         },
         true});
    c.push_back(
        {"depthwise_conv2d/nchw",
         depthwise_ops,
         {{{2, 3, 6, 5}}, {{2, 2, 3, 3}}},
         kReal,
         [](const V& x) { return V{tf::nn::depthwise_conv2d(x[0], x[1], 2, "SAME", "NCHW")}; },
         true});
    c.push_back({"conv2d_transpose",
                 {Op::conv2d_backprop_input},
                 {{{2, 4, 5, 3}}, {{3, 3, 2, 3}}},
                 kReal,
                 [](const V& x) {
                     return V{tf::nn::conv2d_transpose(x[0], x[1], {2, 8, 9, 2}, 2)};
                 },
                 true});
    c.push_back({"conv1d",
                 {Op::conv2d},
                 {{{2, 11, 3}}, {{3, 3, 4}}},
                 kReal,
                 [](const V& x) { return V{tf::nn::conv1d(x[0], x[1], 2, "SAME")}; },
                 true});
    c.push_back({"einsum",
                 {Op::batch_matmul, Op::matmul},
                 {{{2, 5, 3, 4}}, {{2, 6, 3, 4}}, {{4, 4}}},
                 kFloats,
                 [](const V& x) {
                     return V{tf::einsum("bqhd,bkhd->bhqk", {x[0], x[1]}),
                              tf::einsum("ii->i", {x[2]}),
                              tf::einsum("ij,jk->ik", {x[2], x[2]})};
                 },
                 true});
}

// The training ops (fused optimizer updates): inputs are var [5, 37], the slots and the gradient;
// the outputs are var and the slots after one update. Sparse variants update rows {3, 0, 3, 1, 3}
// with int32 and int64 indices: the duplicates (row 3 three times) are summed first, in order.
void add_training_cases(std::vector<Case>& c) {
    using V = std::vector<Tensor>;
    const std::vector<tf::DType> kReal{tf::float32, tf::float64};
    const tf::Shape kVar{5, 37};
    const std::vector<int64_t> kRows{3, 0, 3, 1, 3};
    struct Train {
        std::string name;
        Op dense;
        std::optional<Op> sparse;
        std::vector<Kind> slots;  // their value ranges (accumulators under sqrt are positive)
        tf::Attrs attrs;
    };
    auto base = [] {
        return tf::Attrs()
            .set("alpha", 0.1)
            .set("lr", 0.05)
            .set("l1", 0.0)
            .set("l2", 0.02)
            .set("momentum", 0.9)
            .set("rho", 0.9)
            .set("epsilon", 1e-6)
            .set("beta1", 0.9)
            .set("beta2", 0.999)
            .set("beta1_power", 0.729)
            .set("beta2_power", 0.997)
            .set("u_t", 0.95)
            .set("u_t1", 0.96)
            .set("u_product", 0.9)
            .set("l2_shrinkage", 0.0)
            .set("lr_power", -0.5)
            .set("use_nesterov", false)
            .set("epsilon_inside_sqrt", false);
    };
    // The values above, cut to the attrs `op` takes (its row of the update table): a call must set
    // exactly those.
    auto only = [](Op op, const tf::Attrs& all) {
        tf::Attrs taken;
        for (const auto& [name, value] : all.items()) {
            if (tf::training::takes_attr(op, name)) taken.set(name, value);
        }
        return taken;
    };
    const Kind kPos = Kind::positive, kNorm = Kind::normal, kUnit = Kind::unit;
    std::vector<Train> trains{
        {"gradient_descent",
         Op::apply_gradient_descent,
         Op::sparse_apply_gradient_descent,
         {},
         base()},
        {"proximal_gradient_descent",
         Op::apply_proximal_gradient_descent,
         Op::sparse_apply_proximal_gradient_descent,
         {},
         base()},
        {"proximal_gradient_descent/l1",
         Op::apply_proximal_gradient_descent,
         Op::sparse_apply_proximal_gradient_descent,
         {},
         base().set("l1", 0.05)},
        {"momentum", Op::apply_momentum, Op::sparse_apply_momentum, {kNorm}, base()},
        {"momentum/nesterov",
         Op::apply_momentum,
         Op::sparse_apply_momentum,
         {kNorm},
         base().set("use_nesterov", true)},
        {"keras_momentum", Op::apply_keras_momentum, {}, {kNorm}, base()},
        {"keras_momentum/nesterov",
         Op::apply_keras_momentum,
         {},
         {kNorm},
         base().set("use_nesterov", true)},
        {"adagrad", Op::apply_adagrad, Op::sparse_apply_adagrad, {kPos}, base()},
        {"adagrad/inside",
         Op::apply_adagrad,
         Op::sparse_apply_adagrad,
         {kPos},
         base().set("epsilon_inside_sqrt", true)},
        {"proximal_adagrad",
         Op::apply_proximal_adagrad,
         Op::sparse_apply_proximal_adagrad,
         {kPos},
         base()},
        {"proximal_adagrad/l1",
         Op::apply_proximal_adagrad,
         Op::sparse_apply_proximal_adagrad,
         {kPos},
         base().set("l1", 0.05)},
        {"adadelta", Op::apply_adadelta, Op::sparse_apply_adadelta, {kPos, kPos}, base()},
        {"adam", Op::apply_adam, {}, {kNorm, kPos}, base()},
        {"adam_with_amsgrad", Op::apply_adam_with_amsgrad, {}, {kNorm, kPos, kPos}, base()},
        {"ada_max", Op::apply_ada_max, {}, {kNorm, kPos}, base()},
        {"nadam", Op::apply_nadam, {}, {kNorm, kPos}, base()},
        {"ftrl", Op::apply_ftrl, Op::sparse_apply_ftrl, {kPos, kNorm}, base().set("l1", 0.05)},
        {"ftrl/power_shrinkage",
         Op::apply_ftrl,
         Op::sparse_apply_ftrl,
         {kPos, kNorm},
         base().set("l1", 0.05).set("lr_power", -0.7).set("l2_shrinkage", 0.01)},
        {"rms_prop", Op::apply_rms_prop, Op::sparse_apply_rms_prop, {kPos, kNorm}, base()},
        {"centered_rms_prop",
         Op::apply_centered_rms_prop,
         Op::sparse_apply_centered_rms_prop,
         {kUnit, kPos, kNorm},
         base()},
        {"keras_rms_prop", Op::apply_keras_rms_prop, {}, {kPos}, base()},
        {"keras_centered_rms_prop", Op::apply_keras_centered_rms_prop, {}, {kPos, kUnit}, base()},
    };
    for (Train& t : trains)
        t.attrs = only(t.dense, t.attrs);
    // Variables from x[0] (var) and x[1..n] (slots), updated by `update`, read back.
    auto run = [](const V& x, std::size_t n, auto update) {
        tf::Variable var(x[0]);
        std::vector<tf::Variable> slots;
        for (std::size_t k = 1; k <= n; ++k)
            slots.emplace_back(x[k]);
        update(var, slots);
        V out{var.value()};
        for (const tf::Variable& s : slots)
            out.push_back(s.value());
        return out;
    };
    for (const Train& t : trains) {
        std::vector<In> dense{In{kVar}};
        for (Kind k : t.slots)
            dense.emplace_back(kVar, k);
        std::vector<In> sparse = dense;
        dense.emplace_back(kVar);
        sparse.emplace_back(tf::Shape{static_cast<int64_t>(kRows.size()), kVar[1]});
        const std::size_t n = t.slots.size();
        c.push_back(
            {"train/" + t.name,
             {t.dense},
             dense,
             kReal,
             [run, n, op = t.dense, attrs = t.attrs](const V& x) {
                 return run(x, n, [&](const tf::Variable& var, const std::vector<tf::Variable>& s) {
                     tf::training::apply_dense(op, var, s, x[n + 1], attrs);
                 });
             },
             false});
        if (!t.sparse) continue;
        for (tf::DType index : {tf::int32, tf::int64}) {
            c.push_back(
                {"train/sparse_" + t.name + "/" + std::string(tf::dtype_name(index)),
                 {*t.sparse},
                 sparse,
                 kReal,
                 [run, n, index, kRows, kVar, op = *t.sparse, attrs = t.attrs](const V& x) {
                     const Tensor rows = tf::constant(kRows, tf::Shape{5}, index).to(x[0].device());
                     return run(
                         x, n, [&](const tf::Variable& var, const std::vector<tf::Variable>& s) {
                             tf::training::apply_sparse(
                                 op, var, s, tf::IndexedSlices{x[n + 1], rows, kVar}, attrs);
                         });
                 },
                 false});
        }
    }
}

std::vector<Case> build_cases() {
    using V = std::vector<Tensor>;
    std::vector<Case> c;
    auto unary = [&](std::string name,
                     Op op,
                     Kind kind,
                     std::vector<tf::DType> dtypes,
                     Tensor (*f)(const Tensor&),
                     bool grad) {
        c.push_back(
            {name, {op}, {{{3, 37}, kind}}, dtypes, [f](const V& x) { return V{f(x[0])}; }, grad});
    };
    auto binary = [&](std::string name,
                      Op op,
                      Kind ka,
                      Kind kb,
                      std::vector<tf::DType> dtypes,
                      Tensor (*f)(const Tensor&, const Tensor&),
                      bool grad) {
        c.push_back({name,
                     {op},
                     {{{4, 1, 33}, ka}, {{5, 33}, kb}},
                     dtypes,
                     [f](const V& x) { return V{f(x[0], x[1])}; },
                     grad});
        c.push_back({name + "/same",
                     {op},
                     {{{1000}, ka}, {{1000}, kb}},
                     dtypes,
                     [f](const V& x) { return V{f(x[0], x[1])}; },
                     false});
        c.push_back({name + "/scalar",
                     {op},
                     {{{257}, ka}, {{}, kb}},
                     dtypes,
                     [f](const V& x) { return V{f(x[0], x[1])}; },
                     false});
    };
    // ---- creation and random ----
    c.push_back({"identity",
                 {Op::identity},
                 {{{5, 7}}},
                 kAll,
                 [](const V& x) { return V{tf::identity(x[0])}; },
                 true});
    for (tf::DType to : kAll) {
        c.push_back({"cast/" + std::string(tf::dtype_name(to)),
                     {Op::cast},
                     {{{6, 11}, Kind::normal}},
                     kAll,
                     [to](const V& x) {
                         const bool numeric =
                             x[0].dtype() != tf::bool_;  // spread values to saturate
                         return V{tf::cast(numeric ? x[0] * tf::scalar_like(x[0], 3) : x[0], to)};
                     },
                     false});
    }
    c.push_back({"fill",
                 {Op::fill},
                 {},
                 kAll,
                 [](const V&) {
                     return V{tf::fill({3, 5}, 2.5, tf::float32)};
                 },
                 false});
    c.push_back({"one_hot",
                 {Op::one_hot},
                 {{{7}, Kind::index4, tf::int32}},
                 kF32,
                 [](const V& x) {
                     return V{tf::one_hot(x[0], 4), tf::one_hot(x[0], 3, 2, -1, 0, tf::int64)};
                 },
                 false});
    for (tf::DType d : {tf::float32, tf::float64}) {
        c.push_back({"random/" + std::string(tf::dtype_name(d)),
                     {Op::random_uniform, Op::random_normal, Op::truncated_normal},
                     {},
                     {d},
                     [d](const V&) {
                         tf::random::set_seed(11);
                         return V{tf::random::uniform({999}, -2, 3, d),
                                  tf::random::normal({999}, 1, 2, d),
                                  tf::random::truncated_normal({999}, 0, 1, d)};
                     },
                     false});
    }
    c.push_back({"random_shuffle",
                 {Op::random_shuffle},
                 {{{10, 3}}},
                 kF32,
                 [](const V& x) {
                     tf::random::set_seed(3);
                     return V{tf::random::shuffle(x[0], 5)};
                 },
                 false});
    // ---- element-wise ----
    binary("add", Op::add, Kind::normal, Kind::normal, kNums, tf::add, true);
    binary("subtract", Op::subtract, Kind::normal, Kind::normal, kNums, tf::subtract, true);
    binary("multiply", Op::multiply, Kind::normal, Kind::normal, kNums, tf::multiply, true);
    binary("divide", Op::divide, Kind::normal, Kind::positive, kFloats, tf::divide, true);
    binary("divide/int",
           Op::divide,
           Kind::small_int,
           Kind::nonzero_int,
           {tf::int32, tf::int64},
           tf::divide,
           false);
    // TensorFlow's dtype rules (issue 32): integer / is truediv (uint8 -> float32, int32/int64 ->
    // float64); C++ integer operands convert exactly, next to every integer dtype.
    binary("truediv/int",
           Op::divide,
           Kind::small_int,
           Kind::nonzero_int,
           {tf::int32, tf::int64, tf::uint8},
           tf::math::truediv,
           false);
    c.push_back({"operators/int_scalars",
                 {Op::divide, Op::multiply, Op::add, Op::subtract},
                 {{{3, 7}, Kind::small_int}},
                 {tf::int32, tf::int64, tf::uint8},
                 [](const V& x) {
                     return V{x[0] / 2, 3 * x[0], x[0] + 1, 4 - x[0], 2 / (x[0] + 6)};
                 },
                 false});
    c.push_back({"floormod/grad_inside",
                 {Op::floormod},
                 {{{4, 5}, Kind::positive}, {{5}, Kind::positive}},
                 {tf::float32, tf::float64},
                 [](const V& x) {
                     // x in [2.6, 3) over y in [2.05, 2.2): floor(x / y) is 1 throughout, so the
                     // finite differences see no jump; the y gradient is -g.
                     return V{tf::floormod(x[0] * 0.25 + 2.5, x[1] * 0.1 + 2.0)};
                 },
                 true});
    binary(
        "floordiv", Op::floordiv, Kind::small_int, Kind::nonzero_int, kNums, tf::floordiv, false);
    binary(
        "floormod", Op::floormod, Kind::small_int, Kind::nonzero_int, kNums, tf::floormod, false);
    binary("pow", Op::pow, Kind::positive, Kind::unit, kFloats, tf::pow, true);
    binary("maximum", Op::maximum, Kind::normal, Kind::normal, kNums, tf::maximum, true);
    binary("minimum", Op::minimum, Kind::normal, Kind::normal, kNums, tf::minimum, true);
    binary("squared_difference",
           Op::squared_difference,
           Kind::normal,
           Kind::normal,
           kNums,
           tf::squared_difference,
           true);
    binary("divide_no_nan",
           Op::divide_no_nan,
           Kind::normal,
           Kind::small_int,
           kFloats,
           tf::divide_no_nan,
           false);
    c.push_back({"add_n",
                 {Op::add_n},
                 {{{4, 9}}, {{4, 9}}, {{4, 9}}},
                 kNums,
                 [](const V& x) { return V{tf::add_n(x)}; },
                 true});
    c.push_back({"add_n/many",
                 {Op::add_n},
                 std::vector<In>(40, In{{100}}),
                 kF32,
                 [](const V& x) { return V{tf::add_n(x)}; },
                 false});
    unary("negative", Op::negative, Kind::normal, kNums, tf::negative, true);
    unary("abs", Op::abs, Kind::normal, kNums, tf::abs, true);
    unary("sign", Op::sign, Kind::normal, kNums, tf::sign, false);
    unary("exp", Op::exp, Kind::normal, kFloats, tf::exp, true);
    unary("expm1", Op::expm1, Kind::normal, kFloats, tf::expm1, true);
    unary("log", Op::log, Kind::positive, kFloats, tf::log, true);
    unary("log1p", Op::log1p, Kind::positive, kFloats, tf::log1p, true);
    unary("sqrt", Op::sqrt, Kind::positive, kFloats, tf::sqrt, true);
    unary("rsqrt", Op::rsqrt, Kind::positive, kFloats, tf::rsqrt, true);
    unary("square", Op::square, Kind::normal, kNums, tf::square, true);
    unary("reciprocal", Op::reciprocal, Kind::positive, kFloats, tf::reciprocal, true);
    unary("sin", Op::sin, Kind::normal, kFloats, tf::sin, true);
    unary("cos", Op::cos, Kind::normal, kFloats, tf::cos, true);
    unary("tanh", Op::tanh, Kind::normal, kFloats, tf::tanh, true);
    unary("sigmoid", Op::sigmoid, Kind::normal, kFloats, tf::sigmoid, true);
    unary("erf", Op::erf, Kind::normal, kFloats, tf::erf, true);
    unary("floor", Op::floor, Kind::normal, kFloats, tf::floor, false);
    unary("ceil", Op::ceil, Kind::normal, kFloats, tf::ceil, false);
    unary("round", Op::round, Kind::normal, kNums, tf::round, false);
    unary("softplus", Op::softplus, Kind::normal, kFloats, tf::softplus, true);
    for (auto [name, op, f] :
         std::vector<std::tuple<std::string, Op, Tensor (*)(const Tensor&, const Tensor&)>>{
             {"equal", Op::equal, tf::equal},
             {"not_equal", Op::not_equal, tf::not_equal},
             {"less", Op::less, tf::less},
             {"less_equal", Op::less_equal, tf::less_equal},
             {"greater", Op::greater, tf::greater},
             {"greater_equal", Op::greater_equal, tf::greater_equal}}) {
        binary(name, op, Kind::small_int, Kind::small_int, kNums, f, false);
    }
    binary("logical_and",
           Op::logical_and,
           Kind::boolean,
           Kind::boolean,
           {tf::bool_},
           tf::logical_and,
           false);
    binary("logical_or",
           Op::logical_or,
           Kind::boolean,
           Kind::boolean,
           {tf::bool_},
           tf::logical_or,
           false);
    unary("logical_not", Op::logical_not, Kind::boolean, {tf::bool_}, tf::logical_not, false);
    c.push_back({"where",
                 {Op::where},
                 {{{4, 1, 6}, Kind::boolean, tf::bool_}, {{3, 6}}, {{4, 3, 1}}},
                 kAll,
                 [](const V& x) { return V{tf::where(x[0], x[1], x[2])}; },
                 true});
    // ---- reductions and scans ----
    using R = Tensor (*)(const Tensor&, tf::Axes, bool);
    for (auto [name, op, f] : std::vector<std::tuple<std::string, Op, R>>{
             {"reduce_sum", Op::reduce_sum, tf::reduce_sum},
             {"reduce_mean", Op::reduce_mean, tf::reduce_mean},
             {"reduce_max", Op::reduce_max, tf::reduce_max},
             {"reduce_min", Op::reduce_min, tf::reduce_min},
             {"reduce_prod", Op::reduce_prod, tf::reduce_prod}}) {
        const Kind kind = op == Op::reduce_prod ? Kind::positive : Kind::normal;
        auto ff = f;
        c.push_back({name + "/all",
                     {op},
                     {{{50, 40}, kind}},
                     kNums,
                     [ff](const V& x) { return V{ff(x[0], {}, false)}; },
                     op != Op::reduce_prod});
        c.push_back({name + "/axis0",
                     {op},
                     {{{33, 70}, kind}},
                     kNums,
                     [ff](const V& x) { return V{ff(x[0], 0, false)}; },
                     true});
        c.push_back({name + "/axis1",
                     {op},
                     {{{33, 70}, kind}},
                     kNums,
                     [ff](const V& x) { return V{ff(x[0], 1, true)}; },
                     true});
        c.push_back({name + "/axes02",
                     {op},
                     {{{6, 5, 7}, kind}},
                     kNums,
                     [ff](const V& x) {
                         return V{ff(x[0], {0, 2}, false)};
                     },
                     true});
        c.push_back({name + "/large",
                     {op},
                     {{{3, 100000}, kind}},
                     kF32,
                     [ff](const V& x) { return V{ff(x[0], 1, false)}; },
                     false});
    }
    c.push_back(
        {"reduce_any_all",
         {Op::reduce_any, Op::reduce_all},
         {{{9, 40}, Kind::boolean}},
         {tf::bool_},
         [](const V& x) {
             return V{tf::reduce_any(x[0], 1), tf::reduce_all(x[0], 0), tf::reduce_any(x[0])};
         },
         false});
    c.push_back(
        {"argmax_argmin",
         {Op::argmax, Op::argmin},
         {{{7, 30, 5}, Kind::small_int}},
         kNums,
         [](const V& x) {
             return V{tf::argmax(x[0], 1), tf::argmin(x[0], 2, tf::int32), tf::argmax(x[0], 0)};
         },
         false});
    c.push_back({"cumsum",
                 {Op::cumsum},
                 {{{6, 20}, Kind::normal}},
                 kNums,
                 [](const V& x) {
                     return V{tf::cumsum(x[0], 1), tf::cumsum(x[0], 0, true, true)};
                 },
                 true});
    c.push_back({"cumprod",
                 {Op::cumprod},
                 {{{6, 8}, Kind::positive}},
                 kFloats,
                 [](const V& x) {
                     return V{tf::cumprod(x[0], 1), tf::cumprod(x[0], 0, true, false)};
                 },
                 true});
    // ---- linear algebra ----
    c.push_back({"matmul",
                 {Op::matmul},
                 {{{33, 20}}, {{20, 17}}},
                 kNums,
                 [](const V& x) { return V{tf::matmul(x[0], x[1])}; },
                 true});
    c.push_back({"matmul/transposed",
                 {Op::matmul},
                 {{{20, 33}}, {{17, 20}}},
                 kFloats,
                 [](const V& x) { return V{tf::matmul(x[0], x[1], true, true)}; },
                 true});
    c.push_back({"batch_matmul",
                 {Op::batch_matmul},
                 {{{3, 8, 5}}, {{5, 6}}},
                 kNums,
                 [](const V& x) { return V{tf::matmul(x[0], x[1])}; },
                 true});
    c.push_back({"batch_matmul/broadcast",
                 {Op::batch_matmul},
                 {{{2, 1, 4, 5}}, {{1, 3, 5, 6}}},
                 kFloats,
                 [](const V& x) { return V{tf::matmul(x[0], x[1])}; },
                 true});
    // ---- shape ops (reshape ... stop_gradient are views: no kernel runs) ----
    c.push_back(
        {"reshape_views",
         {Op::reshape, Op::expand_dims, Op::squeeze},
         {{{3, 1, 4}}},
         kAll,
         [](const V& x) {
             return V{tf::reshape(x[0], {4, 3}), tf::expand_dims(x[0], 0), tf::squeeze(x[0])};
         },
         true});
    c.push_back({"stop_gradient",
                 {Op::stop_gradient},
                 {{{3, 4}}},
                 kAll,
                 [](const V& x) { return V{tf::stop_gradient(x[0])}; },
                 false});
    c.push_back({"transpose",
                 {Op::transpose},
                 {{{3, 4, 5}}},
                 kAll,
                 [](const V& x) {
                     return V{tf::transpose(x[0], {2, 0, 1}), tf::transpose(x[0])};
                 },
                 true});
    c.push_back({"concat",
                 {Op::concat},
                 {{{2, 3}}, {{2, 5}}},
                 kAll,
                 [](const V& x) {
                     return V{tf::concat(x, 1), tf::concat({x[0], x[0]}, 0)};
                 },
                 true});
    c.push_back({"stack_unstack",
                 {Op::stack, Op::unstack},
                 {{{3, 4}}, {{3, 4}}},
                 kAll,
                 [](const V& x) {
                     V out{tf::stack(x, 1)};
                     for (const Tensor& t : tf::unstack(x[0], 1))
                         out.push_back(t);
                     return out;
                 },
                 true});
    c.push_back({"split",
                 {Op::split, Op::split_v},
                 {{{4, 9}}},
                 kAll,
                 [](const V& x) {
                     V out = tf::split(x[0], 3, 1);
                     for (const Tensor& t : tf::split(x[0], std::vector<int64_t>{1, 3}, 0))
                         out.push_back(t);
                     return out;
                 },
                 true});
    c.push_back({"tile",
                 {Op::tile},
                 {{{2, 3}}},
                 kAll,
                 [](const V& x) {
                     return V{tf::tile(x[0], {3, 2})};
                 },
                 true});
    c.push_back({"broadcast_to",
                 {Op::broadcast_to},
                 {{{3, 1}}},
                 kAll,
                 [](const V& x) {
                     return V{tf::broadcast_to(x[0], {2, 3, 4})};
                 },
                 true});
    c.push_back({"shape",
                 {Op::shape},
                 {{{3, 4}}},
                 kF32,
                 [](const V& x) { return V{tf::shape(x[0])}; },
                 false});
    // ---- indexing ----
    c.push_back({"slice",
                 {Op::slice},
                 {{{5, 6}}},
                 kAll,
                 [](const V& x) {
                     return V{tf::slice(x[0], {1, 2}, {3, 3})};
                 },
                 true});
    c.push_back({"strided_slice",
                 {Op::strided_slice, Op::strided_slice_grad},
                 {{{6, 7}}},
                 kAll,
                 [](const V& x) {
                     return V{tf::strided_slice(x[0], {5, 1}, {0, 7}, {-2, 3})};
                 },
                 true});
    c.push_back({"pad",
                 {Op::pad},
                 {{{3, 4}}},
                 kAll,
                 [](const V& x) {
                     return V{tf::pad(x[0], {{1, 2}, {0, 3}}, "CONSTANT", 1)};
                 },
                 true});
    c.push_back({"mirror_pad",
                 {Op::mirror_pad, Op::mirror_pad_grad},
                 {{{3, 4}}},
                 kNums,
                 [](const V& x) {
                     return V{tf::pad(x[0], {{1, 2}, {2, 1}}, "REFLECT"),
                              tf::pad(x[0], {{0, 3}, {1, 1}}, "SYMMETRIC")};
                 },
                 true});
    c.push_back({"gather",
                 {Op::gather},
                 {{{4, 5}}, {{6}, Kind::index4, tf::int32}},
                 kAll,
                 [](const V& x) {
                     return V{tf::gather(x[0], x[1]), tf::gather(x[0], x[1], 1)};
                 },
                 true});
    c.push_back({"gather_nd",
                 {Op::gather_nd},
                 {{{4, 3, 2}}, {{5, 2}, Kind::index3, tf::int64}},
                 kAll,
                 [](const V& x) { return V{tf::gather_nd(x[0], x[1])}; },
                 true});
    c.push_back({"gather_nd/batch",
                 {Op::gather_nd},
                 {{{4, 3, 2}}, {{4, 1}, Kind::index3, tf::int32}},
                 kAll,
                 [](const V& x) { return V{tf::gather_nd(x[0], x[1], 1)}; },
                 true});
    c.push_back({"scatter_nd",
                 {Op::scatter_nd},
                 {{{5, 1}, Kind::index4, tf::int32}, {{5, 3}}},
                 kNums,
                 [](const V& x) {
                     return V{tf::scatter_nd(x[0], x[1], {4, 3})};
                 },
                 true});
    c.push_back({"unsorted_segment_sum",
                 {Op::unsorted_segment_sum},
                 {{{6, 3}}, {{6}, Kind::index4, tf::int32}},
                 kNums,
                 [](const V& x) {  // with 3 segments, the rows of id 3 are dropped
                     return V{tf::unsorted_segment_sum(x[0], x[1], 4),
                              tf::unsorted_segment_sum(x[0], x[1], 3)};
                 },
                 true});
    // ---- nn: activations, softmax, losses, layers (the *Grad ops run in the gradients) ----
    const std::vector<tf::DType> kReal{tf::float32, tf::float64};
    const std::vector<tf::DType> kSigned{
        tf::float32, tf::float64, tf::float16, tf::bfloat16, tf::int32, tf::int64};
    using Act = Tensor (*)(const Tensor&);
    for (auto [name, op, grad_op, f, dtypes] :
         std::vector<std::tuple<std::string, Op, Op, Act, std::vector<tf::DType>>>{
             {"relu", Op::relu, Op::relu_grad, tf::nn::relu, kSigned},
             {"relu6", Op::relu6, Op::relu6_grad, tf::nn::relu6, kSigned},
             {"elu", Op::elu, Op::elu_grad, tf::nn::elu, kFloats},
             {"selu", Op::selu, Op::selu_grad, tf::nn::selu, kFloats}}) {
        auto ff = f;  // inputs spread over [-12, 12]: relu6 saturates too
        c.push_back({name,
                     {op, grad_op},
                     {{{3, 37}}},
                     dtypes,
                     [ff](const V& x) { return V{ff(x[0] * tf::scalar_like(x[0], 4))}; },
                     true});
    }
    c.push_back({"leaky_relu",
                 {Op::leaky_relu, Op::leaky_relu_grad},
                 {{{3, 37}}},
                 kFloats,
                 [](const V& x) { return V{tf::nn::leaky_relu(x[0], 0.3)}; },
                 true});
    unary(
        "gelu",
        Op::gelu,
        Kind::normal,
        kFloats,
        [](const Tensor& x) { return tf::nn::gelu(x); },
        true);
    unary(
        "gelu_approximate",
        Op::gelu_approximate,
        Kind::normal,
        kFloats,
        [](const Tensor& x) { return tf::nn::gelu(x, true); },
        true);
    unary("silu", Op::silu, Kind::normal, kFloats, tf::nn::silu, true);
    unary("softsign", Op::softsign, Kind::normal, kFloats, tf::nn::softsign, true);
    unary("log_sigmoid", Op::log_sigmoid, Kind::normal, kFloats, tf::nn::log_sigmoid, true);
    c.push_back({"softmax",
                 {Op::softmax, Op::log_softmax},
                 {{{7, 50}}},
                 kReal,
                 [](const V& x) {
                     return V{tf::nn::softmax(x[0]),
                              tf::nn::log_softmax(x[0]),
                              tf::nn::softmax(x[0], 0),
                              tf::nn::log_softmax(x[0], 0)};
                 },
                 true});
    c.push_back({"softmax/long_rows",
                 {Op::softmax, Op::log_softmax},
                 {{{3, 5000}}},
                 kReal,
                 [](const V& x) {
                     return V{tf::nn::softmax(x[0]), tf::nn::log_softmax(x[0])};
                 },
                 false});
    c.push_back(
        {"softmax_xent",
         {Op::softmax_xent},
         {{{8, 33}, Kind::unit}, {{8, 33}}},
         kReal,
         [](const V& x) {  // labels that sum to 1, as the gradient assumes (TF: softmax - labels)
             return V{tf::nn::softmax_cross_entropy_with_logits(tf::nn::softmax(x[0]), x[1])};
         },
         true});
    for (tf::DType label : {tf::int32, tf::int64}) {
        c.push_back({"sparse_softmax_xent/" + std::string(tf::dtype_name(label)),
                     {Op::sparse_softmax_xent, Op::sparse_xent_grad},
                     {{{9}, Kind::index4, label}, {{9, 37}}},
                     kReal,
                     [](const V& x) {
                         return V{tf::nn::sparse_softmax_cross_entropy_with_logits(x[0], x[1])};
                     },
                     true});
    }
    c.push_back({"bias_add",
                 {Op::bias_add},
                 {{{4, 5, 6}}, {{6}}},
                 kNums,
                 [](const V& x) { return V{tf::nn::bias_add(x[0], x[1])}; },
                 true});
    c.push_back({"bias_add/nchw",
                 {Op::bias_add},
                 {{{2, 3, 4, 5}}, {{3}}},
                 kNums,
                 [](const V& x) { return V{tf::nn::bias_add(x[0], x[1], "NCHW")}; },
                 true});
    const std::vector<Op> conv_ops{
        Op::conv2d, Op::conv2d_backprop_input, Op::conv2d_backprop_filter};
    c.push_back({"conv2d/same",
                 conv_ops,
                 {{{2, 7, 8, 3}}, {{3, 2, 3, 4}}},
                 kReal,
                 [](const V& x) { return V{tf::nn::conv2d(x[0], x[1], 1, "SAME")}; },
                 true});
    c.push_back({"conv2d/strided_valid",
                 conv_ops,
                 {{{2, 9, 8, 3}}, {{3, 3, 3, 5}}},
                 kReal,
                 [](const V& x) {
                     return V{tf::nn::conv2d(x[0], x[1], {2, 3}, "VALID")};
                 },
                 true});
    c.push_back({"conv2d/strided_same",
                 conv_ops,
                 {{{1, 9, 10, 2}}, {{4, 3, 2, 3}}},
                 kReal,
                 [](const V& x) { return V{tf::nn::conv2d(x[0], x[1], 2, "SAME")}; },
                 true});
    c.push_back({"conv2d/explicit_dilated",
                 conv_ops,
                 {{{2, 8, 7, 2}}, {{2, 3, 2, 3}}},
                 kReal,
                 [](const V& x) {
                     return V{tf::nn::conv2d(
                         x[0], x[1], 1, tf::Paddings{{0, 0}, {1, 2}, {2, 0}, {0, 0}}, "NHWC", 2)};
                 },
                 true});
    c.push_back({"conv2d/pointwise_nchw",
                 conv_ops,
                 {{{2, 4, 5, 6}}, {{1, 1, 4, 3}}},
                 kReal,
                 [](const V& x) { return V{tf::nn::conv2d(x[0], x[1], 1, "VALID", "NCHW")}; },
                 true});
    c.push_back({"max_pool",
                 {Op::max_pool},
                 {{{2, 7, 9, 3}}},
                 kReal,
                 [](const V& x) {
                     return V{tf::nn::max_pool2d(x[0], 3, 2, "SAME"),
                              tf::nn::max_pool2d(x[0], 2, {2, 3}, "VALID")};
                 },
                 true});
    c.push_back({"max_pool/argmax",
                 {Op::max_pool},
                 {{{2, 7, 9, 3}}},
                 kReal,
                 [](const V& x) {  // the internal argmax output, with uneven explicit pads
                     tf::Attrs a;
                     a.set("ksize", std::vector<int64_t>{3, 3});
                     a.set("strides", std::vector<int64_t>{2, 2});
                     a.set("dilations", std::vector<int64_t>{1, 1});
                     a.set("pads", std::vector<int64_t>{1, 1, 0, 1});
                     const tf::Shape out{2, 4, 4, 3};
                     const tf::OutputSpec specs[] = {tf::OutputSpec{out, x[0].dtype()},
                                                     tf::OutputSpec{out, tf::int64}};
                     return tf::apply_multi(Op::max_pool, x, specs, a);
                 },
                 false});
    c.push_back({"avg_pool",
                 {Op::avg_pool, Op::avg_pool_grad},
                 {{{2, 7, 9, 3}}},
                 kReal,
                 [](const V& x) {
                     return V{tf::nn::avg_pool2d(x[0], 3, 2, "SAME"),
                              tf::nn::avg_pool2d(x[0], {2, 4}, {1, 3}, "VALID")};
                 },
                 true});
    // ---- fused transformer ops (the *Grad ops run in the gradients): sizes that are not
    // multiples of the kernels' blocks and tiles, every attention option, a head past the CUDA
    // tiles (the host fallback there) ----
    c.push_back({"layer_norm",
                 {Op::layer_norm, Op::layer_norm_grad},
                 {{{7, 45}}, {{45}}, {{45}}},
                 kFloats,
                 [](const V& x) {
                     return V{
                         tf::nn::layer_norm(x[0], x[1], x[2]),
                         tf::nn::layer_norm(
                             tf::reshape(x[0], {7, 5, 9}), {}, {}, std::vector<int64_t>{0, 2})};
                 },
                 true});
    // ---- recurrent sequences (the fused op on the CPU, its op loop elsewhere) ----
    for (const rnn::Cell cell :
         {rnn::Cell::simple, rnn::Cell::lstm, rnn::Cell::gru, rnn::Cell::gru_before}) {
        const int64_t G = rnn::gates_of(cell), U = 3;
        const bool lstm = cell == rnn::Cell::lstm, gru = cell == rnn::Cell::gru;
        std::vector<In> ins{{{2, 4, G * U}}, {{U, G * U}, Kind::unit}, {{2, U}}};
        if (lstm) ins.emplace_back(Shape{2, U});  // c0
        if (gru) ins.emplace_back(Shape{G * U});  // the recurrent bias
        const char* names[] = {"rnn_sequence/simple",
                               "rnn_sequence/lstm",
                               "rnn_sequence/gru",
                               "rnn_sequence/gru_before"};
        c.push_back({names[static_cast<int>(cell)],
                     {Op::rnn_sequence, Op::rnn_sequence_grad},
                     ins,
                     {tf::float32, tf::float64},
                     [cell, U, lstm, gru](const V& x) {
                         rnn::SequenceSpec spec;
                         spec.cell = cell;
                         spec.units = U;
                         spec.activation_fn = [](const Tensor& t) {
                             return tf::tanh(t);
                         };
                         spec.recurrent_activation_fn = [](const Tensor& t) {
                             return tf::sigmoid(t);
                         };
                         rnn::SequenceInputs in;
                         in.xproj = x[0];
                         in.recurrent_kernel = x[1];
                         in.h0 = x[2];
                         if (lstm) in.c0 = x[3];
                         if (gru) in.recurrent_bias = x[3];
                         const rnn::SequenceOutputs o = rnn::run_sequence(spec, in);
                         return lstm ? V{o.states, o.cells} : V{o.states};
                     },
                     true});
    }
    c.push_back({"attention",
                 {Op::attention, Op::attention_grad},
                 {{{1, 9, 2, 8}}, {{1, 11, 2, 8}}, {{1, 11, 2, 8}}},
                 kFloats,
                 [](const V& x) { return V{tf::nn::dot_product_attention(x[0], x[1], x[2])}; },
                 true});
    c.push_back({"attention/causal_bias_mask",
                 {Op::attention, Op::attention_grad},
                 {{{2, 7, 2, 5}},
                  {{2, 6, 2, 5}},
                  {{2, 6, 2, 5}},
                  {{2, 7, 6}},
                  {{2, 1, 7, 6}, Kind::boolean, tf::bool_}},
                 kFloats,
                 [](const V& x) {
                     tf::nn::DotProductAttentionOptions o;
                     o.bias = x[3];
                     o.mask = x[4];
                     o.is_causal = true;
                     return V{tf::nn::dot_product_attention(x[0], x[1], x[2], o)};
                 },
                 true});
    c.push_back({"attention/long_head",
                 {Op::attention, Op::attention_grad},
                 {{{1, 5, 1, 130}}, {{1, 6, 1, 130}}, {{1, 6, 1, 130}}},
                 kReal,
                 [](const V& x) {
                     tf::nn::DotProductAttentionOptions o;
                     o.is_causal = true;
                     o.scale = 0.05;
                     return V{tf::nn::dot_product_attention(x[0], x[1], x[2], o)};
                 },
                 true});
    add_training_cases(c);
    add_model_op_cases(c);
    return c;
}

}  // namespace

Tensor make_input(const In& in, tf::DType dtype, std::mt19937_64& rng) {
    const int64_t n = in.shape.num_elements();
    std::vector<double> v(static_cast<std::size_t>(n));
    std::normal_distribution<double> normal;
    std::uniform_real_distribution<double> uni(-1, 1);
    for (auto& x : v) {
        switch (in.kind) {
            case Kind::normal:
                x = normal(rng);
                break;
            case Kind::positive:
                x = 0.5 + 1.5 * (uni(rng) + 1) / 2;
                break;
            case Kind::unit:
                x = 0.9 * uni(rng);
                break;
            case Kind::small_int:
                x = std::floor(uni(rng) * 5);
                break;
            case Kind::nonzero_int:
                x = 1 + std::floor((uni(rng) + 1) * 2);
                break;
            case Kind::boolean:
                x = uni(rng) > 0 ? 1 : 0;
                break;
            case Kind::index3:
                x = std::floor((uni(rng) + 1) * 1.5);
                break;
            case Kind::index4:
                x = std::floor((uni(rng) + 1) * 2);
                break;
        }
        if (in.kind == Kind::index3) x = std::min(x, 2.0);
        if (in.kind == Kind::index4) x = std::min(x, 3.0);
    }
    const tf::DType dt = in.dtype.value_or(dtype);
    if (dt == tf::uint8 && in.kind != Kind::boolean) {
        for (auto& x : v)
            x = std::abs(x);
    }
    return tf::constant(v, in.shape, tf::float64).cast(dt);
}

bool is_float(DType d) {
    return d == DType::float32 || d == DType::float64 || d == DType::float16 ||
           d == DType::bfloat16;
}

double tolerance(DType d) {
    switch (d) {
        case DType::float64:
            return 1e-9;
        case DType::float32:
            return 2e-5;
        case DType::float16:
            return 2e-3;
        case DType::bfloat16:
            return 1.6e-2;
        default:
            return 0;
    }
}

std::string first_difference(const Tensor& expected, const Tensor& got, double tol) {
    if (expected.shape() != got.shape()) {
        return "shape " + got.shape().str() + " vs " + expected.shape().str();
    }
    if (expected.dtype() != got.dtype()) return "dtype differs";
    const auto a = expected.cpu().cast(DType::float64).to_vector<double>();
    const auto b = got.cpu().cast(DType::float64).to_vector<double>();
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (std::isnan(a[i]) && std::isnan(b[i])) continue;
        if (a[i] == b[i]) continue;
        if (std::abs(a[i] - b[i]) <= tol * std::max(1.0, std::abs(a[i]))) continue;
        return "element " + std::to_string(i) + ": " + std::to_string(b[i]) + " vs " +
               std::to_string(a[i]);
    }
    return "";
}

std::vector<Tensor> make_inputs(const Case& c, DType dtype) {
    std::mt19937_64 rng(std::hash<std::string>{}(c.name + "/" + std::string(dtype_name(dtype))));
    std::vector<Tensor> inputs;
    for (const In& in : c.inputs)
        inputs.push_back(make_input(in, dtype, rng));
    return inputs;
}

const std::vector<Case>& all_cases() {
    static const std::vector<Case> cases = build_cases();
    return cases;
}

// Tape-only ops never run a kernel: tape_ops.cpp records them, test_tape.cpp tests them.
constexpr NoCase kNoCases[] = {
    {Op::read_variable, "recorded by tapes when a Variable is read; tests/autograd/test_tape.cpp"},
    {Op::custom_gradient, "recorded by tf::custom_gradient; tests/autograd/test_tape.cpp"},
};

std::span<const NoCase> ops_without_cases() {
    return kNoCases;
}

}  // namespace tapeflow::op_cases
