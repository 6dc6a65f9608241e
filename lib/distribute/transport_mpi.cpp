// The MPI transport (transport.hpp), built alone into the plugin libtapeflow_mpi.so with libmpi:
// the only file that includes <mpi.h>. Collectives run on a
// private duplicate of MPI_COMM_WORLD with MPI_ERRORS_RETURN, so a failure becomes an
// UnavailableError instead of an abort, and user MPI code cannot interleave with ours.
#include <algorithm>
#include <climits>
#include <cstdlib>
#include <mutex>
#include <vector>

#include <fmt/format.h>
#include <mpi.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/version.hpp>

#include "distribute/transport.hpp"

namespace tapeflow::distribute::detail {
namespace mpi {

// This file's own (the plugin calls them directly, not through transport.cpp's table).
void transport_init(int* argc, char*** argv);
void transport_finalize();

namespace {

// Requests of one operation; large ones are split in chunks of at most INT_MAX elements.
constexpr int64_t kMaxChunk = INT_MAX / 2;

struct Group {
    std::recursive_mutex mutex;  // MPI_THREAD_SERIALIZED: one tapeflow MPI call at a time
    bool initialized = false;
    bool started_mpi = false;  // we called MPI_Init, so we call MPI_Finalize
    bool finalized = false;
    int rank = 0;
    int size = 1;
    int local_rank = 0;
    int local_size = 1;
    MPI_Comm comm = MPI_COMM_NULL;
};

Group& group() {
    static auto* g = new Group;  // never destroyed: the exit-time finalize uses it
    return *g;
}

std::string mpi_error_string(int rc) {
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(rc, text, &length);
    return std::string(text, static_cast<std::size_t>(length));
}

void check(int rc, std::string_view what) {
    if (rc == MPI_SUCCESS) return;
    const std::string message =
        fmt::format("MPI error in {} on rank {}: {}", what, group().rank, mpi_error_string(rc));
    mark_broken(message);
    throw errors::UnavailableError(message);
}

MPI_Datatype mpi_type(DType dtype) {
    switch (dtype) {
        case DType::float32:
            return MPI_FLOAT;
        case DType::float64:
            return MPI_DOUBLE;
        case DType::int32:
            return MPI_INT32_T;
        case DType::int64:
            return MPI_INT64_T;
        case DType::uint8:
        case DType::bool_:
            return MPI_UINT8_T;
        default:
            throw errors::InternalError(
                fmt::format("no MPI type for {}; this is a tapeflow bug", dtype_name(dtype)));
    }
}

MPI_Op mpi_op(ReduceOp op) {
    switch (op) {
        case ReduceOp::sum:
        case ReduceOp::mean:
            return MPI_SUM;  // mean divides afterwards (collectives.cpp)
        case ReduceOp::max:
            return MPI_MAX;
        case ReduceOp::min:
            return MPI_MIN;
    }
    return MPI_SUM;
}

class MpiPending final : public Pending {
public:
    explicit MpiPending(std::string what, std::string keep_alive = {})
        : what_(std::move(what)), keep_alive_(std::move(keep_alive)) {}
    ~MpiPending() override {
        // Abandoned in flight (an exception elsewhere): MPI may not free an active collective's
        // request, and must not write into the caller's buffers after they are gone, so finish it
        // (within the deadline) unless the group is already broken.
        if (done_ || group().finalized || broken_reason()) return;
        try {
            wait(*this, what_);
        } catch (const errors::OpError&) {  // now broken: MPI is no longer called
        }
    }
    std::vector<MPI_Request> requests_;
    const std::string& keep_alive() const { return keep_alive_; }

