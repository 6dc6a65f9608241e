#!/usr/bin/env bash
# ABI hygiene of the shared library (docs/install.md): a versioned soname, no protobuf or
# TensorFlow symbol exported (a process may also load TensorFlow), the public API exported, and
# none of the CUDA runtime, NCCL or MPI linked (they are the plugins' business).
# Usage: check_symbols.sh <libtapeflow.so.X.Y.Z> <version>
set -euo pipefail
lib=$1
version=$2
fail() { echo "FAIL: $*"; exit 1; }
major=${version%%.*}
soname=$(readelf -d "$lib" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
echo "soname: $soname"
[[ $soname == "libtapeflow.so.$major" ]] || fail "soname is '$soname', expected libtapeflow.so.$major"
[[ $(basename "$(readlink -f "$lib")") == "libtapeflow.so.$version" ]] ||
    fail "$lib is not libtapeflow.so.$version"
needed=$(readelf -d "$lib" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | tr '\n' ' ')
echo "needed: $needed"
for forbidden in libcudart libnccl libmpi libcublas; do
    [[ $needed != *"$forbidden"* ]] || fail "libtapeflow links $forbidden (it belongs in a plugin)"
done
symbols=$(nm -D --defined-only "$lib" | c++filt)
echo "exported symbols: $(wc -l <<<"$symbols")"
leaked=$(grep -E ' (tensorflow|google)::|tensorflow\.|google::protobuf' <<<"$symbols" || true)
[[ -z $leaked ]] || fail "exported protobuf/TensorFlow symbols:
$(head -20 <<<"$leaked")"
# The public API is there (a function, a class member, an error's typeinfo), internals are not.
for wanted in 'tapeflow::matmul(' 'tapeflow::Tensor::str' \
              'typeinfo for tapeflow::errors::InvalidArgumentError'; do
    grep -qF "$wanted" <<<"$symbols" || fail "'$wanted' is not exported"
done
for internal in 'tapeflow::apply(' 'tapeflow::register_cpu_kernels'; do
    ! grep -qF "$internal" <<<"$symbols" || fail "internal '$internal' is exported"
done
echo "ABI check OK"
