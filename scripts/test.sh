#!/usr/bin/env bash
# Sets up a fresh machine if needed, builds everything (the CUDA backend too when nvcc is present)
# and runs every test suite. Ends with one line "N passed, M failed, K skipped" (test cases summed
# over all test executables); exits non-zero on any failure.
# Environment: TAPEFLOW_BUILD_DIR (default: build), MESON_ARGS (extra `meson setup` options).
# `scripts/test.sh --sanitize [asan|tsan]` runs the sanitizer builds instead (scripts/sanitize.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
if [[ "${1:-}" == "--sanitize" ]]; then
    exec scripts/sanitize.sh "${2:-all}"
fi
build=${TAPEFLOW_BUILD_DIR:-build}
if [[ ! -f "$build/build.ninja" ]]; then
    # shellcheck disable=SC2086
    meson setup "$build" ${MESON_ARGS:-}
fi
ninja -C "$build" -j"$(nproc)"
set +e
meson test -C "$build" --print-errorlogs --num-processes "$(nproc)"
status=$?
set -e
python3 scripts/test_summary.py "$build/meson-logs/testlog.json" || status=1
exit $status
