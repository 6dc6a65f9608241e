// Variables: the live-variable registry (unique names, creation order), reads recorded on tapes,
// copy-on-write assignment, name scopes and TF1 get_variable / variable_scope.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <mutex>
#include <set>
#include <tuple>
#include <unordered_map>

#include <fmt/ranges.h>

#include <tapeflow/autograd/variable.hpp>
#include <tapeflow/ops/array.hpp>
#include <tapeflow/ops/creation.hpp>
#include <tapeflow/ops/math.hpp>
#include <tapeflow/random.hpp>

#include "autograd/autocast.hpp"
#include "autograd/tape.hpp"
#include "autograd/variable_observers.hpp"
#include "autograd/variable_update.hpp"
#include "core/backend.hpp"
#include "core/dtype_dispatch.hpp"
#include "core/ids.hpp"
#include "function/trace_hooks.hpp"
#include "ops/op_trace.hpp"

namespace tapeflow {

struct VariableState : std::enable_shared_from_this<VariableState> {
    std::string name;
    std::string base;  // the name asked for, scope included: name is base or base_<suffix>
    int64_t suffix = 0;
    bool trainable = true;
    bool autocast = false;  // a Keras layer's weight under a mixed policy (autograd/autocast.hpp)
    int64_t id = 0;
    Tensor value;  // replaced by updates (copy-on-write): read it under `mutex`
    // value's shape, dtype and device, which never change: read without the lock (the value's
    // tensor may be replaced meanwhile by another thread's update).
    Shape shape;
    DType dtype = DType::float32;
    Device device;
    std::mutex mutex;  // serializes updates of one variable
    // The key TF1's Saver would save it under when that is not its name (an optimizer slot
    // "w/Adam_1"): set at creation inside a CheckpointKeyScope, unique among live variables.
    std::string checkpoint_key;
    ~VariableState();
};

namespace {

// NOTE [Variable names]: a variable is named after the first of base, base_1, base_2, ... that
// no live variable holds, and frees its name when it dies. Probing every suffix against every live
// variable made N same-named variables cost O(N^3); instead each base keeps, like TensorFlow's
// name scopes, a counter of the suffixes handed out plus the set of freed ones below it, and live
// names are looked up in a hash map: O(1) amortized per variable (O(log n) to reuse a freed name).
class NameTable {
public:
    // The name for a new variable asking for `base`, and its suffix.
    std::pair<std::string, int64_t> claim(const std::string& base, VariableState* owner) {
        Base& b = bases_[base];
        while (!b.freed.empty()) {  // the lowest freed suffix, unless someone took it since
            const int64_t k = *b.freed.begin();
            b.freed.erase(b.freed.begin());
            if (std::string name = spelled(base, k); try_take(name, owner)) return {name, k};
        }
        for (;;) {
            const int64_t k = b.next++;
            if (std::string name = spelled(base, k); try_take(name, owner)) return {name, k};
        }
    }

    // `name` (claimed for base/suffix) is free again. It may also be the spelling of another
    // base's suffix that was skipped because this variable held it ("w_1" asked for by name,
    // then "w" twice): that base gets it back too, so names stay the lowest free ones.
    void release(const VariableState& s) {
        const auto it = live_.find(s.name);
        if (it == live_.end() || it->second != &s) return;
        live_.erase(it);
        give_back(s.base, s.suffix);
        if (s.suffix != 0 || s.base != s.name) give_back(s.name, 0);
        const std::size_t cut = s.name.rfind('_');
        if (cut == std::string::npos || cut + 1 == s.name.size() || s.name[cut + 1] == '0') return;
        int64_t k = 0;
        for (std::size_t i = cut + 1; i < s.name.size(); ++i) {
            const char c = s.name[i];
            if (c < '0' || c > '9' || k > (INT64_MAX - 9) / 10) return;
            k = k * 10 + (c - '0');
        }
        const std::string other = s.name.substr(0, cut);
        if (other != s.base || k != s.suffix) give_back(other, k);
    }

