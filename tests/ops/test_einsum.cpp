// einsum: every subscript form (matmuls, batch dims, transposes, diagonals, traces, outer
// products, summed labels, scalars, `...` broadcasting, the implicit form) against a brute-force
// sum over all label values in float64, finite-difference gradients of first and second order,
// integer operands, and each error of the subscripts.
#include <map>
#include <string>

#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

#include "nn/nn_testing.hpp"
#include "support/gradcheck.hpp"

namespace tf = tapeflow;
using tf::testing::check_gradients;
using tf::testing::random_f64;

namespace {

using Tensors = std::vector<tf::Tensor>;
using nn_testing::check_throws_with;
using nn_testing::gradient_fn;

// out[out labels] = sum over every assignment of all labels of the product of the operands'
// elements; `equation` is explicit ("ab,bc->ac") with letters only.
std::vector<double> brute_force(const std::string& equation, const Tensors& inputs) {
    const auto arrow = equation.find("->");
    const std::string out = equation.substr(arrow + 2);
    std::vector<std::string> subs;
    for (std::size_t begin = 0;;) {
        const auto comma = equation.find(',', begin);
        subs.push_back(equation.substr(begin, std::min(comma, arrow) - begin));
        if (comma == std::string::npos || comma > arrow) break;
        begin = comma + 1;
    }
    std::map<char, int64_t> size;
    for (std::size_t i = 0; i < subs.size(); ++i) {
        for (std::size_t a = 0; a < subs[i].size(); ++a)
            size[subs[i][a]] = inputs[i].shape()[static_cast<int64_t>(a)];
    }
    std::vector<char> labels;
    for (const auto& [l, n] : size)
        labels.push_back(l);
    std::vector<std::vector<double>> vals;
    for (const auto& t : inputs)
        vals.push_back(t.to_vector<double>());
    const auto offset = [&](const std::string& sub, const std::map<char, int64_t>& at) {
        int64_t o = 0;
        for (const char l : sub)
            o = o * size[l] + at.at(l);
        return o;
    };
    int64_t out_n = 1;
    for (const char l : out)
        out_n *= size[l];
    std::vector<double> result(static_cast<std::size_t>(out_n), 0.0);
    std::map<char, int64_t> at;
    for (const char l : labels)
        at[l] = 0;
    for (;;) {
        bool empty = false;
        for (const char l : labels)
            empty = empty || size[l] == 0;
        if (empty) break;
        double p = 1;
        for (std::size_t i = 0; i < subs.size(); ++i)
            p *= vals[i][static_cast<std::size_t>(offset(subs[i], at))];
        result[static_cast<std::size_t>(offset(out, at))] += p;
        std::size_t d = labels.size();
        while (d > 0 && ++at[labels[d - 1]] == size[labels[d - 1]])
            at[labels[--d]] = 0;
        if (d == 0) break;
    }
    return result;
}

void check_values(const std::string& equation,
                  const Tensors& inputs,
                  const std::string& explicit_eq,
                  const tf::Shape& shape) {
    INFO(equation);
    const tf::Tensor got = tf::einsum(equation, inputs);
    CHECK(got.shape() == shape);
    const auto want = brute_force(explicit_eq, inputs);
    const auto have = got.to_vector<double>();
    REQUIRE(have.size() == want.size());
    for (std::size_t i = 0; i < want.size(); ++i)
        CHECK(have[i] == Approx(want[i]).margin(1e-12));
}

}  // namespace

