// Forward mode: the accumulator stack, the JVP of one op, and the double-VJP fallback.
//
// NOTE [Forward mode]: a ForwardAccumulator maps tensor ids to tangents. apply() offers every
// finished op to the recording accumulators after the tapes (record_operation); an accumulator
// whose map holds a tangent for one of the op's floating inputs runs the op's JVP rule (OpDef::jvp)
// and stores the outputs' tangents (floating outputs only: integer and bool outputs have none).
// The rules are written with public ops, so the JVP computation is itself an ordinary sequence of
// ops: while accumulator k computes, accumulators k.. and the tapes pushed after k was made are
// hidden, and everything outer sees it. That gives nesting in every order: an outer accumulator
// differentiates an inner one's tangents (exact to every order), an outer tape records an inner
// accumulator's JVPs (reverse-over-forward), an accumulator sees tape.gradient's ops
// (forward-over-reverse). A row without an explicit rule uses jvp_by_double_vjp, which runs the
// row's backward formula on a private tape: <vjp(u), t> is linear in u with gradient J t.
// One op is offered to the accumulator before it runs instead: a matmul whose input has a tangent
// (NOTE [Fused matmul tangent] in tape.hpp), primal and tangent from one gemm.
#include "autograd/forward_mode.hpp"

#include <algorithm>
#include <utility>

#include <tapeflow/autograd/gradient_tape.hpp>
#include <tapeflow/core/error.hpp>
#include <tapeflow/ops/array.hpp>
#include <tapeflow/ops/creation.hpp>
#include <tapeflow/ops/math.hpp>

#include "ops/op_def.hpp"
#include "ops/sum_to_shape.hpp"

namespace tapeflow {
namespace {

TensorMeta meta_of(const Tensor& t) {
    return {t.shape(), t.dtype(), t.device()};
}

// Hides accumulators [k, end) and the tapes `acc` did not see when it was made, for the lifetime
// of the guard (the JVP computation of accumulator k).
class HideInner {
public:
    HideInner(std::size_t k, const AccumulatorState& acc)
        : accumulators_(active_accumulators()), tapes_(active_tapes()) {
        active_accumulators().resize(k);
        if (active_tapes().size() > acc.outer_tapes) active_tapes().resize(acc.outer_tapes);
    }
    ~HideInner() {
        active_accumulators() = std::move(accumulators_);
        active_tapes() = std::move(tapes_);
    }
    HideInner(const HideInner&) = delete;
    HideInner& operator=(const HideInner&) = delete;

private:
    std::vector<AccumulatorState*> accumulators_;
    std::vector<TapeState*> tapes_;
};

// The input tangents `acc` holds for `inputs` (undefined where none); false when it holds none.
bool input_tangents(const AccumulatorState& acc,
                    std::span<const Tensor> inputs,
                    std::vector<Tensor>& out) {
    bool any = false;
    out.assign(inputs.size(), Tensor());
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        if (!is_floating(inputs[i].dtype())) continue;
        const auto it = acc.tangents.find(inputs[i].id());
        if (it == acc.tangents.end()) continue;
        out[i] = it->second;
        any = true;
    }
    return any;
}

// Stores the rule's tangents for the floating outputs, broadcast to the output's shape.
void store_tangents(AccumulatorState& acc,
                    Op op,
                    std::span<const Tensor> outputs,
                    const Tangents& tangents) {
    if (tangents.size() != outputs.size()) {
        throw errors::InternalError(
            fmt::format("the JVP rule of '{}' returned {} tangents for {} outputs; this is a "
                        "tapeflow bug",
                        op_name(op),
                        tangents.size(),
                        outputs.size()));
    }
    for (std::size_t j = 0; j < outputs.size(); ++j) {
        Tensor t = tangents[j];
        if (!t.defined() || !is_floating(outputs[j].dtype())) continue;
        if (t.dtype() != outputs[j].dtype()) {
            throw errors::InternalError(
                fmt::format("the JVP rule of '{}' gave output {} a {} tangent for a {} output; "
                            "this is a tapeflow bug",
                            op_name(op),
                            j,
                            dtype_name(t.dtype()),
                            dtype_name(outputs[j].dtype())));
        }
        if (t.shape() != outputs[j].shape()) t = broadcast_to(t, outputs[j].shape());
        acc.tangents[outputs[j].id()] = std::move(t);
    }
}

using AnyBackward = std::function<Grads(const GradCtx&)>;

Tangents double_vjp(const JvpCtx& c, const AnyBackward& backward) {
    // u = ones: vjp(u) is linear in u, but formulas like SqrtGrad's where(g == 0, 0, ...) are not
    // at u = 0, so the seed must be nonzero there.
    std::vector<Tensor> u;
    std::vector<Tensor> watched;
    std::vector<std::size_t> watched_at;
    GradientTape tape(false, false);
    for (std::size_t j = 0; j < c.out.size(); ++j) {
        const Tensor& y = c.out[j];
        if (is_floating(y.dtype())) {
            u.push_back(ones_like(y));
            tape.watch(u.back());
            watched.push_back(u.back());
            watched_at.push_back(j);
        } else {
            u.push_back(zeros_like(y));
        }
    }
    std::vector<TensorMeta> in_meta;
    std::vector<TensorMeta> out_meta;
    std::vector<char> needs;
    for (std::size_t i = 0; i < c.in.size(); ++i) {
        in_meta.push_back(meta_of(c.in[i]));
        needs.push_back(c.has(i) ? 1 : 0);
    }
    for (const Tensor& y : c.out)
        out_meta.push_back(meta_of(y));
    const GradCtx g{u, c.in, c.out, c.attrs, in_meta, out_meta, 0, needs};
    const Grads vjp = backward(g);
    Tensor inner;  // <vjp(u), t>
    for (std::size_t i = 0; i < c.in.size() && i < vjp.size(); ++i) {
        if (!c.has(i) || !vjp[i].defined()) continue;
        const Tensor d = sum_to_shape(vjp[i].dense(), c.in[i].shape());
        const Tensor term = reduce_sum(multiply(d, c.t(i)));
        inner = inner.defined() ? add(inner, term) : term;
    }
    Tangents result(c.out.size());
    if (!inner.defined()) return result;
    const std::vector<Gradient> du = tape.gradient(inner, watched);
    for (std::size_t k = 0; k < watched.size(); ++k) {
        if (du[k].defined()) result[watched_at[k]] = du[k].dense();
    }
    return result;
}

}  // namespace

