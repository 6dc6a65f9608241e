#!/usr/bin/env bash
# Runs programs in a private mount namespace (unshare -m) where the CUDA Toolkit's folder is an
# empty directory and every libnccl, libcudart and libmpi (and Open MPI's own libraries) reads as
# an empty file: a CPU-only machine as far as the dynamic loader can tell. Needs root (CI runs as
# root); skipped (77) otherwise. Usage: run_hidden.sh <program> [args] [-- <program> [args]]...
set -euo pipefail
if [[ $(id -u) -ne 0 ]] || ! unshare -m true 2>/dev/null; then
    echo "SKIP: unshare -m needs root"
    exit 77
fi
exec unshare -m bash -s -- "$@" <<'INNER'
set -euo pipefail
mount --make-rprivate /
empty=$(mktemp -d)
hidden=()
for dir in $(readlink -f /usr/local/cuda /usr/local/cuda-* 2>/dev/null | sort -u); do
    [[ -d $dir ]] && mount --bind "$empty" "$dir" && hidden+=("$dir/")
done
for lib in $(ldconfig -p | awk '/(libnccl|libcudart|libmpi|libopen-pal|libopen-rte)\./ {print $NF}'); do
    real=$(readlink -f "$lib" || true)  # gone already when under a hidden folder
    [[ -f $real && -s $real ]] && mount --bind /dev/null "$real" && hidden+=("$real")
done
echo "hidden: ${hidden[*]}"
command=()
run() { echo "\$ ${command[*]}"; "${command[@]}"; }
for arg in "$@"; do
    if [[ $arg == -- ]]; then run; command=(); else command+=("$arg"); fi
done
[[ ${#command[@]} -eq 0 ]] || run
INNER
