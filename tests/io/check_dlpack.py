#!/usr/bin/env python3
"""Tensors crossing between tapeflow and PyTorch (or NumPy) through DLPack capsules, by ctypes:
the capsule's DLManagedTensor* goes to tapeflow (dlpack_shim.cpp) and back without a copy.
Usage: check_dlpack.py torch|numpy <libdlpack_shim.so>. Exit 77 (skipped) without the library."""
import ctypes
import sys

which, shim_path = sys.argv[1], sys.argv[2]
try:
    if which == "torch":
        import torch
        import torch.utils.dlpack
    else:
        import numpy as np
except ImportError:  # meson: exit code 77 = skipped
    print(f"{which} is not installed")
    sys.exit(77)

api = ctypes.pythonapi
api.PyCapsule_GetPointer.restype = ctypes.c_void_p
api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
api.PyCapsule_SetName.restype = ctypes.c_int
api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
api.PyCapsule_New.restype = ctypes.py_object
api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
shim = ctypes.CDLL(shim_path)
shim.tfdl_roundtrip.restype = ctypes.c_void_p
shim.tfdl_roundtrip.argtypes = [ctypes.c_void_p]
shim.tfdl_sum.restype = ctypes.c_double
shim.tfdl_sum.argtypes = [ctypes.c_void_p]
shim.tfdl_range.restype = ctypes.c_void_p
shim.tfdl_range.argtypes = [ctypes.c_int]


def take(capsule):
    """The capsule's DLManagedTensor*, marked consumed (tapeflow calls its deleter now)."""
    ptr = api.PyCapsule_GetPointer(capsule, b"dltensor")
    api.PyCapsule_SetName(capsule, b"used_dltensor")
    return ptr


def capsule_of(ptr):
    assert ptr, "tapeflow refused the tensor (see stderr)"
    return api.PyCapsule_New(ptr, b"dltensor", None)


class Exported:
    """What np.from_dlpack takes: an object with __dlpack__ and __dlpack_device__."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, stream=None):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)


if which == "torch":
    x = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    y = torch.utils.dlpack.from_dlpack(capsule_of(shim.tfdl_roundtrip(take(
        torch.utils.dlpack.to_dlpack(x)))))
    assert y.data_ptr() == x.data_ptr(), "copied"
    x[0, 0] = 100.0  # the same memory
    assert y[0, 0].item() == 100.0
    for dtype in (torch.float64, torch.float16, torch.bfloat16, torch.int32, torch.int64,
                  torch.uint8, torch.bool):
        x = torch.ones(5, dtype=dtype)
        y = torch.utils.dlpack.from_dlpack(capsule_of(shim.tfdl_roundtrip(take(
            torch.utils.dlpack.to_dlpack(x)))))
        assert y.data_ptr() == x.data_ptr() and y.dtype == dtype, dtype
    strided = torch.arange(12, dtype=torch.float32).reshape(3, 4).t()
    assert shim.tfdl_sum(take(torch.utils.dlpack.to_dlpack(strided))) == 66.0
    z = torch.utils.dlpack.from_dlpack(capsule_of(shim.tfdl_range(6)))
    assert z.tolist() == [0, 1, 2, 3, 4, 5]
    del z
    if torch.cuda.is_available():
        print("note: CUDA tensors are not checked here (tapeflow built without CUDA?)")
else:
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    y = np.from_dlpack(Exported(capsule_of(shim.tfdl_roundtrip(take(x.__dlpack__())))))
    assert y.ctypes.data == x.ctypes.data, "copied"
    x[0, 0] = 100.0
    assert y[0, 0] == 100.0
    for dtype in (np.float64, np.float16, np.int32, np.int64, np.uint8):
        x = np.ones(5, dtype=dtype)
        y = np.from_dlpack(Exported(capsule_of(shim.tfdl_roundtrip(take(x.__dlpack__())))))
        assert y.ctypes.data == x.ctypes.data and y.dtype == dtype, dtype
    strided = np.arange(12, dtype=np.float32).reshape(3, 4).T
    assert shim.tfdl_sum(take(strided.__dlpack__())) == 66.0
    z = np.from_dlpack(Exported(capsule_of(shim.tfdl_range(6))))
    assert z.tolist() == [0, 1, 2, 3, 4, 5]
    del z
print(f"dlpack with {which}: ok")
