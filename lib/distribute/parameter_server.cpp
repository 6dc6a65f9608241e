// ParameterServerStrategy: asynchronous ps/worker training over MPI point-to-point messages. A ps
// task owns every k-th variable and runs a receive loop (run_server) that applies pushed gradients
// with its optimizer in arrival order and answers pulls; workers send pushes without waiting and
// block only on pulls. Everything waits under NOTE [Deadlines] (transport.hpp): a dead worker makes
// its ps raise, a dead ps makes its workers raise, both with UnavailableError.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <thread>
#include <tuple>

#include <fmt/format.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/core/logging.hpp>
#include <tapeflow/ops/creation.hpp>

#include "distribute/transport.hpp"
#include "distribute/wire.hpp"
#include "train/remote_apply.hpp"

namespace tapeflow::distribute {
namespace {

// Message tags: a pair per strategy object, so that messages of a strategy created later (say, a
// worker's first pull) never reach a ps still serving an earlier one. Every process creates its
// strategies in the same order, so the k-th strategy uses the same pair everywhere.
constexpr int kTagBase = 7100;
constexpr int kTagGenerations = 8000;  // MPI guarantees tags up to 32767

std::pair<int, int> next_tags() {
    static std::atomic<int> generation{0};
    const int g = generation++ % kTagGenerations;
    return {kTagBase + 2 * g, kTagBase + 2 * g + 1};  // worker -> ps, ps -> worker
}

enum class Kind : uint8_t { push = 1, pull = 2, done = 3 };

// ---- a tiny binary encoding (both ends are the same build on the same kind of machine) ----

class Writer {
public:
    template <class T>
    void put(const T& value) {
        bytes_.append(reinterpret_cast<const char*>(&value), sizeof(T));
    }
    void put_string(std::string_view s) {
        put<uint64_t>(s.size());
        bytes_.append(s);
    }
    void put_tensor(const Tensor& t) {
        const Tensor host = detail::on_host(t, t.dtype());
        put_string(detail::encode_spec(t.shape(), t.dtype()));
        put_string(std::string_view(static_cast<const char*>(host.raw_data()), host.nbytes()));
    }
    std::string take() { return std::move(bytes_); }

private:
    std::string bytes_;
};

class Reader {
public:
    explicit Reader(std::string_view bytes) : bytes_(bytes) {}
    template <class T>
    T get() {
        T value;
        std::memcpy(&value, take(sizeof(T)).data(), sizeof(T));
        return value;
    }
    std::string_view get_string() { return take(get<uint64_t>()); }
    Tensor get_tensor() {
        const auto [shape, dtype] = detail::decode_spec(get_string());
        const std::string_view data = get_string();
        if (data.size() != static_cast<std::size_t>(shape.num_elements()) * dtype_size(dtype)) {
            throw errors::InternalError(
                "a malformed parameter-server message arrived; this is a tapeflow bug");
        }
        return detail::tensor_from_bytes(data.data(), shape, dtype);
    }

private:
    std::string_view take(std::size_t n) {
        if (n > bytes_.size() - position_) {
            throw errors::InternalError(
                "a truncated parameter-server message arrived; this is a tapeflow bug");
        }
        const std::string_view out = bytes_.substr(position_, n);
        position_ += n;
        return out;
    }
    std::string_view bytes_;
    std::size_t position_ = 0;
};

using Clock = std::chrono::steady_clock;

}  // namespace

struct ParameterServerStrategy::State {
    int num_ps = 1;
    int num_workers = 1;
    bool ps = false;
    int task = 0;
    int64_t next_index = 0;
    std::vector<Variable> vars;           // by index (on a ps: the master copy of its own)
    std::vector<int> owner;               // by index: the ps task holding it
    std::map<int64_t, int64_t> index_of;  // variable id -> index
    std::map<std::string, train::Optimizer*> optimizers;  // registered, by name
    std::vector<std::unique_ptr<detail::Pending>> sends;  // in flight
    bool finished = false;
    int tag_request = 0;
    int tag_reply = 0;

    int ps_of(int64_t index) const { return owner[static_cast<std::size_t>(index)]; }
    int rank_of_worker(int w) const { return num_ps + w; }

    void drop_completed_sends() {
        std::erase_if(sends, [](const std::unique_ptr<detail::Pending>& p) { return p->test(); });
    }
    void wait_sends(std::string_view what) {
        for (auto& p : sends)
            detail::wait(*p, what);
        sends.clear();
    }
    void send(int dest, int tag, std::string bytes) {
        drop_completed_sends();
        sends.push_back(detail::start_send(dest, tag, std::move(bytes)));
    }

