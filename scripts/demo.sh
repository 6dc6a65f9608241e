#!/usr/bin/env bash
# Sets up a fresh machine if needed, builds tapeflow and runs the main demo (samples/demo.cpp): a
# convnet learns the UCI handwritten digits with checkpoints and TensorBoard logs in logs/digits.
# Rerunning resumes from the last checkpoint. Arguments go to the demo, e.g. --steps 3000 (train
# further), --fresh (start over), --logdir DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
build=${TAPEFLOW_BUILD_DIR:-build}
if [[ ! -f "$build/build.ninja" ]]; then
    meson setup "$build" >/dev/null
fi
ninja -C "$build" -j"$(nproc)" samples/demo >/dev/null
# The model is tiny (batches of 32 images of 8x8): one thread is fastest, and on a busy machine
# OpenMP and OpenBLAS threads waiting for each other make each step many times slower.
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
exec "$build/samples/demo" "$@"