std::vector<AccumulatorState*>& active_accumulators() {
    thread_local std::vector<AccumulatorState*> stack;
    return stack;
}

void push_accumulator(AccumulatorState& acc) {
    if (acc.on_stack) return;
    acc.outer_tapes = active_tapes().size();
    active_accumulators().push_back(&acc);
    acc.on_stack = true;
}

void pop_accumulator(AccumulatorState& acc) {
    if (!acc.on_stack) return;
    auto& stack = active_accumulators();
    stack.erase(std::remove(stack.begin(), stack.end(), &acc), stack.end());
    acc.on_stack = false;
}

Tensor add_tangents(const Tensor& a, const Tensor& b) {
    if (!a.defined()) return b;
    if (!b.defined()) return a;
    return add(a, b);
}

Tangents jvp_by_double_vjp(const JvpCtx& c) {
    const BackwardFn backward = op_def(c.op).backward;
    return double_vjp(c, [backward](const GradCtx& g) { return backward(g); });
}

void accumulate_operation(Op op,
                          std::span<const Tensor> inputs,
                          std::span<const Tensor> outputs,
                          const Attrs& attrs) {
    const OpDef& def = op_def(op);
    if (def.backward == nullptr) return;  // not differentiable: no tangent flows (stop_gradient)
    if (std::none_of(outputs.begin(), outputs.end(), [](const Tensor& y) {
            return is_floating(y.dtype());
        })) {
        return;
    }
    if (def.jvp == nullptr) {
        throw errors::InternalError(fmt::format(
            "op '{}' has a gradient but no JVP rule; this is a tapeflow bug", op_name(op)));
    }
    // A copy: the JVP computations below hide parts of the stack.
    const std::vector<AccumulatorState*> accumulators = active_accumulators();
    std::vector<Tensor> tangents;
    for (std::size_t k = 0; k < accumulators.size(); ++k) {
        AccumulatorState& acc = *accumulators[k];
        if (!input_tangents(acc, inputs, tangents)) continue;
        Tangents out;
        {
            const HideInner hide(k, acc);
            out = def.jvp(JvpCtx{op, inputs, outputs, tangents, attrs});
        }
        store_tangents(acc, op, outputs, out);
    }
}