TEST_CASE("einsum matches a brute-force sum for every subscript form", "[einsum]") {
    const auto r = [](tf::Shape s, uint64_t seed = 1) {
        return random_f64(s, -1, 1, seed);
    };
    struct Case {
        std::string equation;
        Tensors inputs;
        std::string explicit_eq;  // the same without implicit output (for the reference)
        tf::Shape shape;
    };
    const std::vector<Case> cases{
        {"ij,jk->ik", {r({3, 4}), r({4, 5}, 2)}, "ij,jk->ik", {3, 5}},
        {"bij,bjk->bik", {r({2, 3, 4}), r({2, 4, 5}, 2)}, "bij,bjk->bik", {2, 3, 5}},
        {"ji,jk->ik", {r({4, 3}), r({4, 5}, 2)}, "ji,jk->ik", {3, 5}},
        {"ij,kj->ik", {r({3, 4}), r({5, 4}, 2)}, "ij,kj->ik", {3, 5}},
        {"ij,jk->ki", {r({3, 4}), r({4, 5}, 2)}, "ij,jk->ki", {5, 3}},
        {"bqhd,bkhd->bhqk", {r({2, 3, 2, 4}), r({2, 5, 2, 4}, 2)}, "bqhd,bkhd->bhqk", {2, 2, 3, 5}},
        {"bhqk,bkhd->bqhd", {r({2, 2, 3, 5}), r({2, 5, 2, 4}, 2)}, "bhqk,bkhd->bqhd", {2, 3, 2, 4}},
        {"ijk,jil->kl", {r({2, 3, 4}), r({3, 2, 5}, 2)}, "ijk,jil->kl", {4, 5}},
        {"ij->ji", {r({3, 4})}, "ij->ji", {4, 3}},
        {"ijk->kij", {r({2, 3, 4})}, "ijk->kij", {4, 2, 3}},
        {"ii->i", {r({4, 4})}, "ii->i", {4}},
        {"ii->", {r({4, 4})}, "ii->", {}},
        {"iji->j", {r({3, 2, 3})}, "iji->j", {2}},
        {"iii->i", {r({3, 3, 3})}, "iii->i", {3}},
        {"iijj->ij", {r({2, 2, 3, 3})}, "iijj->ij", {2, 3}},
        {"ijk->", {r({2, 3, 4})}, "ijk->", {}},
        {"ijk->j", {r({2, 3, 4})}, "ijk->j", {3}},
        {"i,i->", {r({5}), r({5}, 2)}, "i,i->", {}},
        {"i,j->ij", {r({3}), r({4}, 2)}, "i,j->ij", {3, 4}},
        {"ij,ij->ij", {r({3, 4}), r({3, 4}, 2)}, "ij,ij->ij", {3, 4}},
        {"ij,ij->", {r({3, 4}), r({3, 4}, 2)}, "ij,ij->", {}},
        {"ij,ji->i", {r({3, 4}), r({4, 3}, 2)}, "ij,ji->i", {3}},
        {"iij,jk->ik", {r({3, 3, 4}), r({4, 2}, 2)}, "iij,jk->ik", {3, 2}},
        {"ij,k->i", {r({3, 4}), r({5}, 2)}, "ij,k->i", {3}},
        {"ab,->ab", {r({2, 3}), r({}, 2)}, "ab,->ab", {2, 3}},
        {",->", {r({}), r({}, 2)}, ",->", {}},
        {"Ab,bA->", {r({2, 3}), r({3, 2}, 2)}, "Ab,bA->", {}},
        {"i j , j k -> i k", {r({3, 4}), r({4, 5}, 2)}, "ij,jk->ik", {3, 5}},
        // implicit output: labels appearing once, in ASCII order
        {"ij,jk", {r({3, 4}), r({4, 5}, 2)}, "ij,jk->ik", {3, 5}},
        {"ba", {r({3, 4})}, "ba->ab", {4, 3}},
        {"ii", {r({4, 4})}, "ii->", {}},
        {"bA", {r({3, 4})}, "bA->Ab", {4, 3}},
        {"ij,ij", {r({3, 4}), r({3, 4}, 2)}, "ij,ij->", {}},
        // empty dimensions
        {"ij,jk->ik", {r({0, 4}), r({4, 5}, 2)}, "ij,jk->ik", {0, 5}},
        {"ij,jk->ik", {r({3, 0}), r({0, 5}, 2)}, "ij,jk->ik", {3, 5}},
    };
    for (const Case& c : cases)
        check_values(c.equation, c.inputs, c.explicit_eq, c.shape);
}

TEST_CASE("einsum '...' broadcasts like NumPy", "[einsum]") {
    const tf::Tensor a = random_f64({2, 1, 3, 4}, -1, 1, 3);
    const tf::Tensor b = random_f64({5, 4, 6}, -1, 1, 4);
    const tf::Tensor ab = tf::broadcast_to(a, {2, 5, 3, 4});
    const tf::Tensor bb = tf::broadcast_to(b, {2, 5, 4, 6});
    int line = 0;
    const auto same = [&line](const tf::Tensor& x, const tf::Tensor& y) {
        INFO("comparison " << ++line);
        REQUIRE(x.shape() == y.shape());
        const auto u = x.to_vector<double>(), v = y.to_vector<double>();
        for (std::size_t i = 0; i < u.size(); ++i)
            CHECK(u[i] == Approx(v[i]).margin(1e-12));
    };
    same(tf::einsum("...ij,...jk->...ik", {a, b}), tf::einsum("xyij,xyjk->xyik", {ab, bb}));
    same(tf::einsum("...ij,...jk", {a, b}), tf::einsum("xyij,xyjk->xyik", {ab, bb}));
    same(tf::einsum("...ij,...jk->ik...", {a, b}), tf::einsum("xyij,xyjk->ikxy", {ab, bb}));
    // `...` in the middle and at the end; a named batch label next to it
    const tf::Tensor c = random_f64({3, 2, 5, 4}, -1, 1, 5);
    same(tf::einsum("i...j->j...i", {c}), tf::einsum("ixyj->jxyi", {c}));
    same(tf::einsum("b...,b...->b...", {c, c}), c * c);
    const tf::Tensor d = random_f64({2, 3, 3}, -1, 1, 6);
    same(tf::einsum("...ii->...i", {d}), tf::einsum("xii->xi", {d}));
    // `...` covering no dimension is allowed anywhere
    const tf::Tensor m = random_f64({3, 4}, -1, 1, 7);
    const tf::Tensor n = random_f64({4, 2}, -1, 1, 8);
    same(tf::einsum("ij...,jk->ik", {m, n}), tf::matmul(m, n));
    same(tf::einsum("...,...->...", {a, a}), a * a);
}

