// NCCL all-reduce for CUDA tensors (lib/distribute/device_collectives.hpp calls it through the
// plugin's table, cuda/plugin.cpp), compiled when meson finds NCCL next to CUDA and MPI. One
// communicator per process, on the GPU of the first CUDA tensor reduced, created from an id rank 0
// broadcasts over MPI. NCCL runs on tapeflow's stream of that GPU, nonblocking: waits poll the
// stream and the communicator's error state under NOTE [Deadlines] (lib/distribute/transport.hpp)
// and abort the communicator on timeout.
#include "nccl_collectives.hpp"

#include <cstring>
#include <mutex>
#include <set>

#include <fmt/format.h>
#include <nccl.h>
#include <unistd.h>

#include <tapeflow/core/error.hpp>

#include "cuda_check.hpp"
#include "cuda_context.hpp"
#include "distribute/transport.hpp"
#include "distribute/wire.hpp"

namespace tapeflow::distribute::detail {
namespace {

struct Nccl {
    std::mutex mutex;
    bool decided = false;
    ncclComm_t comm = nullptr;  // null: the GPUs are not used (host staging)
    int device = -1;
    std::string reason;  // why not, for the log
};

Nccl& nccl() {
    static auto* n = new Nccl;  // never destroyed: NCCL teardown at exit is the driver's job
    return *n;
}

[[noreturn]] void fail(ncclResult_t rc, std::string_view what) {
    const std::string message = fmt::format(
        "NCCL error in {} on rank {}: {}", what, transport_rank(), ncclGetErrorString(rc));
    mark_broken(message);
    throw errors::UnavailableError(message);
}

// Polls until the communicator has no operation in flight on `stream` (or NCCL reports an error).
void wait_nccl(ncclComm_t comm, cudaStream_t stream, std::string_view what) {
    try {
        wait_until(
            [&] {
                ncclResult_t async = ncclSuccess;
                ncclCommGetAsyncError(comm, &async);
                if (async != ncclSuccess && async != ncclInProgress) fail(async, what);
                if (stream == nullptr) return async == ncclSuccess;
                const cudaError_t status = cudaStreamQuery(stream);
                if (status == cudaErrorNotReady) return false;
                TAPEFLOW_CUDA_CHECK(status);
                return async == ncclSuccess;
            },
            what);
    } catch (const errors::UnavailableError&) {
        ncclCommAbort(comm);  // frees the GPU from the stuck kernel
        nccl().comm = nullptr;
        throw;
    }
}

// Decides once, on every process alike, whether the GPUs carry the collectives.
void decide(const Tensor& t) {
    Nccl& n = nccl();
    if (n.decided) return;
    n.decided = true;
    const int device = t.device().index();
    char bus[64] = {0};
    TAPEFLOW_CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof(bus), device));
    char host[256] = {0};
    gethostname(host, sizeof(host) - 1);
    const std::vector<std::string> gpus = all_gather_strings(fmt::format("{}/{}", host, bus));
    if (std::set<std::string>(gpus.begin(), gpus.end()).size() != gpus.size()) {
        n.reason = "several processes share a GPU (NCCL needs one GPU per process)";
        return;
    }
    ncclUniqueId id;
    if (transport_rank() == 0 && ncclGetUniqueId(&id) != ncclSuccess)
        std::memset(&id, 0, sizeof(id));
    const std::string id_bytes =
        broadcast_string(std::string(reinterpret_cast<const char*>(&id), sizeof(id)), 0);
    std::memcpy(&id, id_bytes.data(), sizeof(id));
    cuda_detail::make_current(device);
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;  // returns at once; wait_nccl polls with the deadline
    ncclComm_t comm = nullptr;
    const ncclResult_t rc =
        ncclCommInitRankConfig(&comm, transport_size(), id, transport_rank(), &config);
    if (rc != ncclSuccess && rc != ncclInProgress) fail(rc, "ncclCommInitRankConfig");
    wait_nccl(comm, nullptr, "NCCL communicator setup");
    n.comm = comm;
    n.device = device;
}

ncclDataType_t nccl_type(DType dtype) {
    switch (dtype) {
        case DType::float32:
            return ncclFloat32;
        case DType::float64:
            return ncclFloat64;
        case DType::float16:
            return ncclFloat16;
        case DType::bfloat16:
            return ncclBfloat16;
        case DType::int32:
            return ncclInt32;
        case DType::int64:
            return ncclInt64;
        case DType::uint8:
        case DType::bool_:
            return ncclUint8;
    }
    return ncclFloat32;
}

ncclRedOp_t nccl_op(ReduceOp op) {
    switch (op) {
        case ReduceOp::sum:
            return ncclSum;
        case ReduceOp::mean:
            return ncclAvg;
        case ReduceOp::max:
            return ncclMax;
        case ReduceOp::min:
            return ncclMin;
    }
    return ncclSum;
}

}  // namespace

std::optional<Tensor> nccl_all_reduce(const Tensor& t, ReduceOp op) {
    Nccl& n = nccl();
    const std::lock_guard lock(n.mutex);
    decide(t);
    if (n.comm == nullptr || t.device().index() != n.device) return std::nullopt;
    const cudaStream_t stream = cuda_detail::stream_for(t.device());
    Tensor out = Tensor::empty(t.shape(), t.dtype(), t.device());
    const std::string what = fmt::format("NCCL all_reduce of {}", describe(t.shape(), t.dtype()));
    const ncclResult_t rc = ncclAllReduce(t.raw_data(),
                                          out.mutable_raw_data(),
                                          static_cast<size_t>(t.num_elements()),
                                          nccl_type(t.dtype()),
                                          nccl_op(op),
                                          n.comm,
                                          stream);
    if (rc != ncclSuccess && rc != ncclInProgress) fail(rc, what);
    wait_nccl(n.comm, stream, what);
    return out;
}

}  // namespace tapeflow::distribute::detail
