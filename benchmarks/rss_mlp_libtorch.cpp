// Peak RSS of 100 medium-MLP training steps in a program that loads only LibTorch (run by
// bench_train; prints "<peak MiB> <growth MiB>").
#include "rss_report.hpp"
#include "torch_train_cases.hpp"

int main() {
    return rss_report::report([] { torch_train_cases::run_mlp_steps(100); });
}
