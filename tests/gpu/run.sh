#!/usr/bin/env bash
# The GPU check in one script: nvidia-smi, the GPU test suite (parity of every op and gradient,
# allocator, streams, errors), the CPU suites on that machine, bench_gpu, and compute-sanitizer
# (memcheck) on a short parity subset. Total budget under 8 minutes; logs go to $OUT (default
# ./gpu-results), at most 8 files, 00-summary.txt first.
# Runs from a checkout (configures build-gpu with -Dcuda=enabled and builds when needed) or from the
# bundle that tests/gpu/bundle.sh makes (binaries and libraries beside this script).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-$PWD/gpu-results}
mkdir -p "$OUT"
budget=${TAPEFLOW_GPU_BUDGET_S:-450}
start=$SECONDS
summary="$OUT/00-summary.txt"
: > "$summary"
note() { echo "$*" | tee -a "$summary"; }

if [[ -f "$here/BUNDLE" ]]; then
    bin="$here/bin"
    libdir="$here/lib"
    if [[ ! -d "$libdir" && -f "$here/lib.tar.gz" ]]; then
        libdir="$(mktemp -d)/lib"
        tar -C "$(dirname "$libdir")" -xzf "$here/lib.tar.gz"
    fi
    export LD_LIBRARY_PATH="$libdir:/usr/local/cuda/lib64:/usr/local/cuda/lib:$here/lib-cuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    export TAPEFLOW_GOLDEN_DIR="$here/golden"
    test_gpu="$bin/test_gpu"; bench_gpu="$bin/bench_gpu"; cpu_tests=("$bin"/test_core "$bin"/test_ops "$bin"/test_autograd)
    note "mode: bundle ($here)"
    # Libraries the machine lacks where expected (e.g. cuBLAS in a pip wheel): look for them.
    for missing in $(ldd "$test_gpu" "$bench_gpu" 2>/dev/null | awk '/not found/ {print $1}' | sort -u); do
        found=$(find /usr/local /opt /usr/lib /usr/lib64 -maxdepth 9 -name "$missing" 2>/dev/null | head -1)
        if [[ -n $found ]]; then
            LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$(dirname "$found")"
            note "library $missing: using $found"
        else
            note "library $missing: NOT FOUND"
        fi
    done
    export LD_LIBRARY_PATH
else
    root=$(cd "$here/../.." && pwd)
    build=${TAPEFLOW_BUILD_DIR:-$root/build-gpu}
    if [[ ! -f "$build/build.ninja" ]]; then
        meson setup "$build" "$root" -Dcuda=enabled > "$OUT/07-build.txt" 2>&1 || { note "configure FAILED (see 07-build.txt)"; exit 1; }
    fi
    ninja -C "$build" tests/test_gpu tests/test_core tests/test_ops tests/test_autograd benchmarks/bench_gpu \
        >> "$OUT/07-build.txt" 2>&1 || { note "build FAILED (see 07-build.txt)"; exit 1; }
    export TAPEFLOW_GOLDEN_DIR=${TAPEFLOW_GOLDEN_DIR:-$root/tests/golden}
    test_gpu="$build/tests/test_gpu"; bench_gpu="$build/benchmarks/bench_gpu"
    cpu_tests=("$build"/tests/test_core "$build"/tests/test_ops "$build"/tests/test_autograd)
    note "mode: build dir $build"
fi

# Runs "$@" with at most $1 seconds (and never past the total budget), output to file $2.
step() {
    local limit=$1 file=$2 name=$3; shift 3
    local left=$((budget - (SECONDS - start)))
    (( limit > left )) && limit=$left
    if (( limit < 10 )); then note "$name: NOT RUN (time budget spent)"; return; fi
    local t0=$SECONDS
    timeout -k 5 "$limit" "$@" >> "$OUT/$file" 2>&1
    local rc=$?
    local verdict=ok
    case $rc in 0) ;; 77) verdict=SKIPPED ;; 124|137) verdict="TIMEOUT after ${limit}s" ;; *) verdict="FAILED rc=$rc" ;; esac
    note "$name: $verdict ($((SECONDS - t0)) s, $file)"
}

{ date -u; uname -a; nvidia-smi || echo "nvidia-smi failed"; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv || true; } > "$OUT/01-nvidia-smi.txt" 2>&1
note "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo none)"

step 200 02-test_gpu.txt "GPU tests (parity, allocator, streams, errors)" "$test_gpu" --durations yes
grep -E "^parity:|host fallback|test cases|All tests passed|FAILED|cases that differ|^  [a-z_]+/" "$OUT/02-test_gpu.txt" | head -60 >> "$summary"

step 120 03-bench_gpu.txt "bench_gpu" "$bench_gpu"
grep -E "^(device|copy_d2d|elementwise|matmul|launch_overhead|train_step|bench_gpu FAILED)" "$OUT/03-bench_gpu.txt" >> "$summary"

sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
if [[ -x "$sanitizer" ]]; then
    # Caching off, so that memcheck sees each tensor's own allocation.
    TAPEFLOW_CUDA_CACHE=0 \
    TAPEFLOW_PARITY_FILTER="add/float32,reduce_sum/axis0/float32,reduce_max/all/float16,matmul/float32,batch_matmul/broadcast/float32,transpose/int64,where/bfloat16,cumsum/float64,argmax_argmin/int32,strided_slice/float32,pad/uint8,tile/bool,concat/float16,split/int32,cast/bfloat16/float32,add_n/many/float32,gather/bool,gather_nd/batch/float32,scatter_nd/float16,unsorted_segment_sum/int64,one_hot/float32,reduce_sum/large/float32,mirror_pad/float32,relu/float16,elu/float32,softmax/float32,softmax_xent/float64,sparse_softmax_xent/int64/float32,bias_add/nchw/int32,conv2d/strided_same/float32,conv2d/explicit_dilated/float64,max_pool/argmax/float32,avg_pool/float32,train/adam/float32,train/centered_rms_prop/float64,train/sparse_ftrl/int32/float32,train/sparse_momentum/int64/float64" \
        step 150 04-sanitizer.txt "compute-sanitizer memcheck (parity subset)" \
        "$sanitizer" --tool memcheck --error-exitcode 9 --leak-check no "$test_gpu" "every op gives the CPU's results on the GPU"
    grep -E "ERROR SUMMARY|Invalid|parity:" "$OUT/04-sanitizer.txt" | head -20 >> "$summary"
else
    note "compute-sanitizer: not found"
fi

for t in "${cpu_tests[@]}"; do
    [[ -x "$t" ]] && step 60 05-cpu-tests.txt "CPU suite $(basename "$t")" "$t"
done
grep -E "test cases|All tests passed" "$OUT/05-cpu-tests.txt" >> "$summary" 2>/dev/null

note "total: $((SECONDS - start)) s"
