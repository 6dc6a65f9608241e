// Keras' progress bar (keras.utils.Progbar's look): a 20-cell bar of "━", the step time, then
// " - name: value" for each log, sorted by name as Keras prints them.
#include "keras/progress_bar.hpp"

#include <cmath>

#include <fmt/format.h>
#include <unistd.h>

namespace tapeflow::keras::detail {

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kBarWidth = 20;
constexpr double kRedrawSecs = 0.05;

std::string duration_text(double seconds) {
    if (seconds >= 3600)
        return fmt::format("{}:{:02}:{:02}",
                           int64_t(seconds) / 3600,
                           (int64_t(seconds) / 60) % 60,
                           int64_t(seconds) % 60);
    if (seconds >= 60) return fmt::format("{}:{:02}", int64_t(seconds) / 60, int64_t(seconds) % 60);
    return fmt::format("{}s", static_cast<int64_t>(std::lround(seconds)));
}

std::string per_step_text(double seconds) {
    if (seconds >= 1) return fmt::format("{:.0f}s/step", seconds);
    if (seconds >= 1e-3) return fmt::format("{:.0f}ms/step", seconds * 1e3);
    return fmt::format("{:.0f}us/step", seconds * 1e6);
}

}  // namespace

ProgressBar::ProgressBar(int verbose,
                         int64_t epoch,
                         int64_t epochs,
                         std::optional<int64_t> steps,
                         std::FILE* out,
                         std::optional<bool> terminal)
    : verbose_(verbose),
      epoch_(epoch),
      epochs_(epochs),
      steps_(steps),
      out_(out),
      terminal_(terminal.value_or(::isatty(::fileno(out)) != 0)),
      start_(Clock::now()),
      last_draw_(start_) {
    if (verbose_ == 1 && terminal_) {
        fmt::print(out_, "Epoch {}/{}\n", epoch_ + 1, epochs_);
        std::fflush(out_);
    }
}

bool ProgressBar::due() const {
    return verbose_ == 1 && terminal_ &&
           std::chrono::duration<double>(Clock::now() - last_draw_).count() >= kRedrawSecs;
}

std::string ProgressBar::render(int64_t step, const callbacks::Logs& logs, bool final) const {
    const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
    const double per_step = step > 0 ? elapsed / static_cast<double>(step) : 0.0;
    std::string text;
    const bool bar = verbose_ == 1 && terminal_;
    if (!bar) text = fmt::format("Epoch {}/{} - ", epoch_ + 1, epochs_);
    if (steps_) {
        const int digits = static_cast<int>(std::to_string(*steps_).size());
        text += fmt::format("{:>{}}/{}", step, digits, *steps_);
    } else {
        text += fmt::format("{}/Unknown", step);
    }
    if (bar) {
        const double fraction = steps_ && *steps_ > 0 ? double(step) / double(*steps_) : 0.0;
        const int filled = steps_ ? static_cast<int>(fraction * kBarWidth) : 0;
        text += ' ';
        for (int i = 0; i < kBarWidth; ++i)
            text += i < filled ? "\u2501" : " ";
        // Keras shows the elapsed time at the end of an epoch and the ETA during it.
        const double eta = steps_ && !final ? per_step * double(*steps_ - step) : elapsed;
        text += fmt::format(" {} {}", duration_text(eta), per_step_text(per_step));
    } else {
        text += fmt::format(" - {} {}", duration_text(elapsed), per_step_text(per_step));
    }
    for (const auto& [name, value] : logs)
        text += fmt::format(" - {}: {:.4f}", name, value);
    return text;
}

void ProgressBar::update(int64_t step, const callbacks::Logs& logs) {
    if (!(verbose_ == 1 && terminal_)) return;
    fmt::print(out_, "\r{}\x1b[K", render(step, logs, false));
    std::fflush(out_);
    last_draw_ = Clock::now();
}

void ProgressBar::finish(int64_t steps, const callbacks::Logs& logs) {
    if (verbose_ == 0) return;
    steps_ = steps;
    if (verbose_ == 1 && terminal_) {
        fmt::print(out_, "\r{}\x1b[K\n", render(steps, logs, true));
    } else {
        fmt::print(out_, "{}\n", render(steps, logs, true));
    }
    std::fflush(out_);
}

}  // namespace tapeflow::keras::detail
