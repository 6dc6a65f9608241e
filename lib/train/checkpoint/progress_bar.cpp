// ProgressBarHook: a one-line progress bar redrawn in place on a terminal ("\r" + erase to end of
// line), plain periodic lines otherwise so that logs stay readable.
#include <algorithm>

#include <fmt/format.h>
#include <unistd.h>

#include <tapeflow/train/hooks.hpp>

#include "train/checkpoint/session_support.hpp"

namespace tapeflow::train {
namespace {

using Clock = std::chrono::steady_clock;

std::string clock_text(double seconds) {
    const auto s = static_cast<int64_t>(std::max(0.0, seconds) + 0.5);
    return fmt::format("{}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60);
}

}  // namespace

ProgressBarHook::ProgressBarHook(ProgressBarHookOptions options) : options_(options) {
    if (options_.width < 1) options_.width = 1;
    if (options_.stream == nullptr) options_.stream = stdout;
    tty_ = ::isatty(::fileno(options_.stream)) != 0;
}

void ProgressBarHook::begin() {
    start_step_ = session::current_global_step();
    last_step_ = *start_step_;
    start_ = last_draw_ = Clock::now();
}

std::string ProgressBarHook::render(int64_t step,
                                    double steps_per_sec,
                                    std::optional<double> loss) const {
    std::string text;
    const int64_t total = options_.total_steps;
    if (total > 0) {
        const double fraction =
            std::clamp(static_cast<double>(step) / static_cast<double>(total), 0.0, 1.0);
        const int filled = static_cast<int>(fraction * options_.width);
        std::string bar(static_cast<std::size_t>(filled), '=');
        if (filled < options_.width) bar += '>';
        bar.resize(static_cast<std::size_t>(options_.width), ' ');
        text = fmt::format("[{}] {}/{} {:3.0f}%", bar, step, total, fraction * 100);
    } else {
        text = fmt::format("step {}", step);
    }
    // No rate before any step ran (a resumed job with nothing left to do drew "0 steps/s").
    if (steps_per_sec > 0) text += fmt::format("  {:.3g} steps/s", steps_per_sec);
    if (total > 0 && steps_per_sec > 0 && step < total) {
        text += "  ETA " + clock_text(static_cast<double>(total - step) / steps_per_sec);
    }
    if (loss) text += fmt::format("  loss {:.4g}", *loss);
    return text;
}

void ProgressBarHook::draw(int64_t step, bool final_line) {
    const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
    const int64_t done = step - start_step_.value_or(step);
    const double rate = elapsed > 0 ? static_cast<double>(done) / elapsed : 0.0;
    const std::string text = render(step, rate, loss_);
    if (tty_) {
        fmt::print(options_.stream, "\r{}\x1b[K{}", text, final_line ? "\n" : "");
    } else {
        fmt::print(options_.stream, "{}\n", text);
    }
    std::fflush(options_.stream);
    last_draw_ = Clock::now();
    drawn_step_ = step;
}

void ProgressBarHook::after_run(int64_t step, const Tensor& result) {
    if (!start_step_) begin();
    last_step_ = step;
    if (const auto loss = session::scalar_value(result)) loss_ = loss;
    const double since = std::chrono::duration<double>(Clock::now() - last_draw_).count();
    const bool due = since >= (tty_ ? options_.refresh_secs : options_.refresh_secs_plain);
    const bool finished = options_.total_steps > 0 && step >= options_.total_steps;
    if (due || !drawn_step_ || (finished && drawn_step_ != step)) draw(step, false);
}

void ProgressBarHook::end() {
    if (!start_step_) return;
    if (drawn_step_ != last_step_) {
        draw(last_step_, true);
    } else if (tty_) {
        fmt::print(options_.stream, "\n");  // keep the finished bar, end its line
        std::fflush(options_.stream);
    }
}

}  // namespace tapeflow::train
