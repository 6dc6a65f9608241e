// The backward walk: gradients of recorded ops, from the targets back to the sources.
//
// Terminology (as in TensorFlow's tape.h):
//   target    a tensor whose (summed) value is differentiated; seeded with ones or output_gradients
//   source    a tensor or variable id the caller wants the gradient of
//   entry     one recorded op; its outputs' gradients are final once every later entry is processed
//   live      an entry with an input that depends on a source: only live entries reachable from the
//             targets run their gradient formula (the rest cannot change any source's gradient)
//
// Entries are recorded in execution order, which is a topological order; walking them backward
// visits every consumer of a tensor before its producer, so no ready-counts are needed.
//
// NOTE [Un-broadcasting]: formulas return gradients in the broadcast (output) shape; the engine
// sums them down to each input's recorded shape (sum_to_shape), so no formula handles broadcasting.
//
// NOTE [Vectorized jacobians]: jacobian() seeds one walk with a stack of one-hot output gradients
// ([n, *target.shape]) and every gradient of the walk carries that extra leading dim (batch_dims =
// 1): the whole jacobian in one walk instead of n (TensorFlow's pfor, JAX's vmap of the vjp). Rows
// flagged `batchable` run once on the batched gradients; any other formula (and custom gradients)
// runs once per batch row, and its per-row input gradients are densified and stacked again
// (pfor's fallback), so only that op is looped. sum_to_shape keeps the leading batch dims.
#include <algorithm>
#include <array>
#include <map>
#include <memory_resource>
#include <unordered_map>
#include <unordered_set>

#include <tapeflow/core/error.hpp>
#include <tapeflow/ops/array.hpp>
#include <tapeflow/ops/creation.hpp>
#include <tapeflow/ops/math.hpp>

#include "autograd/tape.hpp"
#include "ops/sum_to_shape.hpp"
#include "profiler/hooks.hpp"

namespace tapeflow {
namespace {

// Sums IndexedSlices by concatenation (duplicates kept, int32 indices widened when mixed), and
// anything involving a dense gradient densely.
Gradient add_gradients(const Gradient& a, const Gradient& b) {
    if (!a.defined()) return b;
    if (!b.defined()) return a;
    if (a.is_sparse() && b.is_sparse()) {
        const IndexedSlices& x = a.sparse();
        const IndexedSlices& y = b.sparse();
        Tensor xi = x.indices;
        Tensor yi = y.indices;
        if (xi.dtype() != yi.dtype()) {
            xi = cast(xi, DType::int64);
            yi = cast(yi, DType::int64);
        }
        return IndexedSlices{concat({x.values, y.values}, 0), concat({xi, yi}, 0), x.dense_shape};
    }
    return add(a.dense(), b.dense());
}

Gradient sum_all(std::vector<Gradient>& parts) {
    if (parts.size() == 1) return parts[0];
    bool any_sparse = false;
    for (const Gradient& g : parts)
        any_sparse = any_sparse || g.is_sparse();
    if (!any_sparse) {  // one op over all of them: peak memory holds every contribution
        std::vector<Tensor> dense;
        dense.reserve(parts.size());
        for (const Gradient& g : parts)
            dense.push_back(g.dense());
        return add_n(dense);
    }
    Gradient total;
    for (const Gradient& g : parts)
        total = add_gradients(total, g);
    return total;
}

// Collects the contributions to one tensor's gradient according to the aggregation method.
class Accumulator {
public:
    explicit Accumulator(AggregationMethod method) : method_(method) {}

    void add(Gradient g) {
        if (!g.defined()) return;
        switch (method_) {
            case AggregationMethod::add_n:
                pending_.push_back(std::move(g));
                break;
            case AggregationMethod::experimental_tree: {
                // A binary counter: partial sums of 1, 2, 4, ... contributions; equal levels merge.
                int level = 0;
                while (level < static_cast<int>(levels_.size()) && levels_[level].defined()) {
                    g = add_gradients(levels_[level], g);
                    levels_[level] = Gradient();
                    ++level;
                }
                if (level == static_cast<int>(levels_.size())) levels_.emplace_back();
                levels_[level] = std::move(g);
                break;
            }
            default:
                running_ = add_gradients(running_, g);
                break;  // free each one as it arrives
        }
    }

