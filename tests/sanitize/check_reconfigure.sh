#!/usr/bin/env bash
# scripts/sanitize.sh brings an existing build directory to its current options: a directory
# configured with other compile flags (as an older version of the script would have left it) ends
# up with the script's sanitizer flags. Usage: check_reconfigure.sh <source root>
set -euo pipefail
root=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
meson setup "$dir/asan" "$root" -Dcuda=disabled -Dmpi=disabled -Dbenchmarks=false \
    -Dsamples=false -Dcpu_dispatch=[] "-Dcpp_args=['-DSTALE_OPTIONS']" >/dev/null
TAPEFLOW_ASAN_DIR="$dir/asan" TAPEFLOW_SANITIZE_CONFIGURE_ONLY=1 "$root/scripts/sanitize.sh" asan
meson introspect "$dir/asan" --buildoptions | python3 -c '
import json, sys
options = {o["name"]: o["value"] for o in json.load(sys.stdin)}
args = options["cpp_args"]
assert "-DSTALE_OPTIONS" not in args, args
assert any(a.startswith("-fsanitize=signed-integer-overflow") for a in args), args
assert options["b_sanitize"] == "address", options["b_sanitize"]
print("sanitize.sh reconfigured the directory:", options["b_sanitize"], " ".join(args))
'
