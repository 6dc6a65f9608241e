#!/usr/bin/env python3
"""Writes the golden .npy/.npz files of tests/io/test_npy.cpp with NumPy (see README.md)."""
import numpy as np

np.save("f4_c.npy", np.arange(6, dtype="<f4").reshape(2, 3) / 4)
np.save("f8_fortran_be.npy", np.asfortranarray(np.arange(24, dtype=">f8").reshape(2, 3, 4) - 5))
np.save("i2_be.npy", np.array([[-3, 7], [32767, -32768]], dtype=">i2"))
np.save("b1_0d.npy", np.array(True))
np.save("u1_empty.npy", np.zeros((0, 3), dtype="u1"))
np.savez("two.npz", a=np.array([1, 2, 3], dtype="<i8"), b=np.array([[0.5, -1.0]], dtype="<f2"))
np.savez_compressed("two_compressed.npz", a=np.array([1, 2, 3], dtype="<i8"),
                    b=np.array([[0.5, -1.0]], dtype="<f2"))
np.save("object.npy", np.array([1, "x", None], dtype=object), allow_pickle=True)

# A zip written to a stream that cannot seek: zipfile puts the sizes and CRC in data descriptors
# after each member (general purpose flag bit 3) and zeros in the local headers.
import io
import zipfile


class Unseekable(io.RawIOBase):
    def __init__(self, f):
        self.f = f

    def writable(self):
        return True

    def write(self, b):
        return self.f.write(b)


with open("descriptor.npz", "wb") as f, zipfile.ZipFile(Unseekable(f), "w",
                                                         zipfile.ZIP_DEFLATED) as z:
    for name, arr in {"x": np.arange(5, dtype="<i4"), "y": np.eye(2, dtype="<f8")}.items():
        buf = io.BytesIO()
        np.save(buf, arr)
        z.writestr(name + ".npy", buf.getvalue())