    Gradient take() {
        switch (method_) {
            case AggregationMethod::add_n: {
                if (pending_.empty()) return {};
                Gradient total = sum_all(pending_);
                pending_.clear();
                return total;
            }
            case AggregationMethod::experimental_tree: {
                Gradient total;
                for (Gradient& g : levels_)
                    total = add_gradients(total, g);
                levels_.clear();
                return total;
            }
            default:
                return std::exchange(running_, Gradient());
        }
    }

private:
    AggregationMethod method_;
    std::vector<Gradient> pending_;
    std::vector<Gradient> levels_;
    Gradient running_;
};

bool passes_slices(Op op) {
    return op == Op::read_variable || op == Op::identity;
}

Shape with_batch(const std::vector<int64_t>& batch, const Shape& shape) {
    std::vector<int64_t> dims = batch;
    dims.insert(dims.end(), shape.dims().begin(), shape.dims().end());
    return Shape(std::move(dims));
}

// NOTE [Vectorized jacobians]: the fallback for a formula that cannot take batched gradients (one
// batch dim): it runs once per batch row, and each needed input's row gradients are summed to the
// input's shape, densified and stacked again.
template <typename Formula>
Grads per_row(const Formula& formula, const GradCtx& c) {
    const std::size_t num_outputs = c.grads.size();
    const std::size_t num_inputs = c.in_meta.size();
    std::vector<std::vector<Tensor>> rows(num_outputs);
    for (std::size_t k = 0; k < num_outputs; ++k)
        rows[k] = unstack(c.grads[k], 0);
    const std::size_t n = rows[0].size();
    std::vector<std::vector<Tensor>> per_input(num_inputs);
    std::vector<char> any(num_inputs, 0);
    std::vector<Tensor> row(num_outputs);
    for (std::size_t b = 0; b < n; ++b) {
        for (std::size_t k = 0; k < num_outputs; ++k)
            row[k] = rows[k][b];
        const GradCtx ctx{row, c.in, c.out, c.attrs, c.in_meta, c.out_meta, 0, c.needs};
        const Grads g = formula(ctx);
        for (std::size_t i = 0; i < num_inputs; ++i) {
            Tensor d;
            if (i < g.size() && g[i].defined() && c.needs_grad(i)) {
                d = sum_to_shape(g[i].dense(), c.in_meta[i].shape);
                any[i] = 1;
            }
            per_input[i].push_back(std::move(d));
        }
    }
    Grads result(num_inputs);
    for (std::size_t i = 0; i < num_inputs; ++i) {
        if (any[i] == 0) continue;
        for (Tensor& t : per_input[i]) {
            if (t.defined()) continue;
            const DeviceScope scope(c.in_meta[i].device);
            t = zeros(c.in_meta[i].shape, c.in_meta[i].dtype);
        }
        result[i] = stack(per_input[i], 0);
    }
    return result;
}

// One backward walk, in named steps: mark_live, seed, plan_streaming, then process each entry
// from the last (run_formula, accumulate), handing out streamed sources as they become final
// (hand_out_ready), and collect the rest.
class BackwardWalk {
public:
    BackwardWalk(TapeState& tape,
                 std::span<const int64_t> source_ids,
                 std::span<const TensorMeta> source_meta,
                 const GradientOptions& options,
                 const SourceReadyFn& on_ready,
                 int batch_dims)
        : tape_(tape),
          num_entries_(tape.entries.size()),  // a persistent tape may grow meanwhile
          source_ids_(source_ids),
          source_meta_(source_meta),
          options_(options),
          on_ready_(on_ready),
          batch_dims_(batch_dims),
          arena_(stack_buffer_.data(), stack_buffer_.size(), tape_block_pool()),
          depends_(source_ids.begin(), source_ids.end(), 0, &arena_),
          live_(num_entries_, 0, &arena_),
          grads_(&arena_),
          source_set_(source_ids.begin(), source_ids.end(), 0, &arena_),
          finished_(&arena_),
          ready_after_(&arena_),
          streamed_(source_ids.size(), 0, &arena_) {}

    std::vector<Gradient> run(std::span<const Tensor> targets) {
        seed(targets);
        mark_live();
        if (on_ready_) plan_streaming();
        for (std::size_t e = num_entries_; e-- > 0;) {
            process(e);
            if (on_ready_) hand_out_ready(e);
        }
        return collect();
    }

private:
    // Batched (NOTE [Vectorized jacobians]): every seed is given and starts with the batch dims.
    void seed(std::span<const Tensor> targets) {
        if (batch_dims_ > 0) {
            if (batch_dims_ != 1 || options_.output_gradients.size() != targets.size()) {
                throw errors::InternalError(
                    "a batched backward walk needs one batch dim and every seed");
            }
            const auto& dims = options_.output_gradients[0].shape().dims();
            batch_.assign(dims.begin(), dims.begin() + batch_dims_);
        }
        for (std::size_t t = 0; t < targets.size(); ++t) {
            const bool given =
                t < options_.output_gradients.size() && options_.output_gradients[t].defined();
            accumulate(targets[t].id(),
                       given ? options_.output_gradients[t] : ones_like(targets[t]));
        }
    }

