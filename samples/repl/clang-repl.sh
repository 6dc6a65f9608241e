#!/usr/bin/env bash
# Starts clang-repl-19 (Debian: clang-tools-19) with libtapeflow loaded and the prelude
# (tapeflow_repl.hpp: the public header, <iostream>, `namespace tf = tapeflow`) already included.
# Usage: samples/repl/clang-repl.sh [build dir, default build]   (interactive, or a script on stdin)
# Without a build dir argument and no build/libtapeflow.so, it uses an installed tapeflow (pkg-config).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-${TAPEFLOW_BUILD_DIR:-$root/build}}
repl=${CLANG_REPL:-clang-repl-19}
if ! command -v "$repl" >/dev/null; then
    echo "clang-repl.sh: $repl not found; install it with: sudo apt-get install clang-tools-19" >&2
    exit 77
fi
if [[ -f "$build/libtapeflow.so" ]]; then
    lib=$build/libtapeflow.so
    includes=(--Xcc=-I"$root/include" --Xcc=-I"$build/include")
elif pkg-config --exists tapeflow 2>/dev/null; then
    lib=$(pkg-config --variable=libdir tapeflow)/libtapeflow.so
    includes=(--Xcc=-I"$(pkg-config --variable=includedir tapeflow)")
else
    echo "clang-repl.sh: no $build/libtapeflow.so and no installed tapeflow; build it first" >&2
    exit 1
fi
# LD_PRELOAD, not %lib: %lib only works on stdin. No -DFMT_HEADER_ONLY: tapeflow's formatters
# call no libfmt template that clang mangles differently from g++ (docs/repl.md).
LD_PRELOAD=$lib${LD_PRELOAD:+:$LD_PRELOAD} exec "$repl" --Xcc=-std=c++20 \
    "${includes[@]}" --Xcc=-include --Xcc="$here/tapeflow_repl.hpp"
