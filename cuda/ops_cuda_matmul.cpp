// Registry glue of matmul and batch_matmul on CUDA: row-major products mapped onto column-major
// cuBLAS (C^T = B^T A^T), with one strided-batched call when the batch broadcast allows it;
// int32/int64 go to int_matmul (cuda/matmul_kernels.cu: cuBLAS has no integer gemm).
#include <numeric>

#include <fmt/format.h>

#include "cublas_loader.hpp"
#include "ops_cuda.hpp"

namespace tapeflow::cuda_ops {

void cublas_check(cublasStatus_t status, const char* call, const char* file, int line) {
    if (status == CUBLAS_STATUS_SUCCESS) return;
    const std::string message = fmt::format("cuBLAS call {} failed at {}:{}: {}",
                                            call,
                                            file,
                                            line,
                                            cuda_detail::cublas_api().status_string(status));
    if (status == CUBLAS_STATUS_ALLOC_FAILED) throw errors::ResourceExhaustedError(message);
    throw errors::InternalError(message);
}

namespace {

// Batch index of each operand for every output batch (broadcasting the leading dimensions).
std::vector<int64_t> batch_index(const std::vector<int64_t>& out, const std::vector<int64_t>& in) {
    const int64_t total = std::accumulate(out.begin(), out.end(), int64_t{1}, std::multiplies<>());
    std::vector<int64_t> index(static_cast<std::size_t>(total), 0);
    const std::size_t lead = out.size() - in.size();
    for (int64_t i = 0; i < total; ++i) {
        int64_t rest = i, pos = 0, stride = 1;
        for (std::size_t d = out.size(); d-- > lead;) {
            const int64_t idx = rest % out[d];
            rest /= out[d];
            const int64_t size = in[d - lead];
            pos += (size == 1 ? 0 : idx) * stride;
            stride *= size;
        }
        index[static_cast<std::size_t>(i)] = pos;
    }
    return index;
}

// 0 or 1 when index[i] == i * step for every i, else -1.
int64_t uniform_step(const std::vector<int64_t>& index) {
    const int64_t step = index.size() > 1 ? index[1] - index[0] : 0;
    if (step != 0 && step != 1) return -1;
    for (std::size_t i = 0; i < index.size(); ++i) {
        if (index[i] != static_cast<int64_t>(i) * step) return -1;
    }
    return step;
}

void matmul_kernel(const KernelContext& ctx) {
    const Tensor& a = ctx.inputs[0];
    const Tensor& b = ctx.inputs[1];
    const Tensor& c = ctx.outputs[0];
    const bool is_matmul = ctx.op == Op::matmul;
    const bool ta = ctx.attrs.get<bool>(is_matmul ? "transpose_a" : "adj_x");
    const bool tb = ctx.attrs.get<bool>(is_matmul ? "transpose_b" : "adj_y");
    const int64_t m = c.shape()[-2], n = c.shape()[-1], k = a.shape()[ta ? -2 : -1];
    if (c.num_elements() == 0) return;
    cudaStream_t stream = stream_of(ctx);
    if (k == 0) {
        TAPEFLOW_CUDA_CHECK(cudaMemsetAsync(c.mutable_raw_data(), 0, c.nbytes(), stream));
        return;
    }
    auto batch_of = [](const Shape& s) {
        return std::vector<int64_t>(s.dims().begin(), s.dims().end() - 2);
    };
    const std::vector<int64_t> a_index = batch_index(batch_of(c.shape()), batch_of(a.shape()));
    const std::vector<int64_t> b_index = batch_index(batch_of(c.shape()), batch_of(b.shape()));
    if (a.dtype() == DType::int32 || a.dtype() == DType::int64) {  // no cuBLAS integer gemm
        const Tensor a_batch = upload_ids(a_index, ctx.device);
        const Tensor b_batch = upload_ids(b_index, ctx.device);
        TAPEFLOW_CUDA_CHECK(cuda_launch::int_matmul(elem_of(a.dtype()),
                                                    a.raw_data(),
                                                    b.raw_data(),
                                                    c.mutable_raw_data(),
                                                    static_cast<const int64_t*>(a_batch.raw_data()),
                                                    static_cast<const int64_t*>(b_batch.raw_data()),
                                                    static_cast<int64_t>(a_index.size()),
                                                    m,
                                                    n,
                                                    k,
                                                    ta,
                                                    tb,
                                                    stream));
        return;
    }
    cudaDataType_t type = CUDA_R_32F;
    cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
    const float one_f = 1.f, zero_f = 0.f;
    const double one_d = 1.0, zero_d = 0.0;
    const void* alpha = &one_f;
    const void* beta = &zero_f;
    switch (a.dtype()) {
        case DType::float64:
            type = CUDA_R_64F;
            compute = CUBLAS_COMPUTE_64F;
            alpha = &one_d;
            beta = &zero_d;
            break;
        case DType::float16:
            type = CUDA_R_16F;
            break;
        case DType::bfloat16:
            type = CUDA_R_16BF;
            break;
        default:
            break;
    }
    const auto esize = static_cast<int64_t>(dtype_size(a.dtype()));
    cublasHandle_t handle = cuda_detail::cublas_for(ctx.device);
    // Row-major C[m,n] = op(A) op(B) is column-major C^T[n,m] = op(B)^T op(A)^T.
    const cublasOperation_t op_b = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t op_a = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
    const auto ldb = static_cast<int>(tb ? k : n), lda = static_cast<int>(ta ? m : k);
    const int64_t sa = uniform_step(a_index), sb = uniform_step(b_index);
    const auto batch = static_cast<int>(a_index.size());
    if (sa >= 0 && sb >= 0) {
        TAPEFLOW_CUBLAS_CHECK(
            cuda_detail::cublas_api().gemm_strided_batched_ex(handle,
                                                              op_b,
                                                              op_a,
                                                              static_cast<int>(n),
                                                              static_cast<int>(m),
                                                              static_cast<int>(k),
                                                              alpha,
                                                              b.raw_data(),
                                                              type,
                                                              ldb,
                                                              sb * k * n,
                                                              a.raw_data(),
                                                              type,
                                                              lda,
                                                              sa * m * k,
                                                              beta,
                                                              c.mutable_raw_data(),
                                                              type,
                                                              static_cast<int>(n),
                                                              m * n,
                                                              batch,
                                                              compute,
                                                              CUBLAS_GEMM_DEFAULT));
        return;
    }
    const auto* pa = static_cast<const char*>(a.raw_data());
    const auto* pb = static_cast<const char*>(b.raw_data());
    auto* pc = static_cast<char*>(c.mutable_raw_data());
    for (int i = 0; i < batch; ++i) {
        TAPEFLOW_CUBLAS_CHECK(cuda_detail::cublas_api().gemm_ex(
            handle,
            op_b,
            op_a,
            static_cast<int>(n),
            static_cast<int>(m),
            static_cast<int>(k),
            alpha,
            pb + b_index[static_cast<std::size_t>(i)] * k * n * esize,
            type,
            ldb,
            pa + a_index[static_cast<std::size_t>(i)] * m * k * esize,
            type,
            lda,
            beta,
            pc + i * m * n * esize,
            type,
            static_cast<int>(n),
            compute,
            CUBLAS_GEMM_DEFAULT));
    }
}

}  // namespace

void register_matmul_cuda(KernelRegistry& r) {
    constexpr auto kCuda = DeviceType::cuda;
    constexpr DTypeSet kMatmulTypes = kFloatTypes | DTypeSet{DType::int32, DType::int64};
    r.add(Op::matmul, kCuda, matmul_kernel, kMatmulTypes);
    r.add(Op::batch_matmul, kCuda, matmul_kernel, kMatmulTypes);
}

}  // namespace tapeflow::cuda_ops