    // Live entries: those with an input that depends on a source.
    void mark_live() {
        for (std::size_t e = 0; e < num_entries_; ++e) {
            const TapeEntry& entry = tape_.entries[e];
            for (int64_t id : entry.input_ids) {
                if (depends_.count(id) != 0) {
                    live_[e] = 1;
                    break;
                }
            }
            if (live_[e] != 0) depends_.insert(entry.output_ids.begin(), entry.output_ids.end());
        }
    }

    // NOTE [Streaming sources]: with on_ready, a source no entry produces (a variable) is final
    // once the walk has passed the first entry that reads it; it is handed out there and
    // forgotten, and a non-persistent tape drops each entry's saved tensors once processed, so
    // optimizers can update a variable in place (no copy-on-write) and free its gradient while the
    // walk goes on.
    void plan_streaming() {
        ready_after_.resize(num_entries_);
        std::pmr::unordered_set<int64_t> produced(&arena_);
        for (std::size_t e = 0; e < num_entries_; ++e) {
            produced.insert(tape_.entries[e].output_ids.begin(), tape_.entries[e].output_ids.end());
        }
        std::pmr::unordered_map<int64_t, std::size_t> first_use(&arena_);
        for (std::size_t e = num_entries_; e-- > 0;) {
            for (int64_t id : tape_.entries[e].input_ids)
                first_use[id] = e;
        }
        for (std::size_t s = 0; s < source_ids_.size(); ++s) {
            auto it = first_use.find(source_ids_[s]);
            if (produced.count(source_ids_[s]) != 0 || it == first_use.end()) continue;
            bool repeated = false;  // the same source listed twice: handed out at the end
            for (std::size_t r = 0; r < s; ++r)
                repeated = repeated || source_ids_[r] == source_ids_[s];
            if (repeated) continue;
            ready_after_[it->second].push_back(s);
            streamed_[s] = 1;
        }
    }

    void accumulate(int64_t id, Gradient g) {
        grads_.try_emplace(id, options_.aggregation_method).first->second.add(std::move(g));
    }

    // The accumulated gradient of `id`, removed from the walk (undefined when none arrived).
    Gradient take(int64_t id) {
        auto it = grads_.find(id);
        if (it == grads_.end()) return {};
        Gradient g = it->second.take();
        grads_.erase(it);
        return g;
    }

    // The gradient handed out for source s: undefined (or zeros) when unconnected or not floating.
    Gradient finalize(std::size_t s, Gradient g) const {
        if (!g.defined() || !is_floating(source_meta_[s].dtype)) {
            g = Gradient();
            if (options_.unconnected_gradients == UnconnectedGradients::zero) {
                const DeviceScope scope(source_meta_[s].device);
                const Shape& shape = source_meta_[s].shape;
                g = zeros(batch_dims_ == 0 ? shape : with_batch(batch_, shape),
                          source_meta_[s].dtype);
            }
        }
        return g;
    }

    void process(std::size_t e) {
        if (live_[e] == 0) return;
        // Gather the outputs' final gradients; skip entries no gradient reached.
        const std::size_t num_outputs = tape_.entries[e].output_ids.size();
        std::pmr::vector<Gradient> final_grads(num_outputs, &arena_);
        bool any = false;
        for (std::size_t k = 0; k < num_outputs; ++k) {
            const int64_t id = tape_.entries[e].output_ids[k];
            final_grads[k] = take(id);
            if (!final_grads[k].defined()) continue;
            if (source_set_.count(id) != 0) finished_[id] = final_grads[k];
            any = true;
        }
        if (!any) return;
        // Variable reads and identities pass IndexedSlices through unchanged (as TensorFlow's tape
        // does), so a gather from a variable gives the variable a sparse gradient.
        if (passes_slices(tape_.entries[e].op) && final_grads[0].is_sparse()) {
            accumulate(tape_.entries[e].input_ids[0], final_grads[0]);
            return;
        }
        std::pmr::vector<Tensor> out_grads(num_outputs, &arena_);
        for (std::size_t k = 0; k < num_outputs; ++k)
            out_grads[k] = final_grads[k].dense();
        // In place: recording on this same (persistent) tape appends without moving entries.
        const TapeEntry& entry = tape_.entries[e];
        for (std::size_t k = 0; k < num_outputs; ++k) {
            if (!out_grads[k].defined()) {
                const TensorMeta& m = entry.out_meta[k];
                const DeviceScope scope(m.device);
                out_grads[k] =
                    zeros(batch_dims_ == 0 ? m.shape : with_batch(batch_, m.shape), m.dtype);
            }
        }
        // Told to the formulas (GradCtx::needs, TensorFlow's skip_input_indices): matmul and conv2d
        // skip an input nobody needs, e.g. the first layer's gradient w.r.t. the data.
        std::pmr::vector<char> needs(entry.input_ids.size(), 0, &arena_);
        for (std::size_t i = 0; i < needs.size();
             ++i) {  // constants and unwatched tensors need none
            needs[i] =
                is_floating(entry.in_meta[i].dtype) && depends_.count(entry.input_ids[i]) != 0;
        }
        const GradCtx ctx{out_grads,
                          entry.saved_in,
                          entry.saved_out,
                          entry.attrs,
                          entry.in_meta,
                          entry.out_meta,
                          batch_dims_,
                          needs};
        Grads in_grads = run_formula(entry, ctx);
        for (std::size_t i = 0; i < entry.input_ids.size() && i < in_grads.size(); ++i) {
            Gradient& g = in_grads[i];
            if (!g.defined() || needs[i] == 0) continue;
            if (batch_dims_ > 0) {
                g = sum_to_shape(g.dense(), entry.in_meta[i].shape, batch_dims_);
            } else if (!g.is_sparse() && g.dense().shape() != entry.in_meta[i].shape) {
                g = sum_to_shape(g.dense(), entry.in_meta[i].shape);  // NOTE [Un-broadcasting]
            }
            accumulate(entry.input_ids[i], std::move(g));
        }
    }