Tensor fused_matmul_with_tangent(std::span<const Tensor> inputs, const Attrs& attrs) {
    // Smaller products stay on the generic path: the concat costs more than the shared gemm saves,
    // and the smallest ones run a plain loop instead of OpenBLAS (blas.cpp), so M and 2M rows
    // could round differently.
    constexpr int64_t kMinMultiplyAdds = int64_t{1} << 16;
    const auto& accumulators = active_accumulators();
    if (accumulators.size() != 1 || inputs.size() != 2) return {};
    AccumulatorState& acc = *accumulators[0];
    const Tensor& a = inputs[0];
    const Tensor& b = inputs[1];
    // CPU only: there a row block of a gemm is the gemm of that block alone, bit for bit (the
    // slices of blas.cpp split M or N, never K); cuBLAS may pick another algorithm for 2M rows.
    if (acc.outer_tapes != 0 || !a.device().is_cpu() || !is_floating(a.dtype()) || a.rank() != 2 ||
        b.rank() != 2 || attrs.get<bool>("transpose_a")) {
        return {};
    }
    const auto found = acc.tangents.find(a.id());
    if (found == acc.tangents.end()) return {};
    const Tensor& ta = found->second;
    if (ta.shape() != a.shape() || ta.dtype() != a.dtype() || ta.device() != a.device()) return {};
    const bool transpose_b = attrs.get<bool>("transpose_b");
    const int64_t m = a.shape()[0];
    const int64_t k = a.shape()[1];
    const int64_t n = b.shape()[transpose_b ? 0 : 1];
    if (b.shape()[transpose_b ? 1 : 0] != k || m * n * k < kMinMultiplyAdds) return {};
    // A tangent of b too (forward over reverse: the weights' tangents) stays generic: its a db is a
    // gemm of its own either way, and the fused path measured 2.5% slower on the MLP's HVP there
    // (the concats and more short-lived buffers; docs/performance.md "Forward mode").
    if (acc.tangents.count(b.id()) != 0) return {};
    Tensor both;
    {
        const HideInner hide(0, acc);  // outer_tapes == 0: nothing records these
        both = matmul(concat({a, ta}, 0), b, false, transpose_b);
    }
    const TensorImpl& whole = *both.impl();
    const std::size_t block = static_cast<std::size_t>(m * n) * dtype_size(a.dtype());
    Tensor y = Tensor::view(whole.storage, whole.offset, Shape({m, n}), a.dtype());
    Tensor t = Tensor::view(whole.storage, whole.offset + block, Shape({m, n}), a.dtype());
    record_on_tapes(Op::matmul, inputs, std::span<const Tensor>(&y, 1), attrs);
    acc.tangents[y.id()] = std::move(t);
    return y;
}

void accumulate_variable_read(const Variable& variable, const Tensor& value) {
    if (!is_floating(value.dtype())) return;
    for (AccumulatorState* acc : active_accumulators()) {
        const auto it = acc->tangents.find(variable.id());
        if (it != acc->tangents.end()) acc->tangents[value.id()] = it->second;
    }
}

void accumulate_custom(std::span<const Tensor> inputs,
                       const Tensor& output,
                       const CustomBackwardFn& backward) {
    if (!is_floating(output.dtype())) return;
    const std::vector<AccumulatorState*> accumulators = active_accumulators();
    std::vector<Tensor> tangents;
    const std::span<const Tensor> outputs(&output, 1);
    for (std::size_t k = 0; k < accumulators.size(); ++k) {
        AccumulatorState& acc = *accumulators[k];
        if (!input_tangents(acc, inputs, tangents)) continue;
        Tangents out;
        {
            const HideInner hide(k, acc);
            const Attrs attrs;
            out =
                double_vjp(JvpCtx{Op::custom_gradient, inputs, outputs, tangents, attrs}, backward);
        }
        store_tangents(acc, Op::custom_gradient, outputs, out);
    }
}

}  // namespace tapeflow
