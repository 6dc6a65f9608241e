#!/usr/bin/env bash
# Builds tapeflow with CUDA here and packs what the GPU machine needs to run tests/gpu/run.sh into
# .gpu-bundle/ (that machine has the CUDA toolkit and drivers but none of the -dev packages, and
# nothing can be installed there): stripped test executables, bench_gpu, libtapeflow, the
# non-system shared libraries they load (fmt, OpenBLAS, protobuf, ...), the golden data and run.sh.
# Then: run `bash .gpu-bundle/run.sh` there with .gpu-bundle carried. Environment:
# TAPEFLOW_BUILD_DIR (default build-cuda).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
build=${TAPEFLOW_BUILD_DIR:-build-cuda}
[[ -f "$build/build.ninja" ]] || meson setup "$build" -Dcuda=enabled
# nvcc objects record no header dependencies here (`ninja -t deps` shows 0 for every .cu.o), so
# an edit of launch.hpp, device_common.cuh or a shared TAPEFLOW_HD header would not rebuild them:
# touch the .cu files (unchanged ones are ccache hits).
touch cuda/*.cu
targets=(tests/test_gpu tests/test_core tests/test_ops tests/test_autograd benchmarks/bench_gpu)
ninja -C "$build" -j"${NINJA_JOBS:-1}" "${targets[@]}"

out=.gpu-bundle
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib" "$out/lib-cuda" "$out/golden"
for t in "${targets[@]}"; do cp "$build/$t" "$out/bin/"; done
for f in "$build"/libtapeflow.so "$build"/libtapeflow.so.[0-9]*; do
    [[ -f $f ]] && cp -L "$f" "$out/lib/$(basename "$f")"
done
strip --strip-unneeded "$out"/bin/* "$out"/lib/libtapeflow.so*

# Shared libraries beyond the base system and the CUDA toolkit: what the GPU machine lacks.
system='^(libc|libm|libdl|librt|libpthread|libstdc\+\+|libgcc_s|ld-linux-x86-64|linux-vdso|libcuda|libcublas|libcublasLt)\.so'
for f in "$out"/bin/* "$out"/lib/libtapeflow.so*; do
    ldd "$f" | awk '/=> \// {print $1, $3}'
done | sort -u | while read -r name path; do
    if [[ $name == libcudart.so* ]]; then
        cp -L "$path" "$out/lib-cuda/$name"   # only used when the machine's own is missing
    elif ! [[ $name =~ $system ]] && [[ ! -e "$out/lib/$name" ]]; then
        cp -L "$path" "$out/lib/$name"
    fi
done
strip --strip-unneeded "$out"/lib/*.so* 2>/dev/null || true

golden=${TAPEFLOW_GOLDEN_DIR:-$root/tests/golden}
[[ -d "$golden" ]] && cp -r "$golden"/. "$out/golden/"
cp tests/gpu/run.sh "$out/run.sh"
chmod +x "$out/run.sh"
git log -1 --format='commit %H %s' > "$out/BUNDLE" 2>/dev/null || echo "bundle" > "$out/BUNDLE"

# Keep the bundle out of git (the worktree's exclude file lives in the common git dir).
exclude="$(git rev-parse --git-common-dir)/info/exclude"
mkdir -p "$(dirname "$exclude")"
grep -qxF '.gpu-bundle/' "$exclude" 2>/dev/null || echo '.gpu-bundle/' >> "$exclude"

# The libraries compress 4:1 (OpenBLAS alone is 36 MiB): ship them as a gzip tarball, which
# run.sh unpacks into a temporary folder (gzip is on every image; xz may not be).
tar -C "$out" -czf "$out/lib.tar.gz" lib
rm -rf "$out/lib"

size=$(du -sm "$out" | cut -f1)
echo "bundle: $out, ${size} MiB"
ls -la "$out" "$out/bin" "$out/lib-cuda"
if (( size >= 60 )); then echo "bundle too large (${size} MiB >= 60)" >&2; exit 1; fi
