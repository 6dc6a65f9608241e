// tf::function's cache of traces (include/tapeflow/function.hpp): TensorFlow's tracing rules —
// one concrete function per input signature (Tensors by shape, dtype and device, Variables and
// other objects by identity, plain values by value), input_signature and its None dimensions,
// reduce_retracing, the retracing warning — over the recordings and plans of lib/function/.
#include <deque>
#include <list>
#include <mutex>

#include <tapeflow/core/logging.hpp>
#include <tapeflow/function.hpp>

#include "autograd/tape.hpp"
#include "core/host_reads.hpp"
#include "function/plan.hpp"
#include "function/recording.hpp"
#include "ops/op_trace.hpp"

namespace tapeflow {
namespace function_detail {
namespace {

// TensorFlow's _FrequentTracingDetector (polymorphic_function.py): a warning when 5 of the calls
// within the last 10 traced, at most twice per function.
class FrequentTracing {
public:
    void called_with_tracing(const std::string& name) {
        ++calls_;
        calls_per_tracing_.push_back(1);
        while (!calls_per_tracing_.empty() && calls_ - calls_per_tracing_.front() > kHistory) {
            calls_ -= calls_per_tracing_.front();
            calls_per_tracing_.pop_front();
        }
        if (warnings_ >= kMaxWarnings || calls_per_tracing_.size() < kThreshold) return;
        ++warnings_;
        logging::warn(
            "{} out of the last {} calls to <function {}> triggered tf.function retracing. Tracing "
            "is expensive and the excessive number of tracings could be due to (1) creating "
            "@tf.function repeatedly in a loop, (2) passing tensors with different shapes, (3) "
            "passing Python objects instead of tensors. For (1), please define your @tf.function "
            "outside of the loop. For (2), @tf.function has reduce_retracing=True option that can "
            "avoid unnecessary retracing. For (3), please refer to "
            "https://www.tensorflow.org/guide/function#controlling_retracing and "
            "https://www.tensorflow.org/api_docs/python/tf/function for  more details.",
            calls_per_tracing_.size(),
            calls_,
            name);
    }
    void called_without_tracing() {
        if (calls_per_tracing_.empty()) calls_per_tracing_.push_back(0);
        ++calls_per_tracing_.back();
        ++calls_;
    }

private:
    static constexpr std::size_t kThreshold = 5;
    static constexpr int64_t kHistory = 10;
    static constexpr int kMaxWarnings = 2;
    std::deque<int64_t> calls_per_tracing_;
    int64_t calls_ = 0;
    int warnings_ = 0;
};

std::string spec_text(const Shape& shape, DType dtype, const std::string& name) {
    std::string dims;
    for (std::size_t i = 0; i < shape.dims().size(); ++i) {
        const int64_t d = shape.dims()[i];
        dims += (i ? ", " : "") + (d < 0 ? std::string("None") : std::to_string(d));
    }
    if (shape.dims().size() == 1) dims += ",";
    return fmt::format("TensorSpec(shape=({}), dtype=tf.{}, name={})",
                       dims,
                       dtype_name(dtype),
                       name.empty() ? "None" : "'" + name + "'");
}

bool compatible(const Shape& general, const Shape& exact) {
    if (general.rank() != exact.rank()) return false;
    for (int64_t i = 0; i < general.rank(); ++i)
        if (general.dims()[static_cast<std::size_t>(i)] >= 0 &&
            general.dims()[static_cast<std::size_t>(i)] !=
                exact.dims()[static_cast<std::size_t>(i)])
            return false;
    return true;
}

// Whether a call's key fits a concrete function's (its tensor shapes may have None dimensions).
bool fits(const std::vector<KeyPart>& general, const std::vector<KeyPart>& exact) {
    if (general.size() != exact.size()) return false;
    for (std::size_t i = 0; i < general.size(); ++i) {
        const KeyPart& g = general[i];
        const KeyPart& e = exact[i];
        if (g.kind != e.kind) return false;
        if (g.kind != KeyPart::tensor) {
            if (!(g == e)) return false;
            continue;
        }
        if (g.dtype != e.dtype || g.device != e.device || g.same_as != e.same_as ||
            !compatible(g.shape, e.shape))
            return false;
    }
    return true;
}

}  // namespace

// One recording of a concrete function, for one set of exact argument shapes.
struct PlanEntry {
    std::vector<Shape> shapes;
    std::unique_ptr<Plan> plan;
    std::shared_ptr<void> output_template;
    bool eager = false;  // fn read tensor values on the host: it runs eagerly at every call
};

}  // namespace function_detail

struct ConcreteFunction::Impl {
    std::string name;
    std::vector<function_detail::KeyPart> key;  // tensor shapes may hold None (-1)
    std::vector<TensorSpec> signature;
    std::list<function_detail::PlanEntry> plans;
    std::mutex mutex;

