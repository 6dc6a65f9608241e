// Plan::graph(): a tf::function's traced ops as GraphDef-shaped nodes, through the same builder as
// GradientTape::graph() (lib/autograd/graph.cpp). Host steps are not ops and do not appear.
#include <memory_resource>

#include <tapeflow/autograd/variable.hpp>

#include "autograd/graph_signatures.hpp"
#include "function/plan.hpp"
#include "function/plan_steps.hpp"

namespace tapeflow::function_detail {

Graph Plan::graph() const {
    std::pmr::memory_resource* memory = std::pmr::get_default_resource();
    std::vector<TapeEntry> entries;
    entries.reserve(steps_.size());
    int64_t next_handle = static_cast<int64_t>(slots_.size());
    for (const Step& step : steps_) {
        if (step.kind == StepKind::host) continue;
        TapeEntry& e = entries.emplace_back(TapeEntry::allocator_type(memory));
        if (step.kind == StepKind::read) {
            e.op = Op::read_variable;
            e.attrs.set("variable", Variable(step.variable).name());
            const TensorMeta& meta = slots_[static_cast<std::size_t>(step.out[0])].meta;
            e.input_ids.push_back(next_handle++);
            e.in_meta.push_back(meta);
        } else {
            e.op = step.op;
            e.attrs = step.attrs;
            for (int32_t s : step.in) {
                e.input_ids.push_back(s);
                e.in_meta.push_back(slots_[static_cast<std::size_t>(s)].meta);
            }
        }
        for (int32_t s : step.out) {
            e.output_ids.push_back(s);
            e.out_meta.push_back(slots_[static_cast<std::size_t>(s)].meta);
        }
    }
    std::vector<const TapeEntry*> pointers;
    for (const TapeEntry& e : entries)
        pointers.push_back(&e);
    return graph_of(pointers);
}

}  // namespace tapeflow::function_detail
