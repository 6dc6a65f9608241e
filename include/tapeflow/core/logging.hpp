// Logging (tf::logging): levelled messages to stderr, formatted with fmt. The initial level comes
// from TAPEFLOW_MIN_LOG_LEVEL, else TF_CPP_MIN_LOG_LEVEL (0-3). Nothing here aborts: fatal() logs
// and throws InternalError.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include <fmt/core.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/core/export.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow::logging {

enum Level : int { DEBUG = 10, INFO = 20, WARN = 30, ERROR = 40, FATAL = 50 };

/// Messages below `level` are dropped.
void set_verbosity(int level);
int get_verbosity();

/// Where messages go: by default one line on stderr, "I1129 20:16:31.123456 4242 tapeflow] message"
/// (TensorFlow's glog-style prefix with the pid). Pass nullptr to restore the default.
using Sink = void (*)(Level level, std::string_view message);
void set_sink(Sink sink);

/// Writes `message` at `level` if the verbosity allows it.
void log(Level level, std::string_view message);

template <class... Args>
void debug(fmt::format_string<Args...> format, Args&&... args) {
    if (get_verbosity() <= DEBUG) log(DEBUG, fmt::format(format, std::forward<Args>(args)...));
}

template <class... Args>
void info(fmt::format_string<Args...> format, Args&&... args) {
    if (get_verbosity() <= INFO) log(INFO, fmt::format(format, std::forward<Args>(args)...));
}

template <class... Args>
void warn(fmt::format_string<Args...> format, Args&&... args) {
    if (get_verbosity() <= WARN) log(WARN, fmt::format(format, std::forward<Args>(args)...));
}

template <class... Args>
void error(fmt::format_string<Args...> format, Args&&... args) {
    if (get_verbosity() <= ERROR) log(ERROR, fmt::format(format, std::forward<Args>(args)...));
}

/// Logs at FATAL and throws errors::InternalError with the message (it never aborts the process).
template <class... Args>
[[noreturn]] void fatal(fmt::format_string<Args...> format, Args&&... args) {
    std::string message = fmt::format(format, std::forward<Args>(args)...);
    log(FATAL, message);
    throw errors::InternalError(message);
}

}  // namespace tapeflow::logging

TAPEFLOW_API_END
