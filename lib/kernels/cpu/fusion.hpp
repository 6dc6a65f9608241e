// Deferred element-wise fusion on the CPU: large float element-wise results are computed when first
// read, as one pass over a whole chain of such ops. Used by the element-wise kernels
// (elementwise_loops.hpp); the machinery is in fusion.cpp.
//
// NOTE [Deferred element-wise fusion]: `a * b + a` on 16M floats run op by op moves the bytes of
// two triads (the temporary a*b is written to memory and read back). Instead, an element-wise
// kernel whose output is large (>= fusion_min_elements()), float32/float64, on the CPU, with every
// input either the output's size or a scalar, does not compute: it attaches a FusedExpr (the op's
// block function + input tensors) to the output's Storage, which holds no memory until then. The
// first read of the storage (Storage::data(): any kernel, item(), printing, copies) allocates it
// and evaluates the expression tree rooted there in blocks of a few KiB that stay in L1: pending
// inputs of the same dtype and size are inlined (their own storage is never allocated unless
// someone reads it), other inputs are read from memory. The block functions are the same loops as
// the eager kernels, so results are bitwise identical to unfused execution, and thread-count
// independent.
// Bounds: a chain deeper than kMaxDepth computes eagerly (forcing its inputs), so pending
// expressions never hold unboundedly many input buffers alive; a tree is inlined up to kMaxSteps
// ops, the rest is read as materialized leaves. Memory: never more than eager execution's outputs,
// plus the materialized inputs a pending chain keeps alive until it is read; intermediates that
// are only inlined never take memory at all (running gradient sums stay one buffer).
// Copy-on-write of variables still works: a pending expression holds its inputs' storages, so an
// in-place assign sees them shared and copies.
#pragma once

#include <cstdint>

#include "ops/dispatch.hpp"

namespace tapeflow::cpu::fusion {

/// Computes `out[0, n)` from operands a and b (b unused by unary ops); an operand that does not
/// vary is one value repeated.
using BlockFn =
    void (*)(const void* a, bool a_varies, const void* b, bool b_varies, void* out, int64_t n);

/// Defers ctx's element-wise op (inputs -> outputs[0], computed by `fn`) when fusion applies to it;
/// returns false (the kernel computes now) otherwise.
bool try_defer(const KernelContext& ctx, BlockFn fn);

/// Outputs with fewer elements are computed eagerly; negative: fusion off. The default, 65536, is
/// overridden by TAPEFLOW_FUSION_MIN_ELEMENTS, and TAPEFLOW_FUSION=0 turns fusion off.
int64_t fusion_min_elements();
void set_fusion_min_elements(int64_t n);

}  // namespace tapeflow::cpu::fusion