    int64_t index(const Variable& v, std::string_view what) const {
        auto it = v.defined() ? index_of.find(v.id()) : index_of.end();
        if (it == index_of.end()) {
            throw errors::InvalidArgumentError(
                fmt::format("{}: variable '{}' was not created by this strategy's create_variable",
                            what,
                            v.defined() ? v.name() : std::string("<empty handle>")));
        }
        return it->second;
    }

    // ---- ps side ----

    void apply_push(Reader& in) {
        const std::string name(in.get_string());
        auto it = optimizers.find(name);
        train::Optimizer* optimizer =
            it != optimizers.end() ? it->second : tapeflow::detail::find_optimizer(name);
        if (optimizer == nullptr) {
            throw errors::FailedPreconditionError(
                fmt::format("ps task {} has no optimizer named '{}': construct the same "
                            "optimizers on every process (or call "
                            "strategy.register_optimizer(opt)) before run_server()",
                            task,
                            name));
        }
        const auto step_index = in.get<int64_t>();  // -1: no global step for this ps
        const auto count = in.get<uint32_t>();
        std::vector<train::GradAndVar> pairs;
        for (uint32_t i = 0; i < count; ++i) {
            const auto k = in.get<int64_t>();
            const bool sparse = in.get<uint8_t>() != 0;
            Gradient g;
            if (sparse) {
                Tensor values = in.get_tensor();
                Tensor indices = in.get_tensor();
                g = IndexedSlices{values, indices, vars.at(static_cast<std::size_t>(k)).shape()};
            } else {
                g = in.get_tensor();
            }
            pairs.push_back({g, vars.at(static_cast<std::size_t>(k))});
        }
        std::optional<Variable> global_step;
        if (step_index >= 0) global_step = vars.at(static_cast<std::size_t>(step_index));
        if (!pairs.empty()) {
            optimizer->apply_gradients(pairs, global_step);
        } else if (global_step) {  // its gradients all went to other ps tasks
            global_step->assign_add(constant(int64_t{1}, global_step->dtype()));
        }
    }

    std::string answer_pull(Reader& in,
                            const std::optional<std::pair<errors::Code, std::string>>& error) {
        Writer out;
        if (error) {
            out.put<uint8_t>(1);
            out.put<int32_t>(static_cast<int32_t>(error->first));
            out.put_string(error->second);
            return out.take();
        }
        const auto count = in.get<uint32_t>();
        std::vector<int64_t> wanted;
        for (uint32_t i = 0; i < count; ++i) {
            const auto k = in.get<int64_t>();
            if (k < 0 || k >= static_cast<int64_t>(vars.size()) || ps_of(k) != task) {
                out.put<uint8_t>(1);
                out.put<int32_t>(static_cast<int32_t>(errors::Code::not_found));
                out.put_string(
                    fmt::format("ps task {} holds no variable number {} (it has created {})",
                                task,
                                k,
                                vars.size()));
                return out.take();
            }
            wanted.push_back(k);
        }
        out.put<uint8_t>(0);
        out.put<uint32_t>(count);
        for (int64_t k : wanted)
            out.put_tensor(vars[static_cast<std::size_t>(k)].value());
        return out.take();
    }

    // ---- worker side ----

