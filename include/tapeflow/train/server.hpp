// TF1's cluster idioms on MPI: tf.train.ClusterSpec, tf.train.Server, replica_device_setter.
// The tasks of the cluster are the MPI ranks (no gRPC runtime): variables a tf::device scope
// places on "/job:ps/task:i" are held by that rank and trained asynchronously through
// tf::distribute::ParameterServerStrategy; every other op runs in the local process.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <tapeflow/core/device.hpp>
#include <tapeflow/core/export.hpp>
#include <tapeflow/distribute.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow::train {

/// tf.train.ClusterSpec: {"ps": [addresses], "worker": [addresses]} (the same type as
/// tf::distribute::ClusterSpec).
using ClusterSpec = distribute::ClusterSpec;

/// tf.train.Server: this process as one task of a cluster. Every process runs the same program:
/// it creates the Server, then the model's variables in a tf::device(replica_device_setter(...))
/// scope (in the same order everywhere) and the optimizer; ps tasks then call join(), which serves
/// the workers until they all finished; workers train (each apply_gradients of ps-held variables
/// is sent to their ps tasks, which apply it with their optimizer of the same name, and the fresh
/// values come back), then call join() too. Workers do not wait for each other (TF1's asynchronous
/// between-graph replication). A cluster without a "ps" job holds every variable locally: train
/// synchronously with tf::distribute::DistributedOptimizer (all-reduce).
class Server {
public:
    /// `job_name` may be "" when the cluster has one job, `task_index` -1 when the job has one
    /// task (as in TF). The task must be this process: the cluster has as many tasks as mpirun
    /// started processes, and task (job, i) is rank cluster.rank_of(job, i); else
    /// InvalidArgumentError saying which rank and which -np were expected.
    Server(ClusterSpec cluster, std::string job_name = "", int task_index = -1, bool start = true);
    /// The task of this process's MPI rank.
    static Server from_mpi(ClusterSpec cluster, bool start = true);
    /// A one-task cluster {"localhost": ["localhost:0"]} of this process alone.
    static Server create_local_server(bool start = true);
    Server(Server&&) noexcept;
    Server& operator=(Server&&) noexcept;
    /// Stops placing variables; a worker that has not called join() finishes (errors logged).
    ~Server();

    const ClusterSpec& cluster() const;
    const std::string& job_name() const;
    int task_index() const;
    /// "mpi://rank:<r>" (TF: "grpc://host:port"), what a MonitoredTrainingSession's master names.
    std::string target() const;
    /// The chief: task 0 of the "chief" job if there is one, else of "worker".
    bool is_chief() const;
    bool is_ps() const;
    /// Starts placing variables on the cluster's tasks (done by the constructor unless
    /// start = false). Repeated calls do nothing.
    void start();
    /// ps tasks: serve the workers until every one has finished (or raise UnavailableError when
    /// one dies, after TAPEFLOW_DIST_TIMEOUT_S). Workers: wait for their pushes in flight and
    /// tell the ps tasks they are done. Either way the training of this process is over.
    void join();
    /// The parameter-server machinery (nullptr when the cluster has no "ps" job).
    distribute::ParameterServerStrategy* strategy();

    struct State;  // opaque

private:
    std::unique_ptr<State> state_;
    explicit Server(std::unique_ptr<State> state);
};

/// tf.train.replica_device_setter's options.
struct ReplicaDeviceSetterOptions {
    /// Number of ps tasks (0: the cluster's "ps" job's size; without either, variables stay on
    /// worker_device).
    int ps_tasks = 0;
    std::string ps_device = "/job:ps";
    std::string worker_device = "/job:worker";
    std::optional<ClusterSpec> cluster;
    /// The ps task of a variable (default: round robin in creation order, TF's
    /// _RoundRobinStrategy).
    std::function<int(const PlacementRequest&)> ps_strategy;
};

/// A device function for tf::device(): variables on ps_device + "/task:k" (k from ps_strategy),
/// everything else on worker_device, as TF1's replica_device_setter places them.
DeviceFunction replica_device_setter(ReplicaDeviceSetterOptions options);
DeviceFunction replica_device_setter(const ClusterSpec& cluster,
                                     std::string worker_device = "/job:worker");

}  // namespace tapeflow::train

TAPEFLOW_API_END
