// tf::distribute: data-parallel training across processes launched by mpirun.
// Collectives on CPU tensors (MPI underneath; a single process without mpirun is the identity),
// DistributedOptimizer (synchronous, bucketed all-reduce of gradients) and ParameterServerStrategy
// (asynchronous ps/worker). No MPI type appears here: the transport lives in lib/distribute/.
// User guide: docs/distributed.md.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <tapeflow/autograd/variable.hpp>
#include <tapeflow/core/export.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/data.hpp>
#include <tapeflow/train/optimizer.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow::distribute {

/// Starts the process group: MPI_Init when the process was launched by mpirun (OpenMPI, MPICH or
/// PMIx variables in the environment), nothing otherwise (one process: rank 0 of size 1). Call it
/// once, first thing in main; the collectives call it themselves when it was forgotten. `argc` and
/// `argv` may be null.
void init(int* argc = nullptr, char*** argv = nullptr);
/// Ends the process group (MPI_Finalize). Also run at exit when init started MPI. After a peer
/// failure (an UnavailableError was raised) MPI is left alone, since its finalize could hang.
void finalize();
/// This process's index in [0, size()).
int rank();
/// The number of processes.
int size();
/// This process's index among the processes on its machine.
int local_rank();
/// The process that writes checkpoints: rank 0, or worker task 0 once a ParameterServerStrategy
/// exists. tf::train::Saver saves only there and restores there, then broadcasts the values.
int chief_rank();
/// rank() == chief_rank().
bool is_chief();
/// True when the MPI transport is usable: built (meson option `mpi`) and its plugin
/// libtapeflow_mpi.so and libmpi load; otherwise every process is a size-1 group.
bool mpi_built();

/// Seconds a collective or a parameter-server exchange may wait for its peers before raising
/// UnavailableError (a peer died or stopped calling the collective). Default: the environment
/// variable TAPEFLOW_DIST_TIMEOUT_S, else 300.
double timeout_seconds();
void set_timeout_seconds(double seconds);

enum class ReduceOp { sum, mean, max, min };

/// The element-wise reduction of `t` over every process; each process gets the result. Every
/// process must pass the same shape and dtype (InvalidArgumentError naming both otherwise).
/// dtypes: float32/64, float16, bfloat16 (reduced in float32), int32, int64, uint8; bool with max
/// (any) and min (all). mean needs a floating dtype. GPU tensors are staged through the host.
Tensor all_reduce(const Tensor& t, ReduceOp op = ReduceOp::sum);
/// Process `root`'s tensor on every process. Shapes and dtypes may differ before the call.
Tensor broadcast(const Tensor& t, int root = 0);
/// Every process's tensor, in rank order. Shapes may differ (uneven batches); dtypes may not.
std::vector<Tensor> all_gather(const Tensor& t);
/// Assigns process `root`'s value to each variable on every process (same list on all).
void broadcast_variables(const std::vector<Variable>& variables, int root = 0);
/// Returns once every process has called it.
void barrier();

/// The part of `dataset` this process reads: dataset.shard(size(), rank()).
template <class T>
data::Dataset<T> shard(const data::Dataset<T>& dataset) {
    return dataset.shard(size(), rank());
}

struct DistributedOptions {
    /// Gradients are packed into buckets of about this many bytes; each bucket is one all-reduce.
    int64_t bucket_bytes = 25 << 20;
    /// true: the mean of the processes' gradients; false: their sum.
    bool average = true;
};

