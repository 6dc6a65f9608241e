#!/usr/bin/env bash
# The formatting check: clang-format 14 with the root .clang-format over every C++ source of the
# tree (*.cpp *.hpp *.cu *.cuh *.h *.cc).
# Usage: scripts/check_format.sh          check; exits 1 listing the files clang-format would change
#        scripts/check_format.sh --fix [FILE...]   reformat in place (all files or the given ones)
set -euo pipefail
cd "$(dirname "$0")/.."
cf=${CLANG_FORMAT:-clang-format-14}
if ! command -v "$cf" >/dev/null; then
    echo "check_format: $cf not found (scripts/install-deps.sh installs it)" >&2
    exit 2
fi
mode=${1:-check}
sources() { git ls-files -- '*.cpp' '*.hpp' '*.cu' '*.cuh' '*.h' '*.cc'; }
unformatted() {  # the files of stdin that clang-format would change
    while read -r f; do
        "$cf" --style=file "$f" | cmp -s - "$f" || echo "$f"
    done
}
case "$mode" in
    --fix)
        shift
        if (($# > 0)); then
            "$cf" -i --style=file "$@"
        else
            sources | xargs "$cf" -i --style=file
        fi
        ;;
    check)
        bad=$(sources | unformatted || true)
        if [[ -n "$bad" ]]; then
            echo "check_format: clang-format would change these files" \
                 "(fix: scripts/check_format.sh --fix FILE...):"
            echo "$bad" | sed 's/^/  /'
            exit 1
        fi
        echo "check_format: ok"
        ;;
    *)
        sed -n '2,6p' "$0" >&2
        exit 2
        ;;
esac
