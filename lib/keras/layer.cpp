// Layer: lazy build on the first call, the InputSpec check with Keras' messages (plus the fix),
// and the device rule (weights and factory tensors follow the input's device).
#include <mutex>
#include <set>

#include <fmt/format.h>

#include <tapeflow/core/device.hpp>
#include <tapeflow/core/error.hpp>
#include <tapeflow/core/logging.hpp>
#include <tapeflow/keras/layer.hpp>
#include <tapeflow/ops/creation.hpp>

#include "autograd/autocast.hpp"
#include "function/trace_hooks.hpp"

namespace tapeflow::keras::layers {

std::optional<uint64_t> detail::next_seed(const std::optional<uint64_t>& seed, uint64_t& calls) {
    if (!seed) return std::nullopt;
    const uint64_t next = *seed + 0x9E3779B97F4A7C15ULL * calls++;  // a golden-ratio stride
    if (function_detail::tracing()) [[unlikely]] {
        // Inside a tf::function the counter advances at every replay, as eagerly.
        function_detail::note_seed_source(next,
                                          [base = *seed, &calls]() -> std::optional<uint64_t> {
                                              return base + 0x9E3779B97F4A7C15ULL * calls++;
                                          });
    }
    return next;
}

std::string shape_text(const Shape& shape) {
    std::string text = "(";
    for (int64_t i = 0; i < shape.rank(); ++i) {
        if (i > 0) text += ", ";
        text += i == 0 ? std::string("None") : std::to_string(shape[i]);
    }
    return text + (shape.rank() == 1 ? ",)" : ")");
}

Layer::Layer(std::string name) : Module(std::move(name)) {}

void Layer::set_dtype_policy(mixed_precision::Policy policy) {
    policy_ = std::move(policy);
    policy_set_ = true;
}

Tensor Layer::cast_input(const Tensor& x) const {
    if (!policy_set_ || !x.defined() || !is_floating(x.dtype()) || x.dtype() == compute_dtype())
        return x;
    return cast(x, compute_dtype());
}

Tensor Layer::call_with_policy(const std::function<Tensor()>& fn) const {
    const tapeflow::detail::AutocastScope autocast(
        policy_set_ ? std::optional<DType>(compute_dtype()) : std::nullopt);
    return fn();
}

bool Layer::autocasts_new_weights() const {
    return policy_set_ && policy_.variable_dtype() != compute_dtype() && autocast_weights();
}

Layer::Layer(std::string name, std::string_view class_name)
    : Module(std::move(name), class_name), class_name_(class_name) {}

std::string Layer::class_name() const {
    return class_name_.empty() ? keras::detail::class_name_of(*this) : class_name_;
}

int64_t Layer::count_params() const {
    int64_t n = 0;
    for (const Variable& v : variables())
        n += v.shape().num_elements();
    return n;
}

void Layer::check_input(const Tensor& x, const InputSpec& spec, int index) const {
    if (!x.defined())
        throw errors::InvalidArgumentError(
            fmt::format("Input {} of layer \"{}\" is an undefined tensor", index, name()));
    const int64_t rank = x.rank();
    auto fail = [&](const std::string& what, const std::string& fix) {
        throw errors::InvalidArgumentError(fmt::format(
            "Input {} of layer \"{}\" ({}) is incompatible with the layer: {}, but received input "
            "with shape {}. {}",
            index,
            name(),
            class_name(),
            what,
            x.shape().debug_string(),
            fix));
    };
    if (spec.ndim && rank != *spec.ndim)
        fail(fmt::format("expected ndim={}, found ndim={}", *spec.ndim, rank),
             fmt::format("Pass a rank-{} tensor (reshape or expand_dims the input).", *spec.ndim));
    if (spec.min_ndim && rank < *spec.min_ndim)
        fail(fmt::format("expected min_ndim={}, found ndim={}", *spec.min_ndim, rank),
             fmt::format("Pass a tensor of rank >= {} (e.g. add a batch dimension).",
                         *spec.min_ndim));
    for (const auto& [axis, size] : spec.axes) {
        const int64_t a = axis < 0 ? axis + rank : axis;
        if (a < 0 || a >= rank || x.shape()[a] != size)
            fail(fmt::format("expected axis {} of input shape to have value {}", axis, size),
                 "The layer was built for that size on its first call; give it inputs of that "
                 "size or use a new layer.");
    }
}

namespace {

// The layers whose call() is running on this thread, innermost last.
thread_local std::vector<const Layer*> calling;

struct CallingScope {
    explicit CallingScope(const Layer* layer) { calling.push_back(layer); }
    ~CallingScope() { calling.pop_back(); }
    CallingScope(const CallingScope&) = delete;
    CallingScope& operator=(const CallingScope&) = delete;
};

// Warns once per parent class when `parent` calls `child` without tracking it.
void check_tracked(const Layer& parent, const Layer& child) {
    for (const auto& m : parent.submodules())
        if (m.get() == &child) return;
    static std::mutex mutex;
    static std::set<std::string> warned;
    const std::string cls = parent.class_name();
    {
        const std::lock_guard lock(mutex);
        if (!warned.insert(cls).second) return;
    }
    logging::warn(
        "Layer \"{}\" ({}) calls layer \"{}\" ({}) but does not track it: its weights are "
        "missing from {}.variables(), from training and from saved files. Track it when it is "
        "made: `child = track(std::make_shared<...>(...))` (warned once per class)",
        parent.name(),
        cls,
        child.name(),
        child.class_name(),
        parent.name());
}

}  // namespace

Tensor Layer::operator()(const Tensor& x, bool training) {
    if (!calling.empty() && !calling.back()->tracking_checked_)
        check_tracked(*calling.back(), *this);
    if (!x.defined())
        throw errors::InvalidArgumentError(fmt::format(
            "layer \"{}\" ({}) was called with an undefined tensor", name(), class_name()));
    const auto scope = name_scope();
    // Weights and any tensor a layer makes from nothing go where the input is.
    std::optional<DeviceScope> on_device;
    if (x.device() != default_device()) on_device.emplace(x.device());
    // Keras: floating inputs in the compute dtype, weights in the variable dtype (autocast in the
    // call when the two differ).
    const Tensor in = cast_input(x);
    if (!built_) {
        choose_variable_dtype(in);
        build(in.shape());
        built_ = true;
        build_input_shape_ = in.shape();
    }
    check_input(in, input_spec_);
    Tensor y;
    {
        const CallingScope running(this);
        y = call_with_policy([&] { return call(in, training); });
    }
    tracking_checked_ = true;
    if (!output_shape_ || !(*output_shape_ == y.shape())) output_shape_ = y.shape();
    return y;
}

}  // namespace tapeflow::keras::layers
