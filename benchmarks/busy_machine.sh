#!/usr/bin/env bash
# Threads on a busy machine (docs/performance.md "Threads"): times training steps with 1 thread and
# with the default thread count, on a quiet machine and while one CPU-bound process competes for
# the cores (a shell busy loop, started and stopped by this script). The default count must be no
# slower than 1 thread under that load. Medians of 5 repetitions of each case.
# Usage: benchmarks/busy_machine.sh [build dir]   (needs bench_train and bench_transformer built)
set -euo pipefail
build=${1:-build}
cases=("$build/benchmarks/bench_train:train/mlp_step/tapeflow"
       "$build/benchmarks/bench_train:train/tutorial_step/tapeflow"
       "$build/benchmarks/bench_transformer:transformer/lm_train_step/tapeflow")
default_threads=$(nproc)

median_ms() {  # binary filter threads -> median real time of one iteration in ms
    OMP_NUM_THREADS=$3 "$1" --benchmark_filter="^$2\$|^$2/real_time\$" --benchmark_repetitions=5 \
        --benchmark_min_time=0.5 --benchmark_format=json 2>/dev/null | python3 -c '
import json, sys
runs = [b for b in json.load(sys.stdin)["benchmarks"] if b.get("aggregate_name") == "median"]
b = runs[0]
scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[b["time_unit"]]
print("%.3f" % (b["real_time"] * scale))'
}

run_all() {  # label
    for c in "${cases[@]}"; do
        bin=${c%%:*}
        name=${c#*:}
        one=$(median_ms "$bin" "$name" 1)
        many=$(median_ms "$bin" "$name" "$default_threads")
        ratio=$(python3 -c "print(f'{$many / $one:.2f}')")
        printf '| %s | %s | %s ms | %s ms | %sx |\n' "$name" "$1" "$one" "$many" "$ratio"
    done
}

printf '| case | machine | 1 thread | %s threads | %s threads / 1 thread |\n|---|---|---|---|---|\n' \
    "$default_threads" "$default_threads"
run_all quiet
(while :; do :; done) &
load=$!
trap 'kill $load 2>/dev/null || true' EXIT
sleep 0.5
run_all "one busy process"
