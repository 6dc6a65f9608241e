#!/usr/bin/env python3
"""Turns one ISA's static library of CPU kernels into a single object that can sit next to the
baseline kernels in libtapeflow without sharing any code with them.

The kernel files are compiled once per dispatch level (-march=x86-64-v3, ...). Their inline and
template functions (xsimd, xtensor, std::, tapeflow's headers) have the same names as the baseline
copies, so the linker would keep one copy of each, possibly the AVX2 one, and a baseline caller on
an older CPU would die with SIGILL. This script partially links the library (ld -r) and renames
every function the object defines, and every vtable (whose slots point at those functions), with
the suffix ".isa_<level>", and makes them local symbols: the object then shares only data with
the rest of the library (static locals of inline functions, typeinfo), and is entered through
one global symbol, ENTRY renamed like the rest (register_cpu_kernels, which
lib/kernels/isa/dispatch.cpp calls by that name). Undefined references (functions of the
baseline files) are left alone.

Usage: make_isa_object.py LD NM OBJCOPY READELF ENTRY LEVEL INPUT.a OUTPUT.o
"""
import os
import subprocess
import sys


def run(*cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def main():
    ld, nm, objcopy, readelf, entry, level, archive, output = sys.argv[1:]
    suffix = ".isa_" + level.replace("-", "_")
    merged = output + ".merged.o"
    run(ld, "-r", "--whole-archive", archive, "-o", merged)

    # Code that runs when the library loads would run on every CPU: forbid it.
    sections = run(readelf, "-SW", merged)
    for name in (".init_array", ".ctors", ".preinit_array"):
        if name in sections:
            sys.exit(f"make_isa_object.py: {archive} has {name} (a static initializer); "
                     "kernel files compiled per ISA must not have one")

    renamed, shared = [], set()
    for line in run(nm, "--defined-only", merged).splitlines():
        parts = line.split()
        if len(parts) != 3:
            continue
        _, kind, name = parts
        if kind in "TW" or (kind == "V" and name.startswith(("_ZTV", "_ZTT", "_ZTC"))):
            renamed.append(name)
        elif kind in "DBR":
            sys.exit(f"make_isa_object.py: {archive} defines the global variable {name}; kernel "
                     "files compiled per ISA must keep their state in the baseline files")
        elif kind in "Vu":
            shared.add(name)  # typeinfo, static locals of inline functions, inline variables
    # COMDAT groups are merged by their signature's name. A function's group is named after it
    # (renamed above), but a constructor's or destructor's group is named after a local alias
    # (..C5.., ..D5..): rename every group that is not shared data, or the linker would keep one
    # group of that name, the baseline's or this one, and leave the other's callers calling 0.
    for line in run(readelf, "-gW", merged).splitlines():
        if "COMDAT group section" in line:
            signature = line.split("[")[2].split("]")[0]
            if signature not in shared and signature not in renamed:
                renamed.append(signature)
    renames = [f"{name} {name}{suffix}\n" for name in renamed]
    if f"{entry} {entry}{suffix}\n" not in renames:
        sys.exit(f"make_isa_object.py: {archive} does not define the entry point {entry}")
    mapping = output + ".renames"
    with open(mapping, "w") as f:
        f.writelines(renames)
    local = output + ".local"
    with open(local, "w") as f:
        f.writelines(r.split()[1] + "\n" for r in renames if r.split()[0] != entry)
    step = output + ".renamed.o"
    run(objcopy, "--redefine-syms=" + mapping, merged, step)
    run(objcopy, "--localize-symbols=" + local, step, output)
    for path in (merged, step, mapping, local):
        os.remove(path)
    for line in run(readelf, "-gW", output).splitlines():
        if "COMDAT group section" in line:
            signature = line.split("[")[2].split("]")[0]
            if not signature.endswith(suffix) and signature not in shared:
                sys.exit(f"make_isa_object.py: group {signature} of {output} was not renamed")


if __name__ == "__main__":
    main()