    bool test() override {
        if (done_ || requests_.empty()) return done_ = true;
        const std::lock_guard lock(group().mutex);
        int flag = 0;
        check(MPI_Testall(
                  static_cast<int>(requests_.size()), requests_.data(), &flag, MPI_STATUSES_IGNORE),
              what_);
        done_ = flag != 0;
        return done_;
    }

private:
    std::string what_;
    std::string keep_alive_;
    bool done_ = false;
};

// Starts the group on first use; false for a process not launched by mpirun (no MPI at all).
bool use_mpi() {
    Group& g = group();
    if (!g.initialized) transport_init(nullptr, nullptr);
    if (g.finalized) {
        throw errors::FailedPreconditionError(
            "tf::distribute: the process group was finalized; collectives are unavailable after "
            "finalize()");
    }
    check_not_broken();
    return g.comm != MPI_COMM_NULL;
}

}  // namespace

void transport_init(int* argc, char*** argv) {
    Group& g = group();
    const std::lock_guard lock(g.mutex);
    if (g.initialized) return;
    g.initialized = true;
    int already = 0;
    MPI_Initialized(&already);
    if (!already && !launched_by_mpirun()) return;  // one process: rank 0 of 1, no MPI at all
    if (!already) {
        // OpenMPI's nonblocking all-reduce (libnbc) picks a binomial tree (reduce, then broadcast:
        // every byte crosses twice) below 4 processes and for in-place calls; the ring algorithm
        // moves half as much and was 1.4-2x faster here from 1 MB up (docs/performance.md). A
        // value the user set wins.
        setenv("OMPI_MCA_coll_libnbc_iallreduce_algorithm", "1", /*overwrite=*/0);
        int provided = 0;
        check(MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided), "MPI_Init_thread");
        g.started_mpi = true;
        std::atexit([] { transport_finalize(); });
    }
    check(MPI_Comm_dup(MPI_COMM_WORLD, &g.comm), "MPI_Comm_dup");
    MPI_Comm_set_errhandler(g.comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(g.comm, &g.rank);
    MPI_Comm_size(g.comm, &g.size);
    MPI_Comm node = MPI_COMM_NULL;
    check(MPI_Comm_split_type(g.comm, MPI_COMM_TYPE_SHARED, g.rank, MPI_INFO_NULL, &node),
          "MPI_Comm_split_type");
    MPI_Comm_rank(node, &g.local_rank);
    MPI_Comm_size(node, &g.local_size);
    MPI_Comm_free(&node);
}

void transport_finalize() {
    Group& g = group();
    const std::lock_guard lock(g.mutex);
    if (g.finalized || !g.initialized) return;
    g.finalized = true;
    if (broken_reason()) return;  // NOTE [Deadlines]: MPI_Finalize would wait for the dead peer
    if (g.comm != MPI_COMM_NULL) MPI_Comm_free(&g.comm);
    g.comm = MPI_COMM_NULL;
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (g.started_mpi && !finalized) MPI_Finalize();
}

bool transport_initialized() {
    return group().initialized;
}
int transport_rank() {
    return group().rank;
}
int transport_size() {
    return group().size;
}
int transport_local_rank() {
    return group().local_rank;
}
int transport_local_size() {
    return group().local_size;
}

std::unique_ptr<Pending> start_all_reduce(
    void* data, int64_t count, DType dtype, ReduceOp op, const void* send) {
    auto pending = std::make_unique<MpiPending>(
        fmt::format("all_reduce of {} {} elements", count, dtype_name(dtype)));
    if (!use_mpi()) return pending;
    const MPI_Comm c = group().comm;
    const std::lock_guard lock(group().mutex);
    auto* bytes = static_cast<char*>(data);
    const auto* from = static_cast<const char*>(send);
    const int64_t element = static_cast<int64_t>(dtype_size(dtype));
    for (int64_t begin = 0; begin < count; begin += kMaxChunk) {
        const int n = static_cast<int>(std::min(kMaxChunk, count - begin));
        const void* chunk_from = from == nullptr ? MPI_IN_PLACE : from + begin * element;
        MPI_Request r = MPI_REQUEST_NULL;
        check(MPI_Iallreduce(
                  chunk_from, bytes + begin * element, n, mpi_type(dtype), mpi_op(op), c, &r),
              "MPI_Iallreduce");
        pending->requests_.push_back(r);
    }
    return pending;
}

std::unique_ptr<Pending> start_broadcast(void* data, int64_t nbytes, int root) {
    auto pending = std::make_unique<MpiPending>(
        fmt::format("broadcast of {} bytes from rank {}", nbytes, root));
    if (!use_mpi()) return pending;
    const MPI_Comm c = group().comm;
    const std::lock_guard lock(group().mutex);
    auto* bytes = static_cast<char*>(data);
    for (int64_t begin = 0; begin < nbytes; begin += kMaxChunk) {
        const int n = static_cast<int>(std::min(kMaxChunk, nbytes - begin));
        MPI_Request r = MPI_REQUEST_NULL;
        check(MPI_Ibcast(bytes + begin, n, MPI_BYTE, root, c, &r), "MPI_Ibcast");
        pending->requests_.push_back(r);
    }
    return pending;
}

std::unique_ptr<Pending> start_all_gather(const void* mine,
                                          int64_t my_bytes,
                                          void* out,
                                          const std::vector<int64_t>& counts) {
    auto pending = std::make_unique<MpiPending>(fmt::format("all_gather of {} bytes", my_bytes));
    if (!use_mpi()) {
        if (my_bytes > 0)
            std::copy_n(static_cast<const char*>(mine), my_bytes, static_cast<char*>(out));
        return pending;
    }
    const MPI_Comm c = group().comm;
    std::vector<int> recv_counts(counts.size()), displs(counts.size());
    int64_t offset = 0;
    for (std::size_t r = 0; r < counts.size(); ++r) {
        if (offset + counts[r] > INT_MAX) {
            throw errors::UnimplementedError(
                "all_gather of more than 2 GiB in total is not supported");
        }
        recv_counts[r] = static_cast<int>(counts[r]);
        displs[r] = static_cast<int>(offset);
        offset += counts[r];
    }
    const std::lock_guard lock(group().mutex);
    MPI_Request r = MPI_REQUEST_NULL;
    check(MPI_Iallgatherv(mine,
                          static_cast<int>(my_bytes),
                          MPI_BYTE,
                          out,
                          recv_counts.data(),
                          displs.data(),
                          MPI_BYTE,
                          c,
                          &r),
          "MPI_Iallgatherv");
    pending->requests_.push_back(r);
    return pending;
}

std::unique_ptr<Pending> start_barrier() {
    auto pending = std::make_unique<MpiPending>("barrier");
    if (!use_mpi()) return pending;
    const MPI_Comm c = group().comm;
    const std::lock_guard lock(group().mutex);
    MPI_Request r = MPI_REQUEST_NULL;
    check(MPI_Ibarrier(c, &r), "MPI_Ibarrier");
    pending->requests_.push_back(r);
    return pending;
}

std::unique_ptr<Pending> start_send(int dest, int tag, std::string bytes) {
    if (!use_mpi())
        throw errors::UnavailableError(
            fmt::format("no process {} to send to: one process, not launched by mpirun", dest));
    const MPI_Comm c = group().comm;
    if (bytes.size() > static_cast<std::size_t>(INT_MAX)) {
        throw errors::UnimplementedError(
            "a parameter-server message of more than 2 GiB is not supported");
    }
    auto pending = std::make_unique<MpiPending>(
        fmt::format("send of {} bytes to rank {}", bytes.size(), dest), std::move(bytes));
    const std::lock_guard lock(group().mutex);
    MPI_Request r = MPI_REQUEST_NULL;
    check(MPI_Isend(pending->keep_alive().data(),
                    static_cast<int>(pending->keep_alive().size()),
                    MPI_BYTE,
                    dest,
                    tag,
                    c,
                    &r),
          "MPI_Isend");
    pending->requests_.push_back(r);
    return pending;
}

std::optional<Message> try_receive(int source, int tag) {
    if (!use_mpi()) return std::nullopt;
    const MPI_Comm c = group().comm;
    int flag = 0;
    MPI_Status status;
    MPI_Message handle = MPI_MESSAGE_NULL;
    {
        const std::lock_guard lock(group().mutex);
        check(MPI_Improbe(source < 0 ? MPI_ANY_SOURCE : source,
                          tag < 0 ? MPI_ANY_TAG : tag,
                          c,
                          &flag,
                          &handle,
                          &status),
              "MPI_Improbe");
    }
    if (flag == 0) return std::nullopt;
    int count = 0;
    MPI_Get_count(&status, MPI_BYTE, &count);
    Message m;
    m.source = status.MPI_SOURCE;
    m.tag = status.MPI_TAG;
    m.bytes.resize(static_cast<std::size_t>(count));
    // The matched message is received without blocking: a sender that died mid-message must not
    // hang this process (NOTE [Deadlines]).
    MpiPending receive(fmt::format("receive of {} bytes from rank {}", count, m.source));
    {
        const std::lock_guard lock(group().mutex);
        MPI_Request r = MPI_REQUEST_NULL;
        check(MPI_Imrecv(m.bytes.data(), count, MPI_BYTE, &handle, &r), "MPI_Imrecv");
        receive.requests_.push_back(r);
    }
    wait(receive, fmt::format("receive of {} bytes from rank {}", count, m.source));
    return m;
}

}  // namespace mpi
}  // namespace tapeflow::distribute::detail

extern "C" TAPEFLOW_PLUGIN_API const tapeflow::distribute::detail::Transport*
tapeflow_mpi_transport() {
    using namespace tapeflow::distribute::detail::mpi;
    static const tapeflow::distribute::detail::Transport table{TAPEFLOW_VERSION_STRING,
                                                               true,
                                                               transport_init,
                                                               transport_finalize,
                                                               transport_initialized,
                                                               transport_rank,
                                                               transport_size,
                                                               transport_local_rank,
                                                               transport_local_size,
                                                               start_all_reduce,
                                                               start_broadcast,
                                                               start_all_gather,
                                                               start_barrier,
                                                               start_send,
                                                               try_receive};
    return &table;
}
