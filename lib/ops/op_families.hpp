// The op families: each lib/ops/<family>.cpp defines its ops' public wrappers and gradient rows
// and exposes the rows here; lib/kernels/cpu/<family>_cpu.cpp registers its CPU kernels.
#pragma once

#include <array>
#include <span>

#include "ops/dispatch.hpp"
#include "ops/op_def.hpp"

namespace tapeflow {

std::span<const OpDef> creation_op_defs();        // ops/creation.cpp
std::span<const OpDef> random_op_defs();          // ops/random_ops.cpp
std::span<const OpDef> tape_op_defs();            // autograd/tape_ops.cpp
std::span<const OpDef> elementwise_op_defs();     // ops/elementwise.cpp
std::span<const OpDef> reduce_op_defs();          // ops/reduce.cpp
std::span<const OpDef> linalg_op_defs();          // ops/linalg.cpp
std::span<const OpDef> array_op_defs();           // ops/array_ops.cpp
std::span<const OpDef> slicing_op_defs();         // ops/slicing.cpp
std::span<const OpDef> gather_scatter_op_defs();  // ops/gather_scatter.cpp
std::span<const OpDef> nn_activation_op_defs();   // ops/nn_activations.cpp
std::span<const OpDef> nn_loss_op_defs();         // ops/nn_losses.cpp
std::span<const OpDef> nn_layer_op_defs();        // ops/nn_layers.cpp
std::span<const OpDef> conv_op_defs();            // ops/conv.cpp
std::span<const OpDef> pool_op_defs();            // ops/pooling.cpp
std::span<const OpDef> training_op_defs();        // ops/training_ops.cpp
std::span<const OpDef> sort_op_defs();            // ops/sort.cpp
std::span<const OpDef> layer_norm_op_defs();      // ops/layer_norm.cpp
std::span<const OpDef> attention_op_defs();       // ops/attention.cpp
std::span<const OpDef> rnn_op_defs();             // ops/rnn.cpp

inline std::array<std::span<const OpDef>, 19> all_op_defs() {
    return {creation_op_defs(),
            random_op_defs(),
            tape_op_defs(),
            elementwise_op_defs(),
            reduce_op_defs(),
            linalg_op_defs(),
            array_op_defs(),
            slicing_op_defs(),
            gather_scatter_op_defs(),
            nn_activation_op_defs(),
            nn_loss_op_defs(),
            nn_layer_op_defs(),
            conv_op_defs(),
            pool_op_defs(),
            training_op_defs(),
            sort_op_defs(),
            layer_norm_op_defs(),
            attention_op_defs(),
            rnn_op_defs()};
}

// CPU kernel registration, one function per kernel file (called by register_cpu_kernels).
void register_creation_cpu(KernelRegistry& r);     // kernels/cpu/creation_cpu.cpp, random_cpu.cpp
void register_elementwise_cpu(KernelRegistry& r);  // kernels/cpu/elementwise_cpu.cpp
void register_reduce_cpu(KernelRegistry& r);       // kernels/cpu/reduce_cpu.cpp
void register_linalg_cpu(KernelRegistry& r);       // kernels/cpu/linalg_cpu.cpp
void register_array_cpu(KernelRegistry& r);        // kernels/cpu/array_ops_cpu.cpp
void register_slicing_cpu(KernelRegistry& r);      // kernels/cpu/slicing_cpu.cpp
void register_gather_cpu(KernelRegistry& r);       // kernels/cpu/gather_cpu.cpp
void register_activation_cpu(KernelRegistry& r);   // kernels/cpu/activation_cpu.cpp
void register_softmax_cpu(KernelRegistry& r);      // kernels/cpu/softmax_cpu.cpp
void register_bias_add_cpu(KernelRegistry& r);     // kernels/cpu/bias_add_cpu.cpp
void register_conv_cpu(KernelRegistry& r);         // kernels/cpu/conv_cpu.cpp
void register_pool_cpu(KernelRegistry& r);         // kernels/cpu/pool_cpu.cpp
void register_training_cpu(KernelRegistry& r);     // kernels/cpu/optimizer_cpu.cpp
void register_topk_cpu(KernelRegistry& r);         // kernels/cpu/topk_cpu.cpp
void register_depthwise_cpu(KernelRegistry& r);    // kernels/cpu/depthwise_cpu.cpp
void register_layer_norm_cpu(KernelRegistry& r);   // kernels/cpu/layer_norm_cpu.cpp
void register_attention_cpu(KernelRegistry& r);    // kernels/cpu/attention_cpu.cpp
void register_rnn_cpu(KernelRegistry& r);          // kernels/cpu/rnn_cpu.cpp

}  // namespace tapeflow
