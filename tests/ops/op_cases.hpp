// The op-case table: rows that run every op of lib/ops/op_list.def on generated inputs. Read by
// the generic CPU test and the float64 finite-difference check (test_op_cases.cpp), the CPU/GPU
// parity suite (tests/gpu/test_gpu_parity.cpp), forward mode (tests/autograd/test_forward_mode.cpp)
// and vectorized_map (tests/autograd/test_vectorized_map.cpp: each row mapped over a batch).
// test_registry.cpp fails, naming the op, when an op has no row here (the rows and their format:
// op_cases.cpp).
#pragma once

#include <functional>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include <tapeflow/tapeflow.hpp>

#include "ops/op.hpp"

namespace tapeflow::op_cases {

/// How an input's values are drawn (before the cast to its dtype).
enum class Kind {
    normal,       // N(0, 1)
    positive,     // [0.5, 2): logs, roots, divisors, bases of pow
    unit,         // (-0.9, 0.9)
    small_int,    // integers in [-5, 4]
    nonzero_int,  // integers in [1, 4]: integer divisors
    boolean,      // 0 or 1
    index3,       // integers in [0, 2]: indices into a dimension of 3
    index4,       // integers in [0, 3]: indices into a dimension of 4
};

/// One input of a case: its shape, its values, and its dtype (default: the dtype the case runs in).
struct In {
    In(Shape s, Kind k = Kind::normal, std::optional<DType> d = {})
        : shape(std::move(s)), kind(k), dtype(d) {}
    Shape shape;
    Kind kind;
    std::optional<DType> dtype;
};

/// The inputs (on the device the case runs on) to the outputs.
using Fn = std::function<std::vector<Tensor>(const std::vector<Tensor>& inputs)>;

/// One row: see the format at the top of op_cases.cpp.
struct Case {
    std::string name;
    std::vector<Op> covers;
    std::vector<In> inputs;
    std::vector<DType> dtypes;
    Fn f;
    bool grad = false;
};

/// Every row, built once.
const std::vector<Case>& all_cases();

/// Ops that have no row, each with the reason (ops that only exist on tapes).
struct NoCase {
    Op op;
    const char* reason;
};
std::span<const NoCase> ops_without_cases();

/// The input's values, drawn from `rng`, cast to `in.dtype` or else `dtype`.
Tensor make_input(const In& in, DType dtype, std::mt19937_64& rng);

/// A case's inputs in `dtype`, from a generator seeded by the case's name and the dtype.
std::vector<Tensor> make_inputs(const Case& c, DType dtype);

bool is_float(DType d);

/// Relative tolerance of one op's result in `d` (0 for integers and bool: exact).
double tolerance(DType d);

/// "" when `got` equals `expected` within `tol` relative to max(1, |expected|) (NaN equals NaN);
/// else the first difference.
std::string first_difference(const Tensor& expected, const Tensor& got, double tol);

}  // namespace tapeflow::op_cases
