// apply(): validate -> allocate -> dispatch -> record on watching tapes. See NOTE [Op call path] in
// docs/architecture.md.
#include "ops/apply.hpp"

#include "autograd/tape.hpp"
#include "ops/dispatch.hpp"
#include "ops/op_trace.hpp"
#include "profiler/op_scope.hpp"

namespace tapeflow {
namespace {

// Validates inputs and returns the device the op runs on: the inputs' device, or the default
// device for ops without inputs. tapeflow never copies between devices implicitly.
Device op_device(Op op, std::span<const Tensor> inputs) {
    const int arity = op_arity(op);
    if (arity >= 0 && static_cast<int>(inputs.size()) != arity) {
        op_fail<errors::InternalError>(op,
                                       "op '{}' takes {} inputs, got {}; this is a tapeflow bug",
                                       op_name(op),
                                       arity,
                                       inputs.size());
    }
    if (inputs.empty()) return default_device();
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        if (!inputs[i].defined()) {
            op_fail(op, "input {} of '{}' is an undefined tensor", i, op_name(op));
        }
    }
    const Device device = inputs[0].device();
    for (std::size_t i = 1; i < inputs.size(); ++i) {
        if (inputs[i].device() != device) {
            op_fail(op,
                    "inputs must be on one device, but input 0 is on {} and input {} on {}; copy "
                    "with .to() first",
                    device.str(),
                    i,
                    inputs[i].device().str());
        }
    }
    return device;
}

Tensor make_output(OutputSpec spec, std::span<const Tensor> inputs, Device device) {
    if (spec.alias_input < 0) return Tensor::empty(std::move(spec.shape), spec.dtype, device);
    const TensorImpl& source = *inputs[static_cast<std::size_t>(spec.alias_input)].impl();
    return Tensor::view(
        source.storage, source.offset + spec.byte_offset, std::move(spec.shape), spec.dtype);
}

void run_kernel(Op op,
                Device device,
                std::span<const Tensor> inputs,
                std::span<Tensor> outputs,
                const Attrs& attrs) {
    const KernelFn kernel = resolve_kernel(op, device, inputs, outputs);
    kernel(KernelContext{op, device, inputs, outputs, attrs});
}

Tensor apply_untraced(Op op,
                      std::span<const Tensor> inputs,
                      OutputSpec output,
                      const Attrs& attrs) {
    return oom_as_error(op_type(op), [&] {
        const Device device = op_device(op, inputs);
        if (op == Op::matmul && !active_accumulators().empty() &&
            detail::active_op_trace() == nullptr) {
            // NOTE [Fused matmul tangent] (autograd/tape.hpp): primal and tangent in one gemm (not
            // while a trace records every call: it would see the inner concat and gemm only).
            if (Tensor fused = fused_matmul_with_tangent(inputs, attrs); fused.defined())
                return fused;
        }
        const bool computed = output.alias_input < 0;
        Tensor out = make_output(std::move(output), inputs, device);
        if (computed) run_kernel(op, device, inputs, std::span<Tensor>(&out, 1), attrs);
        // The trace first: an accumulator's JVP ops (run by record_operation) read the output.
        if (OpTrace* trace = detail::active_op_trace()) [[unlikely]] {
            trace->record(op, inputs, std::span<const Tensor>(&out, 1), attrs);
        }
        if (any_tape_recording()) {
            record_operation(op, inputs, std::span<const Tensor>(&out, 1), attrs);
        }
        return out;
    });
}

std::vector<Tensor> apply_multi_untraced(Op op,
                                         std::span<const Tensor> inputs,
                                         std::span<const OutputSpec> outputs,
                                         const Attrs& attrs) {
    return oom_as_error(op_type(op), [&] {
        const Device device = op_device(op, inputs);
        if (outputs.empty()) detail::trace_state_change(fmt::format("op {}", op_type(op)));
        std::vector<Tensor> out;
        out.reserve(outputs.size());
        bool all_views = !outputs.empty();  // no outputs: an in-place op (training ops) still runs
        for (const OutputSpec& spec : outputs) {
            out.push_back(make_output(spec, inputs, device));
            all_views = all_views && spec.alias_input >= 0;
        }
        if (!all_views) run_kernel(op, device, inputs, out, attrs);
        if (OpTrace* trace = detail::active_op_trace()) [[unlikely]] {
            trace->record(op, inputs, out, attrs);
        }
        if (any_tape_recording()) record_operation(op, inputs, out, attrs);
        return out;
    });
}

}  // namespace

KernelFn resolve_kernel(Op op,
                        Device device,
                        std::span<const Tensor> inputs,
                        std::span<const Tensor> outputs) {
    if (op_dispatch(op) == DispatchOn::none) {
        op_fail<errors::InternalError>(
            op, "op '{}' has no kernels; this is a tapeflow bug", op_name(op));
    }
    const bool on_input = op_dispatch(op) == DispatchOn::input || outputs.empty();
    if (on_input && inputs.empty()) {
        op_fail<errors::InternalError>(
            op, "op '{}' dispatches on an input but has none; this is a tapeflow bug", op_name(op));
    }
    const DType dtype = on_input ? inputs[0].dtype() : outputs[0].dtype();
    return kernel_registry().find(op, device, dtype);
}

void fail_input_dtype(Op op, std::size_t index, DType expected, DType got) {
    op_fail(op,
            "cannot compute {} as input #{}(zero-based) was expected to be a {} tensor but is a {} "
            "tensor",
            op_type(op),
            index,
            tf_type_name(expected),
            tf_type_name(got));
}

OpTrace*& detail::active_op_trace() {
    thread_local OpTrace* trace = nullptr;
    return trace;
}

// While a profiler session traces ops, each call runs inside an OpScope (lib/profiler/); otherwise
// the one relaxed load of framework_traced() is all the profiler costs (NOTE [Profiler cost]).
Tensor apply(Op op, std::span<const Tensor> inputs, OutputSpec output, const Attrs& attrs) {
    if (profiler::detail::framework_traced()) [[unlikely]] {
        profiler::detail::OpScope scope(op, inputs);
        Tensor out = apply_untraced(op, inputs, std::move(output), attrs);
        scope.finish(inputs, std::span<const Tensor>(&out, 1), attrs);
        return out;
    }
    return apply_untraced(op, inputs, std::move(output), attrs);
}

std::vector<Tensor> apply_multi(Op op,
                                std::span<const Tensor> inputs,
                                std::span<const OutputSpec> outputs,
                                const Attrs& attrs) {
    if (profiler::detail::framework_traced()) [[unlikely]] {
        profiler::detail::OpScope scope(op, inputs);
        std::vector<Tensor> out = apply_multi_untraced(op, inputs, outputs, attrs);
        scope.finish(inputs, out, attrs);
        return out;
    }
    return apply_multi_untraced(op, inputs, outputs, attrs);
}

}  // namespace tapeflow
