#!/usr/bin/env bash
# The sanitizer runs (scripts/test.sh --sanitize runs this): the whole test suite under
# AddressSanitizer + UndefinedBehaviorSanitizer, and the threaded suites (concurrency, data,
# summary, the kernels' thread pool) under ThreadSanitizer. CPU only and lean: no CUDA, MPI, benchmarks or samples, -O1 with
# line tables. Any sanitizer report fails the run. Ends with "N passed, M failed, K skipped".
# UBSan here is the arithmetic part (overflow, shifts, division, float-to-int casts, bounds,
# bool/enum values, unreachable/return): all of -fsanitize=undefined made each file compile 3.4x
# slower than the normal build (ASan alone: 1.2x; this subset with ASan: 1.15x, measured on
# lib/ops/reduce.cpp); the reader fuzzers run with all of UBSan (fuzz_readers_asan).
# Reports from code that is not tapeflow's are suppressed in tests/sanitize/*.supp, each entry with
# its reason. Each step prints its wall and CPU time ("sanitize: ..."; CONTRIBUTING.md has them).
# Usage: scripts/sanitize.sh [asan|tsan|all]   (default all)
# Environment: TAPEFLOW_SANITIZE_JOBS (default: nproc), TAPEFLOW_ASAN_DIR (build-asan),
# TAPEFLOW_TSAN_DIR (build-tsan), TAPEFLOW_SANITIZE_CONFIGURE_ONLY=1 (set the directory up and stop).
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
jobs=${TAPEFLOW_SANITIZE_JOBS:-$(nproc)}
# -Dcpu_dispatch=[]: the hot kernels are compiled once (the baseline set); the dispatched copies are
# the same source for another -march, and their renaming step (make_isa_object.py) is not made
# for instrumented objects.
lean=(-Dcuda=disabled -Dmpi=disabled -Dbenchmarks=false -Dsamples=false -Dbuildtype=plain
      -Db_lundef=false -Dcpu_dispatch=[])
opt="'-O1','-g1','-fno-omit-frame-pointer'"
ubsan="-fsanitize=signed-integer-overflow,shift,integer-divide-by-zero,float-cast-overflow,bounds"
ubsan+=",bool,enum,builtin,unreachable,return"
status=0

timed() {  # runs a command; prints its wall time and CPU time (children included) to stderr
    local rc=0 what="$*"
    local TIMEFORMAT="sanitize: %0R s wall, %0U s user + %0S s system CPU for: ${what:0:110}"
    time "$@" || rc=$?
    return $rc
}

setup() {  # setup <dir> <b_sanitize> <extra compile and link flag, or "">
    # An existing directory is reconfigured with this script's options, so that a change to them
    # (a new UBSan check, say) reaches a build directory made by an older version of the script.
    # (meson 1.0's `setup --reconfigure` keeps the old cpp_args; `configure` sets them.)
    local extra=${3:+",'$3'"} how=(setup)
    [[ -f "$1/build.ninja" ]] && how=(configure)
    meson "${how[@]}" "$1" "${lean[@]}" -Db_sanitize="$2" "-Dcpp_args=[$opt$extra]" \
        "-Dcpp_link_args=[${3:+'$3'}]" >/dev/null
}
configure_only=${TAPEFLOW_SANITIZE_CONFIGURE_ONLY:-0}  # 1: set the directories up, build nothing

if [[ $what == asan || $what == all ]]; then
    asan=${TAPEFLOW_ASAN_DIR:-build-asan}
    setup "$asan" address "$ubsan"
fi
if [[ $configure_only != 1 && ($what == asan || $what == all) ]]; then
    timed ninja -C "$asan" -j"$jobs"
    # allocator_may_return_null: the size tests ask for more memory than exists and expect
    # ResourceExhaustedError, not ASan's "allocation-size-too-big" abort. The install suite links
    # an outside program without the ASan runtime, which ASan refuses to start.
    # TAPEFLOW_CPU_CACHE_BYTES=0: freed tensor buffers go back to malloc (ASan's quarantine) instead
    # of the allocator's cache, so a use after free is seen (small blocks: lib/core/small_blocks.cpp).
    timed env ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1:abort_on_error=0 \
        TAPEFLOW_CPU_CACHE_BYTES=0 \
        UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:suppressions=$PWD/tests/sanitize/ubsan.supp \
        meson test -C "$asan" --no-rebuild --print-errorlogs --num-processes "$jobs" \
        --no-suite install --timeout-multiplier 3 || status=1
    python3 scripts/test_summary.py "$asan/meson-logs/testlog.json" || status=1
fi

if [[ $what == tsan || $what == all ]]; then
    tsan=${TAPEFLOW_TSAN_DIR:-build-tsan}
    setup "$tsan" thread ""
fi
if [[ $configure_only != 1 && ($what == tsan || $what == all) ]]; then
    # Only the threaded suites' executables (and the library): TSan costs 5-15x at run time.
    timed ninja -C "$tsan" -j"$jobs" tests/test_concurrency tests/test_data tests/test_summary \
        tests/test_core
    # One OpenBLAS thread: OpenBLAS is not instrumented, so its barriers look like races to TSan
    # (tapeflow runs it on the calling thread anyway). The kernels' threads are tapeflow's own pool
    # (std::thread and atomics, instrumented): the thread-pool test runs it with 4 threads (its
    # test() sets OMP_NUM_THREADS); the other suites keep one kernel thread, as before the pool.
    timed env TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 OMP_NUM_THREADS=1 \
        OPENBLAS_NUM_THREADS=1 \
        meson test -C "$tsan" --no-rebuild --print-errorlogs --num-processes "$jobs" \
        --timeout-multiplier 3 concurrency data summary thread-pool || status=1
    python3 scripts/test_summary.py "$tsan/meson-logs/testlog.json" || status=1
fi
exit $status