    // The live variable named `name`, or nullptr (also while it is being destroyed).
    std::shared_ptr<VariableState> find(const std::string& name) const {
        const auto it = live_.find(name);
        return it == live_.end() ? nullptr : it->second->weak_from_this().lock();
    }

    std::size_t size() const { return live_.size(); }
    // Whether a live variable other than `self` is named `name` (no lock of its state: a lookup).
    bool held_by_other(const std::string& name, const VariableState* self) const {
        const auto it = live_.find(name);
        return it != live_.end() && it->second != self;
    }

private:
    struct Base {
        int64_t next = 0;         // suffixes below this were handed out or skipped
        std::set<int64_t> freed;  // handed-out suffixes whose name is free again
    };

    static std::string spelled(const std::string& base, int64_t k) {
        return k == 0 ? base : fmt::format("{}_{}", base, k);
    }

    bool try_take(const std::string& name, VariableState* owner) {
        return live_.try_emplace(name, owner).second;
    }

    void give_back(const std::string& base, int64_t k) {
        const auto it = bases_.find(base);
        if (it != bases_.end() && k < it->second.next) it->second.freed.insert(k);
    }

    std::unordered_map<std::string, VariableState*> live_;
    std::unordered_map<std::string, Base> bases_;
};

struct Registry {
    std::mutex mutex;
    std::vector<std::weak_ptr<VariableState>>
        live;  // creation order; expired entries pruned lazily
    // Its own lock: a VariableState's destructor takes it, and may run while `mutex` is held.
    std::mutex names_mutex;
    NameTable names;
    std::unordered_map<std::string, VariableState*> checkpoint_keys;  // under names_mutex
};

Registry& registry() {
    // Never destroyed: variables in static objects may die after static destructors ran.
    static auto* r = new Registry;
    return *r;
}

template <class F>
void for_each_live(Registry& r, F&& f) {
    auto& live = r.live;
    live.erase(std::remove_if(live.begin(), live.end(), [](const auto& w) { return w.expired(); }),
               live.end());
    for (const auto& w : live) {
        if (auto s = w.lock()) f(s);
    }
}

thread_local std::string tls_scope;                            // "a/b/"
thread_local const std::string* tls_checkpoint_key = nullptr;  // detail::CheckpointKeyScope
thread_local bool tls_reuse = false;  // inside a variable_scope(reuse = true)

[[noreturn]] void bad_update(const VariableState& s, std::string_view what, const Tensor& value) {
    throw errors::InvalidArgumentError(fmt::format(
        "Cannot {} variable '{}' of shape {} and dtype {} with a tensor of shape {} and dtype {}",
        what,
        s.name,
        s.shape.str(),
        dtype_name(s.dtype),
        value.shape().str(),
        dtype_name(value.dtype())));
}

// A delta for assign_add/assign_sub: the variable's dtype, and a shape that broadcasts to the
// variable's (checked here, so that the error names the variable rather than AddV2).
void check_delta(const VariableState& s, std::string_view what, const Tensor& delta) {
    if (!delta.defined()) bad_update(s, what, s.value);
    const auto& to = s.shape.dims();
    const auto& from = delta.shape().dims();
    bool fits = delta.dtype() == s.dtype && from.size() <= to.size();
    for (std::size_t i = 0; fits && i < from.size(); ++i) {
        const int64_t d = from[from.size() - 1 - i];
        fits = d == 1 || d == to[to.size() - 1 - i];
    }
    if (!fits) bad_update(s, what, delta);
}

// Whether the variable is the only holder of `t`'s buffer, so a kernel may write it in place. The
// last other holder's reads happened before it dropped its handle (shared_ptr's release
// decrement); the acquire fence orders our writes after them.
bool exclusive(const Tensor& t) {
    const bool alone = t.impl_ptr().use_count() == 1 && t.impl()->storage.use_count() == 1;
    if (alone) std::atomic_thread_fence(std::memory_order_acquire);
    return alone;
}

// Makes `value` the variable's value; tensors read earlier keep theirs. `fresh`: a result nothing
// else holds (assign_add's sum) simply becomes the value (no copy, and no write into a buffer a
// reader on another thread may just have finished with). Otherwise (assign) the value is copied
// into the variable's buffer in place when nothing else holds it, else into a new one
// (copy-on-write), so the variable never shares a caller's buffer.
void store(VariableState& s, const Tensor& value, bool fresh) {
    detail::trace_state_change(fmt::format("an assignment to variable '{}'", s.name));
    const bool moved = value.device() != s.value.device();
    const Tensor source = moved ? value.to(s.value.device()) : value;
    if (fresh || moved) {
        s.value = source;
    } else if (!exclusive(s.value)) {
        s.value = identity(source);
    } else {
        const Device device = s.value.device();
        find_backend(device.type())
            ->copy(s.value.mutable_raw_data(), device, source.raw_data(), device, source.nbytes());
    }
}

double glorot_limit(const Shape& shape) {
    double fan_in = 1, fan_out = 1;
    const auto& d = shape.dims();
    if (d.size() == 1) {
        fan_in = fan_out = static_cast<double>(d[0]);
    } else if (d.size() >= 2) {
        double receptive = 1;
        for (std::size_t i = 0; i + 2 < d.size(); ++i)
            receptive *= static_cast<double>(d[i]);
        fan_in = static_cast<double>(d[d.size() - 2]) * receptive;
        fan_out = static_cast<double>(d[d.size() - 1]) * receptive;
    }
    return std::sqrt(6.0 / std::max(1.0, fan_in + fan_out));
}

}  // namespace

// ---- creation observers (autograd/variable_observers.hpp) ----

namespace detail {
namespace {

struct Observers {
    std::mutex mutex;
    int64_t next_id = 1;
    std::vector<std::pair<int64_t, VariableCreatedFn>> list;
};

Observers& observers() {
    static Observers o;
    return o;
}

}  // namespace

int64_t add_variable_observer(VariableCreatedFn fn) {
    Observers& o = observers();
    const std::lock_guard lock(o.mutex);
    o.list.emplace_back(o.next_id, std::move(fn));
    return o.next_id++;
}

void remove_variable_observer(int64_t id) {
    Observers& o = observers();
    const std::lock_guard lock(o.mutex);
    std::erase_if(o.list, [id](const auto& entry) { return entry.first == id; });
}

void notify_variable_observers(Variable& created) {
    std::vector<VariableCreatedFn> fns;
    {
        Observers& o = observers();
        const std::lock_guard lock(o.mutex);
        if (o.list.empty()) return;
        for (const auto& entry : o.list)
            fns.push_back(entry.second);
    }
    for (const auto& fn : fns)
        fn(created);
}

CheckpointKeyScope::CheckpointKeyScope(const std::string& key) : previous_(tls_checkpoint_key) {
    tls_checkpoint_key = &key;
}

CheckpointKeyScope::~CheckpointKeyScope() {
    tls_checkpoint_key = previous_;
}

bool checkpoint_key_scope_active() {
    return tls_checkpoint_key != nullptr;
}

const std::string& checkpoint_key(const Variable& var) {
    const VariableState& s = *var.state();
    return s.checkpoint_key.empty() ? s.name : s.checkpoint_key;
}

void replace_variable_value(Variable& var, Tensor value) {
    VariableState& s = *var.state();
    if (!value.defined() || value.shape() != s.shape || value.dtype() != s.dtype ||
        value.device() != s.device) {
        bad_update(s, "replace the value of", value.defined() ? value : s.value);
    }
    const std::lock_guard lock(s.mutex);
    s.value = std::move(value);
}

}  // namespace detail

// ---- Variable ----

Variable::Variable(const Tensor& initial_value, VariableOptions options) {
    if (!initial_value.defined()) {
        throw errors::InvalidArgumentError("Variable: the initial value is undefined");
    }
    if (function_detail::tracing()) [[unlikely]]
        function_detail::note_variable_creation(tls_scope + options.name);
    auto s = std::make_shared<VariableState>();
    s->trainable = options.trainable;
    s->id = next_unique_id();
    s->value = identity(initial_value);  // own buffer: the caller's tensor stays immutable
    s->shape = s->value.shape();
    s->dtype = s->value.dtype();
    s->device = s->value.device();
    s->base = tls_scope + (options.name.empty() ? "Variable" : options.name);
    {
        Registry& r = registry();
        const std::lock_guard lock(r.mutex);
        std::size_t live_names = 0;
        {
            const std::lock_guard names_lock(r.names_mutex);
            std::tie(s->name, s->suffix) = r.names.claim(s->base, s.get());
            live_names = r.names.size();
            // The key, or key_1, key_2, ... when another variable's key or name is that already
            // (a user's variable "beta1_power"), as a TF1 graph uniquifies its names.
            if (tls_checkpoint_key != nullptr) {
                for (int64_t k = 0; s->checkpoint_key.empty(); ++k) {
                    std::string key =
                        k == 0 ? *tls_checkpoint_key : fmt::format("{}_{}", *tls_checkpoint_key, k);
                    if (!r.names.held_by_other(key, s.get()) &&
                        r.checkpoint_keys.try_emplace(key, s.get()).second)
                        s->checkpoint_key = std::move(key);
                }
            }
        }
        // Prune dead entries once they are half the list: amortized O(1) per variable.
        if (r.live.size() >= 2 * live_names + 16) {
            std::erase_if(r.live, [](const auto& w) { return w.expired(); });
        }
        r.live.push_back(s);
    }
    state_ = std::move(s);
    detail::notify_variable_observers(*this);  // deferred checkpoint restore
}

VariableState::~VariableState() {
    Registry& r = registry();
    const std::lock_guard lock(r.names_mutex);
    r.names.release(*this);
    if (!checkpoint_key.empty()) {
        const auto it = r.checkpoint_keys.find(checkpoint_key);
        if (it != r.checkpoint_keys.end() && it->second == this) r.checkpoint_keys.erase(it);
    }
}

VariableState& Variable::checked() const {
    if (!state_) throw errors::FailedPreconditionError("the Variable handle is empty");
    return *state_;
}

const std::string& Variable::name() const {
    return checked().name;
}

const Shape& Variable::shape() const {
    return checked().shape;
}

DType Variable::dtype() const {
    return checked().dtype;
}

Device Variable::device() const {
    return checked().device;
}

bool Variable::trainable() const {
    return checked().trainable;
}

int64_t Variable::id() const {
    return checked().id;
}

std::optional<DType>& detail::autocast_dtype() {
    thread_local std::optional<DType> dtype;
    return dtype;
}

void detail::set_autocast(const Variable& variable, bool autocast) {
    if (!variable.state()) throw errors::InternalError("set_autocast of an empty Variable handle");
    VariableState& s = *variable.state();
    s.autocast = autocast && is_floating(s.dtype);
}

Tensor Variable::value() const {
    VariableState& s = checked();
    Tensor current;
    {
        const std::lock_guard lock(s.mutex);
        current = s.value;
    }
    Tensor read = current;
    if (any_tape_recording()) {
        // Under a tape every read is a new tensor, recorded as depending on the variable.
        read = Tensor::view(
            current.impl()->storage, current.impl()->offset, current.shape(), current.dtype());
        record_variable_read(*this, read);
    }
    if (function_detail::tracing()) [[unlikely]]
        function_detail::note_variable_read(state_, read);
    // NOTE in autograd/autocast.hpp: a layer's weight read inside its call under a mixed policy.
    if (s.autocast) [[unlikely]] {
        const std::optional<DType> to = detail::autocast_dtype();
        if (to && *to != read.dtype()) return cast(read, *to);
    }
    return read;
}

namespace {
// Inside a tf::function trace an update is a host step: every replay runs it on that replay's
// tensors (NOTE [Function trace]).
bool traced_update(const Variable& variable,
                   std::string_view what,
                   std::vector<Tensor> inputs,
                   std::function<void(Variable&, std::span<const Tensor>)> update) {
    if (!function_detail::tracing()) [[likely]]
        return false;
    function_detail::host_step(
        what, std::move(inputs), [target = variable, update](std::span<const Tensor> in) mutable {
            update(target, in);
        });
    return true;
}
}  // namespace

Variable& Variable::assign(const Tensor& value) {
    if (traced_update(
            *this, "AssignVariableOp", {value}, [](Variable& v, auto in) { v.assign(in[0]); }))
        return *this;
    VariableState& s = checked();
    if (!value.defined() || value.shape() != s.shape || value.dtype() != s.dtype) {
        bad_update(s, "assign", value.defined() ? value : s.value);
    }
    const std::lock_guard lock(s.mutex);
    store(s, value, /*fresh=*/false);
    return *this;
}

Variable& Variable::assign_add(const Tensor& delta) {
    if (traced_update(*this, "AssignAddVariableOp", {delta}, [](Variable& v, auto in) {
            v.assign_add(in[0]);
        }))
        return *this;
    VariableState& s = checked();
    check_delta(s, "assign_add to", delta);
    const std::lock_guard lock(s.mutex);
    Tensor sum = add(s.value, delta);
    store(s, sum, /*fresh=*/true);
    return *this;
}

Variable& Variable::assign_sub(const Tensor& delta) {
    if (traced_update(*this, "AssignSubVariableOp", {delta}, [](Variable& v, auto in) {
            v.assign_sub(in[0]);
        }))
        return *this;
    VariableState& s = checked();
    check_delta(s, "assign_sub from", delta);
    const std::lock_guard lock(s.mutex);
    Tensor diff = subtract(s.value, delta);
    store(s, diff, /*fresh=*/true);
    return *this;
}

namespace {

enum class ScatterMode { add, sub, update };

void scatter(VariableState& s,
             const IndexedSlices& slices,
             ScatterMode mode,
             std::string_view what) {
    const Tensor& var = s.value;
    if (!slices.values.defined() || !slices.indices.defined() || var.rank() == 0 ||
        slices.values.dtype() != var.dtype() || !is_integer(slices.indices.dtype()) ||
        slices.indices.rank() != 1 || slices.values.rank() != var.rank() ||
        slices.values.shape()[0] != slices.indices.shape()[0]) {
        throw errors::InvalidArgumentError(fmt::format(
            "{}: variable '{}' {} {} needs IndexedSlices with values [N, {}] of its dtype and "
            "integer indices [N]",
            what,
            s.name,
            var.shape().str(),
            dtype_name(var.dtype()),
            fmt::join(
                std::vector<int64_t>(var.shape().dims().begin() + 1, var.shape().dims().end()),
                ", ")));
    }
    for (int64_t d = 1; d < var.rank(); ++d) {
        if (slices.values.shape()[d] != var.shape()[d]) {
            throw errors::InvalidArgumentError(
                fmt::format("{}: values shape {} does not match rows of variable '{}' {}",
                            what,
                            slices.values.shape().str(),
                            s.name,
                            var.shape().str()));
        }
    }
    const int64_t rows = var.shape()[0];
    const auto indices = slices.indices.to_vector<int64_t>();
    for (int64_t i : indices) {
        if (i < 0 || i >= rows) {
            throw errors::InvalidArgumentError(fmt::format(
                "{}: index {} is not in [0, {}) for variable '{}'", what, i, rows, s.name));
        }
    }
    // Write into the buffer in place when nothing else shares it, else into a private host copy
    // (copy-on-write), which then becomes the variable's value.
    Tensor host = var.device().is_cpu() && exclusive(var) ? var : identity(var.cpu());
    const Tensor values = slices.values.cpu();
    const int64_t row = var.num_elements() / rows;
    visit_dtype(var.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
            auto* dst = static_cast<T*>(host.mutable_raw_data());
            const auto* src = static_cast<const T*>(values.raw_data());
            for (std::size_t n = 0; n < indices.size(); ++n) {
                T* out = dst + indices[n] * row;
                const T* in = src + static_cast<int64_t>(n) * row;
                for (int64_t k = 0; k < row; ++k) {
                    out[k] = mode == ScatterMode::add   ? out[k] + in[k]
                             : mode == ScatterMode::sub ? out[k] - in[k]
                                                        : in[k];
                }
            }
        } else {
            throw errors::InvalidArgumentError(
                fmt::format("{}: unsupported dtype {}", what, dtype_name(var.dtype())));
        }
    });
    if (host.impl() != var.impl()) s.value = var.device().is_cpu() ? host : host.to(var.device());
}

}  // namespace

