// tf::function: trace a function once per input signature, replay the trace without per-op
// dispatch (TensorFlow 2's @tf.function). See docs/function.md.
//
//     auto step = tf::function([&](const tf::Tensor& x, const tf::Tensor& y) {
//         tf::GradientTape tape;
//         tf::Tensor loss = tf::reduce_mean(tf::square(tf::matmul(x, w) - y));
//         optimizer.apply_gradients({{tape.gradient(loss, w), w}});
//         return loss;
//     });
//     for (...) tf::Tensor loss = step(x, y);   // traced on the first call, replayed after
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <tapeflow/autograd/graph.hpp>
#include <tapeflow/autograd/variable.hpp>
#include <tapeflow/core/export.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/ops/creation.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow {

/// A Tensor argument's type: a -1 dimension is None (any size).
struct TensorSpec {
    Shape shape;
    DType dtype = DType::float32;
    std::string name = "";
};

struct FunctionOptions {
    /// Fixes the signature: one trace for every call whose Tensor arguments match these specs
    /// (InvalidArgumentError for one that does not).
    std::vector<TensorSpec> input_signature = {};
    /// TensorFlow's: after a retrace for new shapes, the dimensions that changed become None.
    bool reduce_retracing = false;
    /// Accepted for TensorFlow's signature: element-wise fusion is always on.
    bool jit_compile = false;
    /// For messages and graphs ("" = "function").
    std::string name = "";
};

namespace function_detail {

/// One piece of a call's cache key.
struct KeyPart {
    enum Kind : uint8_t { tensor, variable, value, open, close } kind = value;
    Shape shape;  // tensor
    DType dtype = DType::float32;
    Device device;
    int32_t same_as = -1;            // tensor: the earlier argument it is the same tensor as
    const void* identity = nullptr;  // variable or object
    std::string text;                // value: its type and text
    bool operator==(const KeyPart&) const = default;
};

/// A key part of `kind` holding `text` and `identity`.
inline KeyPart key_part(KeyPart::Kind kind, std::string text = {}, const void* identity = nullptr) {
    KeyPart part;
    part.kind = kind;
    part.text = std::move(text);
    part.identity = identity;
    return part;
}

struct Call {
    std::vector<KeyPart> key;
    std::vector<Tensor> tensors;  // the Tensor arguments, in order
};

class Core;
struct Outcome {
    bool ran_fn = false;                               // fn ran on this call (traced, or inline)
    std::vector<Tensor> outputs;                       // a replay's outputs
    std::shared_ptr<void>* output_template = nullptr;  // where a trace keeps fn's result
};

std::shared_ptr<Core> make_core(FunctionOptions options);
/// Runs one call: traces `run` (fn on the call's arguments, returning its flattened Tensor
/// outputs) when no trace fits, replays one otherwise, or calls `run` directly when something
/// records ops outside (a GradientTape, a ForwardAccumulator, an enclosing trace).
Outcome call(Core& core, Call& call, const std::function<std::vector<Tensor>()>& run);
int64_t tracing_count(const Core& core);

// ---- arguments: the cache key and the Tensors ----
template <class T>
struct is_vector : std::false_type {};
template <class T, class A>
struct is_vector<std::vector<T, A>> : std::true_type {};

template <class T>
void add_arg(Call& call, const T& arg) {
    using U = std::decay_t<T>;
    if constexpr (std::is_same_v<U, Tensor>) {
        KeyPart part = key_part(KeyPart::tensor);
        if (arg.defined()) {
            part.shape = arg.shape();
            part.dtype = arg.dtype();
            part.device = arg.device();
            for (std::size_t i = 0; i < call.tensors.size(); ++i)
                if (call.tensors[i].defined() && call.tensors[i].id() == arg.id()) {
                    part.same_as = static_cast<int32_t>(i);
                    break;
                }
        } else {
            part.same_as = -2;  // an undefined Tensor
        }
        call.key.push_back(std::move(part));
        call.tensors.push_back(arg);
    } else if constexpr (std::is_same_v<U, Variable>) {
        call.key.push_back(key_part(KeyPart::variable, {}, arg.state().get()));
    } else if constexpr (is_vector<U>::value || requires { std::tuple_size<U>::value; }) {
        call.key.push_back(key_part(KeyPart::open));
        if constexpr (is_vector<U>::value) {
            for (const auto& e : arg)
                add_arg(call, e);
        } else {
            std::apply([&](const auto&... e) { (add_arg(call, e), ...); }, arg);
        }
        call.key.push_back(key_part(KeyPart::close));
    } else if constexpr (std::is_pointer_v<U> || requires {
                             arg.get();
                             typename U::element_type;
                         }) {
        if constexpr (std::is_pointer_v<U>) {
            call.key.push_back(
                key_part(KeyPart::value, typeid(U).name(), static_cast<const void*>(arg)));
        } else {
            call.key.push_back(
                key_part(KeyPart::value, typeid(U).name(), static_cast<const void*>(arg.get())));
        }
    } else if constexpr (std::is_enum_v<U>) {
        call.key.push_back(key_part(
            KeyPart::value,
            fmt::format("{}:{}", typeid(U).name(), static_cast<std::underlying_type_t<U>>(arg))));
    } else if constexpr (fmt::is_formattable<U>::value) {
        // Plain values are part of the key, as Python values are for tf.function.
        call.key.push_back(key_part(KeyPart::value, fmt::format("{}:{}", typeid(U).name(), arg)));
    } else {
        // Any other object: by identity (TensorFlow keys unhashable Python objects by id).
        call.key.push_back(
            key_part(KeyPart::value, typeid(U).name(), static_cast<const void*>(&arg)));
    }
}

// ---- results: Tensors out of (and back into) fn's return value ----
template <class T, class F>
void for_each_tensor(T& value, F&& f) {
    using U = std::decay_t<T>;
    if constexpr (std::is_same_v<U, Tensor>) {
        f(value);
    } else if constexpr (is_vector<U>::value) {
        for (auto& e : value)
            for_each_tensor(e, f);
    } else if constexpr (requires { std::tuple_size<U>::value; }) {
        std::apply([&](auto&... e) { (for_each_tensor(e, f), ...); }, value);
    } else if constexpr (requires {
                             typename U::mapped_type;
                             value.begin()->second;
                         }) {
        for (auto& [k, v] : value)
            for_each_tensor(v, f);
    } else if constexpr (requires {
                             value.has_value();
                             *value;
                         }) {
        if (value.has_value()) for_each_tensor(*value, f);
    }
    // Anything else holds no Tensor: returned as the trace returned it.
}

}  // namespace function_detail

