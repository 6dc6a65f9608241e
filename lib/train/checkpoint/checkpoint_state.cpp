// Reading and writing the "checkpoint" state file (TensorFlow's CheckpointState text proto).
#include "train/checkpoint/checkpoint_state.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include <tapeflow/core/error.hpp>

#include "io/file_util.hpp"

namespace tapeflow::train::ckpt {
namespace {

namespace fs = std::filesystem;

std::string quote(const std::string& s) {
    std::string out = "\"";
    for (const char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

// The value of `key: "value"`, unescaped; nullopt when the line is not of that form.
std::optional<std::string> unquote(const std::string& line, std::size_t from) {
    const std::size_t open = line.find('"', from);
    const std::size_t close = line.rfind('"');
    if (open == std::string::npos || close <= open) return std::nullopt;
    std::string out;
    for (std::size_t i = open + 1; i < close; ++i) {
        if (line[i] == '\\' && i + 1 < close) ++i;
        out += line[i];
    }
    return out;
}

std::string relative_to(const std::string& dir, const std::string& path) {
    return prefix_dir(path) == dir ? fs::path(path).filename().string() : path;
}

std::string resolve(const std::string& dir, const std::string& path) {
    if (fs::path(path).is_absolute() || dir.empty()) return path;
    return (fs::path(dir) / path).string();
}

}  // namespace

std::string prefix_dir(const std::string& prefix) {
    return fs::path(prefix).parent_path().string();
}

std::optional<CheckpointState> read_checkpoint_state(const std::string& dir) {
    const std::string file = resolve(dir, "checkpoint");
    std::ifstream in(file);
    if (!in) return std::nullopt;
    CheckpointState state;
    std::string line;
    int lineno = 0;
    while (std::getline(in, line)) {
        ++lineno;
        const std::size_t start = line.find_first_not_of(" \t");
        if (start == std::string::npos || line[start] == '#') continue;
        const std::string_view rest(line.c_str() + start);
        const bool latest = rest.starts_with("model_checkpoint_path:");
        const bool all = rest.starts_with("all_model_checkpoint_paths:");
        const bool stamp = rest.starts_with("all_model_checkpoint_timestamps:");
        const bool preserved = rest.starts_with("last_preserved_timestamp:");
        if (stamp || preserved) {
            const std::string number(rest.substr(rest.find(':') + 1));
            char* end = nullptr;
            const double t = std::strtod(number.c_str(), &end);
            if (end == number.c_str()) {
                throw errors::DataLossError(fmt::format(
                    "Corrupt checkpoint state file {}: line {} has no number", file, lineno));
            }
            if (stamp) {
                state.all_model_checkpoint_timestamps.push_back(t);
            } else {
                state.last_preserved_timestamp = t;
            }
            continue;
        }
        if (!latest && !all) continue;  // fields this reader does not know are ignored
        const std::optional<std::string> value = unquote(line, start);
        if (!value) {
            throw errors::DataLossError(fmt::format(
                "Corrupt checkpoint state file {}: line {} is not key: \"value\"", file, lineno));
        }
        if (latest) {
            state.model_checkpoint_path = resolve(dir, *value);
        } else {
            state.all_model_checkpoint_paths.push_back(resolve(dir, *value));
        }
    }
    if (state.model_checkpoint_path.empty()) {
        throw errors::DataLossError(
            fmt::format("Corrupt checkpoint state file {}: no model_checkpoint_path", file));
    }
    return state;
}

void write_checkpoint_state(const std::string& dir,
                            const std::string& latest,
                            const std::vector<std::string>& all,
                            const std::vector<double>& all_timestamps,
                            std::optional<double> last_preserved_timestamp) {
    std::string text = fmt::format("model_checkpoint_path: {}\n", quote(relative_to(dir, latest)));
    for (const std::string& p : all)
        text += fmt::format("all_model_checkpoint_paths: {}\n", quote(relative_to(dir, p)));
    // Text format prints doubles in their shortest round-trip form, as fmt's {} does.
    for (const double t : all_timestamps)
        text += fmt::format("all_model_checkpoint_timestamps: {}\n", t);
    if (last_preserved_timestamp)
        text += fmt::format("last_preserved_timestamp: {}\n", *last_preserved_timestamp);
    io::write_file_atomically(resolve(dir, "checkpoint"), text);
}

}  // namespace tapeflow::train::ckpt