/// Synchronous data parallel (Horovod's DistributedOptimizer): wraps any optimizer and reduces the
/// gradients across processes before they are applied, so every replica keeps identical variables.
///
///     auto opt = std::make_shared<tf::distribute::DistributedOptimizer>(
///         std::make_shared<tf::train::AdamOptimizer>(0.001));
///     opt->minimize(loss_fn);   // each process: the loss of its shard of the global batch
///
/// - compute_gradients runs the backward walk and starts the all-reduce of each bucket as soon as
///   every gradient in it is final, while the walk goes on; it returns the reduced gradients.
///   Buckets follow var_list in reverse (the order the walk finishes gradients), one dtype each.
/// - IndexedSlices gradients are all-gathered (values and indices of every process, values scaled
///   by 1/size() when averaging), so sparse update rules still touch only the gathered rows.
/// - apply_gradients applies what it is given without reducing again; minimize reduces once.
/// - At the first compute_gradients the variables are broadcast from rank 0.
/// - Slots, iterations() and variables() are the wrapped optimizer's.
class DistributedOptimizer : public train::Optimizer {
public:
    explicit DistributedOptimizer(std::shared_ptr<train::Optimizer> inner,
                                  DistributedOptions options = {});
    ~DistributedOptimizer() override;

    std::vector<train::GradAndVar> compute_gradients(
        const std::function<Tensor()>& loss_fn,
        std::vector<Variable> var_list = {},
        train::GateGradients gate_gradients = train::GateGradients::gate_op,
        AggregationMethod aggregation_method = AggregationMethod::default_) override;
    void apply_gradients(const std::vector<train::GradAndVar>& grads_and_vars,
                         std::optional<Variable> global_step = {}) override;
    Tensor minimize(const std::function<Tensor()>& loss_fn,
                    std::vector<Variable> var_list = {},
                    std::optional<Variable> global_step = {},
                    train::GateGradients gate_gradients = train::GateGradients::gate_op,
                    AggregationMethod aggregation_method = AggregationMethod::default_) override;

    std::optional<Variable> get_slot(const Variable& var,
                                     std::string_view slot_name) const override;
    std::vector<std::string> get_slot_names() const override;
    int64_t iterations() const override;
    double current_learning_rate() const override;
    std::vector<Variable> variables() const override;

    /// The wrapped optimizer.
    train::Optimizer& inner() const { return *inner_; }
    /// Reduces gradients computed elsewhere (the same list, in the same order, on every process).
    std::vector<train::GradAndVar> reduce_gradients(
        const std::vector<train::GradAndVar>& grads_and_vars);

protected:
    void apply_dense(const Variable& var, const Tensor& grad) override;

private:
    std::pair<Tensor, std::vector<train::GradAndVar>> compute(
        const std::function<Tensor()>& loss_fn,
        std::vector<Variable> var_list,
        AggregationMethod aggregation_method);

    struct State;
    std::shared_ptr<train::Optimizer> inner_;
    DistributedOptions options_;
    std::unique_ptr<State> state_;
};

/// The jobs of a cluster (TF1's tf.train.ClusterSpec, also tf::train::ClusterSpec): {"ps":
/// [addresses], "worker": [addresses]}. Under MPI the addresses are informational: the tasks are
/// the ranks, the "ps" job's first (ps task i is rank i), then the other jobs' in name order
/// (worker task j is rank (number of ps) + j).
struct ClusterSpec {
    std::map<std::string, std::vector<std::string>> jobs;

    ClusterSpec() = default;
    /// As TF's dict: ClusterSpec({{"ps", {"ps0:2222"}}, {"worker", {"w0:2222", "w1:2222"}}}).
    ClusterSpec(std::initializer_list<std::pair<std::string, std::vector<std::string>>> jobs);
    /// From a map (a template, so that a braced list above is never also read as a map).
    template <class Map>
    requires std::is_same_v<std::remove_cvref_t<Map>,
                            std::map<std::string, std::vector<std::string>>>
    explicit ClusterSpec(Map&& jobs_) : jobs(std::forward<Map>(jobs_)) { validate(); }
    /// The job names, sorted.
    std::vector<std::string> job_names() const;
    /// Tasks of `job`; ValueError-like InvalidArgumentError "No such job in cluster: 'x'".
    int num_tasks(const std::string& job) const;
    std::vector<int> task_indices(const std::string& job) const;
    std::string task_address(const std::string& job, int task_index) const;
    std::vector<std::string> job_tasks(const std::string& job) const;
    /// The jobs, as TF's as_dict().
    const std::map<std::string, std::vector<std::string>>& as_dict() const { return jobs; }
    /// TensorFlow's ClusterDef in protobuf text format ("job { name: \"ps\" tasks { key: 0
    /// value: \"host:2222\" } }" ...).
    std::string as_cluster_def() const;
    /// Processes in the cluster.
    int num_processes() const;
    /// The MPI rank of a task (the "ps" job first, then the others by name); raises for a job or
    /// task the cluster does not have.
    int rank_of(const std::string& job, int task_index) const;
    /// The (job, task) of an MPI rank.
    std::pair<std::string, int> task_of_rank(int rank) const;
    /// Whether the cluster has jobs (TF's __bool__).
    explicit operator bool() const { return !jobs.empty(); }
    bool operator==(const ClusterSpec& other) const = default;

private:
    void validate() const;  // InvalidArgumentError for a job name TF's device names cannot hold
};

