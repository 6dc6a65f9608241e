// The process-group transport under tf::distribute: nonblocking collectives and point-to-point
// messages on host buffers. Two implementations behind one table (Transport), chosen on first
// use by transport.cpp: the MPI plugin (libtapeflow_mpi.so, transport_mpi.cpp) when it loads,
// else transport_single.cpp (one process: collectives are the identity). Everything above this
// file (collectives.cpp, distributed_optimizer.cpp, parameter_server.cpp) is shared by both.
//
// NOTE [Deadlines]: no call here blocks without a limit. Nonblocking operations are polled by
// wait() until done or until timeout_seconds() pass; then UnavailableError names the operation,
// and the transport is marked broken (finalize leaves MPI alone, since MPI_Finalize would hang on
// the dead peer). Polling keeps MPI progressing, which MPI only does inside its calls.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <tapeflow/core/dtype.hpp>
#include <tapeflow/distribute.hpp>

#include "core/plugin.hpp"

namespace tapeflow::distribute::detail {

/// One nonblocking operation in flight.
class Pending {
public:
    virtual ~Pending() = default;
    /// Makes progress; true once complete (then the buffers may be reused).
    virtual bool test() = 0;
};

/// Polls `done` until it returns true or the deadline passes (NOTE [Deadlines]); `what` names the
/// operation in the error ("all_reduce of 4096 float32 elements").
TAPEFLOW_PLUGIN_API void wait_until(const std::function<bool()>& done, std::string_view what);
/// wait_until(pending.test()).
TAPEFLOW_PLUGIN_API void wait(Pending& pending, std::string_view what);
/// Marks the transport unusable after a peer failure; later calls raise at once.
TAPEFLOW_PLUGIN_API void mark_broken(const std::string& reason);
/// The reason the transport is broken, if it is.
TAPEFLOW_PLUGIN_API std::optional<std::string> broken_reason();
/// UnavailableError with that reason when the transport is broken.
TAPEFLOW_PLUGIN_API void check_not_broken();

// ---- the process group (implemented by each transport) ----

void transport_init(int* argc, char*** argv);
void transport_finalize();
bool transport_initialized();
TAPEFLOW_PLUGIN_API int transport_rank();
TAPEFLOW_PLUGIN_API int transport_size();
int transport_local_rank();
/// Processes on this machine.
int transport_local_size();
bool transport_is_mpi();

/// Reduction of `count` elements of `dtype` (float32/64, int32/64, uint8) into `data`, from `send`
/// (nullptr: in place, from `data` itself).
std::unique_ptr<Pending> start_all_reduce(
    void* data, int64_t count, DType dtype, ReduceOp op, const void* send = nullptr);
/// Root's `nbytes` bytes into everyone's `data`.
std::unique_ptr<Pending> start_broadcast(void* data, int64_t nbytes, int root);
/// Every process's `counts[r]` bytes, concatenated in rank order into `out` (sum of counts bytes).
std::unique_ptr<Pending> start_all_gather(const void* mine,
                                          int64_t my_bytes,
                                          void* out,
                                          const std::vector<int64_t>& counts);
std::unique_ptr<Pending> start_barrier();

// ---- point-to-point (parameter servers) ----

/// Sends `bytes` to `dest` with `tag`; the string is kept alive by the Pending.
std::unique_ptr<Pending> start_send(int dest, int tag, std::string bytes);
struct Message {
    int source = -1;
    int tag = -1;
    std::string bytes;
};
/// A message from `source` (-1: any) with `tag` (-1: any), if one has arrived.
std::optional<Message> try_receive(int source, int tag);

// ---- the implementations: the functions above call the chosen one's table ----

struct Transport {
    const char* version;  // TAPEFLOW_VERSION_STRING of its build (the MPI plugin's must match)
    bool is_mpi;
    void (*init)(int* argc, char*** argv);
    void (*finalize)();
    bool (*initialized)();
    int (*rank)();
    int (*size)();
    int (*local_rank)();
    int (*local_size)();
    std::unique_ptr<Pending> (*start_all_reduce)(
        void* data, int64_t count, DType dtype, ReduceOp op, const void* send);
    std::unique_ptr<Pending> (*start_broadcast)(void* data, int64_t nbytes, int root);
    std::unique_ptr<Pending> (*start_all_gather)(const void* mine,
                                                 int64_t my_bytes,
                                                 void* out,
                                                 const std::vector<int64_t>& counts);
    std::unique_ptr<Pending> (*start_barrier)();
    std::unique_ptr<Pending> (*start_send)(int dest, int tag, std::string bytes);
    std::optional<Message> (*try_receive)(int source, int tag);
};

/// One process, no MPI (transport_single.cpp).
const Transport& single_transport();
/// The MPI plugin's entry point: extern "C" const Transport* tapeflow_mpi_transport().
inline constexpr const char* kMpiPluginEntry = "tapeflow_mpi_transport";
using MpiPluginEntry = const Transport* (*)();
/// Whether mpirun (Open MPI, MPICH, PMIx) started this process: then a missing MPI plugin is an
/// error instead of a single-process run.
TAPEFLOW_PLUGIN_API bool launched_by_mpirun();

}  // namespace tapeflow::distribute::detail