Variable& Variable::scatter_add(const IndexedSlices& slices) {
    const Shape dense = slices.dense_shape;
    if (traced_update(*this,
                      "ResourceScatterAdd",
                      {slices.values, slices.indices},
                      [dense](Variable& v, auto in) {
                          v.scatter_add(IndexedSlices{in[0], in[1], dense});
                      }))
        return *this;
    VariableState& s = checked();
    const std::lock_guard lock(s.mutex);
    scatter(s, slices, ScatterMode::add, "scatter_add");
    return *this;
}

Variable& Variable::scatter_sub(const IndexedSlices& slices) {
    const Shape dense = slices.dense_shape;
    if (traced_update(*this,
                      "ResourceScatterSub",
                      {slices.values, slices.indices},
                      [dense](Variable& v, auto in) {
                          v.scatter_sub(IndexedSlices{in[0], in[1], dense});
                      }))
        return *this;
    VariableState& s = checked();
    const std::lock_guard lock(s.mutex);
    scatter(s, slices, ScatterMode::sub, "scatter_sub");
    return *this;
}

Variable& Variable::scatter_update(const IndexedSlices& slices) {
    const Shape dense = slices.dense_shape;
    if (traced_update(*this,
                      "ResourceScatterUpdate",
                      {slices.values, slices.indices},
                      [dense](Variable& v, auto in) {
                          v.scatter_update(IndexedSlices{in[0], in[1], dense});
                      }))
        return *this;
    VariableState& s = checked();
    const std::lock_guard lock(s.mutex);
    scatter(s, slices, ScatterMode::update, "scatter_update");
    return *this;
}

