// Internal to Model.fit: Keras' per-epoch progress bar. On a terminal: "Epoch 3/10" then a bar
// redrawn in place ("12/45 ━━━━━━━━━━━━━━━━━━━━ 0s 5ms/step - accuracy: 0.91 - loss: 0.30");
// elsewhere (a pipe, a log file) one line per epoch, so logs stay readable.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

#include <tapeflow/keras/callbacks.hpp>

namespace tapeflow::keras::detail {

class ProgressBar {
public:
    /// verbose 0: prints nothing; 1: the bar on a terminal, one line per epoch otherwise; 2: one
    /// line per epoch. `steps`: batches per epoch when known.
    ProgressBar(int verbose,
                int64_t epoch,
                int64_t epochs,
                std::optional<int64_t> steps,
                std::FILE* out = stdout,
                std::optional<bool> terminal = {});
    /// True when the bar wants to be redrawn now (a terminal, at most 20 times a second).
    bool due() const;
    void update(int64_t step, const callbacks::Logs& logs);
    /// The epoch's last line (with the validation logs).
    void finish(int64_t steps, const callbacks::Logs& logs);
    /// The text of a line (without the carriage return), for tests.
    std::string render(int64_t step, const callbacks::Logs& logs, bool final) const;

private:
    int verbose_;
    int64_t epoch_, epochs_;
    std::optional<int64_t> steps_;
    std::FILE* out_;
    bool terminal_;
    std::chrono::steady_clock::time_point start_, last_draw_;
};

}  // namespace tapeflow::keras::detail