/// A traced function for one signature (TensorFlow's ConcreteFunction).
class ConcreteFunction {
public:
    /// Replays the trace on `inputs` (the Tensor arguments of the call that traced it, in order).
    std::vector<Tensor> operator()(const std::vector<Tensor>& inputs) const;
    /// The traced ops as a GraphDef (as GradientTape::graph()).
    Graph graph() const;
    /// The Tensor arguments' specs (None dimensions as -1).
    const std::vector<TensorSpec>& input_signature() const;
    /// Bytes of the replay's arena (small results, shared by liveness) and what the same results
    /// would take unshared; ops, host steps and variable reads replayed per call.
    std::size_t arena_bytes() const;
    std::size_t arena_unshared_bytes() const;
    std::size_t num_ops() const;

    struct Impl;
    explicit ConcreteFunction(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

private:
    std::shared_ptr<Impl> impl_;
};

namespace function_detail {
/// The concrete function `call` would replay, if one was traced.
std::optional<ConcreteFunction> concrete_for(Core& core, const Call& call);
}  // namespace function_detail

/// The callable tf::function returns: call it as fn.
template <class F>
class Function {
public:
    Function(F fn, FunctionOptions options)
        : fn_(std::move(fn)), core_(function_detail::make_core(std::move(options))) {}

    template <class... Args>
    decltype(auto) operator()(Args&&... args) {
        using R = std::invoke_result_t<F&, Args&...>;
        function_detail::Call call;
        (function_detail::add_arg(call, args), ...);
        if constexpr (std::is_void_v<R>) {
            function_detail::call(*core_, call, [&] {
                std::invoke(fn_, args...);
                return std::vector<Tensor>{};
            });
        } else {
            std::optional<std::decay_t<R>> result;
            const function_detail::Outcome outcome = function_detail::call(*core_, call, [&] {
                result.emplace(std::invoke(fn_, args...));
                std::vector<Tensor> flat;
                function_detail::for_each_tensor(*result, [&](Tensor& t) { flat.push_back(t); });
                return flat;
            });
            if (outcome.ran_fn) {
                if (outcome.output_template != nullptr)
                    *outcome.output_template = std::make_shared<std::decay_t<R>>(*result);
                return std::decay_t<R>(std::move(*result));
            }
            std::decay_t<R> out =
                *static_cast<const std::decay_t<R>*>(outcome.output_template->get());
            std::size_t next = 0;
            function_detail::for_each_tensor(out, [&](Tensor& t) { t = outcome.outputs[next++]; });
            return out;
        }
    }

    /// TensorFlow's experimental_get_tracing_count(): how many times fn was traced.
    int64_t experimental_get_tracing_count() const {
        return function_detail::tracing_count(*core_);
    }

    /// The concrete function for these arguments (Tensors, or TensorSpecs standing for them),
    /// tracing it on zeros — so running fn, state changes included — when none exists yet.
    template <class... Args>
    ConcreteFunction get_concrete_function(const Args&... args) {
        function_detail::Call call;
        (add_spec_or_arg(call, args), ...);
        if (auto existing = function_detail::concrete_for(*core_, call)) return *existing;
        (*this)(placeholder(args)...);
        return *function_detail::concrete_for(*core_, call);
    }

private:
    template <class T>
    static void add_spec_or_arg(function_detail::Call& call, const T& arg) {
        if constexpr (std::is_same_v<T, TensorSpec>) {
            function_detail::add_arg(call, placeholder(arg));
        } else {
            function_detail::add_arg(call, arg);
        }
    }
    template <class T>
    static decltype(auto) placeholder(const T& arg) {
        if constexpr (std::is_same_v<T, TensorSpec>) {
            std::vector<int64_t> dims = arg.shape.dims();
            for (int64_t& d : dims)
                if (d < 0) d = 1;
            return zeros(Shape(dims), arg.dtype);
        } else {
            return (arg);
        }
    }

    F fn_;
    std::shared_ptr<function_detail::Core> core_;
};

/// Traces `fn` on its first call per input signature and replays the trace after (see the file
/// comment and docs/function.md for the tracing rules).
template <class F>
Function<F> function(F fn, FunctionOptions options = {}) {
    return Function<F>(std::move(fn), std::move(options));
}

}  // namespace tapeflow

TAPEFLOW_API_END