    function_detail::PlanEntry* plan_for(const std::vector<Tensor>& tensors) {
        for (auto& e : plans) {
            bool same = e.shapes.size() == tensors.size();
            for (std::size_t i = 0; same && i < tensors.size(); ++i)
                same = tensors[i].defined() ? e.shapes[i] == tensors[i].shape() : true;
            if (same) return &e;
        }
        return nullptr;
    }
    const function_detail::Plan& first_plan() const {
        if (plans.empty() || !plans.front().plan)
            throw errors::FailedPreconditionError(
                fmt::format("concrete function '{}' has no trace to replay", name));
        return *plans.front().plan;
    }
};

namespace function_detail {

class Core {
public:
    explicit Core(FunctionOptions options)
        : options_(std::move(options)), name_(options_.name.empty() ? "function" : options_.name) {}

    Outcome call(Call& call, const std::function<std::vector<Tensor>()>& run);
    int64_t tracing_count() const {
        const std::lock_guard lock(mutex_);
        return tracing_count_;
    }
    std::shared_ptr<ConcreteFunction::Impl> find(const std::vector<KeyPart>& key) const {
        for (const auto& c : concretes_)
            if (fits(c->key, key)) return c;
        return nullptr;
    }
    std::vector<KeyPart> signature_key(const Call& call) const;

