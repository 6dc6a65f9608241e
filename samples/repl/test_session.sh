#!/usr/bin/env bash
# The REPL test: drives clang-repl-19 through session.repl (tensors, a tape, an optimizer step,
# printing, a caught error) and checks the printed values. Exit 77 (meson: skipped) when
# clang-repl-19 is not installed. Usage: test_session.sh <meson build dir>
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v "${CLANG_REPL:-clang-repl-19}" >/dev/null; then
    echo "SKIP: clang-repl-19 not found (Debian package clang-tools-19)"
    exit 77
fi
out=$("$here/clang-repl.sh" "$1" < "$here/session.repl" 2>&1)
rc=$?
echo "$out"
fail() { echo "FAIL: $1"; exit 1; }
((rc == 0)) || fail "clang-repl exited with $rc"
# Compile errors do not change the exit code in stdin mode: look for them.
grep -q "error:" <<<"$out" && fail "the session printed an error"
expected=(
    "[[ 7. 10.]"
    " [15. 22.]], shape=(2, 2), dtype=float32)"
    "loss 58"
    " [68.]], shape=(2, 1), dtype=float32)"
    # float32 1 - 0.01f * 68 rounded twice, as TensorFlow computes it (a fused multiply-add gave
    # 0.32000002 on AVX2 CPUs before every kernel set was compiled with -ffp-contract=off)
    "w after one step: [0.52, 0.32]"
    "caught Input to reshape is a tensor with 4 values, but the requested shape has 3 [Op:Reshape]"
)
for line in "${expected[@]}"; do
    grep -qxF -- "$line" <<<"$out" || fail "missing line: $line"
done
echo "PASS: ${#expected[@]} expected lines printed"
