// register_cpu_kernels(): calls each CPU kernel file's registration function (ops/op_families.hpp).
#include "ops/op_families.hpp"

namespace tapeflow {

void register_cpu_kernels(KernelRegistry& r) {
    register_creation_cpu(r);
    register_elementwise_cpu(r);
    register_reduce_cpu(r);
    register_linalg_cpu(r);
    register_array_cpu(r);
    register_slicing_cpu(r);
    register_gather_cpu(r);
    register_activation_cpu(r);
    register_softmax_cpu(r);
    register_bias_add_cpu(r);
    register_conv_cpu(r);
    register_pool_cpu(r);
    register_training_cpu(r);
    register_topk_cpu(r);
    register_depthwise_cpu(r);
    register_layer_norm_cpu(r);
    register_attention_cpu(r);
    register_rnn_cpu(r);
}

}  // namespace tapeflow
