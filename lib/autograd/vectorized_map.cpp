// tf.vectorized_map (include/tapeflow/autograd/vectorized_map.hpp).
//
// NOTE [Vectorized map]: TensorFlow's pfor converts the graph of fn op by op. tapeflow is eager, so
// it records what fn does instead: fn runs on the first example under an OpTrace (every op
// apply() runs, in order: the ops of a GradientTape's backward walk inside fn too, so per-example
// gradients are just more ops). The record is replayed once on the whole batch: each value derived
// from the examples carries a leading batch axis, and each op with such an input runs its
// batching rule (vmap_rules.cpp), or else once per example (the while_loop fallback, logged
// naming the op). Ops none of whose inputs depend on the examples are not rerun: their traced
// outputs are the same for every example. Random ops draw [n, ...] new numbers from their stream.
// fn's ops can only depend on an example's values through values it read on the host (item(),
// to_vector(), data(): C++ control flow, or tensors built from them); when it read any, fn also
// runs on the last example, and unless both runs did the same ops with the same attributes on
// the same kinds of inputs (equal captured values), fn runs on every example and the results are
// stacked, with a warning.
#include <cstring>
#include <set>
#include <string>
#include <unordered_map>

#include <tapeflow/autograd/vectorized_map.hpp>
#include <tapeflow/core/error.hpp>
#include <tapeflow/core/logging.hpp>
#include <tapeflow/ops/array.hpp>
#include <tapeflow/ops/creation.hpp>

#include "autograd/vmap_rules.hpp"
#include "core/host_reads.hpp"
#include "ops/apply.hpp"
#include "ops/op_trace.hpp"
#include "ops/random_streams.hpp"

namespace tapeflow {
namespace {

using Fn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

[[noreturn]] void fail(const std::string& message) {
    throw errors::InvalidArgumentError("vectorized_map: " + message);
}

bool is_random(Op op) {
    return op == Op::random_uniform || op == Op::random_normal || op == Op::truncated_normal ||
           op == Op::random_shuffle;
}

// Where a traced tensor came from: example input `index` (call -1), output `index` of call `call`,
// or a tensor from outside fn (call -2, `captured` holds it).
struct Ref {
    int64_t call = -2;
    int64_t index = 0;
};

struct Recording {
    OpTrace trace;
    bool read_values = false;     // fn read elements on the host (item(), to_vector(), data())
    std::vector<Tensor> inputs;   // the example fn ran on
    std::vector<Tensor> outputs;  // what it returned
    std::unordered_map<int64_t, Ref> origin;  // tensor id -> where it came from

