// tf::autodiff::ForwardAccumulator on top of forward_mode.cpp, the forward-over-reverse
// Hessian-vector products and tf::hessians.
#include <algorithm>
#include <atomic>

#include <tapeflow/autograd/forward_accumulator.hpp>
#include <tapeflow/core/error.hpp>
#include <tapeflow/core/logging.hpp>
#include <tapeflow/ops/array.hpp>
#include <tapeflow/ops/creation.hpp>
#include <tapeflow/ops/math.hpp>

#include "autograd/forward_mode.hpp"

namespace tapeflow {
namespace autodiff {
namespace {

void check_counts(std::size_t primals, std::size_t tangents) {
    if (primals != tangents) {
        throw errors::InvalidArgumentError(
            fmt::format("ForwardAccumulator: {} primals but {} tangents; give one tangent per "
                        "primal",
                        primals,
                        tangents));
    }
}

// TensorFlow's checks: the tangent has the primal's shape and dtype.
bool check_pair(
    std::size_t i, const Shape& shape, DType dtype, bool defined, const Tensor& tangent) {
    if (!defined) {
        throw errors::InvalidArgumentError(
            fmt::format("ForwardAccumulator: primal {} is undefined", i));
    }
    if (!tangent.defined()) {
        throw errors::InvalidArgumentError(
            fmt::format("ForwardAccumulator: the tangent of primal {} is undefined", i));
    }
    if (tangent.shape() != shape) {
        throw errors::InvalidArgumentError(
            fmt::format("ForwardAccumulator: tangent {} was expected to be of shape {} but is "
                        "instead of shape {}",
                        i,
                        shape.str(),
                        tangent.shape().str()));
    }
    if (tangent.dtype() != dtype) {
        throw errors::InvalidArgumentError(
            fmt::format("ForwardAccumulator: tangent {} has dtype {} but its primal has dtype {}",
                        i,
                        dtype_name(tangent.dtype()),
                        dtype_name(dtype)));
    }
    if (!is_floating(dtype)) {
        static std::atomic<int> warnings{0};
        if (warnings.fetch_add(1) < 5) {
            logging::warn(
                "The dtype of the watched primal must be floating (e.g. tf.float32), got {}",
                dtype_name(dtype));
        }
        return false;
    }
    return true;
}

void watch_once(AccumulatorState& acc, std::size_t i, int64_t id, const Tensor& tangent) {
    if (!acc.tangents.emplace(id, tangent).second) {
        throw errors::InvalidArgumentError(
            fmt::format("ForwardAccumulator: primal {} is given twice", i));
    }
}

Tensor lookup(const AccumulatorState& acc,
              int64_t id,
              const Tensor& zeros_of,
              UnconnectedGradients unconnected) {
    const auto it = acc.tangents.find(id);
    if (it != acc.tangents.end()) return it->second;
    if (unconnected == UnconnectedGradients::zero) return zeros_like(zeros_of);
    return {};
}

}  // namespace

ForwardAccumulator::ForwardAccumulator(std::vector<Tensor> primals, std::vector<Tensor> tangents)
    : state_(std::make_shared<AccumulatorState>()) {
    check_counts(primals.size(), tangents.size());
    for (std::size_t i = 0; i < primals.size(); ++i) {
        const Tensor& p = primals[i];
        const bool floating = check_pair(i,
                                         p.defined() ? p.shape() : Shape(),
                                         p.defined() ? p.dtype() : DType::float32,
                                         p.defined(),
                                         tangents[i]);
        if (floating) watch_once(*state_, i, p.id(), tangents[i]);
    }
    push_accumulator(*state_);
}

ForwardAccumulator::ForwardAccumulator(std::vector<Variable> primals, std::vector<Tensor> tangents)
    : state_(std::make_shared<AccumulatorState>()) {
    check_counts(primals.size(), tangents.size());
    for (std::size_t i = 0; i < primals.size(); ++i) {
        const Variable& v = primals[i];
        const bool defined = v.defined();
        const bool floating = check_pair(i,
                                         defined ? v.shape() : Shape(),
                                         defined ? v.dtype() : DType::float32,
                                         defined,
                                         tangents[i]);
        if (floating) watch_once(*state_, i, v.id(), tangents[i]);
    }
    push_accumulator(*state_);
}

ForwardAccumulator::~ForwardAccumulator() {
    pop_accumulator(*state_);
}

Tensor ForwardAccumulator::jvp(const Tensor& target, UnconnectedGradients unconnected) const {
    if (!target.defined())
        throw errors::InvalidArgumentError("ForwardAccumulator.jvp: the target is undefined");
    if (!is_floating(target.dtype())) {  // integer outputs have no tangent
        return unconnected == UnconnectedGradients::zero ? zeros_like(target) : Tensor();
    }
    return lookup(*state_, target.id(), target, unconnected);
}

Tensor ForwardAccumulator::jvp(const Variable& target, UnconnectedGradients unconnected) const {
    if (!target.defined()) {
        throw errors::InvalidArgumentError("ForwardAccumulator.jvp: the variable handle is empty");
    }
    const auto it = state_->tangents.find(target.id());
    if (it != state_->tangents.end()) return it->second;
    if (unconnected == UnconnectedGradients::zero) {
        const DeviceScope scope(target.device());
        return zeros(target.shape(), target.dtype());
    }
    return {};
}

Tensor hessian_vector_product(const std::function<Tensor(const Tensor&)>& f,
                              const Tensor& x,
                              const Tensor& v) {
    if (!f) throw errors::InvalidArgumentError("hessian_vector_product: f is not callable");
    // Forward over reverse: the accumulator is outer, so it sees the backward walk's ops, and the
    // tape (inner) does not record the JVP computations.
    const ForwardAccumulator acc({x}, {v});
    Tensor g;
    {
        GradientTape tape;
        tape.watch(x);
        const Tensor y = f(x);
        if (!y.defined())
            throw errors::InvalidArgumentError("hessian_vector_product: f returned no tensor");
        g = tape.gradient(y, x, {.unconnected_gradients = UnconnectedGradients::zero}).dense();
    }
    return acc.jvp(g, UnconnectedGradients::zero);
}

std::vector<Tensor> hessian_vector_product(const std::function<Tensor()>& loss,
                                           const std::vector<Variable>& variables,
                                           const std::vector<Tensor>& vectors) {
    if (!loss) throw errors::InvalidArgumentError("hessian_vector_product: loss is not callable");
    const ForwardAccumulator acc(variables, vectors);
    std::vector<Gradient> grads;
    {
        GradientTape tape(false, false);
        tape.watch(variables);
        const Tensor y = loss();
        if (!y.defined())
            throw errors::InvalidArgumentError("hessian_vector_product: loss returned no tensor");
        grads = tape.gradient(y, variables, {.unconnected_gradients = UnconnectedGradients::zero});
    }
    std::vector<Tensor> result;
    result.reserve(grads.size());
    for (const Gradient& g : grads)
        result.push_back(acc.jvp(g.dense(), UnconnectedGradients::zero));
    return result;
}

}  // namespace autodiff

namespace {

TensorMeta meta_of(const Tensor& t) {
    return {t.shape(), t.dtype(), t.device()};
}

// Puts `tape` on the stack for its lifetime (at its old place afterwards), or takes it off.
class TapeRecording {
public:
    TapeRecording(TapeState& tape, bool recording) : tape_(tape), was_(tape.on_stack) {
        auto& stack = active_tapes();
        const auto it = std::find(stack.begin(), stack.end(), &tape);
        index_ = static_cast<std::size_t>(it - stack.begin());
        if (recording) {
            push_tape(tape);
        } else {
            pop_tape(tape);
        }
    }
    ~TapeRecording() {
        pop_tape(tape_);
        if (!was_) return;
        auto& stack = active_tapes();
        stack.insert(stack.begin() + static_cast<std::ptrdiff_t>(std::min(index_, stack.size())),
                     &tape_);
        tape_.on_stack = true;
    }
    TapeRecording(const TapeRecording&) = delete;
    TapeRecording& operator=(const TapeRecording&) = delete;

private:
    TapeState& tape_;
    bool was_;
    std::size_t index_ = 0;
};

Tensor zero_hessian(const Tensor& x) {
    std::vector<int64_t> dims = x.shape().dims();
    dims.insert(dims.end(), x.shape().dims().begin(), x.shape().dims().end());
    const DeviceScope scope(x.device());
    return zeros(Shape(std::move(dims)), x.dtype());
}

}  // namespace

Tensor hessians(const Tensor& y, const Tensor& x) {
    if (!y.defined() || !x.defined())
        throw errors::InvalidArgumentError("hessians: ys and xs must be defined tensors");
    if (!is_floating(x.dtype())) {
        throw errors::InvalidArgumentError(
            fmt::format("hessians: xs must be floating, got {}", dtype_name(x.dtype())));
    }
    TapeState* tape = nullptr;
    auto& stack = active_tapes();
    for (auto it = stack.rbegin(); it != stack.rend() && tape == nullptr; ++it) {
        TapeState* t = *it;
        if (t->watched.count(x.id()) != 0 && t->watched.count(y.id()) != 0) tape = t;
    }
    if (tape == nullptr) {
        throw errors::InvalidArgumentError(
            "hessians: no recording GradientTape connects ys to xs; compute ys inside a "
            "GradientTape that watches xs (or use tf::hessians(f, x))");
    }
    Gradient g;
    {
        // The first walk is recorded on the tape itself, so the second can differentiate it.
        const TapeRecording recording(*tape, true);
        const Tensor target = y.rank() == 0 ? y : reduce_sum(y);
        const int64_t id = x.id();
        const TensorMeta meta = meta_of(x);
        g = compute_gradients(*tape,
                              std::span<const Tensor>(&target, 1),
                              std::span<const int64_t>(&id, 1),
                              std::span<const TensorMeta>(&meta, 1),
                              GradientOptions{})[0];
    }
    if (!g.defined()) return zero_hessian(x);
    const TapeRecording paused(*tape, false);
    return jacobian_on_tape(*tape, g.dense(), x, UnconnectedGradients::zero);
}

Tensor hessians(const std::function<Tensor(const Tensor&)>& f, const Tensor& x) {
    if (!f) throw errors::InvalidArgumentError("hessians: f is not callable");
    GradientTape tape(true);
    tape.watch(x);
    const Tensor y = f(x);
    if (!y.defined()) throw errors::InvalidArgumentError("hessians: f returned no tensor");
    return hessians(y, x);
}

}  // namespace tapeflow
