// The deferred element-wise fusion (NOTE [Deferred element-wise fusion] in fusion.hpp): FusedExpr,
// the expression a pending storage holds, and the blocked evaluation of a whole tree of them.
#include "kernels/cpu/fusion.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/deferred.hpp"
#include "core/parallel.hpp"

namespace tapeflow::cpu::fusion {
namespace {

constexpr int kMaxDepth = 8;      // longest chain of pending ops before one computes eagerly
constexpr int kMaxSteps = 256;    // most ops in one blocked pass (a full binary tree of depth 8)
constexpr int64_t kBlock = 1024;  // elements per block buffer
constexpr int64_t kGrain = 1 << 15;

int64_t initial_min_elements() {
    if (const char* off = std::getenv("TAPEFLOW_FUSION"); off != nullptr && std::string(off) == "0")
        return -1;
    if (const char* env = std::getenv("TAPEFLOW_FUSION_MIN_ELEMENTS"); env != nullptr) {
        char* end = nullptr;
        const long long v = std::strtoll(env, &end, 10);
        if (end != env && *end == '\0') return v;
    }
    return int64_t{1} << 16;
}

std::atomic<int64_t>& min_elements() {
    static std::atomic<int64_t> value{initial_min_elements()};
    return value;
}

class FusedExpr;

// One operand of a step: a materialized buffer (ptr) or a block buffer (slot) that an earlier
// step filled.
struct Operand {
    const std::byte* ptr = nullptr;
    bool varies = true;
    int slot = -1;
};

struct Step {
    BlockFn fn;
    Operand a, b;
    int out_slot;  // unused by the last step, which writes the output
};

// Steps in post-order. Every step result is read exactly once (by its parent), so block buffers
// are recycled as soon as they are read: a tree needs about as many buffers as it is deep.
struct Program {
    std::vector<Step> steps;
    std::vector<Tensor> keep;  // inputs of inlined expressions, alive while the program runs
    std::vector<int> free_slots;
    int slots = 0;

    int take_slot() {
        if (free_slots.empty()) return slots++;
        const int slot = free_slots.back();
        free_slots.pop_back();
        return slot;
    }
};

class FusedExpr final : public detail::Deferred {
public:
    FusedExpr(BlockFn fn, std::vector<Tensor> inputs, DType dtype, int64_t n, int depth)
        : fn_(fn), inputs_(std::move(inputs)), dtype_(dtype), n_(n), depth_(depth) {}

    int depth() const { return depth_; }

    /// Appends this expression's steps (its inlinable inputs' first); returns the block buffer
    /// slot its result goes to.
    int append_to(Program& p, const std::vector<Tensor>& inputs) const {
        Operand ops[2];
        for (std::size_t i = 0; i < inputs.size(); ++i)
            ops[i] = operand(p, inputs[i]);
        const int out = p.take_slot();  // before freeing the operands': the loops take __restrict
        for (const Operand& o : ops)
            if (o.slot >= 0) p.free_slots.push_back(o.slot);
        p.steps.push_back({fn_, ops[0], ops[1], out});
        return out;
    }

protected:
    void compute(void* dst) override {
        Program p;
        append_to(p, inputs_);  // inputs_ is stable: release() runs after compute()
        evaluate(p, static_cast<std::byte*>(dst));
    }

    void release() noexcept override {
        const std::lock_guard lock(mutex_);
        inputs_.clear();
        inputs_.shrink_to_fit();
    }

private:
    // The inputs, or none once computed (then readers take the materialized buffer instead).
    std::vector<Tensor> snapshot() const {
        const std::lock_guard lock(mutex_);
        return inputs_;
    }

    Operand operand(Program& p, const Tensor& t) const {
        const TensorImpl& impl = *t.impl();
        auto* child = dynamic_cast<const FusedExpr*>(impl.storage->deferred());
        if (child != nullptr && child->dtype_ == dtype_ && child->n_ == t.num_elements() &&
            impl.offset == 0 && p.steps.size() < kMaxSteps) {
            std::vector<Tensor> in = child->snapshot();
            if (!in.empty()) {
                const int slot = child->append_to(p, in);
                p.keep.insert(p.keep.end(), in.begin(), in.end());
                return {nullptr, true, slot};
            }
        }
        return {static_cast<const std::byte*>(t.raw_data()), t.num_elements() != 1, -1};
    }

    void evaluate(const Program& p, std::byte* out) const {
        const auto es = static_cast<int64_t>(dtype_size(dtype_));
        const auto nsteps = static_cast<int64_t>(p.steps.size());
        parallel_for(n_, kGrain, [&](int64_t begin, int64_t end) {
            std::vector<std::byte> scratch(static_cast<std::size_t>(p.slots * kBlock * es + 64));
            auto* base = reinterpret_cast<std::byte*>(
                (reinterpret_cast<std::uintptr_t>(scratch.data()) + 63) & ~std::uintptr_t{63});
            const auto at = [&](const Operand& o, int64_t pos) -> const void* {
                if (o.slot >= 0) return base + o.slot * kBlock * es;
                return o.ptr + (o.varies ? pos * es : 0);
            };
            for (int64_t pos = begin; pos < end; pos += kBlock) {
                const int64_t len = std::min(kBlock, end - pos);
                for (int64_t i = 0; i < nsteps; ++i) {
                    const Step& s = p.steps[static_cast<std::size_t>(i)];
                    void* dst = i == nsteps - 1 ? out + pos * es : base + s.out_slot * kBlock * es;
                    s.fn(at(s.a, pos), s.a.varies, at(s.b, pos), s.b.varies, dst, len);
                }
            }
        });
    }

    BlockFn fn_;
    std::vector<Tensor> inputs_;
    DType dtype_;
    int64_t n_;
    int depth_;
    mutable std::mutex mutex_;
};

}  // namespace

int64_t fusion_min_elements() {
    return min_elements().load(std::memory_order_relaxed);
}

void set_fusion_min_elements(int64_t n) {
    min_elements().store(n, std::memory_order_relaxed);
}

bool try_defer(const KernelContext& ctx, BlockFn fn) {
    const Tensor& out = ctx.outputs[0];
    const int64_t n = out.num_elements();
    const int64_t min = fusion_min_elements();
    if (min < 0 || n < min || n == 0 || !ctx.device.is_cpu()) return false;
    const DType dtype = out.dtype();
    if (dtype != DType::float32 && dtype != DType::float64) return false;
    int depth = 1;
    for (const Tensor& in : ctx.inputs) {
        if (in.dtype() != dtype || (in.num_elements() != n && in.num_elements() != 1)) return false;
        if (auto* e = dynamic_cast<const FusedExpr*>(in.impl()->storage->deferred()))
            depth = std::max(depth, e->depth() + 1);
    }
    if (depth > kMaxDepth || ctx.inputs.size() > 2) return false;
    // The output is a fresh storage of exactly n elements (apply() allocated it for this op).
    if (out.impl()->offset != 0 || out.impl()->storage.use_count() != 1) return false;
    out.impl()->storage->defer(std::make_shared<FusedExpr>(
        fn, std::vector<Tensor>(ctx.inputs.begin(), ctx.inputs.end()), dtype, n, depth));
    return true;
}

}  // namespace tapeflow::cpu::fusion
