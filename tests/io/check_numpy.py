#!/usr/bin/env python3
"""NumPy and tapeflow read each other's .npy/.npz files: NumPy writes every dtype and layout
(C and Fortran order, both byte orders, 0-d, empty, np.savez and np.savez_compressed) for
npy_fixture to read, and np.load reads what npy_fixture writes.
Usage: check_numpy.py <npy_fixture executable> <output dir>"""
import json
import os
import shutil
import subprocess
import sys

try:
    import numpy as np
except ImportError:  # meson: exit code 77 = skipped
    print("numpy is not installed (Debian: python3-numpy)")
    sys.exit(77)

fixture, out = sys.argv[1], sys.argv[2]
shutil.rmtree(out, ignore_errors=True)
os.makedirs(os.path.join(out, "numpy"))
os.makedirs(os.path.join(out, "tapeflow"))

# The tapeflow dtype each NumPy dtype loads as.
LOADS_AS = {"f2": "float16", "f4": "float32", "f8": "float64", "i1": "int32", "i2": "int32",
            "i4": "int32", "i8": "int64", "u1": "uint8", "u2": "int32", "u4": "int64", "b1": "bool"}


def run(*args):
    return json.loads(subprocess.run([fixture, *args], check=True, capture_output=True,
                                     text=True).stdout)


def same(name, got, want):
    code = want.dtype.kind + str(want.dtype.itemsize)
    assert got["dtype"] == LOADS_AS[code], (name, got["dtype"], code)
    assert tuple(got["shape"]) == want.shape, (name, got["shape"], want.shape)
    assert np.array_equal(np.array(got["values"], dtype=np.float64),
                          np.ascontiguousarray(want).astype(np.float64).ravel()), name


# ---- NumPy writes, tapeflow reads ----
arrays = {}
for code in LOADS_AS:
    base = np.arange(-6, 18).reshape(2, 3, 4) if code[0] != "u" else np.arange(24).reshape(2, 3, 4)
    if code == "b1":
        base = base % 3 == 0
    for order in "<>":
        a = base.astype(np.dtype(code).newbyteorder(order) if code[1] != "1" else code)
        arrays[f"{code}_{'le' if order == '<' else 'be'}"] = a
    arrays[f"{code}_fortran"] = np.asfortranarray(base.astype(code))
arrays["scalar"] = np.array(-3.25)
arrays["empty"] = np.zeros((2, 0, 5), dtype="<f4")
arrays["sliced_fortran"] = np.asfortranarray(np.arange(30.0).reshape(5, 6)[::2, 1:])
for name, a in arrays.items():
    path = os.path.join(out, "numpy", name + ".npy")
    np.save(path, a)
    same(name, run("read", path)[""], a)
np.savez(os.path.join(out, "numpy", "all.npz"), **arrays)
np.savez_compressed(os.path.join(out, "numpy", "all_compressed.npz"), **arrays)
for archive in ("all.npz", "all_compressed.npz"):
    got = run("read", os.path.join(out, "numpy", archive))
    assert sorted(got) == sorted(arrays), archive
    for name, a in arrays.items():
        same(f"{archive}:{name}", got[name], a)

# ---- tapeflow writes, NumPy reads ----
NUMPY_DTYPE = {"float16": "float16", "float32": "float32", "float64": "float64", "int32": "int32",
               "int64": "int64", "uint8": "uint8", "bool": "bool"}
written = run("write", os.path.join(out, "tapeflow"))


def check_written(name, a):
    want = written[name]
    assert a.dtype == np.dtype(NUMPY_DTYPE[want["dtype"]]), (name, a.dtype)
    assert list(a.shape) == want["shape"], (name, a.shape)
    assert np.array_equal(a.astype(np.float64).ravel(), np.array(want["values"], np.float64)), name


for name in written:
    check_written(name, np.load(os.path.join(out, "tapeflow", name + ".npy"), allow_pickle=False))
for archive in ("all.npz", "all_compressed.npz"):
    with np.load(os.path.join(out, "tapeflow", archive), allow_pickle=False) as z:
        assert sorted(z.files) == sorted(written), archive
        for name in written:
            check_written(name, z[name])
print(f"{len(arrays)} NumPy arrays read by tapeflow, {len(written)} tapeflow arrays read by NumPy")
