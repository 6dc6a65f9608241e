// DistributedOptimizer: synchronous data parallel. The gradients of a step are packed into fused
// buckets (one dtype each, about bucket_bytes), and each bucket's all-reduce starts the moment its
// last gradient is final in the backward walk, so communication overlaps the rest of the walk.
// IndexedSlices gradients are all-gathered. The wrapped optimizer then applies the result.
//
// NOTE [Bucket order]: a collective must be started in the same order on every process. Bucket
// contents depend only on var_list (reversed: the walk finishes the last layers first), their
// dtypes and shapes, and on which variables had sparse gradients (agreed by all processes at the
// end of each step), never on timing; bucket k is started only after bucket k-1, when complete.
#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include <fmt/format.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/ops/array.hpp>
#include <tapeflow/ops/creation.hpp>

#include "autograd/tape.hpp"
#include "distribute/reduce_stats.hpp"
#include "distribute/transport.hpp"
#include "distribute/wire.hpp"
#include "train/traced_apply.hpp"

namespace tapeflow::distribute {
namespace {

// Where a variable's dense gradient sits: in bucket `bucket` at element `offset`.
struct Slot {
    int bucket = -1;
    int64_t offset = 0;
};

struct Bucket {
    DType wire = DType::float32;
    int64_t count = 0;                 // elements
    std::vector<std::size_t> members;  // variable indices
};

struct Layout {
    std::vector<int64_t> var_ids;
    std::set<int64_t> sparse_ids;
    std::vector<Slot> slots;  // per variable; bucket -1: known sparse
    std::vector<Bucket> buckets;
};

Layout make_layout(const std::vector<Variable>& vars,
                   const std::set<int64_t>& sparse_ids,
                   int64_t bucket_bytes) {
    Layout layout;
    layout.sparse_ids = sparse_ids;
    layout.slots.resize(vars.size());
    std::map<DType, int> open;  // the bucket being filled, per wire dtype
    for (std::size_t k = vars.size(); k-- > 0;) {
        const Variable& v = vars[k];
        layout.var_ids.push_back(v.id());
        if (sparse_ids.count(v.id()) != 0 || !is_floating(v.dtype())) continue;
        const DType wire = detail::wire_dtype(v.dtype(), ReduceOp::sum, "DistributedOptimizer");
        const int64_t n = v.shape().num_elements();
        auto it = open.find(wire);
        if (it == open.end() ||
            (layout.buckets[it->second].count > 0 &&
             (layout.buckets[it->second].count + n) * static_cast<int64_t>(dtype_size(wire)) >
                 bucket_bytes)) {
            layout.buckets.push_back({wire, 0, {}});
            open[wire] = static_cast<int>(layout.buckets.size() - 1);
            it = open.find(wire);
        }
        Bucket& b = layout.buckets[it->second];
        layout.slots[k] = {it->second, b.count};
        b.count += n;
        b.members.push_back(k);
    }
    std::reverse(layout.var_ids.begin(), layout.var_ids.end());
    return layout;
}

// A sparse gradient as rows; a dense one becomes every row (the rare mixed case).
IndexedSlices as_slices(const Gradient& g, const Variable& var) {
    if (g.is_sparse()) return g.sparse();
    const Tensor dense = g.dense();
    return {dense, range(0, static_cast<double>(var.shape()[0]), 1, DType::int64), var.shape()};
}

// One step's reduction: gradients go in one at a time (any order), results come out at the end.
class Reducer {
public:
    Reducer(const Layout& layout, const std::vector<Variable>& vars, bool average)
        : layout_(layout),
          vars_(vars),
          average_(average),
          local_(vars.size()),
          flags_(2 * vars.size(), 0),
          arrived_(layout.buckets.size(), 0),
          pending_(layout.buckets.size()) {
        for (const Bucket& b : layout.buckets) {
            storage_.push_back(std::make_shared<Storage>(
                static_cast<std::size_t>(b.count) * dtype_size(b.wire), Device::cpu()));
        }
    }

