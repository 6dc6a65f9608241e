#!/usr/bin/env python3
"""Every C++ code block in docs/*.md, README.md and CONTRIBUTING.md comes from a file that CI
compiles or runs.

A ```cpp block must have, on the line above it (blank lines allowed between), a marker
    <!-- sample: samples/some_sample.cpp -->
naming the file it was taken from (relative to the repository root). The block's lines, with
leading and trailing spaces stripped, must occur in that file in the same order (other lines may
come between them, so an excerpt may skip parts); a line that is just `...` or `// ...` marks
such a gap and is not looked up. Runs of spaces count as one, so a page may align comments
differently from the formatted source. Usage: check_code_blocks.py <repository root>
"""
import glob
import os
import re
import sys

MARKER = re.compile(r"<!--\s*sample:\s*(\S+)\s*-->")
GAP = {"...", "// ..."}


def blocks(path):
    """(line number, marker path or None, [lines]) for each ```cpp block of a markdown file."""
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        if lines[i].strip() in ("```cpp", "```c++"):
            marker = None
            j = i - 1
            while j >= 0 and not lines[j].strip():
                j -= 1
            m = MARKER.search(lines[j]) if j >= 0 else None
            if m:
                marker = m.group(1)
            end = i + 1
            while end < len(lines) and lines[end].strip() != "```":
                end += 1
            yield i + 1, marker, lines[i + 1:end]
            i = end
        i += 1


def normalize(line):
    return " ".join(line.split())


def missing_line(block, source):
    """The first block line not found (in order) in source, or None when all are there."""
    wanted = [normalize(l) for l in block if l.strip() and l.strip() not in GAP]
    have = [normalize(l) for l in source.split("\n")]
    pos = 0
    for line in wanted:
        try:
            pos = have.index(line, pos) + 1
        except ValueError:
            return line
    return None


def main(root):
    pages = sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    pages += [os.path.join(root, "README.md"), os.path.join(root, "CONTRIBUTING.md")]
    errors, count = [], 0
    for page in pages:
        rel = os.path.relpath(page, root)
        for lineno, marker, block in blocks(page):
            count += 1
            where = f"{rel}:{lineno}"
            if marker is None:
                errors.append(f"{where}: no <!-- sample: path --> marker above the code block")
                continue
            source_path = os.path.join(root, marker)
            if not os.path.isfile(source_path):
                errors.append(f"{where}: the marker names {marker}, which does not exist")
                continue
            line = missing_line(block, open(source_path, encoding="utf-8").read())
            if line is not None:
                errors.append(f"{where}: not in {marker} (in this order): {line}")
    for e in errors:
        print(e)
    print(f"{count} C++ code blocks in {len(pages)} pages, {len(errors)} problems")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
