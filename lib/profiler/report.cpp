// build_profile() and Profile's table and JSON. Self times of all ops add up to the host time spent
// in ops (a nested op's time is its parent's minus), so the table's self % column sums to 100.
#include "profiler/report.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace tapeflow::profiler {
namespace {

void add(OpStats& row, const detail::Event& e) {
    row.count += 1;
    row.total_cpu_us += static_cast<double>(e.end_ns - e.start_ns) / 1000.0;
    row.self_cpu_us += static_cast<double>(e.self_ns) / 1000.0;
    row.gpu_us += e.gpu_us;
    if (e.flops >= 0) {
        row.flops += e.flops;
        row.flops_known = true;
    }
    row.output_bytes += e.output_bytes;
    row.peak_bytes = std::max(row.peak_bytes, e.mem_bytes);
}

std::vector<OpStats> sorted(std::map<std::string, OpStats, std::less<>>& rows) {
    std::vector<OpStats> out;
    out.reserve(rows.size());
    for (auto& [name, row] : rows)
        out.push_back(std::move(row));
    std::stable_sort(out.begin(), out.end(), [](const OpStats& a, const OpStats& b) {
        return a.self_cpu_us > b.self_cpu_us;
    });
    return out;
}

std::string time_str(double us) {
    if (us >= 1e6) return fmt::format("{:.2f} s", us / 1e6);
    if (us >= 1e3) return fmt::format("{:.2f} ms", us / 1e3);
    return fmt::format("{:.1f} us", us);
}

std::string bytes_str(int64_t bytes) {
    const double b = static_cast<double>(bytes);
    if (b >= 1024.0 * 1024 * 1024) return fmt::format("{:.2f} GiB", b / (1024.0 * 1024 * 1024));
    if (b >= 1024.0 * 1024) return fmt::format("{:.2f} MiB", b / (1024.0 * 1024));
    if (b >= 1024.0) return fmt::format("{:.1f} KiB", b / 1024.0);
    return fmt::format("{} B", bytes);
}

std::string flops_str(const OpStats& row) {
    if (!row.flops_known) return "-";
    const double f = row.flops;
    if (f >= 1e12) return fmt::format("{:.2f} T", f / 1e12);
    if (f >= 1e9) return fmt::format("{:.2f} G", f / 1e9);
    if (f >= 1e6) return fmt::format("{:.2f} M", f / 1e6);
    if (f >= 1e3) return fmt::format("{:.2f} k", f / 1e3);
    return fmt::format("{:.0f}", f);
}

nlohmann::json row_json(const OpStats& r) {
    return {{"name", r.name},
            {"count", r.count},
            {"total_cpu_us", r.total_cpu_us},
            {"self_cpu_us", r.self_cpu_us},
            {"gpu_us", r.gpu_us},
            {"flops", r.flops_known ? nlohmann::json(r.flops) : nlohmann::json(nullptr)},
            {"output_bytes", r.output_bytes},
            {"peak_bytes", r.peak_bytes}};
}

}  // namespace

namespace detail {

Profile build_profile(const SessionResult& result) {
    Profile p;
    p.wall_us = static_cast<double>(result.end_ns - result.start_ns) / 1000.0;
    std::map<std::string, OpStats, std::less<>> by_type;
    std::map<std::string, OpStats, std::less<>> by_name;
    for (const std::unique_ptr<ThreadTrack>& t : result.tracks) {
        for (const Event& e : t->events) {
            if (e.kind != EventKind::op) continue;
            p.op_count += 1;
            p.peak_bytes = std::max(p.peak_bytes, e.mem_bytes);
            OpStats& type_row = by_type[std::string(e.op_type)];
            type_row.name = std::string(e.op_type);
            add(type_row, e);
            OpStats& name_row = by_name[e.name];
            name_row.name = e.name;
            add(name_row, e);
        }
    }
    p.by_op_type = sorted(by_type);
    p.by_op_name = sorted(by_name);
    return p;
}

}  // namespace detail

std::string Profile::table(GroupBy group, std::size_t max_rows) const {
    const std::vector<OpStats>& rows = group == GroupBy::op_type ? by_op_type : by_op_name;
    double self_sum = 0, gpu_sum = 0, flops_sum = 0;
    int64_t count_sum = 0, bytes_sum = 0;
    bool any_flops = false;
    std::size_t width = 7;  // "op type" / "op name"
    for (const OpStats& r : rows) {
        self_sum += r.self_cpu_us;
        gpu_sum += r.gpu_us;
        flops_sum += r.flops;
        any_flops = any_flops || r.flops_known;
        count_sum += r.count;
        bytes_sum += r.output_bytes;
    }
    const std::size_t shown = max_rows == 0 ? rows.size() : std::min(max_rows, rows.size());
    for (std::size_t i = 0; i < shown; ++i)
        width = std::max(width, rows[i].name.size());
    std::string out =
        fmt::format("{} ops in {} of op time (session wall time {}), peak tensor memory {}\n",
                    op_count,
                    time_str(self_sum),
                    time_str(wall_us),
                    bytes_str(peak_bytes));
    const auto line = [&](std::string_view name,
                          std::string_view count,
                          std::string_view total,
                          std::string_view self,
                          std::string_view share,
                          std::string_view gpu,
                          std::string_view flops,
                          std::string_view bytes,
                          std::string_view peak) {
        out += fmt::format("{:<{}}  {:>7}  {:>10}  {:>10}  {:>6}  {:>10}  {:>9}  {:>10}  {:>10}\n",
                           name,
                           width,
                           count,
                           total,
                           self,
                           share,
                           gpu,
                           flops,
                           bytes,
                           peak);
    };
    line(group == GroupBy::op_type ? "op type" : "op name",
         "count",
         "total CPU",
         "self CPU",
         "self%",
         "GPU",
         "FLOPs",
         "output",
         "peak mem");
    for (std::size_t i = 0; i < shown; ++i) {
        const OpStats& r = rows[i];
        const double share = self_sum > 0 ? 100.0 * r.self_cpu_us / self_sum : 0.0;
        line(r.name,
             fmt::format("{}", r.count),
             time_str(r.total_cpu_us),
             time_str(r.self_cpu_us),
             fmt::format("{:.1f}%", share),
             r.gpu_us > 0 ? time_str(r.gpu_us) : "-",
             flops_str(r),
             bytes_str(r.output_bytes),
             bytes_str(r.peak_bytes));
    }
    if (shown < rows.size()) out += fmt::format("... {} more rows\n", rows.size() - shown);
    OpStats total;
    total.flops = flops_sum;
    total.flops_known = any_flops;
    line("total",
         fmt::format("{}", count_sum),
         time_str(self_sum),
         time_str(self_sum),
         "100.0%",
         gpu_sum > 0 ? time_str(gpu_sum) : "-",
         flops_str(total),
         bytes_str(bytes_sum),
         bytes_str(peak_bytes));
    return out;
}

std::string Profile::json() const {
    nlohmann::json type_rows = nlohmann::json::array();
    nlohmann::json name_rows = nlohmann::json::array();
    for (const OpStats& r : by_op_type)
        type_rows.push_back(row_json(r));
    for (const OpStats& r : by_op_name)
        name_rows.push_back(row_json(r));
    const nlohmann::json j = {{"wall_us", wall_us},
                              {"op_count", op_count},
                              {"peak_bytes", peak_bytes},
                              {"by_op_type", std::move(type_rows)},
                              {"by_op_name", std::move(name_rows)}};
    return j.dump(2);
}

}  // namespace tapeflow::profiler