    Ref ref(const Tensor& t) const {
        const auto it = origin.find(t.id());
        return it == origin.end() ? Ref{} : it->second;
    }
};

Recording record(const Fn& fn, std::vector<Tensor> example) {
    Recording r{OpTrace("vectorized_map")};
    r.inputs = std::move(example);
    {
        const uint64_t reads = detail::host_reads();
        const OpTraceScope scope(r.trace);
        r.outputs = fn(r.inputs);
        r.read_values = detail::host_reads() != reads;
    }
    for (std::size_t i = 0; i < r.inputs.size(); ++i)
        r.origin.emplace(r.inputs[i].id(), Ref{-1, static_cast<int64_t>(i)});
    const auto& calls = r.trace.calls();
    for (std::size_t c = 0; c < calls.size(); ++c) {
        for (std::size_t j = 0; j < calls[c].outputs.size(); ++j) {
            r.origin.emplace(calls[c].outputs[j].id(),
                             Ref{static_cast<int64_t>(c), static_cast<int64_t>(j)});
        }
    }
    return r;
}

bool same_value(const Tensor& a, const Tensor& b) {
    if (!a.defined() || !b.defined()) return a.defined() == b.defined();
    if (a.id() == b.id()) return true;
    if (a.shape() != b.shape() || a.dtype() != b.dtype() || a.device() != b.device()) return false;
    const Tensor ha = a.cpu();
    const Tensor hb = b.cpu();
    return std::memcmp(ha.raw_data(), hb.raw_data(), ha.nbytes()) == 0;
}

bool same_attrs(Op op, const Attrs& a, const Attrs& b) {
    if (a.items().size() != b.items().size()) return false;
    for (std::size_t i = 0; i < a.items().size(); ++i) {
        const auto& [ka, va] = a.items()[i];
        const auto& [kb, vb] = b.items()[i];
        if (ka != kb) return false;
        // A random op's stream position and (unseeded) seeds differ from call to call.
        if (is_random(op) && (ka == "seed" || ka == "seed2" || ka == "offset")) continue;
        if (!(va == vb)) return false;
    }
    return true;
}

bool same_ref(const Recording& ra, const Tensor& a, const Recording& rb, const Tensor& b) {
    const Ref x = ra.ref(a);
    const Ref y = rb.ref(b);
    if (x.call != y.call || x.index != y.index) return false;
    return x.call != -2 || same_value(a, b);
}

// Whether fn ran the same program on both examples; else the op where they part (for the log).
std::string differs(const Recording& a, const Recording& b) {
    const auto& ca = a.trace.calls();
    const auto& cb = b.trace.calls();
    if (ca.size() != cb.size()) {
        return fmt::format(
            "fn ran {} ops on the first example and {} on the last", ca.size(), cb.size());
    }
    for (std::size_t c = 0; c < ca.size(); ++c) {
        const TracedCall& x = ca[c];
        const TracedCall& y = cb[c];
        bool same = x.op == y.op && x.inputs.size() == y.inputs.size() &&
                    x.outputs.size() == y.outputs.size() && same_attrs(x.op, x.attrs, y.attrs);
        for (std::size_t i = 0; same && i < x.inputs.size(); ++i)
            same = same_ref(a, x.inputs[i], b, y.inputs[i]);
        for (std::size_t j = 0; same && j < x.outputs.size(); ++j) {
            same = x.outputs[j].shape() == y.outputs[j].shape() &&
                   x.outputs[j].dtype() == y.outputs[j].dtype();
        }
        if (!same) {
            return fmt::format(
                "op {} ({}) differs between the first and the last example", c, op_type(x.op));
        }
    }
    if (a.outputs.size() != b.outputs.size()) return "fn returned a different number of outputs";
    for (std::size_t k = 0; k < a.outputs.size(); ++k) {
        if (!same_ref(a, a.outputs[k], b, b.outputs[k])) {
            return fmt::format("output {} of fn comes from different values", k);
        }
    }
    return "";
}

// The traced call's outputs as specs: the same shapes and dtypes, and the same views.
std::vector<OutputSpec> traced_specs(const TracedCall& call) {
    std::vector<OutputSpec> specs;
    for (const Tensor& out : call.outputs) {
        OutputSpec spec{out.shape(), out.dtype()};
        for (std::size_t i = 0; i < call.inputs.size(); ++i) {
            const TensorImpl& src = *call.inputs[i].impl();
            const TensorImpl& dst = *out.impl();
            if (src.storage == dst.storage && dst.offset >= src.offset) {
                spec.alias_input = static_cast<int>(i);
                spec.byte_offset = dst.offset - src.offset;
                break;
            }
        }
        specs.push_back(std::move(spec));
    }
    return specs;
}

class Replay {
public:
    Replay(const Recording& r,
           const std::vector<Tensor>& elems,
           int64_t batch,
           const VectorizedMapOptions& options)
        : r_(r), batch_(batch), options_(options) {
        for (std::size_t i = 0; i < elems.size(); ++i)
            env_[r.inputs[i].id()] = {elems[i], true};
    }

    std::vector<Tensor> run() {
        for (const TracedCall& call : r_.trace.calls())
            step(call);
        std::vector<Tensor> out;
        for (const Tensor& t : r_.outputs) {
            if (!t.defined()) {
                out.emplace_back();
                continue;
            }
            out.push_back(materialized(value(t), batch_));
        }
        if (!looped_.empty()) {
            std::string ops;
            for (const std::string& op : looped_)
                ops += (ops.empty() ? "" : ", ") + op;
            logging::warn(
                "vectorized_map: using a loop over the {} examples for op(s) {}: no batching rule "
                "for their batched inputs",
                batch_,
                ops);
        }
        return out;
    }

private:
    VmapValue value(const Tensor& t) const {
        const auto it = env_.find(t.id());
        return it == env_.end() ? VmapValue{t, false} : it->second;
    }

