#!/usr/bin/env python3
"""docs/architecture.md's folder tree lists every folder and source file of the library.

The tree is the fenced block under "## The folder tree". A folder is listed when "<name>/" occurs in
it; a file when its name or its stem (the name up to the first '.') occurs as a word, or when it
matches a pattern of the tree such as "<family>_kernels.cu" or "ops_cuda*.cpp" and the part the
pattern leaves open is itself a word of the tree ("binary_kernels.cu": "binary" is listed among the
families). Checked: every folder under include/ lib/ cuda/ cmake/ tests/ samples/ benchmarks/
scripts/ (not the data below tests/golden/, samples/data/, benchmarks/results/,
tests/fuzz/corpus/), and every file of include/, lib/, cuda/, cmake/, scripts/, the top level of
samples/ and benchmarks/. Prints what is missing.
Usage: check_architecture_tree.py <source root>
"""
import os
import re
import sys

SOURCE = re.compile(r"\.(cpp|hpp|h|cu|cuh|def|proto|py|sh|in|build)$")
DATA = ("tests/golden/", "samples/data/", "benchmarks/results/", "tests/fuzz/corpus/")


def tree_text(root):
    with open(os.path.join(root, "docs", "architecture.md"), encoding="utf-8") as f:
        text = f.read()
    start = text.index("## The folder tree")
    open_fence = text.index("```", start)
    close_fence = text.index("```", open_fence + 3)
    return text[open_fence + 3 : close_fence]


def main():
    root = sys.argv[1]
    tree = tree_text(root)
    words = set(re.findall(r"[A-Za-z0-9_+-]+", tree))
    names = set(re.findall(r"[A-Za-z0-9_.+-]+", tree))
    folders = set(re.findall(r"([A-Za-z0-9_.+-]+)/", tree))
    patterns = []
    for token in re.findall(r"[A-Za-z0-9_.*<>+-]*[<*][A-Za-z0-9_.*<>+-]*", tree):
        if "." not in token:
            continue
        regex = re.escape(token).replace(r"\*", "(.*)")
        regex = re.sub(r"<[a-z_]+>", "(.+)", regex.replace(r"\<", "<").replace(r"\>", ">"))
        patterns.append(re.compile("^" + regex + "$"))

    def file_listed(name):
        stem = name.split(".", 1)[0]
        if name in names or stem in words:
            return True
        for p in patterns:
            m = p.match(name)
            if m and all(g.strip("_") in words for g in m.groups()):
                return True
        return False

    missing = []
    for top in ("include", "lib", "cuda", "cmake", "tests", "samples", "benchmarks", "scripts"):
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            rel = os.path.relpath(dirpath, root).replace(os.sep, "/") + "/"
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__" and not d.startswith("."))
            if any(rel.startswith(d) and rel != d for d in DATA):
                continue
            if rel.count("/") > 1 and os.path.basename(dirpath) not in folders:
                missing.append(f"folder {rel}")
            files_checked = top in ("include", "lib", "cuda", "cmake", "scripts") or rel.count("/") == 1
            if not files_checked or top == "tests":
                continue
            for name in sorted(filenames):
                if SOURCE.search(name) and not file_listed(name):
                    missing.append(f"file   {rel}{name}")
    for m in missing:
        print(f"docs/architecture.md's folder tree does not list {m}")
    print(f"{len(missing)} missing")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
