#include "train/traced_apply.hpp"

#include "function/trace_hooks.hpp"

namespace tapeflow::detail {

bool apply_as_host_step(train::Optimizer& optimizer,
                        const std::vector<train::GradAndVar>& grads_and_vars,
                        const std::optional<Variable>& global_step) {
    if (!function_detail::tracing()) [[likely]]
        return false;
    // The gradients as tensors (the step's inputs), and how to rebuild them.
    enum class Kind : uint8_t { none, dense, sparse };
    struct Layout {
        Kind kind;
        Shape dense_shape;
        Variable variable;
    };
    std::vector<Tensor> inputs;
    std::vector<Layout> layout;
    for (const train::GradAndVar& p : grads_and_vars) {
        if (!p.gradient.defined()) {
            layout.push_back({Kind::none, {}, p.variable});
        } else if (p.gradient.is_sparse()) {
            const IndexedSlices& s = p.gradient.sparse();
            inputs.push_back(s.values);
            inputs.push_back(s.indices);
            layout.push_back({Kind::sparse, s.dense_shape, p.variable});
        } else {
            inputs.push_back(p.gradient.dense());
            layout.push_back({Kind::dense, {}, p.variable});
        }
    }
    train::Optimizer* target = &optimizer;
    function_detail::host_step(
        "apply_gradients",
        std::move(inputs),
        [target, layout, global_step](std::span<const Tensor> in) {
            std::vector<train::GradAndVar> pairs;
            pairs.reserve(layout.size());
            std::size_t next = 0;
            for (const Layout& l : layout) {
                if (l.kind == Kind::none) {
                    pairs.push_back({Gradient(), l.variable});
                } else if (l.kind == Kind::dense) {
                    pairs.push_back({Gradient(in[next++]), l.variable});
                } else {
                    pairs.push_back({Gradient(IndexedSlices{in[next], in[next + 1], l.dense_shape}),
                                     l.variable});
                    next += 2;
                }
            }
            target->apply_gradients(pairs, global_step);
        });
    return true;
}

}  // namespace tapeflow::detail