Tensor function_detail::current_value(const std::shared_ptr<VariableState>& variable) {
    const std::lock_guard lock(variable->mutex);
    return variable->value;
}

VariableUpdate::VariableUpdate(const Variable& variable) {
    if (!variable.defined()) throw errors::FailedPreconditionError("the Variable handle is empty");
    VariableState& s = *variable.state();
    lock_ = std::unique_lock(s.mutex);
    if (!exclusive(s.value)) s.value = identity(s.value);
    buffer_ = s.value;
}

std::vector<Variable> global_variables() {
    std::vector<Variable> out;
    Registry& r = registry();
    const std::lock_guard lock(r.mutex);
    for_each_live(r, [&](const auto& s) { out.emplace_back(s); });
    return out;
}

std::vector<Variable> trainable_variables() {
    std::vector<Variable> out;
    for (const Variable& v : global_variables()) {
        if (v.trainable()) out.push_back(v);
    }
    return out;
}

// ---- name scopes ----

NameScope::NameScope(std::string_view name) : previous_length_(tls_scope.size()) {
    if (name.empty()) return;
    if (name.back() == '/') {  // an absolute scope, as in TensorFlow
        tls_scope = std::string(name);
    } else {
        tls_scope += std::string(name) + "/";
    }
}

NameScope::~NameScope() {
    tls_scope.resize(std::min(previous_length_, tls_scope.size()));
}