    // Takes variable k's local gradient (exactly once per variable).
    void add(std::size_t k, const Gradient& g) {
        ++received_;
        const Slot slot = layout_.slots[k];
        const bool dense_in_bucket = g.defined() && !g.is_sparse() && slot.bucket >= 0;
        if (g.defined() && !dense_in_bucket) {
            local_[k] = g;
            flags_[2 * k + 1] = 1;
        }
        if (dense_in_bucket) flags_[2 * k] = 1;
        if (slot.bucket >= 0) {
            const Bucket& b = layout_.buckets[slot.bucket];
            char* dst = static_cast<char*>(storage_[slot.bucket]->data()) +
                        slot.offset * static_cast<int64_t>(dtype_size(b.wire));
            const Variable& v = vars_[k];
            const std::size_t nbytes =
                static_cast<std::size_t>(v.shape().num_elements()) * dtype_size(b.wire);
            if (dense_in_bucket) {
                const Tensor host = detail::on_host(g.dense(), b.wire);
                if (host.shape() != v.shape()) {
                    throw errors::InvalidArgumentError(fmt::format(
                        "DistributedOptimizer: the gradient of '{}' has shape {}, the variable {}",
                        v.name(),
                        host.shape().debug_string(),
                        v.shape().debug_string()));
                }
                std::memcpy(dst, host.raw_data(), nbytes);
            } else {
                std::memset(dst, 0, nbytes);  // no dense contribution from this process
            }
            ++arrived_[slot.bucket];
        }
        launch_ready();
        progress();
    }

    // Waits for every reduction and returns the gradients, in variable order.
    std::vector<Gradient> finish() {
        launch_ready();
        if (next_ != layout_.buckets.size()) {
            throw errors::InternalError(
                "DistributedOptimizer: a bucket never filled; this is a tapeflow bug");
        }
        const int n = detail::transport_size();
        auto flags = detail::start_all_reduce(
            flags_.data(), static_cast<int64_t>(flags_.size()), DType::int32, ReduceOp::max);
        detail::wait(
            *flags,
            fmt::format("DistributedOptimizer: agreeing on {} gradients' kinds", vars_.size()));
        for (std::size_t b = 0; b < pending_.size(); ++b) {
            detail::wait(
                *pending_[b],
                fmt::format("DistributedOptimizer: all_reduce of gradient bucket {} ({} {} "
                            "elements)",
                            b,
                            layout_.buckets[b].count,
                            dtype_name(layout_.buckets[b].wire)));
            if (average_ && n > 1) {
                detail::scale_in_place(storage_[b]->data(),
                                       layout_.buckets[b].count,
                                       layout_.buckets[b].wire,
                                       1.0 / n);
            }
        }
        std::vector<Gradient> out(vars_.size());
        for (std::size_t k = 0; k < vars_.size(); ++k) {
            const Variable& v = vars_[k];
            if (flags_[2 * k + 1] != 0) {
                out[k] = gather_slices(k);
            } else if (flags_[2 * k] != 0) {
                const Slot slot = layout_.slots[k];
                const DType wire = layout_.buckets[slot.bucket].wire;
                Tensor t = Tensor::view(storage_[slot.bucket],
                                        static_cast<std::size_t>(slot.offset) * dtype_size(wire),
                                        v.shape(),
                                        wire);
                if (wire != v.dtype()) t = t.cast(v.dtype());
                out[k] = t.to(v.device());
            }
        }
        return out;
    }

    // Variables some process gave a sparse gradient this step (valid after finish()).
    std::set<int64_t> sparse_ids() const {
        std::set<int64_t> ids;
        for (std::size_t k = 0; k < vars_.size(); ++k) {
            if (flags_[2 * k + 1] != 0) ids.insert(vars_[k].id());
        }
        return ids;
    }

private:
    void launch_ready() {
        while (next_ < layout_.buckets.size() &&
               arrived_[next_] == static_cast<int64_t>(layout_.buckets[next_].members.size())) {
            const Bucket& b = layout_.buckets[next_];
            pending_[next_] =
                detail::start_all_reduce(storage_[next_]->data(), b.count, b.wire, ReduceOp::sum);
            ++next_;
            if (received_ < vars_.size()) ++started_early_;
        }
    }

    // MPI advances nonblocking collectives only inside its calls: poke the ones in flight.
    void progress() {
        for (std::size_t b = 0; b < next_; ++b)
            pending_[b]->test();
    }

