// The transport functions of transport.hpp: each calls the table chosen on first use, the MPI
// plugin's when libtapeflow_mpi.so and libmpi load, else the single-process one. A process that
// mpirun started but that cannot load MPI, or whose tapeflow was built without it, fails with an
// error naming what is missing: running alone would silently train on 1/N of the data.
#include "distribute/transport.hpp"

#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/version.hpp>

#include "core/plugin.hpp"
#include "plugin_config.hpp"

namespace tapeflow::distribute::detail {
namespace {

const Transport& choose() {
    if (!TAPEFLOW_MPI_PLUGIN_BUILT) {
        if (!launched_by_mpirun()) return single_transport();
        throw errors::UnimplementedError(
            "this process was started by mpirun, but tapeflow was built without MPI: each process "
            "would train alone on all the data. Configure with -Dmpi=enabled where MPI is "
            "installed (Debian: apt-get install libopenmpi-dev)");
    }
    std::string error;
    // RTLD_GLOBAL: Open MPI's components resolve libmpi's symbols from the global scope.
    void* entry = tapeflow::detail::load_plugin_entry(TAPEFLOW_MPI_PLUGIN_FILE,
                                                      kMpiPluginEntry,
                                                      /*global=*/true,
                                                      error);
    if (entry != nullptr) {
        const Transport* mpi = reinterpret_cast<MpiPluginEntry>(entry)();
        if (std::strcmp(mpi->version, TAPEFLOW_VERSION_STRING) == 0) return *mpi;
        error =
            fmt::format("it is version {} but libtapeflow is {}: install both from the same build",
                        mpi->version,
                        TAPEFLOW_VERSION_STRING);
    }
    if (!launched_by_mpirun()) return single_transport();  // one process, as without MPI
    throw errors::UnavailableError(fmt::format(
        "this process was started by mpirun, but tapeflow's MPI transport ({}) could not be "
        "loaded: {}. It needs the MPI library tapeflow was built with ({}): install it (Debian: "
        "apt-get install libopenmpi3) or add its folder to LD_LIBRARY_PATH",
        TAPEFLOW_MPI_PLUGIN_FILE,
        error,
        TAPEFLOW_MPI_LIBRARY));
}

const Transport& transport() {
    static const Transport& chosen = choose();  // a throw is retried on the next call
    return chosen;
}

}  // namespace

bool launched_by_mpirun() {
    for (const char* var :
         {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "MPI_LOCALNRANKS"}) {
        if (std::getenv(var) != nullptr) return true;
    }
    return false;
}

void transport_init(int* argc, char*** argv) {
    transport().init(argc, argv);
}
void transport_finalize() {
    transport().finalize();
}
bool transport_initialized() {
    return transport().initialized();
}
int transport_rank() {
    return transport().rank();
}
int transport_size() {
    return transport().size();
}
int transport_local_rank() {
    return transport().local_rank();
}
int transport_local_size() {
    return transport().local_size();
}
bool transport_is_mpi() {
    return transport().is_mpi;
}
std::unique_ptr<Pending> start_all_reduce(
    void* data, int64_t count, DType dtype, ReduceOp op, const void* send) {
    return transport().start_all_reduce(data, count, dtype, op, send);
}
std::unique_ptr<Pending> start_broadcast(void* data, int64_t nbytes, int root) {
    return transport().start_broadcast(data, nbytes, root);
}
std::unique_ptr<Pending> start_all_gather(const void* mine,
                                          int64_t my_bytes,
                                          void* out,
                                          const std::vector<int64_t>& counts) {
    return transport().start_all_gather(mine, my_bytes, out, counts);
}
std::unique_ptr<Pending> start_barrier() {
    return transport().start_barrier();
}
std::unique_ptr<Pending> start_send(int dest, int tag, std::string bytes) {
    return transport().start_send(dest, tag, std::move(bytes));
}
std::optional<Message> try_receive(int source, int tag) {
    return transport().try_receive(source, tag);
}

}  // namespace tapeflow::distribute::detail
