// tf.train.ClusterSpec's queries, TF's ClusterDef text, and the task <-> MPI rank mapping (the
// "ps" job's tasks first, then the other jobs' in name order).
#include <fmt/format.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/distribute.hpp>

namespace tapeflow::distribute {
namespace {

// The jobs in rank order.
std::vector<std::string> rank_order(const ClusterSpec& c) {
    std::vector<std::string> order;
    if (c.jobs.count("ps") != 0) order.push_back("ps");
    for (const auto& [job, tasks] : c.jobs)
        if (job != "ps") order.push_back(job);
    return order;
}

const std::vector<std::string>& tasks_of(const ClusterSpec& c, const std::string& job) {
    auto it = c.jobs.find(job);
    if (it == c.jobs.end())
        throw errors::InvalidArgumentError(fmt::format("No such job in cluster: '{}'", job));
    return it->second;
}

// Python's repr of a string, as TF's messages quote names.
std::string quoted(const std::string& s) {
    std::string out = "\"";
    for (char ch : s) {
        if (ch == '"' || ch == '\\') out += '\\';
        out += ch;
    }
    return out + '"';
}

}  // namespace

ClusterSpec::ClusterSpec(
    std::initializer_list<std::pair<std::string, std::vector<std::string>>> jobs_) {
    for (const auto& [job, tasks] : jobs_) {
        if (!jobs.emplace(job, tasks).second) {
            throw errors::InvalidArgumentError(
                fmt::format("ClusterSpec: job '{}' is given twice", job));
        }
    }
    validate();
}

void ClusterSpec::validate() const {
    for (const auto& [job, tasks] : jobs) {
        if (job.empty() || job.find_first_of("/: ") != std::string::npos) {
            throw errors::InvalidArgumentError(fmt::format(
                "ClusterSpec: job name '{}' is not a valid job name (no '/', ':' or spaces)", job));
        }
    }
}

std::vector<std::string> ClusterSpec::job_names() const {
    std::vector<std::string> names;
    for (const auto& [job, tasks] : jobs)
        names.push_back(job);
    return names;
}

int ClusterSpec::num_tasks(const std::string& job) const {
    return static_cast<int>(tasks_of(*this, job).size());
}

std::vector<int> ClusterSpec::task_indices(const std::string& job) const {
    std::vector<int> out(tasks_of(*this, job).size());
    for (std::size_t i = 0; i < out.size(); ++i)
        out[i] = static_cast<int>(i);
    return out;
}

std::string ClusterSpec::task_address(const std::string& job, int task_index) const {
    const auto& tasks = tasks_of(*this, job);
    if (task_index < 0 || task_index >= static_cast<int>(tasks.size())) {
        throw errors::InvalidArgumentError(
            fmt::format("No task with index {} in job '{}'", task_index, job));
    }
    return tasks[static_cast<std::size_t>(task_index)];
}

std::vector<std::string> ClusterSpec::job_tasks(const std::string& job) const {
    return tasks_of(*this, job);
}

std::string ClusterSpec::as_cluster_def() const {
    std::string out;
    for (const auto& [job, tasks] : jobs) {
        out += fmt::format("job {{\n  name: {}\n", quoted(job));
        for (std::size_t i = 0; i < tasks.size(); ++i)
            out +=
                fmt::format("  tasks {{\n    key: {}\n    value: {}\n  }}\n", i, quoted(tasks[i]));
        out += "}\n";
    }
    return out;
}

int ClusterSpec::num_processes() const {
    int n = 0;
    for (const auto& [job, tasks] : jobs)
        n += static_cast<int>(tasks.size());
    return n;
}

int ClusterSpec::rank_of(const std::string& job, int task_index) const {
    task_address(job, task_index);  // raises for an unknown job or task
    int rank = 0;
    for (const std::string& j : rank_order(*this)) {
        if (j == job) return rank + task_index;
        rank += num_tasks(j);
    }
    return rank;  // unreachable: task_address found the job
}

std::pair<std::string, int> ClusterSpec::task_of_rank(int rank) const {
    int first = 0;
    for (const std::string& j : rank_order(*this)) {
        const int n = num_tasks(j);
        if (rank >= first && rank < first + n) return {j, rank - first};
        first += n;
    }
    throw errors::InvalidArgumentError(fmt::format(
        "rank {} is not a task of the cluster: it has {} tasks", rank, num_processes()));
}

}  // namespace tapeflow::distribute
