#!/usr/bin/env python3
"""Reads a tapeflow checkpoint with a plain safetensors parser (struct + json + numpy.frombuffer)
and compares it with the values the C++ side wrote (expected.json of ckpt_python_fixture): proves
the files are ordinary safetensors files that any reader understands.
Usage: check_safetensors.py <ckpt_python_fixture executable> <output dir>"""
import json
import os
import shutil
import struct
import subprocess
import sys

try:
    import numpy as np
except ImportError:  # meson: exit code 77 = skipped
    print("numpy is not installed (Debian: python3-numpy)")
    sys.exit(77)

DTYPES = {"F32": "<f4", "F64": "<f8", "I32": "<i4", "I64": "<i8", "U8": "u1", "BOOL": "?", "F16": "<f2",
          "BF16": "<u2"}
NAMES = {"F32": "float32", "F64": "float64", "I32": "int32", "I64": "int64", "U8": "uint8", "BOOL": "bool",
         "F16": "float16", "BF16": "bfloat16"}


def crc32c(data: bytes) -> int:
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    crc = 0xFFFFFFFF
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def read_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n].decode("utf-8"))
    assert (8 + n) % 8 == 0, "data is not 8-byte aligned"
    data = raw[8 + n:]
    metadata = header.pop("__metadata__", {})
    tensors = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        buf = data[begin:end]
        array = np.frombuffer(buf, dtype=DTYPES[info["dtype"]])
        if info["dtype"] == "BF16":  # numpy has no bfloat16: widen the bits to float32
            array = (array.astype(np.uint32) << 16).view(np.float32)
        tensors[name] = (info["dtype"], info["shape"], array.reshape(info["shape"]), buf)
    return metadata, tensors


def main():
    fixture, out = sys.argv[1], sys.argv[2]
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    subprocess.run([fixture, out], check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(out, "expected.json")) as f:
        expected = json.load(f)
    metadata, tensors = read_safetensors(expected["file"])
    failures = []
    if metadata.get("format") != "tapeflow-checkpoint/1":
        failures.append(f"format: {metadata.get('format')}")
    if metadata.get("global_step") != str(expected["global_step"]):
        failures.append(f"global_step: {metadata.get('global_step')}")
    if sorted(tensors) != sorted(expected["tensors"]):
        failures.append(f"names: {sorted(tensors)} vs {sorted(expected['tensors'])}")
    for name, want in expected["tensors"].items():
        dtype, shape, array, buf = tensors[name]
        if NAMES[dtype] != want["dtype"] or list(shape) != want["shape"]:
            failures.append(f"{name}: {dtype} {shape} vs {want['dtype']} {want['shape']}")
            continue
        got = array.astype(np.float64).reshape(-1)
        if not np.array_equal(got, np.array(want["values"], dtype=np.float64)):
            failures.append(f"{name}: values {got.tolist()} vs {want['values']}")
        if metadata.get("crc32c/" + name) != f"{crc32c(buf):08x}":
            failures.append(f"{name}: crc {metadata.get('crc32c/' + name)} vs {crc32c(buf):08x}")
    if failures:
        print("\n".join(failures))
        sys.exit(1)
    print(f"check_safetensors: {len(tensors)} tensors match ({expected['file']})")
    shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
