#!/usr/bin/env bash
# Sets up a fresh machine if needed, builds tapeflow and runs the main demo (samples/demo.cpp).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
build=${TAPEFLOW_BUILD_DIR:-build}
if [[ ! -f "$build/build.ninja" ]]; then
    meson setup "$build" >/dev/null
fi
ninja -C "$build" -j"$(nproc)" samples/demo >/dev/null
exec "$build/samples/demo"
