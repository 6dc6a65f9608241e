#!/usr/bin/env bash
# Installs every Debian package tapeflow's build, tests, samples and benchmarks need.
# Idempotent: packages already present are skipped, and apt-get runs only when something is missing.
# Usage: scripts/install-deps.sh [--with-torch]   (--with-torch adds libtorch-dev for side-by-side benchmarks)
set -euo pipefail

packages=(
    meson ninja-build pkg-config cmake g++
    libxtensor-dev libxsimd-dev xtl-dev libopenblas-dev
    libfmt-dev catch2 libbenchmark-dev
    libprotobuf-dev protobuf-compiler
    libpng-dev zlib1g-dev nlohmann-json3-dev libsnappy-dev
    libopenmpi-dev openmpi-bin
    python3 python3-numpy clang-tools-19
    libhdf5-dev python3-h5py  # Keras weight files (.h5); h5py checks them in the tests
    clang-format-14
    clang-19 binutils util-linux qemu-user  # clang++-19 consumer, readelf/nm (abi suite), unshare
    # binutils: ld/nm/objcopy make the per-ISA kernel objects; qemu-user runs the Nehalem suite
)
[[ "${1:-}" == "--with-torch" ]] && packages+=(libtorch-dev)

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
    exit 0
fi
echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
[[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
