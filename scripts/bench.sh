#!/usr/bin/env bash
# Builds (release) and runs every CPU benchmark, LibTorch side by side when Debian's libtorch-dev
# is installed, and writes a report: <out>/latest.md (tapeflow vs LibTorch vs the machine's limits,
# with ratios) and <out>/latest.png (a chart of the ratios). docs/performance.md shows the result.
# Usage: scripts/bench.sh [--quick] [--yes | --no-torch] [--no-build] [--out DIR]
#   --quick     short runs (about a minute; numbers only good for a sanity check); the report goes
#               to <build>/benchmarks/quick unless --out is given
#   --yes       install libtorch-dev without asking when it is missing
#   --no-torch  never offer LibTorch
#   --no-build  use the benchmarks already built in the build folder (no install, no ninja)
# Environment: TAPEFLOW_BUILD_DIR (default: build; must be a release build).
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0 yes=0 no_torch=0 build_step=1 out=""
while (($#)); do
    case $1 in
        --quick) quick=1 ;;
        --yes | -y) yes=1 ;;
        --no-torch) no_torch=1 ;;
        --no-build) build_step=0 ;;
        --out) out=$2; shift ;;
        -h | --help) sed -n '2,11p' "$0"; exit 0 ;;
        *) echo "bench.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
build=${TAPEFLOW_BUILD_DIR:-build}
[[ -n $out ]] || { ((quick)) && out=$build/benchmarks/quick || out=benchmarks/results; }

# ---- LibTorch: offer to install it ----
have_torch() { dpkg-query -W -f='${Status}' libtorch-dev 2>/dev/null | grep -q "install ok installed"; }
torch_installed_now=0
if ((build_step)); then
    scripts/install-deps.sh
    if ! have_torch && ((!no_torch)); then
        answer=n
        if ((yes)); then
            answer=y
        elif [[ -t 0 ]]; then
            read -r -p "LibTorch (libtorch-dev, about 1 GB) is not installed. Install it to compare against it? [y/N] " answer
        else
            echo "bench.sh: running without LibTorch (scripts/bench.sh --yes installs libtorch-dev)"
        fi
        if [[ $answer == [yY]* ]]; then
            scripts/install-deps.sh --with-torch
            torch_installed_now=1
        fi
    fi
fi

# ---- build (release) ----
benches=(bench_ops bench_train bench_nn bench_summary bench_core bench_checkpoint bench_jacobian)
benches+=(bench_transformer)   # issue 20: attention, layer_norm, the transformer step (one thread)
if ((build_step)); then
    if [[ ! -f $build/build.ninja ]]; then
        meson setup "$build" --buildtype=release >/dev/null
    elif ((torch_installed_now)); then
        meson setup --reconfigure "$build" >/dev/null   # finds torch/torch.h now
    fi
    buildtype=$(meson introspect --buildoptions "$build" |
        python3 -c 'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "buildtype"))')
    if [[ $buildtype != release ]]; then
        echo "bench.sh: $build is a '$buildtype' build; use a release build (TAPEFLOW_BUILD_DIR=<dir>)" >&2
        exit 1
    fi
    targets=("${benches[@]/#/benchmarks/}" benchmarks/bench_data benchmarks/rss_mlp_tapeflow)
    have_torch && targets+=(benchmarks/rss_mlp_libtorch)   # bench_train's peak-RSS children
    ninja -C "$build" -j"$(nproc)" "${targets[@]}" >/dev/null
fi
for b in "${benches[@]}" bench_data; do
    [[ -x $build/benchmarks/$b ]] || { echo "bench.sh: $build/benchmarks/$b is missing (libbenchmark-dev?)" >&2; exit 1; }
done

# ---- run ----
raw=$build/benchmarks/raw
mkdir -p "$raw" "$out"
rm -f "$raw"/*.json
args=(--benchmark_out_format=json)
records=1000000
if ((quick)); then
    args+=(--benchmark_min_time=0.01)
    export TAPEFLOW_BENCH_SKIP_RSS=1   # the 100-step peak-RSS children
    records=20000
else
    args+=(--benchmark_repetitions=3 --benchmark_report_aggregates_only=true)
fi
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
start=$SECONDS
for b in "${benches[@]}"; do
    echo "bench.sh: running $b"
    "$build/benchmarks/$b" "${args[@]}" --benchmark_out="$raw/$b.json" >"$raw/$b.log" 2>&1
done
echo "bench.sh: running bench_data"
"$build/benchmarks/bench_data" "$records" "$raw/data_files" >"$raw/bench_data.txt" 2>&1
rm -rf "$raw/data_files"
elapsed=$((SECONDS - start))

# ---- report ----
python3 benchmarks/compare.py --markdown "$raw/table.md" --chart "$out/latest.png" \
    "$raw"/bench_{ops,nn,train,checkpoint,summary,core,jacobian,transformer}.json
cpu=$(grep -m1 "model name" /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')
torch_state=$(have_torch && echo "LibTorch $(dpkg-query -W -f='${Version}' libtorch-dev)" || echo "no LibTorch")
{
    echo "# Benchmark results"
    echo
    echo "Written by \`scripts/bench.sh$( ((quick)) && echo " --quick")\` on $(date -u '+%Y-%m-%d %H:%M UTC'),"
    echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown); $cpu, $(nproc) threads,"
    echo "$torch_state; load average before the run $load_before, after $(cut -d' ' -f1-3 /proc/loadavg);"
    echo "the benchmarks took ${elapsed} s. $( ((quick)) && echo "QUICK RUN: too short to compare; a sanity check only." || echo "Medians of 3 repetitions.")"
    echo
    echo "Speeds are ratios where above 1 means tapeflow is faster: for throughput rows tapeflow/other,"
    echo "for time and memory rows other/tapeflow. The machine's limits are measured in the same run:"
    echo "STREAM-style triad and read bandwidth, OpenBLAS sgemm called directly. Chart: latest.png."
    echo
    cat "$raw/table.md"
    echo
    echo "## tf::data (bench_data, $records records)"
    echo
    echo '```text'
    cat "$raw/bench_data.txt"
    echo '```'
} >"$out/latest.md"
echo "bench.sh: wrote $out/latest.md and $out/latest.png (${elapsed} s of benchmarks)"