/// Asynchronous parameter-server training (the seeds' ps/worker model). Every process runs the
/// same program: it creates the variables in the same order with create_variable (variable k
/// lives on ps task k % num_ps) and registers the optimizer; ps tasks then call run_server(), and
/// workers loop compute_gradients -> apply_gradients (a push the ps applies with its optimizer,
/// without waiting) -> pull (the latest values). Workers do not wait for each other.
class ParameterServerStrategy {
public:
    /// `job_name` is "ps" or "worker"; the cluster must have as many tasks as there are processes.
    ParameterServerStrategy(ClusterSpec cluster, std::string job_name, int task_index);
    /// Ranks 0..num_ps-1 are the ps tasks, the others workers.
    static ParameterServerStrategy from_mpi(int num_ps = 1);
    ParameterServerStrategy(ParameterServerStrategy&&) noexcept;
    ParameterServerStrategy& operator=(ParameterServerStrategy&&) noexcept;
    /// Workers: finish() (errors are logged, not thrown).
    ~ParameterServerStrategy();

    /// Worker task 0.
    bool is_chief() const;
    bool is_ps() const;
    int num_ps() const;
    int num_workers() const;
    int task_index() const;

    /// Creates variable k (k-th call) with `initial_value`. On its ps task it is the variable
    /// itself; on workers a local copy, filled with the ps's value (a pull) before returning.
    Variable create_variable(const Tensor& initial_value, VariableOptions options = {});
    /// Makes an existing variable the next one (as create_variable does), held by ps task
    /// `ps_task` instead of the round-robin one; on workers its value is pulled from there.
    /// tf::train::Server uses it for the variables a tf::device scope places on "/job:ps/task:i".
    void add_variable(Variable variable, int ps_task);
    /// Whether `variable` is one of this strategy's (created or added).
    bool holds(const Variable& variable) const;
    /// Makes `optimizer` the one the ps tasks update variables with, for pushes that name it. Call
    /// it on every process (the same optimizer, constructed the same way) before run_server().
    void register_optimizer(train::Optimizer& optimizer);
    /// ps tasks: receives pushes and pulls until every worker has finished, then returns. Raises
    /// UnavailableError when a worker unfinished has sent nothing for timeout_seconds().
    void run_server();
    /// Workers: sends the gradients to the variables' ps tasks, which apply them with their copy of
    /// `optimizer` (registered there) in arrival order. Returns without waiting for the update.
    /// `global_step` (one of this strategy's variables): incremented by its ps task once per
    /// call, after the update, as TF1's minimize(global_step=...) does there. A ps finds the
    /// optimizer by registration, else by name among its live optimizers.
    void apply_gradients(train::Optimizer& optimizer,
                         const std::vector<train::GradAndVar>& grads_and_vars,
                         std::optional<Variable> global_step = {});
    /// Workers: the latest values of `variables` from their ps tasks (this worker's earlier pushes
    /// included), assigned to the local copies.
    void pull(const std::vector<Variable>& variables);
    /// Workers: waits for the pushes in flight and tells every ps task this worker is done.
    void finish();

private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace tapeflow::distribute

TAPEFLOW_API_END
