// tf::train::Server and replica_device_setter: TF1's cluster idioms on the MPI ranks. The Server
// watches variable creation (a variable observer): one that the thread's tf::device scopes place on
// the "ps" job becomes a ParameterServerStrategy variable of that ps task. An apply_gradients hook
// (train/remote_apply.hpp) then sends its updates there and pulls the fresh values back.
#include <atomic>

#include <fmt/format.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/core/logging.hpp>
#include <tapeflow/ops/creation.hpp>
#include <tapeflow/train/server.hpp>

#include "autograd/variable_observers.hpp"
#include "core/placement.hpp"
#include "train/remote_apply.hpp"

namespace tapeflow::train {

struct Server::State {
    ClusterSpec cluster;
    std::string job;
    int task = 0;
    bool local = false;  // create_local_server: this process alone
    bool started = false;
    bool joined = false;
    std::optional<distribute::ParameterServerStrategy> strategy;
    int64_t observer = -1;
};

namespace {

// The started Server of this process (TF runs one per task, and a process is one task).
std::atomic<Server::State*> active{nullptr};
thread_local bool serving = false;  // a ps applying pushes: its slots are its own

template <class S>
void place(S& s, Variable& created) {
    if (serving || !s.strategy) return;
    const std::optional<DeviceSpec> spec = tapeflow::detail::variable_placement(created.name());
    if (!spec || spec->job != "ps") return;  // on another job: a variable of every process
    s.strategy->add_variable(created, spec->task.value_or(0));
}

template <class S>
bool apply_on_ps(S& s,
                 Optimizer& optimizer,
                 const std::vector<GradAndVar>& grads_and_vars,
                 const std::optional<Variable>& global_step) {
    distribute::ParameterServerStrategy& ps = *s.strategy;
    std::vector<GradAndVar> remote, local;
    for (const GradAndVar& p : grads_and_vars)
        (ps.holds(p.variable) ? remote : local).push_back(p);
    if (remote.empty()) return false;
    const bool step_remote = global_step && ps.holds(*global_step);
    if (!local.empty()) optimizer.apply_gradients(local, step_remote ? std::nullopt : global_step);
    ps.apply_gradients(optimizer, remote, step_remote ? global_step : std::nullopt);
    if (global_step && !step_remote && local.empty()) {
        Variable(*global_step).assign_add(constant(int64_t{1}, global_step->dtype()));
    }
    // TF1 reads a ps variable from its task at every step: the next step sees this update (and
    // every other worker's that arrived before it).
    std::vector<Variable> fresh;
    for (const GradAndVar& p : remote)
        if (p.gradient.defined()) fresh.push_back(p.variable);
    if (step_remote) fresh.push_back(*global_step);
    ps.pull(fresh);
    return true;
}

bool remote_apply(Optimizer& optimizer,
                  const std::vector<GradAndVar>& grads_and_vars,
                  const std::optional<Variable>& global_step) {
    Server::State* s = active.load(std::memory_order_acquire);
    if (s == nullptr || !s->strategy || s->strategy->is_ps()) return false;
    return apply_on_ps(*s, optimizer, grads_and_vars, global_step);
}

std::string job_or_only(const ClusterSpec& cluster, std::string job) {
    if (!job.empty()) return job;
    if (cluster.jobs.size() != 1) {
        throw errors::InvalidArgumentError(fmt::format(
            "Server: job_name must be given when the cluster has more than one job ({})",
            fmt::join(cluster.job_names(), ", ")));
    }
    return cluster.jobs.begin()->first;
}

}  // namespace

Server::Server(std::unique_ptr<State> state) : state_(std::move(state)) {}

Server::Server(ClusterSpec cluster, std::string job_name, int task_index, bool start_now)
    : state_(std::make_unique<State>()) {
    State& s = *state_;
    if (!cluster) throw errors::InvalidArgumentError("Server: the ClusterSpec has no jobs");
    s.job = job_or_only(cluster, std::move(job_name));
    const int tasks = cluster.num_tasks(s.job);  // raises for an unknown job
    if (task_index < 0) {
        if (tasks != 1) {
            throw errors::InvalidArgumentError(fmt::format(
                "Server: task_index must be given: job '{}' has {} tasks", s.job, tasks));
        }
        task_index = 0;
    }
    cluster.task_address(s.job, task_index);  // raises for a task the job does not have
    s.task = task_index;
    if (cluster.num_processes() != distribute::size()) {
        throw errors::InvalidArgumentError(fmt::format(
            "Server: the cluster has {} tasks but {} process(es) run; launch with mpirun -np {}",
            cluster.num_processes(),
            distribute::size(),
            cluster.num_processes()));
    }
    const int expected = cluster.rank_of(s.job, s.task);
    if (expected != distribute::rank()) {
        throw errors::InvalidArgumentError(
            fmt::format("Server: task /job:{}/task:{} is rank {} (the ps tasks first, then the "
                        "other jobs by name), but this process is rank {}",
                        s.job,
                        s.task,
                        expected,
                        distribute::rank()));
    }
    s.cluster = std::move(cluster);
    if (start_now) start();
}

Server Server::from_mpi(ClusterSpec cluster, bool start_now) {
    const auto [job, task] = cluster.task_of_rank(distribute::rank());
    return Server(std::move(cluster), job, task, start_now);
}

Server Server::create_local_server(bool start_now) {
    auto s = std::make_unique<State>();
    s->cluster = ClusterSpec({{"localhost", {"localhost:0"}}});
    s->job = "localhost";
    s->local = true;
    Server server(std::move(s));
    if (start_now) server.start();
    return server;
}

Server::Server(Server&&) noexcept = default;
Server& Server::operator=(Server&&) noexcept = default;

Server::~Server() {
    if (!state_) return;
    State& s = *state_;
    if (s.observer >= 0) tapeflow::detail::remove_variable_observer(s.observer);
    State* self = &s;
    if (active.compare_exchange_strong(self, nullptr)) tapeflow::detail::set_remote_apply(nullptr);
    if (s.strategy && !s.strategy->is_ps() && !s.joined) {
        try {
            s.strategy->finish();
        } catch (const std::exception& e) {
            logging::warn(
                "Server /job:{}/task:{} could not finish cleanly: {}", s.job, s.task, e.what());
        }
    }
}

const ClusterSpec& Server::cluster() const {
    return state_->cluster;
}
const std::string& Server::job_name() const {
    return state_->job;
}
int Server::task_index() const {
    return state_->task;
}
std::string Server::target() const {
    return fmt::format(
        "mpi://rank:{}",
        state_->local ? distribute::rank() : state_->cluster.rank_of(state_->job, state_->task));
}
bool Server::is_chief() const {
    const State& s = *state_;
    const std::string chief_job = s.cluster.jobs.count("chief") != 0    ? "chief"
                                  : s.cluster.jobs.count("worker") != 0 ? "worker"
                                                                        : s.job;
    return s.job == chief_job && s.task == 0;
}
bool Server::is_ps() const {
    return state_->job == "ps";
}

void Server::start() {
    State& s = *state_;
    if (s.started) return;
    State* expected = nullptr;
    if (!active.compare_exchange_strong(expected, &s)) {
        throw errors::AlreadyExistsError(
            "Server: another tf::train::Server is running in this process (one task per process)");
    }
    s.started = true;
    if (s.cluster.jobs.count("ps") != 0) {
        try {
            s.strategy.emplace(s.cluster, s.job, s.task);
        } catch (...) {
            active.store(nullptr);
            throw;
        }
        State* self = &s;
        s.observer = tapeflow::detail::add_variable_observer(
            [self](Variable& created) { place(*self, created); });
        tapeflow::detail::set_remote_apply(&remote_apply);
    }
}

void Server::join() {
    State& s = *state_;
    if (!s.started) start();
    s.joined = true;
    if (!s.strategy) return;
    if (s.strategy->is_ps()) {
        serving = true;
        struct Reset {
            ~Reset() { serving = false; }
        } reset;
        s.strategy->run_server();
    } else {
        s.strategy->finish();
    }
}

distribute::ParameterServerStrategy* Server::strategy() {
    return state_->strategy ? &*state_->strategy : nullptr;
}

DeviceFunction replica_device_setter(ReplicaDeviceSetterOptions options) {
    int ps_tasks = options.ps_tasks;
    if (ps_tasks == 0 && options.cluster && options.cluster->jobs.count("ps") != 0)
        ps_tasks = options.cluster->num_tasks("ps");
    if (ps_tasks < 0) {
        throw errors::InvalidArgumentError(
            fmt::format("replica_device_setter: ps_tasks must be >= 0, got {}", ps_tasks));
    }
    // Both parsed now, so that a malformed name raises here and not at the first variable.
    const DeviceSpec ps_device = DeviceSpec::from_string(options.ps_device);
    const DeviceSpec worker_device = DeviceSpec::from_string(options.worker_device);
    auto next = std::make_shared<std::atomic<int>>(0);  // round robin, per device function
    return [=, strategy = std::move(options.ps_strategy)](const PlacementRequest& request) {
        if (ps_tasks == 0 || request.op_type.empty()) return worker_device.to_string();
        const int k = strategy ? strategy(request) : (*next)++ % ps_tasks;
        if (k < 0 || k >= ps_tasks) {
            throw errors::InvalidArgumentError(fmt::format(
                "replica_device_setter: ps_strategy put variable '{}' on ps task {}, but there "
                "are {}",
                request.name,
                k,
                ps_tasks));
        }
        DeviceSpec placed = ps_device;
        placed.task = k;
        return placed.to_string();
    };
}

DeviceFunction replica_device_setter(const ClusterSpec& cluster, std::string worker_device) {
    ReplicaDeviceSetterOptions options;
    options.cluster = cluster;
    options.worker_device = std::move(worker_device);
    return replica_device_setter(std::move(options));
}

}  // namespace tapeflow::train
