// The transport of a build without MPI (meson option mpi disabled or MPI not found): one process,
// rank 0 of 1. Collectives complete at once and leave the data as it is (the identity); there is
// no peer to send to.
#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include <tapeflow/core/error.hpp>

#include "distribute/transport.hpp"

namespace tapeflow::distribute::detail {
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
bool transport_is_mpi() {
    return false;
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
        "no process {} to send to: tapeflow was built without MPI (meson option mpi), so every "
        "process is alone",
        dest));
}

std::optional<Message> try_receive(int /*source*/, int /*tag*/) {
    return std::nullopt;
}

}  // namespace tapeflow::distribute::detail
