#!/usr/bin/env python3
"""Sums the results of `meson test` into one line `N passed, M failed, K skipped`.

Catch2 executables count their test cases (from the summary each one prints); any other test counts
as one. A test that crashed or timed out without a Catch2 summary counts as one failure. A test that
exited 77 is a skipped suite. Exit status: 1 when anything failed or nothing ran.
"""
import json
import re
import sys

path = sys.argv[1] if len(sys.argv) > 1 else "build/meson-logs/testlog.json"
passed = failed = skipped = 0
with open(path, encoding="utf-8") as log:
    for line in log:
        if not line.strip():
            continue
        test = json.loads(line)
        result, out = test["result"], test.get("stdout") or ""
        if result == "SKIP":
            skipped += 1
            continue
        all_ok = re.search(r"All tests passed \(\d+ assertions? in (\d+) test cases?\)", out)
        mixed = re.search(r"^test cases:(.*)$", out, re.MULTILINE)
        if all_ok:
            passed += int(all_ok.group(1))
        elif mixed:
            p = re.search(r"(\d+) passed", mixed.group(1))
            f = re.search(r"(\d+) failed", mixed.group(1))
            passed += int(p.group(1)) if p else 0
            failed += int(f.group(1)) if f else 0
        elif result in ("OK", "EXPECTEDFAIL"):
            passed += 1
        if result not in ("OK", "EXPECTEDFAIL") and not (mixed and re.search(r"\d+ failed", mixed.group(1))):
            failed += 1  # crashed, timed out, or failed without a Catch2 summary
print(f"{passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed or passed == 0 else 0)
