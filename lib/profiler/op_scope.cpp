// OpScope: one op call as the profiler records it.
//
// NOTE [Profiler GPU timing]: an op on a CUDA device only queues its kernels, so its host time is
// the launch cost. With device_tracer_level 1 the scope asks the device's backend for a marker (a
// cudaEvent) before the op and another after it, on the device's one stream; stop() waits for
// them and turns each pair into the op's GPU time and a kernel event on the device's track. The
// kernel events are placed on the host clock through the first marker of the session, which the
// scope waits for when it is recorded (one synchronisation per session), so they line up with the
// host's within the launch latency.
#include "profiler/op_scope.hpp"

#include <string>

#include <tapeflow/autograd/variable.hpp>
#include <tapeflow/core/storage.hpp>

#include "core/backend.hpp"
#include "profiler/collector.hpp"
#include "profiler/gpu_markers.hpp"
#include "profiler/op_cost.hpp"

namespace tapeflow::profiler::detail {
namespace {

thread_local OpScope* t_innermost = nullptr;

// Bytes of the outputs this call allocated: an output sharing an input's storage is a view.
int64_t allocated_bytes(std::span<const Tensor> inputs, std::span<const Tensor> outputs) {
    int64_t bytes = 0;
    for (const Tensor& out : outputs) {
        if (!out.defined()) continue;
        bool view = false;
        for (const Tensor& in : inputs)
            view = view || (in.defined() && in.impl()->storage == out.impl()->storage);
        if (!view) bytes += static_cast<int64_t>(out.nbytes());
    }
    return bytes;
}

}  // namespace

OpScope::OpScope(Op op, std::span<const Tensor> inputs)
    : op_(op), parent_(t_innermost), start_ns_(now_ns()), session_(session_id()) {
    t_innermost = this;
    if (!inputs.empty() && inputs[0].defined()) {
        device_ = inputs[0].device();
    } else if (inputs.empty()) {
        device_ = default_device();
    }
    if (!device_.is_cpu()) gpu_begin_ = gpu_marker_begin(session_, device_);
}

void OpScope::finish(std::span<const Tensor> inputs,
                     std::span<const Tensor> outputs,
                     const Attrs& attrs) {
    Event e;
    e.kind = EventKind::op;
    e.op_type = op_type(op_);
    e.gpu_begin = gpu_begin_;
    if (gpu_begin_ != nullptr) {
        e.gpu_end = gpu_marker_end(device_);
        e.gpu_device = device_.index();
        gpu_begin_ = nullptr;
    }
    e.end_ns = now_ns();
    e.start_ns = start_ns_;
    e.self_ns = e.end_ns - start_ns_ - child_ns_;
    if (parent_ != nullptr) parent_->child_ns_ += e.end_ns - start_ns_;
    std::string name = current_name_scope();
    name += e.op_type;
    e.name = std::move(name);
    e.flops = op_flops(op_, inputs, outputs, attrs);
    e.output_bytes = allocated_bytes(inputs, outputs);
    e.mem_bytes = memory_stats(device_).bytes_in_use;
    void* const begin = e.gpu_begin;
    void* const end = e.gpu_end;
    if (!append(session_, std::move(e)) && begin != nullptr) {  // the session ended meanwhile
        release_gpu_marker(device_, begin);
        release_gpu_marker(device_, end);
    }
}

OpScope::~OpScope() {
    t_innermost = parent_;
    if (gpu_begin_ != nullptr) release_gpu_marker(device_, gpu_begin_);  // the op raised
}

std::string_view OpScope::current_op_type() noexcept {
    return t_innermost != nullptr ? op_type(t_innermost->op_) : std::string_view();
}

}  // namespace tapeflow::profiler::detail
