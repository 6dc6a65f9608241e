// Launchers of the fused transformer ops' kernels (layer_norm_kernels.cu, attention_kernels.cu),
// in plain C++ as those of launch.hpp: pointers, sizes, plain structs and scalars only.
#pragma once

#include "launch.hpp"

namespace tapeflow::cuda_launch {

/// LayerNorm of the rows of x [rows, cols]: y (elem) and the rows' mean and 1/sqrt(var + epsilon)
/// (float64 for f64, float32 otherwise); any float elem.
cudaError_t layer_norm(Elem elem,
                       const void* x,
                       const void* gamma,
                       const void* beta,
                       double epsilon,
                       void* y,
                       void* mean,
                       void* rstd,
                       int64_t rows,
                       int64_t cols,
                       cudaStream_t stream);
/// Partial rows of dgamma and dbeta that layer_norm_grad's scratch holds (2 * cols each).
int64_t layer_norm_grad_partials(int64_t rows);
/// LayerNormGrad: dx [rows, cols], dgamma and dbeta [cols]; `scratch` holds
/// 2 * cols * layer_norm_grad_partials(rows) compute-type values.
cudaError_t layer_norm_grad(Elem elem,
                            const void* dy,
                            const void* x,
                            const void* gamma,
                            const void* mean,
                            const void* rstd,
                            void* dx,
                            void* dgamma,
                            void* dbeta,
                            void* scratch,
                            int64_t rows,
                            int64_t cols,
                            cudaStream_t stream);

/// One attention call: q [b, t, n, h], k and v [b, s, n, h]; the bias (elem) and the bool mask are
/// optional rank-4 operands read at b * st[0] + n * st[1] + t * st[2] + s * st[3].
struct AttentionParams {
    int64_t b = 0, t = 0, s = 0, n = 0, h = 0;
    double scale = 1;
    bool causal = false;
    const void* bias = nullptr;
    int64_t bias_st[4] = {};
    const bool* mask = nullptr;
    int64_t mask_st[4] = {};
};
/// Largest head size the tiled kernels take (the glue runs larger heads on the host).
inline constexpr int64_t kMaxAttentionHead = 128;
/// Tiled online-softmax forward: out [b, t, n, h] and the rows' log-sum-exp lse [b, n, t]
/// (float64 for f64, float32 otherwise; -inf marks a row whose keys are all masked).
cudaError_t attention(Elem elem,
                      const AttentionParams& p,
                      const void* q,
                      const void* k,
                      const void* v,
                      void* out,
                      void* lse,
                      cudaStream_t stream);
/// Backward from the forward's out and lse: dq, dk, dv, and dbias [b, n, t, s] when not null.
/// `scratch` holds b * n * t compute-type values (the rows' sum of dout * out).
cudaError_t attention_grad(Elem elem,
                           const AttentionParams& p,
                           const void* dout,
                           const void* q,
                           const void* k,
                           const void* v,
                           const void* out,
                           const void* lse,
                           void* dq,
                           void* dk,
                           void* dv,
                           void* dbias,
                           void* scratch,
                           cudaStream_t stream);

}  // namespace tapeflow::cuda_launch
