// The .cu kernels' launchers, in plain C++: pointers, sizes, plain structs and scalars only. .cu
// files include no tapeflow header beyond the plain shared ones (lib/kernels/shared/philox.hpp,
// lib/kernels/shared/elementwise_functors.hpp): nvcc cannot compile fmt's consteval checks. The
// g++-compiled ops_cuda*.cpp files turn KernelContexts into these calls. Every launcher queues its
// work on `stream` and returns the launch status (cudaSuccess for empty work).
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

#include "ops/op.hpp"

namespace tapeflow::opt {
struct Hyper;  // kernels/shared/optimizer_functors.hpp
}

namespace tapeflow::cuda_launch {

// NOTE [Mirror enums]: the few enums below that stand for a group of Ops (Distribution,
// Activation, Xent) list those Ops, in the enum's order, in op_of(); a static_assert per
// enumerator checks that E::e stands for the Op of its name, so reordering or extending one side
// alone breaks the build with a message naming the enumerator. Elem mirrors DType (asserted in
// ops_cuda.hpp, which sees both). The kernel tables' families (unary, binary, reductions,
// optimizer updates) have no mirror enum: their launchers take the Op.
#define TAPEFLOW_MIRRORS(E, e, op) \
    static_assert(op_of(E::e) == Op::op, #E "::" #e " must stand for Op::" #op " (op_of's list)");

/// Element types, in tapeflow::DType's order (ops_cuda.hpp converts with a static_cast and
/// static_asserts the order).
enum class Elem : uint8_t { f32, f64, i32, i64, u8, b8, f16, bf16 };

/// Most dimensions of an index plan after merging (the CPU's broadcast plans allow as many).
inline constexpr int kMaxDims = 16;

/// An N-operand walk over `dims` (row-major order of the output): strides[k][d] is operand k's
/// element stride along dimension d (0 where it is broadcast, negative for reversed slices).
template <int N>
struct IndexPlan {
    int rank = 0;
    int64_t dims[kMaxDims] = {};
    int64_t strides[N][kMaxDims] = {};
};

// ---- creation and random (array_kernels.cu, random_kernels.cu) ----

/// out[i] = pattern for i < n, with elements of `element_size` bytes (1, 2, 4 or 8).
cudaError_t fill_bits(
    void* out, int64_t n, uint64_t pattern, int element_size, cudaStream_t stream);

enum class Distribution { uniform, normal, truncated_normal };
constexpr Op op_of(Distribution d) {
    constexpr Op kOps[] = {Op::random_uniform, Op::random_normal, Op::truncated_normal};
    return kOps[static_cast<int>(d)];
}
TAPEFLOW_MIRRORS(Distribution, uniform, random_uniform)
TAPEFLOW_MIRRORS(Distribution, normal, random_normal)
TAPEFLOW_MIRRORS(Distribution, truncated_normal, truncated_normal)

/// The generator position (TensorFlow's seed pair, then `offset` blocks on) and the affine step
/// rnd * scale + shift in the output's format (uniform: maxval - minval and minval; the normals:
/// stddev and mean). Integer uniforms: int_lo + [0, int_range).
struct RandomParams {
    Distribution distribution = Distribution::uniform;
    uint64_t seed = 0, seed2 = 0, offset = 0;
    double scale = 1, shift = 0;
    int64_t int_lo = 0;
    uint64_t int_range = 1;
};

/// The first n outputs of the distribution, in any float or int32/int64 `elem` (the CPU's numbers).
cudaError_t random(
    void* out, int64_t n, Elem elem, const RandomParams& params, cudaStream_t stream);

/// out's row i = in's row perm[i] (perm: rows int64s on the device), for random_shuffle.
cudaError_t permute_rows(const void* in,
                         void* out,
                         const int64_t* perm,
                         int64_t rows,
                         int64_t row_bytes,
                         cudaStream_t stream);

// ---- element-wise (unary_kernels.cu, binary_kernels.cu, compare_kernels.cu) ----

/// out[i] = f(in[i]) for i < n (contiguous): the ops of kernels/shared/unary_ops.def and
/// logical_not; cudaErrorInvalidValue for other ops or dtypes.
cudaError_t unary(Op op, Elem elem, const void* in, void* out, int64_t n, cudaStream_t stream);

/// out = f(a, b) over `n` output elements, for the ops of kernels/shared/binary_ops.def. `plan` is
/// null for the linear case, where a_step and b_step (1 or 0: a scalar operand) give each operand's
/// stride; otherwise plan->strides[0/1] walk a and b. Arithmetic ops write `elem`, comparisons and
/// logic write bool.
cudaError_t binary(Op op,
                   Elem elem,
                   const void* a,
                   const void* b,
                   void* out,
                   int64_t n,
                   int a_step,
                   int b_step,
                   const IndexPlan<2>* plan,
                   cudaStream_t stream);

/// where(cond, x, y) with three-way broadcasting, moving elements of `element_size` bytes.
cudaError_t where(const void* cond,
                  const void* x,
                  const void* y,
                  void* out,
                  int64_t n,
                  int element_size,
                  const IndexPlan<3>& plan,
                  cudaStream_t stream);

/// Most inputs one add_n launch sums; more are summed in several passes.
inline constexpr int kAddNMax = 32;
/// out = ((in[0] + in[1]) + ...) + in[count-1], in the compute type (float for 16-bit floats);
/// with `accumulate`, out is added first: ((out + in[0]) + ...).
cudaError_t add_n(Elem elem,
                  const void* const* in,
                  int count,
                  bool accumulate,
                  void* out,
                  int64_t n,
                  cudaStream_t stream);

/// out[i] = tf.cast(in[i]) from `from` to `to` (conversion rules of convert_element).
cudaError_t cast(Elem from, Elem to, const void* in, void* out, int64_t n, cudaStream_t stream);

// ---- data movement (copy_kernels.cu) ----

/// in [batch, rows, cols] to out [batch, cols, rows] (tiled through shared memory).
cudaError_t transpose_last2(void* out,
                            const void* in,
                            int element_size,
                            int64_t batch,
                            int64_t rows,
                            int64_t cols,
                            cudaStream_t stream);

/// out[plan.strides[0] . idx] = in[plan.strides[1] . idx] for every index idx of plan.dims, with
/// elements of `element_size` bytes (1, 2, 4 or 8); out and in point at the walk's origin.
cudaError_t strided_copy(
    void* out, const void* in, int element_size, const IndexPlan<2>& plan, cudaStream_t stream);

// ---- indexing (index_kernels.cu); the indices are validated by the caller ----

/// gather: params as [batch * outer, n, inner] words of `element_size` bytes, indices (int32 or
/// int64) as [batch, m]; out[bo, j, c] = params[bo, idx[bo / outer, j], c], `total` output
/// elements.
cudaError_t gather(const void* params,
                   const void* indices,
                   Elem index_elem,
                   void* out,
                   int element_size,
                   int64_t total,
                   int64_t outer,
                   int64_t n,
                   int64_t inner,
                   int64_t m,
                   cudaStream_t stream);

/// one_hot: out as [outer, depth, inner] = (indices[outer, inner] == depth index) ? on : off, with
/// on/off the bit patterns of the output dtype; indices int32, int64 or uint8.
cudaError_t one_hot(const void* indices,
                    Elem index_elem,
                    void* out,
                    int element_size,
                    int64_t total,
                    int64_t depth,
                    int64_t inner,
                    uint64_t on,
                    uint64_t off,
                    cudaStream_t stream);

/// Segment sum: acc[ids[r], c] += data[r, c] for rows r of `width` elements (total = rows of data
/// x width), ids (int32 or int64) outside [0, rows) dropped. `acc` is zeroed by the caller and has
/// the compute type (float for the 16-bit floats, else the data's type; not uint8 or bool).
cudaError_t segment_sum(Elem elem,
                        const void* data,
                        const void* ids,
                        Elem id_elem,
                        void* acc,
                        int64_t total,
                        int64_t width,
                        int64_t rows,
                        cudaStream_t stream);

/// mirror_pad: out (dims out_dims, row-major) from in (in_dims); along each axis, output index o
/// reads input index o - before mirrored into range (offset 1: REFLECT, 0: SYMMETRIC).
struct MirrorPlan {
    int rank = 0;
    int offset = 0;
    int64_t out_dims[kMaxDims] = {};
    int64_t in_dims[kMaxDims] = {};
    int64_t before[kMaxDims] = {};
};
cudaError_t mirror_pad(void* out,
                       const void* in,
                       int element_size,
                       int64_t n,
                       const MirrorPlan& plan,
                       cudaStream_t stream);
/// One axis of mirror_pad_grad: out [outer, narrow, inner] sums in [outer, wide, inner] over the
/// mirror map (padding `before` on the axis, offset as in MirrorPlan), in the CPU's order. in and
/// out elements may differ within one compute type (a 16-bit float and float32).
cudaError_t mirror_fold(Elem in_elem,
                        Elem out_elem,
                        const void* in,
                        void* out,
                        int64_t outer,
                        int64_t narrow,
                        int64_t wide,
                        int64_t inner,
                        int64_t before,
                        int offset,
                        cudaStream_t stream);

/// C[b] = op(A[a_batch[b]]) op(B[b_batch[b]]) for int32/int64 (wrapping, as the CPU), row-major
/// [m, k] x [k, n]; a_batch and b_batch: `batch` int64 batch indices on the device.
cudaError_t int_matmul(Elem elem,
                       const void* a,
                       const void* b,
                       void* c,
                       const int64_t* a_batch,
                       const int64_t* b_batch,
                       int64_t batch,
                       int64_t m,
                       int64_t n,
                       int64_t k,
                       bool transpose_a,
                       bool transpose_b,
                       cudaStream_t stream);

// ---- reductions and scans (reduce_kernels.cu): the rows of kernels/shared/reduce_ops.def ----
// Each launcher takes the Op of a row of its kind and returns cudaErrorInvalidValue for other ops
// or for dtypes outside the row's set.

/// A TFL_REDUCE row: reduces `in`, seen as [outer..., reduced...]: plan.dims holds the kept
/// dimensions then the reduced ones (kept_rank of them first); plan.strides[0] is the input's
/// stride for each. out is contiguous over the kept dimensions. `scratch` holds scratch_bytes() of
/// device memory.
cudaError_t reduce(Op op,
                   Elem elem,
                   const void* in,
                   void* out,
                   const IndexPlan<1>& plan,
                   int kept_rank,
                   void* scratch,
                   int sm_count,
                   cudaStream_t stream);
/// Device bytes reduce() needs as scratch for this shape (0 when it needs none).
int64_t reduce_scratch_bytes(Elem elem, int64_t n_out, int64_t n_reduced, int sm_count);

/// A TFL_ARG_REDUCE row (argmax, argmin) of [outer, n, inner] along n; `out` is int32 or int64
/// (out_is_64).
cudaError_t arg_reduce(Op op,
                       Elem elem,
                       const void* in,
                       void* out,
                       bool out_is_64,
                       int64_t outer,
                       int64_t n,
                       int64_t inner,
                       cudaStream_t stream);

/// A TFL_SCAN row (cumsum, cumprod) of [outer, n, inner] along n.
cudaError_t scan(Op op,
                 Elem elem,
                 const void* in,
                 void* out,
                 int64_t outer,
                 int64_t n,
                 int64_t inner,
                 bool exclusive,
                 bool reverse,
                 cudaStream_t stream);

// ---- nn ops (nn_kernels.cu, conv_kernels.cu, pool_kernels.cu) ----

/// An activation; activation_grad runs its _grad op.
enum class Activation { relu, relu6, elu, selu, leaky_relu };
constexpr Op op_of(Activation a) {
    constexpr Op kOps[] = {Op::relu, Op::relu6, Op::elu, Op::selu, Op::leaky_relu};
    return kOps[static_cast<int>(a)];
}
TAPEFLOW_MIRRORS(Activation, relu, relu)
TAPEFLOW_MIRRORS(Activation, relu6, relu6)
TAPEFLOW_MIRRORS(Activation, elu, elu)
TAPEFLOW_MIRRORS(Activation, selu, selu)
TAPEFLOW_MIRRORS(Activation, leaky_relu, leaky_relu)

/// out[i] = f(in[i]) (contiguous); alpha is leaky_relu's slope. relu/relu6 take floats and
/// int32/int64, the others floats.
cudaError_t activation(Activation op,
                       double alpha,
                       Elem elem,
                       const void* in,
                       void* out,
                       int64_t n,
                       cudaStream_t stream);
/// out[i] = f_grad(g[i], x[i]): x the features (relu, relu6, leaky_relu) or the outputs (elu,
/// selu).
cudaError_t activation_grad(Activation op,
                            double alpha,
                            Elem elem,
                            const void* g,
                            const void* x,
                            void* out,
                            int64_t n,
                            cudaStream_t stream);

/// softmax (or log_softmax) of [outer, n, inner] along n; float32/float64.
cudaError_t softmax(bool log,
                    Elem elem,
                    const void* in,
                    void* out,
                    int64_t outer,
                    int64_t n,
                    int64_t inner,
                    cudaStream_t stream);

enum class Xent { dense, sparse, sparse_grad };
constexpr Op op_of(Xent x) {
    constexpr Op kOps[] = {Op::softmax_xent, Op::sparse_softmax_xent, Op::sparse_xent_grad};
    return kOps[static_cast<int>(x)];
}
TAPEFLOW_MIRRORS(Xent, dense, softmax_xent)
TAPEFLOW_MIRRORS(Xent, sparse, sparse_softmax_xent)
TAPEFLOW_MIRRORS(Xent, sparse_grad, sparse_xent_grad)
/// Row-wise losses of logits [rows, n] (float32/float64). dense: loss[r] = sum(labels * (lse - x))
/// with labels [rows, n] of the logits' type; sparse: loss[r] = lse - x[label[r]]; sparse_grad:
/// out[r] = softmax(x[r]) - onehot(label[r]). Sparse labels are int32 or int64 (label_is_64), in
/// range (checked by the wrapper).
cudaError_t xent(Xent kind,
                 Elem elem,
                 const void* logits,
                 const void* labels,
                 bool label_is_64,
                 void* out,
                 int64_t rows,
                 int64_t n,
                 cudaStream_t stream);

/// bias_add: out[i] = x[i] + bias[(i / inner) % c] (inner = 1 for NHWC).
cudaError_t bias_add(Elem elem,
                     const void* x,
                     const void* bias,
                     void* out,
                     int64_t n,
                     int64_t c,
                     int64_t inner,
                     cudaStream_t stream);

/// A 2-D window over NHWC input (the CPU's nn_detail::Window2d, copied field by field by name in
/// window_of(): no enum, nothing an order could break).
struct Window {
    int64_t n = 0, h = 0, w = 0, c = 0;
    int64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;
    int64_t pad_top = 0, pad_left = 0;
    int64_t oh = 0, ow = 0;
};

/// patches[(img, oh, ow), (kh, kw, c)] of `count` images starting at x (zeros for padding cells).
cudaError_t im2col(
    Elem elem, const Window& w, const void* x, int64_t count, void* patches, cudaStream_t stream);
/// dx (count images) = sum over the patch rows of dpatches that cover each cell (writes every
/// cell).
cudaError_t col2im(
    Elem elem, const Window& w, const void* dpatches, int64_t count, void* dx, cudaStream_t stream);

/// max_pool: values and the flat input index of each maximum (the CPU's rule: the first cell of
/// the window, then strictly greater values); avg_pool over the non-padding cells.
cudaError_t max_pool(
    Elem elem, const Window& w, const void* x, void* y, int64_t* argmax, cudaStream_t stream);
cudaError_t avg_pool(Elem elem, const Window& w, const void* x, void* y, cudaStream_t stream);
/// dx (w's input shape) from g (w's output shape): each cell sums g / count of the windows that
/// cover it, in the CPU's (oh, ow) order.
cudaError_t avg_pool_grad(Elem elem, const Window& w, const void* g, void* dx, cudaStream_t stream);

// ---- fused optimizer updates (optimizer_kernels.cu) ----

/// Most slots an update has (the functors' kSlots).
inline constexpr int kMaxSlots = 4;

/// Dense update of n elements in place: var and the optimizer's slots (kSlots pointers, in the
/// op's input order) with grad; float32/float64, hyper-parameters from the host. `op` is a dense
/// row of kernels/shared/optimizer_ops.def.
cudaError_t optimizer_update(Op op,
                             Elem elem,
                             const opt::Hyper& hyper,
                             void* var,
                             void* const* slots,
                             const void* grad,
                             int64_t n,
                             cudaStream_t stream);

/// Sparse update: rows `indices[r]` (int32 or int64, unique and in range: the wrapper sums
/// duplicates and checks them) of var and slots, each row_len elements, with values' row r.
/// `op` is a sparse row of kernels/shared/optimizer_ops.def.
cudaError_t sparse_optimizer_update(Op op,
                                    Elem elem,
                                    const opt::Hyper& hyper,
                                    void* var,
                                    void* const* slots,
                                    const void* values,
                                    const void* indices,
                                    bool index_is_64,
                                    int64_t rows,
                                    int64_t row_len,
                                    cudaStream_t stream);

#undef TAPEFLOW_MIRRORS

}  // namespace tapeflow::cuda_launch
