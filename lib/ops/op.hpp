// The Op enum and its static tables, generated from op_list.def.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/plugin.hpp"

namespace tapeflow {

enum class Op : uint16_t {
#define TFL_OP(name, tf_type, arity, dispatch) name,
#include "ops/op_list.def"
#undef TFL_OP
    count_
};

inline constexpr int kNumOps = static_cast<int>(Op::count_);

/// Which dtype selects an op's kernel (see op_list.def).
enum class DispatchOn : uint8_t { input, output, none };

/// tapeflow's name of the op ("one_hot").
std::string_view op_name(Op op);
/// TensorFlow's op type ("OneHot"): used in error messages and graph exports.
TAPEFLOW_PLUGIN_API std::string_view op_type(Op op);
/// Number of tensor inputs, -1 when variadic.
int op_arity(Op op);
TAPEFLOW_PLUGIN_API DispatchOn op_dispatch(Op op);

}  // namespace tapeflow
