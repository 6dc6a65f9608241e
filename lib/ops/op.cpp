// The static op tables, expanded from op_list.def.
#include "ops/op.hpp"

#include <array>

namespace tapeflow {
namespace {

struct OpInfo {
    std::string_view name;
    std::string_view type;
    int arity;
    DispatchOn dispatch;
};

constexpr std::array<OpInfo, kNumOps> kOpInfo{{
#define TFL_OP(name, tf_type, arity, dispatch) {#name, tf_type, arity, DispatchOn::dispatch},
#include "ops/op_list.def"
#undef TFL_OP
}};

}  // namespace

std::string_view op_name(Op op) {
    return kOpInfo[static_cast<std::size_t>(op)].name;
}

std::string_view op_type(Op op) {
    return kOpInfo[static_cast<std::size_t>(op)].type;
}

int op_arity(Op op) {
    return kOpInfo[static_cast<std::size_t>(op)].arity;
}

DispatchOn op_dispatch(Op op) {
    return kOpInfo[static_cast<std::size_t>(op)].dispatch;
}

}  // namespace tapeflow