    mutable std::mutex mutex_;

private:
    FunctionOptions options_;
    std::string name_;
    std::vector<std::shared_ptr<ConcreteFunction::Impl>> concretes_;
    int64_t tracing_count_ = 0;
    int64_t recordings_ = 0;
    FrequentTracing detector_;
};

std::vector<KeyPart> Core::signature_key(const Call& call) const {
    std::vector<KeyPart> key = call.key;
    if (options_.input_signature.empty()) return key;
    const auto& sig = options_.input_signature;
    std::size_t t = 0;
    for (KeyPart& part : key) {
        if (part.kind != KeyPart::tensor) continue;
        if (t >= sig.size())
            throw errors::InvalidArgumentError(fmt::format(
                "tf::function '{}': called with {} Tensor arguments, but its input_signature has "
                "{} TensorSpecs",
                name_,
                call.tensors.size(),
                sig.size()));
        const Tensor& x = call.tensors[t];
        const TensorSpec& spec = sig[t];
        if (!x.defined() || x.dtype() != spec.dtype || !compatible(spec.shape, x.shape()))
            throw errors::InvalidArgumentError(fmt::format(
                "tf::function '{}': argument {}{} is {}, which does not match its input_signature "
                "entry {}",
                name_,
                t,
                spec.name.empty() ? "" : " ('" + spec.name + "')",
                x.defined() ? spec_text(x.shape(), x.dtype(), "") : std::string("undefined"),
                spec_text(spec.shape, spec.dtype, spec.name)));
        part.shape = spec.shape;
        ++t;
    }
    if (t != sig.size())
        throw errors::InvalidArgumentError(fmt::format(
            "tf::function '{}': called with {} Tensor arguments, but its input_signature has {} "
            "TensorSpecs",
            name_,
            t,
            sig.size()));
    return key;
}

Outcome Core::call(Call& call, const std::function<std::vector<Tensor>()>& run) {
    Outcome outcome;
    if (tracing() || tapeflow::detail::active_op_trace() != nullptr || any_tape_recording()) {
        // Something records the ops (an outer trace, a tape, an accumulator, vectorized_map):
        // they must see fn's ops, so it runs as plain eager code.
        outcome.ran_fn = true;
        run();
        return outcome;
    }
    std::unique_lock lock(mutex_);
    std::vector<KeyPart> key = signature_key(call);
    std::shared_ptr<ConcreteFunction::Impl> concrete = find(key);
    const bool new_trace = concrete == nullptr;
    if (new_trace && options_.reduce_retracing) {
        // TensorFlow's reduce_retracing: generalize the dimensions that differ from an earlier
        // trace's to None.
        for (const auto& c : concretes_) {
            if (c->key.size() != key.size()) continue;
            std::vector<KeyPart> general = key;
            bool ok = true;
            for (std::size_t i = 0; ok && i < key.size(); ++i) {
                const KeyPart& a = c->key[i];
                KeyPart& b = general[i];
                if (a.kind != b.kind)
                    ok = false;
                else if (a.kind != KeyPart::tensor)
                    ok = a == b;
                else if (a.dtype != b.dtype || a.device != b.device || a.same_as != b.same_as ||
                         a.shape.rank() != b.shape.rank())
                    ok = false;
                else {
                    std::vector<int64_t> dims = b.shape.dims();
                    for (std::size_t d = 0; d < dims.size(); ++d)
                        if (a.shape.dims()[d] != dims[d]) dims[d] = -1;
                    b.shape = Shape(dims);
                }
            }
            if (ok) {
                key = std::move(general);
                break;
            }
        }
    }
    PlanEntry* entry = concrete ? concrete->plan_for(call.tensors) : nullptr;
    if (entry != nullptr) {
        detector_.called_without_tracing();
        lock.unlock();
        outcome.ran_fn = entry->eager;
        if (entry->eager) {
            run();
        } else {
            outcome.outputs = entry->plan->run(call.tensors);
            outcome.output_template = &entry->output_template;
        }
        return outcome;
    }
    // Record: a new trace, or a concrete function with None dimensions seeing new exact shapes.
    const bool first = recordings_ == 0;
    lock.unlock();
    Recording recording(name_, first);
    const uint64_t reads = tapeflow::detail::host_reads();
    std::vector<Tensor> outputs;
    {
        const RecordingScope scope(recording);
        outputs = run();
    }
    const uint64_t host_reads = tapeflow::detail::host_reads() - reads;
    PlanEntry made;
    for (const Tensor& t : call.tensors)
        made.shapes.push_back(t.defined() ? t.shape() : Shape());
    made.eager = host_reads > 0;
    if (made.eager) {
        logging::warn(
            "tf::function '{}' read tensor values on the host while tracing ({} reads: item(), "
            "to_vector(), data()); a trace cannot depend on them, so this signature runs eagerly "
            "at every call. Keep values in tensors (tf::where, tf::cond-style arithmetic) to "
            "replay it.",
            name_,
            host_reads);
    } else {
        made.plan = std::make_unique<Plan>(recording, call.tensors, outputs);
    }
    lock.lock();
    ++recordings_;
    concrete = find(key);  // another thread may have traced it meanwhile
    if (concrete == nullptr) {
        concrete = std::make_shared<ConcreteFunction::Impl>();
        concrete->name = name_;
        concrete->key = key;
        for (const KeyPart& p : key)
            if (p.kind == KeyPart::tensor) concrete->signature.push_back({p.shape, p.dtype, ""});
        for (std::size_t i = 0;
             i < concrete->signature.size() && i < options_.input_signature.size();
             ++i)
            concrete->signature[i].name = options_.input_signature[i].name;
        concretes_.push_back(concrete);
    }
    if (new_trace) {
        ++tracing_count_;
        detector_.called_with_tracing(name_);
    } else {
        detector_.called_without_tracing();
    }
    concrete->plans.push_back(std::move(made));
    outcome.ran_fn = true;
    outcome.output_template =
        concrete->plans.back().eager ? nullptr : &concrete->plans.back().output_template;
    return outcome;
}

std::shared_ptr<Core> make_core(FunctionOptions options) {
    return std::make_shared<Core>(std::move(options));
}

Outcome call(Core& core, Call& call, const std::function<std::vector<Tensor>()>& run) {
    return core.call(call, run);
}

int64_t tracing_count(const Core& core) {
    return core.tracing_count();
}

std::optional<ConcreteFunction> concrete_for(Core& core, const Call& call) {
    const std::lock_guard lock(core.mutex_);
    auto c = core.find(core.signature_key(call));
    if (c == nullptr || c->plans.empty()) return std::nullopt;
    return ConcreteFunction(c);
}

}  // namespace function_detail

std::vector<Tensor> ConcreteFunction::operator()(const std::vector<Tensor>& inputs) const {
    function_detail::PlanEntry* entry = nullptr;
    {
        const std::lock_guard lock(impl_->mutex);
        if (inputs.size() != impl_->signature.size())
            throw errors::InvalidArgumentError(
                fmt::format("concrete function '{}' takes {} Tensors, got {}",
                            impl_->name,
                            impl_->signature.size(),
                            inputs.size()));
        for (std::size_t i = 0; i < inputs.size(); ++i) {
            const TensorSpec& s = impl_->signature[i];
            if (!inputs[i].defined() || inputs[i].dtype() != s.dtype ||
                !function_detail::compatible(s.shape, inputs[i].shape()))
                throw errors::InvalidArgumentError(fmt::format(
                    "concrete function '{}': argument {} is {}, which does not match {}",
                    impl_->name,
                    i,
                    inputs[i].defined()
                        ? function_detail::spec_text(inputs[i].shape(), inputs[i].dtype(), "")
                        : std::string("undefined"),
                    function_detail::spec_text(s.shape, s.dtype, s.name)));
        }
        entry = impl_->plan_for(inputs);
    }
    if (entry == nullptr || !entry->plan)
        throw errors::InvalidArgumentError(fmt::format(
            "concrete function '{}' was not traced for these exact shapes (or runs eagerly); "
            "call the tf::function itself",
            impl_->name));
    return entry->plan->run(inputs);
}

Graph ConcreteFunction::graph() const {
    return impl_->first_plan().graph();
}

const std::vector<TensorSpec>& ConcreteFunction::input_signature() const {
    return impl_->signature;
}

std::size_t ConcreteFunction::arena_bytes() const {
    return impl_->first_plan().stats().arena_bytes;
}

std::size_t ConcreteFunction::arena_unshared_bytes() const {
    return impl_->first_plan().stats().arena_unshared_bytes;
}

std::size_t ConcreteFunction::num_ops() const {
    return impl_->first_plan().stats().kernel_steps;
}

}  // namespace tapeflow
