#!/usr/bin/env python3
"""The benchmark report (scripts/bench.sh -> benchmarks/compare.py --markdown --chart) on a fixed
Google Benchmark JSON: every naming form becomes the right row, speeds point the right way (above
1 = tapeflow faster), medians win over means, and the chart is a valid PNG.
Usage: test_report.py <source root> <scratch dir>"""
import os
import struct
import subprocess
import sys
import zlib

root, scratch = sys.argv[1], sys.argv[2]
os.makedirs(scratch, exist_ok=True)
md, png = os.path.join(scratch, "report.md"), os.path.join(scratch, "report.png")
subprocess.run([sys.executable, os.path.join(root, "benchmarks", "compare.py"), "--markdown", md, "--chart", png,
                os.path.join(root, "tests", "bench", "fixture.json")], check=True)
text = open(md).read()
print(text)
expected = [
    "| matmul/256 | 90 GFLOP/s | 45 GFLOP/s | 100 GFLOP/s | 2.00x | 0.90x |  |",
    "| train/tutorial_step | 5e+04 ns/op | 2e+05 ns/op | - | 4.00x | - |  |",   # median, not mean
    "| BM_ScalarSummary | 700 ns/op | - | - | - | - |  |",
    "| gate/gate_none | 4e+07 ns/op | - | - | - | - | peak_step_MiB 5.0 |",
    "| memory/mlp_100_steps_peak_rss | 80 MiB | 100 MiB | - | 1.25x | - |  |",
    "Machine limits (best of the run): sgemm 100 GFLOP/s",
]
failed = [line for line in expected if line not in text.splitlines()]
for line in failed:
    print("FAIL: missing row:", line)

data = open(png, "rb").read()
if data[:8] != b"\x89PNG\r\n\x1a\n":
    failed.append("PNG signature")
width, height = struct.unpack(">II", data[16:24])
pos, idat = 8, b""
while pos < len(data):   # walk the chunks, checking each CRC
    length, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 4:pos + 8 + length]
    if struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])[0] != zlib.crc32(body):
        failed.append(f"CRC of {kind}")
    if kind == b"IDAT":
        idat += body[4:]
    pos += 12 + length
if len(zlib.decompress(idat)) != height * (1 + width * 3):
    failed.append("PNG pixel data size")
print(f"chart {width}x{height}")
sys.exit(1 if failed else 0)