    void step(const TracedCall& call) {
        std::vector<VmapValue> in;
        bool batched = false;
        for (const Tensor& t : call.inputs) {
            in.push_back(value(t));
            batched = batched || in.back().batched;
        }
        VmapOutputs out;
        if (is_random(call.op)) {
            if (!batched && call.op != Op::random_shuffle) {
                out = random_batch(call);
            } else {
                out = loop(call, in, /*fresh_streams=*/true);
            }
        } else if (!batched) {
            // The same for every example: the traced outputs stand, unless an enclosing
            // vectorized_map is tracing (it must see the op, whose inputs may be its examples').
            if (detail::active_op_trace() == nullptr) return;
            std::vector<Tensor> inputs;
            for (const VmapValue& v : in)
                inputs.push_back(v.value);
            for (Tensor& t : apply_multi(call.op, inputs, traced_specs(call), call.attrs))
                out.push_back({std::move(t), false});
        } else {
            const VmapFn rule = vmap_rule(call.op);
            if (rule != nullptr) {
                out = rule(VmapCall{call.op, call.attrs, in, call.inputs, call.outputs, batch_});
            }
            if (out.empty()) out = loop(call, in, false);
        }
        for (std::size_t j = 0; j < call.outputs.size(); ++j)
            env_[call.outputs[j].id()] = std::move(out[j]);
    }

    // A random op with per-example shape S: one call of shape [n, S] from its stream.
    VmapOutputs random_batch(const TracedCall& call) {
        const Tensor& traced = call.outputs[0];
        const Shape shape = with_batch(batch_, traced.shape());
        const Attrs attrs = random_detail::continue_stream(
            call.op,
            traced.dtype(),
            call.attrs,
            random_detail::blocks_for(call.op, shape.num_elements(), shape[0]));
        return {{apply(call.op, {}, OutputSpec{shape, traced.dtype()}, attrs), true}};
    }

    // The op once per example, stacked.
    VmapOutputs loop(const TracedCall& call, const std::vector<VmapValue>& in, bool fresh_streams) {
        if (!options_.fallback_to_while_loop) {
            fail(
                fmt::format("op {} has no batching rule for its batched inputs and "
                            "fallback_to_while_loop is false",
                            op_type(call.op)));
        }
        if (!fresh_streams) looped_.insert(std::string(op_type(call.op)));
        std::vector<std::vector<Tensor>> rows(in.size());
        for (std::size_t i = 0; i < in.size(); ++i) {
            if (in[i].batched) rows[i] = unstack(in[i].value, 0);
        }
        const std::vector<OutputSpec> specs = traced_specs(call);
        std::vector<std::vector<Tensor>> per_output(call.outputs.size());
        for (int64_t b = 0; b < batch_; ++b) {
            std::vector<Tensor> inputs;
            for (std::size_t i = 0; i < in.size(); ++i)
                inputs.push_back(in[i].batched ? rows[i][static_cast<std::size_t>(b)]
                                               : in[i].value);
            Attrs attrs = call.attrs;
            if (fresh_streams) {
                const Tensor& x = call.inputs[0];
                attrs = random_detail::continue_stream(
                    call.op,
                    x.dtype(),
                    call.attrs,
                    random_detail::blocks_for(
                        call.op, x.num_elements(), x.rank() == 0 ? 1 : x.shape()[0]));
            }
            std::vector<Tensor> outs = apply_multi(call.op, inputs, specs, attrs);
            for (std::size_t j = 0; j < outs.size(); ++j)
                per_output[j].push_back(std::move(outs[j]));
        }
        VmapOutputs out;
        for (std::vector<Tensor>& rows_j : per_output)
            out.push_back({stack(rows_j, 0), true});
        return out;
    }