    Gradient gather_slices(std::size_t k) {
        const Variable& v = vars_[k];
        Tensor values;
        Tensor indices;
        if (local_[k].defined()) {
            const IndexedSlices s = as_slices(local_[k], v);
            values = s.values;
            indices = s.indices.cast(DType::int64);
        } else {
            std::vector<int64_t> dims = v.shape().dims();
            dims[0] = 0;
            values = zeros(Shape(dims), v.dtype());
            indices = zeros({0}, DType::int64);
        }
        Tensor all_values = concat(all_gather(values), 0);
        const Tensor all_indices = concat(all_gather(indices), 0);
        const int n = detail::transport_size();
        if (average_ && n > 1) all_values = all_values * constant(1.0 / n, all_values.dtype());
        return IndexedSlices{all_values.to(v.device()), all_indices.to(v.device()), v.shape()};
    }

    const Layout& layout_;
    const std::vector<Variable>& vars_;
    bool average_;
    std::vector<Gradient> local_;  // sparse (or slot-less) local gradients
    std::vector<int32_t>
        flags_;  // per variable: [dense here, sparse here]; then max over processes
    std::vector<int64_t> arrived_;  // per bucket
    std::vector<std::shared_ptr<Storage>> storage_;
    std::vector<std::unique_ptr<detail::Pending>> pending_;
    std::size_t next_ = 0;           // the next bucket to start (NOTE [Bucket order])
    std::size_t received_ = 0;       // gradients added so far
    std::size_t started_early_ = 0;  // buckets started before the last gradient arrived

public:
    detail::ReduceStats stats() const { return {layout_.buckets.size(), started_early_}; }
};

}  // namespace

detail::ReduceStats& detail::last_reduce_stats() {
    thread_local ReduceStats stats;
    return stats;
}

struct DistributedOptimizer::State {
    std::set<int64_t> broadcast_ids;  // variables already made identical (broadcast from rank 0)
    std::set<int64_t> sparse_ids;     // variables whose gradients were sparse somewhere
    std::optional<Layout> layout;

    const Layout& layout_for(const std::vector<Variable>& vars, int64_t bucket_bytes) {
        std::vector<int64_t> ids;
        for (const Variable& v : vars)
            ids.push_back(v.id());
        if (!layout || layout->var_ids != ids || layout->sparse_ids != sparse_ids) {
            layout = make_layout(vars, sparse_ids, bucket_bytes);
        }
        return *layout;
    }