TEST_CASE("einsum gradients, first and second order", "[einsum]") {
    const auto r = [](tf::Shape s, uint64_t seed) {
        return random_f64(s, -1, 1, seed);
    };
    struct Case {
        std::string equation;
        Tensors inputs;
    };
    const std::vector<Case> cases{
        {"ij,jk->ik", {r({3, 4}, 1), r({4, 2}, 2)}},
        {"bij,bkj->bki", {r({2, 3, 4}, 1), r({2, 2, 4}, 2)}},
        {"bqhd,bkhd->bhqk", {r({2, 3, 2, 2}, 1), r({2, 2, 2, 2}, 2)}},
        {"ii->i", {r({3, 3}, 1)}},
        {"iij,jk->ki", {r({3, 3, 2}, 1), r({2, 2}, 2)}},
        {"ij,k->ik", {r({3, 2}, 1), r({2}, 2)}},
        {"i,j->ij", {r({3}, 1), r({4}, 2)}},
        {"...ij,...jk->...ik", {r({2, 1, 3, 2}, 1), r({3, 2, 2}, 2)}},
        {"ijk->", {r({2, 3, 2}, 1)}},
    };
    for (const Case& c : cases) {
        INFO(c.equation);
        const auto f = [eq = c.equation](const Tensors& in) {
            return tf::einsum(eq, in);
        };
        check_gradients(f, c.inputs);
        for (std::size_t i = 0; i < c.inputs.size(); ++i)
            check_gradients(gradient_fn(f, i), c.inputs);
    }
}

TEST_CASE("einsum of integers and 16-bit floats", "[einsum]") {
    const tf::Tensor a = tf::constant({{1, 2}, {3, 4}});
    const tf::Tensor b = tf::constant({{5, 6}, {7, 8}});
    CHECK(tf::einsum("ij,jk->ik", {a, b}).to_vector<int32_t>() ==
          std::vector<int32_t>{19, 22, 43, 50});
    CHECK(tf::einsum("ii", {a}).item<int32_t>() == 5);
    const tf::Tensor h = a.cast(tf::float16);
    CHECK(tf::einsum("ij,jk->ik", {h, b.cast(tf::float16)}).cast(tf::float32).to_vector<float>() ==
          std::vector<float>{19, 22, 43, 50});
}

TEST_CASE("einsum errors name the equation, the shapes and the fix", "[einsum][errors]") {
    const tf::Tensor m = random_f64({2, 3});
    const tf::Tensor v = random_f64({3});
    check_throws_with(
        [&] { tf::einsum("ij,jk->ik", {m}); }, "2 subscript(s) for 1 operand(s)", "[Op:Einsum]");
    check_throws_with(
        [&] {
            tf::einsum("ij,jk->ik", {m, m});
        },
        "label 'j' has size",
        "[2,3], [2,3]");
    check_throws_with(
        [&] { tf::einsum("ijk->i", {m}); }, "has 3 label(s) but operand 0 has rank 2", "'...'");
    check_throws_with([&] { tf::einsum("i->ii", {v}); }, "repeats the label 'i'", "distinct");
    check_throws_with(
        [&] { tf::einsum("i->j", {v}); }, "output label 'j' is in no input", "every output label");
    check_throws_with([&] { tf::einsum("i1->i", {v}); }, "character '1'", "letters");
    check_throws_with([&] { tf::einsum("i..->i", {v}); }, "'.' outside an ellipsis");
    check_throws_with([&] { tf::einsum("...i...->i", {v}); }, "more than one ellipsis");
    check_throws_with([&] { tf::einsum("...j->j", {m}); }, "no '...'", "add '...' to the output");
    check_throws_with([&] { tf::einsum("i->i->i", {v}); }, "more than one '->'");
    check_throws_with([&] { tf::einsum("ijk...->i", {v}); },
                      "named label(s) but operand 0 has rank 1");
    check_throws_with([&] { tf::einsum("ii->i", {m}); }, "label 'i' has size");
    check_throws_with(
        [&] {
            tf::einsum("...i,...i->...i", {random_f64({2, 3}), random_f64({4, 3})});
        },
        "do not broadcast",
        "equal or 1");
    check_throws_with(
        [&] {
            tf::einsum("i,i->i", {v, v.cast(tf::float32)});
        },
        "float64 and float32",
        "cast");
    check_throws_with(
        [&] {
            tf::einsum("i,i,i->i", {v, v, v});
        },
        "one or two operands",
        "pairwise");
    check_throws_with([&] { tf::einsum("i->i", {tf::Tensor()}); }, "undefined");
}