    const Recording& r_;
    const int64_t batch_;
    const VectorizedMapOptions& options_;
    std::unordered_map<int64_t, VmapValue> env_;
    std::set<std::string> looped_;
};

std::vector<Tensor> example(const std::vector<Tensor>& elems, int64_t b) {
    std::vector<Tensor> out;
    for (const Tensor& e : elems)
        out.push_back(gather(e, constant(b)));
    return out;
}

// fn on every example, stacked (the whole-function fallback). The traced runs are not reused: an
// enclosing vectorized_map's trace must see every op.
std::vector<Tensor> loop_all(const Fn& fn, const std::vector<Tensor>& elems, int64_t batch) {
    std::vector<std::vector<Tensor>> outs;
    for (int64_t b = 0; b < batch; ++b) {
        std::vector<Tensor> r = fn(example(elems, b));
        if (b == 0) outs.resize(r.size());
        if (r.size() != outs.size()) {
            fail(fmt::format("fn returned {} outputs for example 0 and {} for example {}",
                             outs.size(),
                             r.size(),
                             b));
        }
        for (std::size_t k = 0; k < r.size(); ++k)
            outs[k].push_back(std::move(r[k]));
    }
    std::vector<Tensor> stacked;
    for (std::size_t k = 0; k < outs.size(); ++k) {
        for (const Tensor& t : outs[k]) {
            if (!t.defined()) fail(fmt::format("fn returned an undefined tensor as output {}", k));
        }
        stacked.push_back(stack(outs[k], 0));
    }
    return stacked;
}

int64_t batch_size(const std::vector<Tensor>& elems) {
    if (elems.empty()) fail("elems is empty: fn needs at least one input");
    int64_t batch = -1;
    for (std::size_t i = 0; i < elems.size(); ++i) {
        const Tensor& e = elems[i];
        if (!e.defined()) fail(fmt::format("elems[{}] is an undefined tensor", i));
        if (e.rank() == 0) {
            fail(fmt::format("elems[{}] is a scalar; every input needs an axis 0 to map over", i));
        }
        if (batch >= 0 && e.shape()[0] != batch) {
            fail(
                fmt::format("every input needs the same first dimension, but elems[0] has shape "
                            "{} and elems[{}] has shape {}",
                            elems[0].shape(),
                            i,
                            e.shape()));
        }
        batch = e.shape()[0];
    }
    return batch;
}

}  // namespace

std::vector<Tensor> vectorized_map(Fn fn,
                                   const std::vector<Tensor>& elems,
                                   const VectorizedMapOptions& options) {
    if (!fn) fail("fn is empty");
    const int64_t batch = batch_size(elems);
    if (batch == 0) {
        // No example to trace: fn's output shapes come from zeros of one example's shape.
        std::vector<Tensor> zero;
        for (const Tensor& e : elems) {
            std::vector<int64_t> dims(e.shape().dims().begin() + 1, e.shape().dims().end());
            zero.push_back(zeros(Shape(std::move(dims)), e.dtype()));
        }
        std::vector<Tensor> out;
        for (const Tensor& t : fn(zero))
            out.push_back(zeros(with_batch(0, t.shape()), t.dtype()));
        return out;
    }
    const Recording first = record(fn, example(elems, 0));
    for (std::size_t k = 0; k < first.outputs.size(); ++k) {
        if (!first.outputs[k].defined()) {
            fail(fmt::format("fn returned an undefined tensor as output {}", k));
        }
    }
    // fn's ops can depend on the examples' values only through what it read on the host; when it
    // read any, the last example shows whether they do.
    const std::string difference = batch == 1 || !first.read_values
                                       ? ""
                                       : differs(first, record(fn, example(elems, batch - 1)));
    if (!difference.empty()) {
        if (!options.fallback_to_while_loop) {
            fail(difference + "; fn cannot be vectorized and fallback_to_while_loop is false");
        }
        logging::warn("vectorized_map: running fn once per example: {}", difference);
        return loop_all(fn, elems, batch);
    }
    return Replay(first, elems, batch, options).run();
}

Tensor vectorized_map(std::function<Tensor(const Tensor&)> fn,
                      const Tensor& elems,
                      const VectorizedMapOptions& options) {
    if (!fn) fail("fn is empty");
    return vectorized_map(
        [&](const std::vector<Tensor>& x) { return std::vector<Tensor>{fn(x[0])}; },
        std::vector<Tensor>{elems},
        options)[0];
}

}  // namespace tapeflow