    std::string await_reply(int ps_task) {
        std::optional<detail::Message> reply;
        detail::wait_until(
            [&] {
                reply = detail::try_receive(ps_task, tag_reply);
                return reply.has_value();
            },
            fmt::format("worker {}: a pull from ps task {}", task, ps_task));
        return std::move(reply->bytes);
    }
};

ParameterServerStrategy::ParameterServerStrategy(ClusterSpec cluster,
                                                 std::string job_name,
                                                 int task_index)
    : state_(std::make_unique<State>()) {
    for (const auto& [job, tasks] : cluster.jobs) {
        if (job != "ps" && job != "worker") {
            throw errors::InvalidArgumentError(
                fmt::format("ParameterServerStrategy: unknown job '{}' in the ClusterSpec (jobs "
                            "are \"ps\" and \"worker\")",
                            job));
        }
    }
    auto count = [&](const char* job) {
        auto it = cluster.jobs.find(job);
        return it == cluster.jobs.end() ? 0 : static_cast<int>(it->second.size());
    };
    State& s = *state_;
    std::tie(s.tag_request, s.tag_reply) = next_tags();
    s.num_ps = count("ps");
    s.num_workers = count("worker");
    if (s.num_ps < 1 || s.num_workers < 1) {
        throw errors::InvalidArgumentError(fmt::format(
            "ParameterServerStrategy needs at least one ps and one worker task, got {} and {}",
            s.num_ps,
            s.num_workers));
    }
    if (job_name != "ps" && job_name != "worker") {
        throw errors::InvalidArgumentError(fmt::format(
            "ParameterServerStrategy: job_name must be \"ps\" or \"worker\", got \"{}\"",
            job_name));
    }
    s.ps = job_name == "ps";
    const int tasks = s.ps ? s.num_ps : s.num_workers;
    if (task_index < 0 || task_index >= tasks) {
        throw errors::InvalidArgumentError(fmt::format(
            "ParameterServerStrategy: task_index {} out of range for job \"{}\" with {} tasks",
            task_index,
            job_name,
            tasks));
    }
    s.task = task_index;
    if (s.num_ps + s.num_workers != size()) {
        throw errors::InvalidArgumentError(
            fmt::format("ParameterServerStrategy: the cluster has {} ps and {} worker tasks but {} "
                        "processes were launched; "
                        "launch with mpirun -np {}",
                        s.num_ps,
                        s.num_workers,
                        size(),
                        s.num_ps + s.num_workers));
    }
    detail::set_chief_rank(s.num_ps);  // worker task 0 writes the checkpoints
    const int expected = s.ps ? task_index : s.num_ps + task_index;
    if (expected != rank()) {
        throw errors::InvalidArgumentError(
            fmt::format("ParameterServerStrategy: task {}:{} is rank {} (ps tasks first, then "
                        "workers), but this process is "
                        "rank {}",
                        job_name,
                        task_index,
                        expected,
                        rank()));
    }
}

ParameterServerStrategy ParameterServerStrategy::from_mpi(int num_ps) {
    const int n = size();
    if (num_ps < 1 || num_ps >= n) {
        throw errors::InvalidArgumentError(
            fmt::format("ParameterServerStrategy::from_mpi: num_ps must be in [1, {}) with {} "
                        "processes, got {} (launch at "
                        "least num_ps + 1 processes with mpirun)",
                        n,
                        n,
                        num_ps));
    }
    ClusterSpec cluster;
    for (int r = 0; r < n; ++r)
        cluster.jobs[r < num_ps ? "ps" : "worker"].push_back(fmt::format("rank:{}", r));
    const int me = rank();
    return ParameterServerStrategy(
        cluster, me < num_ps ? "ps" : "worker", me < num_ps ? me : me - num_ps);
}

ParameterServerStrategy::ParameterServerStrategy(ParameterServerStrategy&&) noexcept = default;
ParameterServerStrategy& ParameterServerStrategy::operator=(ParameterServerStrategy&&) noexcept =
    default;

ParameterServerStrategy::~ParameterServerStrategy() {
    if (!state_ || state_->ps || state_->finished) return;
    try {
        finish();
    } catch (const std::exception& e) {
        logging::warn("ParameterServerStrategy: worker {} could not finish cleanly: {}",
                      state_->task,
                      e.what());
    }
}

bool ParameterServerStrategy::is_chief() const {
    return !state_->ps && state_->task == 0;
}
bool ParameterServerStrategy::is_ps() const {
    return state_->ps;
}
int ParameterServerStrategy::num_ps() const {
    return state_->num_ps;
}
int ParameterServerStrategy::num_workers() const {
    return state_->num_workers;
}
int ParameterServerStrategy::task_index() const {
    return state_->task;
}

Variable ParameterServerStrategy::create_variable(const Tensor& initial_value,
                                                  VariableOptions options) {
    State& s = *state_;
    Variable v(initial_value, std::move(options));
    const int64_t k = s.next_index++;
    s.vars.push_back(v);
    s.owner.push_back(static_cast<int>(k % s.num_ps));
    s.index_of[v.id()] = k;
    if (!s.ps) pull({v});
    return v;
}

void ParameterServerStrategy::add_variable(Variable variable, int ps_task) {
    State& s = *state_;
    if (!variable.defined())
        throw errors::InvalidArgumentError("ParameterServerStrategy::add_variable: empty handle");
    if (ps_task < 0 || ps_task >= s.num_ps) {
        throw errors::InvalidArgumentError(
            fmt::format("variable '{}' is placed on ps task {}, but the cluster has {} ps task(s)",
                        variable.name(),
                        ps_task,
                        s.num_ps));
    }
    if (s.index_of.count(variable.id()) != 0) return;
    const int64_t k = s.next_index++;
    s.vars.push_back(variable);
    s.owner.push_back(ps_task);
    s.index_of[variable.id()] = k;
    if (!s.ps) pull({variable});
}

bool ParameterServerStrategy::holds(const Variable& variable) const {
    return variable.defined() && state_->index_of.count(variable.id()) != 0;
}

void ParameterServerStrategy::register_optimizer(train::Optimizer& optimizer) {
    state_->optimizers[optimizer.name()] = &optimizer;
}

void ParameterServerStrategy::run_server() {
    State& s = *state_;
    if (!s.ps) {
        throw errors::FailedPreconditionError(
            fmt::format("run_server() is for ps tasks; this process is worker task {}", s.task));
    }
    std::vector<bool> done(static_cast<std::size_t>(s.num_workers), false);
    std::vector<Clock::time_point> heard(static_cast<std::size_t>(s.num_workers), Clock::now());
    std::vector<std::optional<std::pair<errors::Code, std::string>>> failed(
        static_cast<std::size_t>(s.num_workers));
    int remaining = s.num_workers;
    int idle = 0;
    while (remaining > 0) {
        std::optional<detail::Message> m = detail::try_receive(-1, s.tag_request);
        if (!m) {
            // Idle: back off from spinning to short sleeps, leaving the cores to the workers.
            if (++idle > 64)
                std::this_thread::sleep_for(std::chrono::microseconds(idle > 1000 ? 1000 : 50));
            const auto now = Clock::now();
            const double limit = timeout_seconds();
            for (int w = 0; w < s.num_workers; ++w) {
                const double silent =
                    std::chrono::duration<double>(now - heard[static_cast<std::size_t>(w)]).count();
                if (!done[static_cast<std::size_t>(w)] && silent > limit) {
                    const std::string message = fmt::format(
                        "ps task {}: worker task {} (rank {}) has sent nothing for {:.0f} s and "
                        "has not finished: "
                        "it probably died (timeout: TAPEFLOW_DIST_TIMEOUT_S = {} s)",
                        s.task,
                        w,
                        s.rank_of_worker(w),
                        silent,
                        limit);
                    detail::mark_broken(message);
                    throw errors::UnavailableError(message);
                }
            }
            s.drop_completed_sends();
            continue;
        }
        idle = 0;
        const int w = m->source - s.num_ps;
        if (w < 0 || w >= s.num_workers) continue;  // not a worker: ignore
        heard[static_cast<std::size_t>(w)] = Clock::now();
        Reader in(m->bytes);
        switch (static_cast<Kind>(in.get<uint8_t>())) {
            case Kind::push:
                try {
                    s.apply_push(in);
                } catch (const errors::OpError& e) {  // reported to the worker at its next pull
                    if (!failed[static_cast<std::size_t>(w)])
                        failed[static_cast<std::size_t>(w)] = {{e.code(), e.what()}};
                }
                break;
            case Kind::pull:
                s.send(
                    m->source, s.tag_reply, s.answer_pull(in, failed[static_cast<std::size_t>(w)]));
                failed[static_cast<std::size_t>(w)].reset();
                break;
            case Kind::done:
                if (!done[static_cast<std::size_t>(w)]) --remaining;
                done[static_cast<std::size_t>(w)] = true;
                break;
        }
    }
    s.wait_sends(fmt::format("ps task {}: the last replies", s.task));
}

void ParameterServerStrategy::apply_gradients(train::Optimizer& optimizer,
                                              const std::vector<train::GradAndVar>& grads_and_vars,
                                              std::optional<Variable> global_step) {
    State& s = *state_;
    if (s.ps)
        throw errors::FailedPreconditionError(
            "apply_gradients is for workers; ps tasks call run_server()");
    std::vector<Writer> per_ps(static_cast<std::size_t>(s.num_ps));
    std::vector<uint32_t> counts(static_cast<std::size_t>(s.num_ps), 0);
    std::vector<std::vector<const train::GradAndVar*>> groups(static_cast<std::size_t>(s.num_ps));
    for (const train::GradAndVar& p : grads_and_vars) {
        const int64_t k = s.index(p.variable, "ParameterServerStrategy::apply_gradients");
        if (p.gradient.defined()) groups[static_cast<std::size_t>(s.ps_of(k))].push_back(&p);
    }
    const int64_t step_index =
        global_step ? s.index(*global_step, "ParameterServerStrategy::apply_gradients") : -1;
    const int step_ps = step_index >= 0 ? s.ps_of(step_index) : -1;
    const bool any =
        std::any_of(groups.begin(), groups.end(), [](const auto& group) { return !group.empty(); });
    for (int ps = 0; any && ps < s.num_ps; ++ps) {
        const auto& group = groups[static_cast<std::size_t>(ps)];
        if (group.empty() && ps != step_ps) continue;
        Writer out;
        out.put<uint8_t>(static_cast<uint8_t>(Kind::push));
        out.put_string(optimizer.name());
        out.put<int64_t>(ps == step_ps ? step_index : -1);
        out.put<uint32_t>(static_cast<uint32_t>(group.size()));
        for (const train::GradAndVar* p : group) {
            out.put<int64_t>(s.index(p->variable, "apply_gradients"));
            out.put<uint8_t>(p->gradient.is_sparse() ? 1 : 0);
            if (p->gradient.is_sparse()) {
                out.put_tensor(p->gradient.sparse().values);
                out.put_tensor(p->gradient.sparse().indices);
            } else {
                out.put_tensor(p->gradient.dense());
            }
        }
        s.send(ps, s.tag_request, out.take());
    }
    if (!any && !grads_and_vars.empty()) {
        std::string names;
        for (const train::GradAndVar& p : grads_and_vars)
            names += fmt::format("{}'{}'", names.empty() ? "" : ", ", p.variable.name());
        throw errors::InvalidArgumentError(
            fmt::format("No gradients provided for any variable: [{}].", names));
    }
}

void ParameterServerStrategy::pull(const std::vector<Variable>& variables) {
    State& s = *state_;
    if (s.ps)
        throw errors::FailedPreconditionError("pull is for workers; ps tasks hold the variables");
    std::vector<std::vector<int64_t>> wanted(static_cast<std::size_t>(s.num_ps));
    for (const Variable& v : variables) {
        const int64_t k = s.index(v, "ParameterServerStrategy::pull");
        wanted[static_cast<std::size_t>(s.ps_of(k))].push_back(k);
    }
    for (int ps = 0; ps < s.num_ps; ++ps) {
        const auto& ks = wanted[static_cast<std::size_t>(ps)];
        if (ks.empty()) continue;
        Writer out;
        out.put<uint8_t>(static_cast<uint8_t>(Kind::pull));
        out.put<uint32_t>(static_cast<uint32_t>(ks.size()));
        for (int64_t k : ks)
            out.put<int64_t>(k);
        s.send(ps, s.tag_request, out.take());
    }
    for (int ps = 0; ps < s.num_ps; ++ps) {
        const auto& ks = wanted[static_cast<std::size_t>(ps)];
        if (ks.empty()) continue;
        const std::string reply = s.await_reply(ps);
        Reader in(reply);
        if (in.get<uint8_t>() != 0) {
            const auto code = static_cast<errors::Code>(in.get<int32_t>());
            detail::throw_error(code, std::string(in.get_string()));
        }
        const auto count = in.get<uint32_t>();
        for (uint32_t i = 0; i < count; ++i) {
            Variable v = s.vars[static_cast<std::size_t>(ks[i])];
            const Tensor value = in.get_tensor();
            if (value.shape() != v.shape() || value.dtype() != v.dtype()) {
                throw errors::InvalidArgumentError(
                    fmt::format("pull: ps task {} holds variable {} as {}, this worker as {} "
                                "(create the variables in the same "
                                "order on every process)",
                                ps,
                                ks[i],
                                detail::describe(value.shape(), value.dtype()),
                                detail::describe(v.shape(), v.dtype())));
            }
            v.assign(value.to(v.device()));
        }
    }
}

void ParameterServerStrategy::finish() {
    State& s = *state_;
    if (s.ps || s.finished) return;
    s.finished = true;
    for (int ps = 0; ps < s.num_ps; ++ps) {
        Writer out;
        out.put<uint8_t>(static_cast<uint8_t>(Kind::done));
        s.send(ps, s.tag_request, out.take());
    }
    s.wait_sends(fmt::format("worker {}: the last pushes", s.task));
}

}  // namespace tapeflow::distribute
