// Forward-mode internals: a ForwardAccumulator's state and the hooks the recording functions of
// tape.cpp call for every op, variable read and custom_gradient (NOTE [Forward mode] in
// forward_mode.cpp).
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>

#include <tapeflow/autograd/variable.hpp>
#include <tapeflow/core/tensor.hpp>

#include "autograd/tape.hpp"

namespace tapeflow {

struct AccumulatorState {
    /// Tangent of every tensor (and watched variable) by id; an absent id has a zero tangent.
    std::unordered_map<int64_t, Tensor> tangents;
    /// How many tapes were recording when the accumulator was made: those (the outer ones) record
    /// its JVP computations, tapes pushed later do not.
    std::size_t outer_tapes = 0;
    bool on_stack = false;
};

void push_accumulator(AccumulatorState& acc);
void pop_accumulator(AccumulatorState& acc);

/// Computes the outputs' tangents of a finished op in every recording accumulator whose tangents
/// reach one of its inputs.
void accumulate_operation(Op op,
                          std::span<const Tensor> inputs,
                          std::span<const Tensor> outputs,
                          const Attrs& attrs);
/// A read of a watched variable carries the variable's tangent.
void accumulate_variable_read(const Variable& variable, const Tensor& value);
/// custom_gradient: the JVP of its backward function by the double-VJP trick.
void accumulate_custom(std::span<const Tensor> inputs,
                       const Tensor& output,
                       const CustomBackwardFn& backward);

}  // namespace tapeflow