NameScope name_scope(std::string_view name) {
    return NameScope(name);
}

std::string current_name_scope() {
    return tls_scope;
}

// ---- TF1 get_variable ----

Initializer::Initializer(Tensor value) : value_(std::move(value)) {}

Tensor Initializer::operator()(const Shape& shape, DType dtype) const {
    if (value_.defined()) return value_.dtype() == dtype ? value_ : cast(value_, dtype);
    if (fn_) {
        Tensor t = fn_(shape);
        return t.dtype() == dtype ? t : cast(t, dtype);
    }
    const double limit = glorot_limit(shape);
    return random::uniform(shape, -limit, limit, dtype);
}

VariableScope::VariableScope(std::string_view name, bool reuse)
    : names_(name), previous_reuse_(tls_reuse) {
    tls_reuse = tls_reuse || reuse;  // reuse is inherited by nested scopes
}

VariableScope::~VariableScope() {
    tls_reuse = previous_reuse_;
}

VariableScope variable_scope(std::string_view name, bool reuse) {
    return VariableScope(name, reuse);
}

Variable get_variable(std::string_view name, const GetVariableOptions& options) {
    const std::string full = tls_scope + std::string(name);
    std::shared_ptr<VariableState> existing;
    {
        Registry& r = registry();
        const std::lock_guard lock(r.names_mutex);
        existing = r.names.find(full);
    }  // `existing` may be the last reference: dropped (destroying it) only after the lock
    if (existing) {
        const Variable v(existing);
        if (!tls_reuse) {
            throw errors::InvalidArgumentError(
                fmt::format("Variable {} already exists, disallowed. Did you mean to set "
                            "reuse=True in VarScope?",
                            full));
        }
        if (options.shape && *options.shape != v.shape()) {
            throw errors::InvalidArgumentError(fmt::format(
                "Trying to share variable {}, but specified shape {} and found shape {}.",
                full,
                options.shape->str(),
                v.shape().str()));
        }
        return v;
    }
    if (tls_reuse) {
        throw errors::InvalidArgumentError(
            fmt::format("Variable {} does not exist, or was not created with get_variable(). Did "
                        "you mean to set "
                        "reuse=false in VarScope?",
                        full));
    }
    DType dtype = options.dtype;
    if (const auto given = options.initializer.tensor_dtype()) {  // TensorFlow: the Tensor's dtype
        if (dtype != DType::float32 && dtype != *given) {
            throw errors::InvalidArgumentError(fmt::format(
                "get_variable {}: Initializer type '{}' and explicit dtype '{}' don't match.",
                full,
                dtype_name(*given),
                dtype_name(dtype)));
        }
        dtype = *given;
    }
    Tensor initial;
    if (options.shape) {
        initial = options.initializer(*options.shape, dtype);
        if (initial.shape() != *options.shape) {
            throw errors::InvalidArgumentError(
                fmt::format("get_variable {}: the initializer gave shape {} for shape {}",
                            full,
                            initial.shape().str(),
                            options.shape->str()));
        }
    } else if (options.initializer.is_tensor()) {
        initial = options.initializer(Shape{}, dtype);  // the tensor defines the shape
    } else {
        throw errors::InvalidArgumentError(fmt::format(
            "Shape of a new variable ({}) must be fully defined, but instead was None.", full));
    }
    // The Variable constructor adds the current scope prefix itself.
    return Variable(initial, {.name = std::string(name), .trainable = options.trainable});
}

}  // namespace tapeflow
