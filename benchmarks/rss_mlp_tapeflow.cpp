// Peak RSS of 100 medium-MLP training steps in a program that loads only tapeflow (run by
// bench_train; prints "<peak MiB> <growth MiB>").
#include "rss_report.hpp"
#include "train_models.hpp"

int main() {
    return rss_report::report([] {
        tapeflow::random::set_seed(1);
        train_models::Mlp m;
        for (int i = 0; i < 100; ++i)
            m.step();
    });
}
