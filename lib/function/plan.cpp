// The replay schedule of a tf::function (plan.hpp).
//
// NOTE [Function replay]: the recording (NOTE [Function trace]) becomes a list of steps over
// numbered slots (the function's arguments, constants it captured, the results of its ops and
// reads). Planning does once what eager execution does per op: output shapes and dtypes, the
// kernel of (op, device, dtype), which outputs are views, the attributes. A replay then runs the
// kernels on the slots' tensors — no shape inference, no dispatch, no tape — reads the variables
// again, runs host steps, and draws random ops' streams as eager execution would. Small results
// (under kArenaMaxBytes) that never leave the schedule live in one arena allocated at planning,
// placed by liveness so results whose lifetimes do not overlap share bytes: their tensors are
// built once and reused by every replay. Everything else (large results, which the element-wise
// kernels may defer and fuse as eagerly — NOTE [Deferred element-wise fusion] — and results
// returned, assigned or handed to host steps) is allocated per replay as eager execution allocates
// it; such a result computed from arena tensors is computed at once (a deferred one would read
// them after their bytes are reused). Same kernels, same inputs, same order: the results are
// those of eager execution, bit for bit.
#include "function/plan.hpp"

#include <algorithm>
#include <climits>
#include <unordered_map>

#include <fmt/format.h>

#include <tapeflow/core/error.hpp>

#include "autograd/graph_signatures.hpp"
#include "core/sizes.hpp"
#include "function/plan_steps.hpp"
#include "ops/apply.hpp"
#include "ops/random_streams.hpp"

