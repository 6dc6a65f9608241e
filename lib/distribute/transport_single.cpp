// The single-process transport (a build without MPI, or a process mpirun did not start whose MPI
// plugin is missing): rank 0 of 1. Collectives complete at once and leave the data as it is (the
// identity); there is no peer to send to.
#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/version.hpp>

#include "distribute/transport.hpp"

namespace tapeflow::distribute::detail {
namespace single {
namespace {

class Done final : public Pending {
public:
    bool test() override { return true; }
};

bool& initialized() {
    static bool value = false;
    return value;
}

}  // namespace

void transport_init(int* /*argc*/, char*** /*argv*/) {
    initialized() = true;
}
void transport_finalize() {}
bool transport_initialized() {
    return initialized();
}
int transport_rank() {
    return 0;
}
int transport_size() {
    return 1;
}
int transport_local_rank() {
    return 0;
}
int transport_local_size() {
    return 1;
}

std::unique_ptr<Pending> start_all_reduce(
    void* data, int64_t count, DType dtype, ReduceOp, const void* send) {
    if (send != nullptr && count > 0)
        std::memcpy(data, send, static_cast<std::size_t>(count) * dtype_size(dtype));
    return std::make_unique<Done>();
}
std::unique_ptr<Pending> start_broadcast(void*, int64_t, int) {
    return std::make_unique<Done>();
}
std::unique_ptr<Pending> start_barrier() {
    return std::make_unique<Done>();
}

std::unique_ptr<Pending> start_all_gather(const void* mine,
                                          int64_t my_bytes,
                                          void* out,
                                          const std::vector<int64_t>& /*counts*/) {
    if (my_bytes > 0)
        std::copy_n(static_cast<const char*>(mine), my_bytes, static_cast<char*>(out));
    return std::make_unique<Done>();
}

std::unique_ptr<Pending> start_send(int dest, int /*tag*/, std::string /*bytes*/) {
    throw errors::UnavailableError(fmt::format(
        "no process {} to send to: this process runs alone (tapeflow without MPI, or not started "
        "by mpirun)",
        dest));
}

std::optional<Message> try_receive(int /*source*/, int /*tag*/) {
    return std::nullopt;
}

}  // namespace single

const Transport& single_transport() {
    static const Transport table{TAPEFLOW_VERSION_STRING,
                                 false,
                                 single::transport_init,
                                 single::transport_finalize,
                                 single::transport_initialized,
                                 single::transport_rank,
                                 single::transport_size,
                                 single::transport_local_rank,
                                 single::transport_local_size,
                                 single::start_all_reduce,
                                 single::start_broadcast,
                                 single::start_all_gather,
                                 single::start_barrier,
                                 single::start_send,
                                 single::try_receive};
    return table;
}

}  // namespace tapeflow::distribute::detail