    // True when some variable was not broadcast yet (then all new ones are, now).
    bool broadcast_new(const std::vector<Variable>& vars) {
        std::vector<Variable> fresh;
        for (const Variable& v : vars) {
            if (broadcast_ids.count(v.id()) == 0) fresh.push_back(v);
        }
        if (fresh.empty()) return false;
        broadcast_variables(fresh, chief_rank());
        for (const Variable& v : fresh)
            broadcast_ids.insert(v.id());
        return true;
    }
};

DistributedOptimizer::DistributedOptimizer(std::shared_ptr<train::Optimizer> inner,
                                           DistributedOptions options)
    : train::Optimizer(inner ? "Distributed" + inner->name() : "Distributed", 0.0, false),
      inner_(std::move(inner)),
      options_(options),
      state_(std::make_unique<State>()) {
    if (!inner_)
        throw errors::InvalidArgumentError("DistributedOptimizer: the wrapped optimizer is null");
    if (options_.bucket_bytes <= 0) {
        throw errors::InvalidArgumentError(fmt::format(
            "DistributedOptimizer: bucket_bytes must be positive, got {}", options_.bucket_bytes));
    }
}

DistributedOptimizer::~DistributedOptimizer() = default;

std::vector<train::GradAndVar> DistributedOptimizer::compute_gradients(
    const std::function<Tensor()>& loss_fn,
    std::vector<Variable> var_list,
    train::GateGradients /*all gates alike*/,
    AggregationMethod aggregation_method) {
    return compute(loss_fn, std::move(var_list), aggregation_method).second;
}

std::pair<Tensor, std::vector<train::GradAndVar>> DistributedOptimizer::compute(
    const std::function<Tensor()>& loss_fn,
    std::vector<Variable> var_list,
    AggregationMethod aggregation_method) {
    if (!loss_fn) {
        throw errors::RuntimeError(
            "`loss` passed to Optimizer.compute_gradients should be a function when eager "
            "execution is enabled.");
    }
    if (!var_list.empty()) state_->broadcast_new(var_list);
    for (int attempt = 0;; ++attempt) {
        GradientTape tape;
        if (!var_list.empty()) tape.watch(var_list);
        const Tensor loss = loss_fn();
        train::check_loss(loss);
        std::vector<Variable> vars = var_list.empty() ? tape.watched_variables() : var_list;
        if (vars.empty()) throw errors::InvalidArgumentError("No variables to optimize.");
        // The default var_list is known only after the forward pass: when it holds variables never
        // broadcast, they are broadcast now and the pass is run again on the identical values.
        if (var_list.empty() && attempt == 0 && state_->broadcast_new(vars)) continue;
        const Layout& layout = state_->layout_for(vars, options_.bucket_bytes);
        Reducer reducer(layout, vars, options_.average);
        GradientOptions options;
        options.aggregation_method = aggregation_method;
        stream_gradients(tape, loss, vars, options, [&](std::size_t k, const Gradient& g) {
            reducer.add(k, g);
        });
        const std::vector<Gradient> reduced = reducer.finish();
        detail::last_reduce_stats() = reducer.stats();
        state_->sparse_ids.merge(reducer.sparse_ids());
        std::vector<train::GradAndVar> pairs;
        for (std::size_t k = 0; k < vars.size(); ++k)
            pairs.push_back({reduced[k], vars[k]});
        return {loss, pairs};
    }
}

std::vector<train::GradAndVar> DistributedOptimizer::reduce_gradients(
    const std::vector<train::GradAndVar>& grads_and_vars) {
    std::vector<Variable> vars;
    for (const train::GradAndVar& p : grads_and_vars) {
        if (!p.variable.defined())
            throw errors::InvalidArgumentError("reduce_gradients: a variable handle is empty");
        vars.push_back(p.variable);
    }
    const Layout& layout = state_->layout_for(vars, options_.bucket_bytes);
    Reducer reducer(layout, vars, options_.average);
    for (std::size_t k = vars.size(); k-- > 0;)
        reducer.add(k, grads_and_vars[k].gradient);
    const std::vector<Gradient> reduced = reducer.finish();
    state_->sparse_ids.merge(reducer.sparse_ids());
    std::vector<train::GradAndVar> pairs;
    for (std::size_t k = 0; k < vars.size(); ++k)
        pairs.push_back({reduced[k], vars[k]});
    return pairs;
}

void DistributedOptimizer::apply_gradients(const std::vector<train::GradAndVar>& grads_and_vars,
                                           std::optional<Variable> global_step) {
    if (tapeflow::detail::apply_as_host_step(*this, grads_and_vars, global_step)) return;
    const std::size_t before = inner_->variables().size();
    inner_->apply_gradients(grads_and_vars, std::move(global_step));
    // An update that created optimizer state (slots at a variable's first update) may have run on
    // different state: after the chief restored a checkpoint, it fills its slots from the file at
    // their creation and the others start from zeros. The chief's result wins: its new state and
    // the variables just updated are broadcast (the first step only, in the usual case).
    std::vector<Variable> sync = inner_->variables();
    if (sync.size() == before) return;
    for (const train::GradAndVar& p : grads_and_vars)
        sync.push_back(p.variable);
    broadcast_variables(sync, chief_rank());
    for (const Variable& v : sync)
        state_->broadcast_ids.insert(v.id());
}

Tensor DistributedOptimizer::minimize(const std::function<Tensor()>& loss_fn,
                                      std::vector<Variable> var_list,
                                      std::optional<Variable> global_step,
                                      train::GateGradients /*gate*/,
                                      AggregationMethod aggregation_method) {
    auto [loss, pairs] = compute(loss_fn, std::move(var_list), aggregation_method);
    apply_gradients(pairs, std::move(global_step));
    return loss;
}

std::optional<Variable> DistributedOptimizer::get_slot(const Variable& var,
                                                       std::string_view slot_name) const {
    return inner_->get_slot(var, slot_name);
}
std::vector<std::string> DistributedOptimizer::get_slot_names() const {
    return inner_->get_slot_names();
}
int64_t DistributedOptimizer::iterations() const {
    return inner_->iterations();
}
double DistributedOptimizer::current_learning_rate() const {
    return inner_->current_learning_rate();
}
std::vector<Variable> DistributedOptimizer::variables() const {
    return inner_->variables();
}

void DistributedOptimizer::apply_dense(const Variable& var, const Tensor& /*grad*/) {
    throw errors::InternalError(
        fmt::format("DistributedOptimizer::apply_dense('{}'): updates go through the wrapped "
                    "optimizer; this is a tapeflow bug",
                    var.name()));
}

}  // namespace tapeflow::distribute
