#!/usr/bin/env python3
"""Turns bench_ops' Google Benchmark JSON into the side-by-side table of docs/performance.md.

Each workload "<group>/<case>/<impl>" has a tapeflow row and, when present, a limit row (STREAM
triad/read or direct sgemm) and a libtorch row. For throughput the ratio is tapeflow / other
(higher is better); for per-op time it is tapeflow time / libtorch time (lower is better).
Usage: compare.py ops.json
"""
import json
import sys
from collections import OrderedDict


def value(b):
    """(number, unit, higher_is_better) of one benchmark entry."""
    if "GFLOPS" in b:
        return b["GFLOPS"] / 1e9, "GFLOP/s", True
    if "bytes_per_second" in b:
        return b["bytes_per_second"] / 1e9, "GB/s", True
    per = b["real_time"]
    scale = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[b.get("time_unit", "ns")]
    ns = per * scale
    if "items_per_second" in b:  # per-op time of a chain
        ns = 1e9 / b["items_per_second"]
    return ns, "ns/op", False


def main(path):
    data = json.load(open(path))
    rows = OrderedDict()
    for b in data["benchmarks"]:
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
            continue
        # Google Benchmark appends "/<arg>" and "/real_time" to registered names: drop them.
        parts = [p for p in b.get("run_name", b["name"]).split("/") if p != "real_time"]
        while len(parts) > 2 and parts[-1].isdigit():
            parts.pop()
        workload, impl = "/".join(parts[:-1]), parts[-1]
        rows.setdefault(workload, {})[impl] = value(b)
    ctx = data.get("context", {})
    print(f"threads={ctx.get('threads')} libtorch={ctx.get('libtorch')} host={ctx.get('host_name')}")
    print(f"{'workload':34} {'tapeflow':>12} {'limit':>12} {'libtorch':>12} {'vs limit':>9} {'vs torch':>9}")
    for workload, impls in rows.items():
        tf = impls.get("tapeflow")
        if not tf:
            continue
        limit = next((v for k, v in impls.items() if k.startswith("limit")), None)
        torch = impls.get("libtorch")
        unit, higher = tf[1], tf[2]

        def fmt(v):
            return f"{v[0]:.3g} {unit}" if v else "-"

        def ratio(other):
            if not other:
                return "-"
            return f"{tf[0] / other[0]:.2f}x" if higher else f"{tf[0] / other[0]:.2f}x"

        print(f"{workload:34} {fmt(tf):>12} {fmt(limit):>12} {fmt(torch):>12} {ratio(limit):>9} {ratio(torch):>9}")
    print("ratios: throughput rows are tapeflow/other (higher is better); ns/op rows are tapeflow/other (lower is better)")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "ops.json")