    // The entry's custom gradient or its op's row; no gradients when it is not differentiable.
    Grads run_formula(const TapeEntry& entry, const GradCtx& ctx) const {
        if (entry.custom)
            return batch_dims_ > 0 ? per_row(*entry.custom, ctx) : (*entry.custom)(ctx);
        const OpDef& def = op_def(entry.op);
        if (def.backward == nullptr) return {};
        if (batch_dims_ > 0 && !def.batchable) return per_row(def.backward, ctx);
        return def.backward(ctx);
    }

    // NOTE [Streaming sources]: the sources that became final at entry e.
    void hand_out_ready(std::size_t e) {
        if (!tape_.persistent) {
            tape_.entries[e].saved_in.clear();
            tape_.entries[e].saved_out.clear();
        }
        for (std::size_t s : ready_after_[e])
            on_ready_(s, finalize(s, take(source_ids_[s])));
    }

    std::vector<Gradient> collect() {
        std::vector<Gradient> result;
        result.reserve(source_ids_.size());
        for (std::size_t s = 0; s < source_ids_.size(); ++s) {
            if (streamed_[s] != 0) {
                result.emplace_back();
                continue;
            }
            Gradient g;
            if (auto it = finished_.find(source_ids_[s]); it != finished_.end()) {
                g = it->second;
            } else if (auto acc = grads_.find(source_ids_[s]); acc != grads_.end()) {
                g = acc->second.take();
                if (g.defined()) finished_[source_ids_[s]] = g;  // the same source listed twice
            }
            g = finalize(s, std::move(g));
            if (on_ready_) on_ready_(s, g);
            result.push_back(std::move(g));
        }
        return result;
    }

    TapeState& tape_;
    const std::size_t num_entries_;
    std::span<const int64_t> source_ids_;
    std::span<const TensorMeta> source_meta_;
    const GradientOptions& options_;
    const SourceReadyFn& on_ready_;
    const int batch_dims_;
    std::vector<int64_t> batch_;  // the seeds' leading batch dims
    // The walk's bookkeeping lives in one arena, mostly on the stack (NOTE [Tape memory]).
    std::array<std::byte, 4096> stack_buffer_;
    std::pmr::monotonic_buffer_resource arena_;
    std::pmr::unordered_set<int64_t> depends_;  // ids that depend on a source
    std::pmr::vector<char> live_;
    std::pmr::unordered_map<int64_t, Accumulator> grads_;
    const std::pmr::unordered_set<int64_t> source_set_;
    // Sources keep their final gradient here when their producer is processed.
    std::pmr::unordered_map<int64_t, Gradient> finished_;
    std::pmr::vector<std::pmr::vector<std::size_t>> ready_after_;
    std::pmr::vector<char> streamed_;
};

}  // namespace

std::vector<Gradient> compute_gradients(TapeState& tape,
                                        std::span<const Tensor> targets,
                                        std::span<const int64_t> source_ids,
                                        std::span<const TensorMeta> source_meta,
                                        const GradientOptions& options,
                                        const SourceReadyFn& on_ready,
                                        int batch_dims) {
    const profiler::detail::FrameworkSpan span([&] {
        return std::string(batch_dims > 0 ? "GradientTape backward (vectorized)"
                                          : "GradientTape backward");
    });
    return BackwardWalk(tape, source_ids, source_meta, options, on_ready, batch_dims).run(targets);
}

}  // namespace tapeflow