namespace tapeflow::function_detail {
namespace {

constexpr std::size_t kArenaMaxBytes = 256 * 1024;
constexpr std::size_t kAlign = 64;

std::size_t aligned(std::size_t n) {
    return (n + kAlign - 1) / kAlign * kAlign;
}

}  // namespace

Plan::~Plan() = default;

Plan::Plan(const Recording& recording,
           std::span<const Tensor> args,
           std::span<const Tensor> outputs) {
    std::unordered_map<int64_t, int32_t> slot_of;  // tensor id -> slot
    std::vector<Tensor> traced;                    // slot -> the traced tensor (planning only)
    auto new_slot = [&](const Tensor& t, int32_t def) {
        const auto s = static_cast<int32_t>(slots_.size());
        Slot slot;
        slot.root = s;
        slot.def = def;
        slot.meta = {t.shape(), t.dtype(), t.device()};
        slots_.push_back(slot);
        traced.push_back(t);
        slot_of[t.id()] = s;
        return s;
    };
    auto input_slot = [&](const Tensor& t) {
        if (!t.defined())
            throw errors::InternalError(fmt::format(
                "tf::function '{}': an op of the trace has an undefined input", recording.name()));
        const auto it = slot_of.find(t.id());
        if (it != slot_of.end()) return it->second;
        const int32_t s = new_slot(t, -1);  // captured from outside the function: a constant
        slots_[static_cast<std::size_t>(s)].fixed = true;
        return s;
    };
    for (const Tensor& a : args) {
        if (!a.defined()) {  // an undefined Tensor argument (e.g. no sample weights)
            arg_slots_.push_back(-1);
            continue;
        }
        const auto it = slot_of.find(a.id());
        arg_slots_.push_back(it != slot_of.end() ? it->second : new_slot(a, -1));
    }

    const auto& calls = recording.ops().calls();
    const auto& events = recording.events();
    std::size_t next_event = 0;
    auto add_event = [&](const TraceEvent& e) {
        Step step;
        const auto index = static_cast<int32_t>(steps_.size());
        if (e.is_read()) {
            step.kind = StepKind::read;
            step.variable = e.variable;
            step.out.push_back(new_slot(e.read, index));
        } else {
            step.kind = StepKind::host;
            step.what = e.what;
            step.body = e.body;
            for (const Tensor& t : e.inputs)  // a host step may take undefined tensors: -1
                step.in.push_back(t.defined() ? input_slot(t) : -1);
        }
        steps_.push_back(std::move(step));
    };
    for (std::size_t c = 0; c <= calls.size(); ++c) {
        while (next_event < events.size() && events[next_event].position == c)
            add_event(events[next_event++]);
        if (c == calls.size()) break;
        const TracedCall& call = calls[c];
        if (call.outputs.empty())
            throw errors::InternalError(fmt::format(
                "tf::function '{}': the in-place op {} ran outside a host step while tracing; this "
                "is a tapeflow bug",
                recording.name(),
                op_type(call.op)));
        Step step;
        const auto index = static_cast<int32_t>(steps_.size());
        step.op = call.op;
        step.attrs = call.attrs;
        step.device = call.inputs.empty() ? call.outputs.at(0).device() : call.inputs[0].device();
        if (const RandomCall* r = recording.random_call(c)) step.random = *r;
        for (const Tensor& t : call.inputs)
            step.in.push_back(input_slot(t));
        bool all_views = !call.outputs.empty();
        for (const Tensor& out : call.outputs) {
            OutputSpec spec{out.shape(), out.dtype()};
            for (std::size_t k = 0; k < call.inputs.size(); ++k) {
                const TensorImpl& in = *call.inputs[k].impl();
                if (in.storage == out.impl()->storage && out.impl()->offset >= in.offset) {
                    spec.alias_input = static_cast<int>(k);
                    spec.byte_offset = out.impl()->offset - in.offset;
                    break;
                }
            }
            all_views = all_views && spec.alias_input >= 0;
            const int32_t s = new_slot(out, index);
            if (spec.alias_input >= 0)
                slots_[static_cast<std::size_t>(s)].root =
                    slots_[static_cast<std::size_t>(
                               step.in[static_cast<std::size_t>(spec.alias_input)])]
                        .root;
            step.out.push_back(s);
            step.out_spec.push_back(std::move(spec));
        }
        step.computed = !all_views;
        if (step.computed)
            step.fn = resolve_kernel(call.op, step.device, call.inputs, call.outputs);
        steps_.push_back(std::move(step));
    }
    for (const Tensor& t : outputs) {
        const int32_t s = t.defined() ? input_slot(t) : -1;
        output_slots_.push_back(s);
        if (s >= 0) slots_[static_cast<std::size_t>(s)].output = true;
    }

    // Liveness (for roots: over all their views), and what escapes the schedule.
    auto root = [&](int32_t s) -> Slot& {
        return slots_[static_cast<std::size_t>(slots_[static_cast<std::size_t>(s)].root)];
    };
    for (std::size_t i = 0; i < steps_.size(); ++i) {
        for (int32_t s : steps_[i].in) {
            if (s < 0) continue;
            slots_[static_cast<std::size_t>(s)].last_use = static_cast<int32_t>(i);
            root(s).last_use = std::max(root(s).last_use, static_cast<int32_t>(i));
            if (steps_[i].kind == StepKind::host) root(s).escapes = true;
        }
    }
    for (int32_t s : output_slots_)
        if (s >= 0) root(s).escapes = true;
    for (std::size_t i = steps_.size(); i-- > 0;) {
        Step& step = steps_[i];
        if (step.kind != StepKind::kernel) continue;
        if (step.out.empty())  // an in-place op writes its inputs: they cannot be shared
            for (int32_t s : step.in)
                root(s).escapes = true;
        for (std::size_t j = 0; j < step.out.size(); ++j) {
            if (step.out_spec[j].alias_input >= 0) continue;
            Slot& s = slots_[static_cast<std::size_t>(step.out[j])];
            s.arena = step.device.is_cpu() && !s.escapes &&
                      step.out_spec[j].shape.num_elements() * dtype_size(s.meta.dtype) <=
                          static_cast<int64_t>(kArenaMaxBytes);
        }
    }
    // A per-replay result computed from arena tensors is computed at once, never deferred: a
    // deferred result would read its inputs after the arena bytes are reused.
    for (Step& step : steps_) {
        if (step.kind != StepKind::kernel || !step.computed) continue;
        bool arena_input = false, fresh_output = false;
        for (int32_t s : step.in)
            arena_input = arena_input || root(s).arena;
        for (std::size_t j = 0; j < step.out.size(); ++j)
            fresh_output = fresh_output || (step.out_spec[j].alias_input < 0 &&
                                            !slots_[static_cast<std::size_t>(step.out[j])].arena);
        step.materialize = arena_input && fresh_output;
    }

    // Place the arena results: first fit among the blocks live at the same time.
    struct Block {
        std::size_t offset, size;
        int32_t end;
    };
    std::vector<Block> placed;
    std::size_t arena_bytes = 0;
    for (std::size_t i = 0; i < slots_.size(); ++i) {
        Slot& s = slots_[i];
        if (!s.arena || s.root != static_cast<int32_t>(i)) continue;
        const std::size_t size = aligned(std::max<std::size_t>(
            1, static_cast<std::size_t>(s.meta.shape.num_elements()) * dtype_size(s.meta.dtype)));
        const int32_t end = std::max(s.last_use, s.def);
        std::vector<Block> live;
        for (const Block& b : placed)
            if (b.end >= s.def) live.push_back(b);
        std::sort(live.begin(), live.end(), [](const Block& a, const Block& b) {
            return a.offset < b.offset;
        });
        std::size_t offset = 0;
        for (const Block& b : live) {
            if (offset + size <= b.offset) break;
            offset = std::max(offset, b.offset + b.size);
        }
        s.offset = offset;
        placed.push_back({offset, size, end});
        arena_bytes = std::max(arena_bytes, offset + size);
        stats_.arena_unshared_bytes += size;
        ++stats_.arena_tensors;
    }
    stats_.arena_bytes = arena_bytes;
    if (arena_bytes > 0) arena_ = std::make_shared<Storage>(arena_bytes, Device::cpu());

    // The fixed tensors: constants, arena results and views of them, built once.
    frame_.resize(slots_.size());
    for (std::size_t i = 0; i < slots_.size(); ++i)
        if (slots_[i].fixed) frame_[i] = traced[i];  // constants
    for (Step& step : steps_) {
        if (step.kind != StepKind::kernel) continue;
        for (std::size_t j = 0; j < step.out.size(); ++j) {
            const auto o = static_cast<std::size_t>(step.out[j]);
            Slot& s = slots_[o];
            const OutputSpec& spec = step.out_spec[j];
            if (spec.alias_input < 0) {
                if (!s.arena) continue;
                s.fixed = true;
                frame_[o] = Tensor::view(arena_, s.offset, spec.shape, spec.dtype);
                continue;
            }
            const auto a =
                static_cast<std::size_t>(step.in[static_cast<std::size_t>(spec.alias_input)]);
            if (!slots_[a].fixed || slots_[a].def < 0 || !root(static_cast<int32_t>(a)).arena)
                continue;
            s.fixed = true;
            const TensorImpl& base = *frame_[a].impl();
            frame_[o] =
                Tensor::view(base.storage, base.offset + spec.byte_offset, spec.shape, spec.dtype);
        }
        step.inputs_fixed = std::all_of(step.in.begin(), step.in.end(), [&](int32_t s) {
            return slots_[static_cast<std::size_t>(s)].fixed;
        });
        step.outputs_fixed = std::all_of(step.out.begin(), step.out.end(), [&](int32_t s) {
            return slots_[static_cast<std::size_t>(s)].fixed;
        });
        step.in_buf.resize(step.in.size());
        step.out_buf.resize(step.out.size());
        if (step.inputs_fixed)
            for (std::size_t k = 0; k < step.in.size(); ++k)
                step.in_buf[k] = frame_[static_cast<std::size_t>(step.in[k])];
        for (std::size_t j = 0; j < step.out.size(); ++j)
            if (slots_[static_cast<std::size_t>(step.out[j])].fixed)
                step.out_buf[j] = frame_[static_cast<std::size_t>(step.out[j])];
    }
    // Release each per-replay tensor after its last reader (views keep their storage alive).
    for (std::size_t i = 0; i < slots_.size(); ++i) {
        const Slot& s = slots_[i];
        if (s.fixed || s.output || s.def < 0) continue;
        const int32_t at = std::max(s.last_use, s.def);
        steps_[static_cast<std::size_t>(at)].release.push_back(static_cast<int32_t>(i));
    }
    for (const Step& step : steps_) {
        if (step.kind == StepKind::kernel) ++stats_.kernel_steps;
        if (step.kind == StepKind::host) ++stats_.host_steps;
        if (step.kind == StepKind::read) ++stats_.reads;
    }
}

std::vector<Tensor> Plan::run(std::span<const Tensor> args) {
    const std::lock_guard lock(mutex_);
    struct ClearFrame {  // also when a step throws: the frame must not keep tensors alive
        Plan& plan;
        ~ClearFrame() {
            for (std::size_t i = 0; i < plan.slots_.size(); ++i)
                if (!plan.slots_[i].fixed) plan.frame_[i] = Tensor();
        }
    } clear{*this};
    for (std::size_t i = 0; i < args.size(); ++i)
        if (arg_slots_[i] >= 0) frame_[static_cast<std::size_t>(arg_slots_[i])] = args[i];
    for (Step& step : steps_) {
        switch (step.kind) {
            case StepKind::read:
                frame_[static_cast<std::size_t>(step.out[0])] = current_value(step.variable);
                break;
            case StepKind::host: {
                std::vector<Tensor> in;
                in.reserve(step.in.size());
                for (int32_t s : step.in)
                    in.push_back(s >= 0 ? frame_[static_cast<std::size_t>(s)] : Tensor());
                step.body(in);
                break;
            }
            case StepKind::kernel: {
                if (!step.inputs_fixed)
                    for (std::size_t k = 0; k < step.in.size(); ++k)
                        step.in_buf[k] = frame_[static_cast<std::size_t>(step.in[k])];
                if (!step.outputs_fixed) {
                    for (std::size_t j = 0; j < step.out.size(); ++j) {
                        if (slots_[static_cast<std::size_t>(step.out[j])].fixed) continue;
                        const OutputSpec& spec = step.out_spec[j];
                        if (spec.alias_input < 0) {
                            step.out_buf[j] = Tensor::empty(spec.shape, spec.dtype, step.device);
                        } else {
                            const TensorImpl& base =
                                *step.in_buf[static_cast<std::size_t>(spec.alias_input)].impl();
                            step.out_buf[j] = Tensor::view(base.storage,
                                                           base.offset + spec.byte_offset,
                                                           spec.shape,
                                                           spec.dtype);
                        }
                    }
                }
                if (step.computed) {
                    if (step.random) {
                        Attrs attrs = step.attrs;
                        const RandomCall& r = *step.random;
                        const Attrs drawn = random_detail::draw_again(
                            r.op, r.dtype, r.seed_source ? r.seed_source() : r.op_seed, r.blocks);
                        for (const auto& [key, value] : drawn.items())
                            attrs.set(key, value);
                        oom_as_error(op_type(step.op), [&] {
                            step.fn(KernelContext{
                                step.op, step.device, step.in_buf, step.out_buf, attrs});
                        });
                    } else {
                        oom_as_error(op_type(step.op), [&] {
                            step.fn(KernelContext{
                                step.op, step.device, step.in_buf, step.out_buf, step.attrs});
                        });
                    }
                }
                if (step.materialize)
                    for (const Tensor& t : step.out_buf)
                        (void)t.impl()->storage->data();
                if (!step.outputs_fixed) {
                    for (std::size_t j = 0; j < step.out.size(); ++j) {
                        const auto o = static_cast<std::size_t>(step.out[j]);
                        if (slots_[o].fixed) continue;
                        frame_[o] = std::move(step.out_buf[j]);
                    }
                }
                if (!step.inputs_fixed)
                    for (Tensor& t : step.in_buf)
                        t = Tensor();
                break;
            }
        }
        for (int32_t s : step.release)
            frame_[static_cast<std::size_t>(s)] = Tensor();
    }
    std::vector<Tensor> out;
    out.reserve(output_slots_.size());
    for (int32_t s : output_slots_)
        out.push_back(s >= 0 ? frame_[static_cast<std::size_t>(s)] : Tensor());
    return out;
}

}  // namespace tapeflow::function_detail
