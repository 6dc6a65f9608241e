// Gradient rows of the tape-only ops: a variable read passes its gradient to the variable;
// custom_gradient entries carry their own backward function (see tape.cpp), so their row is empty.
#include "ops/op_families.hpp"

namespace tapeflow {
namespace {

const OpDef kTapeOps[] = {
    {Op::read_variable,
     Save::nothing,
     [](const GradCtx& c) -> Grads { return {c.grad()}; },
     kBatchable,
     jvp_self_adjoint},
    {Op::custom_gradient, Save::inputs_and_output, nullptr},
};

}  // namespace

std::span<const OpDef> tape_op_defs() {
    return kTapeOps;
}

}  // namespace tapeflow
