#!/usr/bin/env python3
"""Checks that a CUDA binary holds machine code (SASS) for each given compute capability and PTX
for the last one: `cuobjdump --list-elf/--list-ptx` where the toolkit has it, else the binary's
.nv_fatbin section, read directly. Usage: check_cuda_archs.py <library> <arch>...  (e.g. 80 90)

A fat binary (as nvcc writes it) is a sequence of containers: a 16-byte header (magic 0xBA55ED50,
version, header size, payload size) followed by entries. Each entry starts with its kind (1 = PTX,
2 = ELF), its header size, its payload size and, at byte 28, the compute capability (e.g. 90)."""
import shutil
import struct
import subprocess
import sys
import tempfile

MAGIC = 0xBA55ED50


def from_cuobjdump(lib):
    tool = shutil.which('cuobjdump') or shutil.which('/usr/local/cuda/bin/cuobjdump')
    if tool is None:
        return None
    found = set()
    for flag, kind in (('--list-elf', 'sm'), ('--list-ptx', 'compute')):
        out = subprocess.run([tool, flag, lib], capture_output=True, text=True, check=True).stdout
        for token in out.replace('.', ' ').split():
            if token.startswith(kind + '_') and token[len(kind) + 1:].isdigit():
                found.add((kind, int(token[len(kind) + 1:])))
    return found


def from_fatbin(lib):
    with tempfile.NamedTemporaryFile() as section:
        subprocess.run(['objcopy', '-O', 'binary', '--only-section=.nv_fatbin', lib, section.name],
                       check=True)
        data = open(section.name, 'rb').read()
    found = set()
    pos = 0
    while pos + 16 <= len(data):
        magic, _version, header_size, fat_size = struct.unpack_from('<IHHQ', data, pos)
        if magic != MAGIC:
            pos += 8  # containers are 8-byte aligned; skip padding
            continue
        entry = pos + header_size
        end = entry + fat_size
        while entry + 32 <= end:
            kind, _ver, entry_header, payload = struct.unpack_from('<HHIQ', data, entry)
            arch = struct.unpack_from('<I', data, entry + 28)[0]
            if kind in (1, 2):
                found.add(('compute' if kind == 1 else 'sm', arch))
            entry += entry_header + payload
        pos = end
    return found


def main():
    lib, archs = sys.argv[1], [int(a) for a in sys.argv[2:]]
    found = from_cuobjdump(lib)
    source = 'cuobjdump'
    if found is None:
        found, source = from_fatbin(lib), '.nv_fatbin'
    print(f'{lib} ({source}): ' + ', '.join(f'{k}_{a}' for k, a in sorted(found)))
    wanted = {('sm', a) for a in archs} | {('compute', archs[-1])}
    missing = sorted(wanted - found)
    for kind, arch in missing:
        print(f'FAIL: no {"machine code" if kind == "sm" else "PTX"} for {kind}_{arch}')
    return 1 if missing else 0


if __name__ == '__main__':
    sys.exit(main())
