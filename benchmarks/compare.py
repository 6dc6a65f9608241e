#!/usr/bin/env python3
"""Turns Google Benchmark JSON into the side-by-side tables of docs/performance.md.

Each workload "<group>/<case>/<impl>" has a tapeflow row and, when present, a limit row (STREAM
triad/read or direct sgemm) and a libtorch row. Benchmarks named without an implementation
(bench_summary, bench_core) are tapeflow rows. For throughput the ratio is tapeflow / other
(higher is better); for per-op time it is tapeflow time / other time (lower is better).
Usage: compare.py ops.json [more.json ...]                    (the text table)
       compare.py --markdown out.md --chart out.png a.json ...  (scripts/bench.sh's report)
"""
import argparse
import json
import os
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


def is_impl(name):
    return name.startswith(("tapeflow", "limit", "libtorch"))


def split_name(name):
    """'elementwise/exp/65536/tapeflow/real_time' -> ('elementwise/exp/65536', 'tapeflow')."""
    parts = [p for p in name.split("/") if p != "real_time"]
    if not is_impl(parts[-1]) and not any(is_impl(p) for p in parts):
        return "/".join(parts), "tapeflow"      # BM_ScalarSummary, BM_RandomNormal/65536
    while len(parts) > 2 and parts[-1].isdigit():
        parts.pop()
    return "/".join(parts[:-1]), parts[-1]


def load(paths):
    """(rows: workload -> {impl: value}, notes: workload -> counter text, context of the first file)."""
    rows, notes, context = OrderedDict(), {}, {}
    for path in paths:
        data = json.load(open(path))
        ctx = data.get("context", {})
        context = context or ctx
        for b in data["benchmarks"]:
            if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
                continue
            workload, impl = split_name(b.get("run_name", b["name"]))
            rows.setdefault(workload, {})[impl] = value(b)
            counters = [f"{k} {b[k]:.1f}" for k in b if k.startswith("peak_")]
            if counters:
                notes[workload] = ", ".join(counters)
        # Context entries "<what>_MiB_tapeflow" / "..._libtorch" (bench_train's peak RSS): rows too.
        for key, text in ctx.items():
            for impl in ("tapeflow", "libtorch"):
                if key.endswith("_MiB_" + impl):
                    workload = "memory/" + key[: -len("_MiB_" + impl)]
                    rows.setdefault(workload, {})[impl] = (float(text), "MiB", False)
    return rows, notes, context


def ratio(tf, other):
    """tapeflow/other as compare.py has always printed it (see the module docstring)."""
    return tf[0] / other[0] if tf and other and other[0] else None


def speed(tf, other):
    """How many times faster tapeflow is (> 1: tapeflow better), whatever the unit."""
    r = ratio(tf, other)
    if r is None or r == 0:
        return None
    return r if tf[2] else 1 / r


def table(rows):
    """[(workload, tapeflow, limit, libtorch)] for the workloads that have a tapeflow row."""
    out = []
    for workload, impls in rows.items():
        tf = impls.get("tapeflow")
        if tf:
            limit = next((v for k, v in impls.items() if k.startswith("limit")), None)
            out.append((workload, tf, limit, impls.get("libtorch")))
    return out


def print_text(rows, ctx):
    print(f"threads={ctx.get('threads')} libtorch={ctx.get('libtorch')} host={ctx.get('host_name')}")
    print(f"{'workload':34} {'tapeflow':>12} {'limit':>12} {'libtorch':>12} {'vs limit':>9} {'vs torch':>9}")
    for workload, tf, limit, torch in table(rows):
        unit = tf[1]

        def fmt(v):
            return f"{v[0]:.3g} {unit}" if v else "-"

        def rfmt(other):
            r = ratio(tf, other)
            return f"{r:.2f}x" if r is not None else "-"

        print(f"{workload:34} {fmt(tf):>12} {fmt(limit):>12} {fmt(torch):>12} {rfmt(limit):>9} {rfmt(torch):>9}")
    print("ratios: throughput rows are tapeflow/other (higher is better); ns/op rows are tapeflow/other (lower is better)")


def limits(rows):
    """The best value each machine limit reached in the run: {"limit_triad": (17.9, "GB/s", True), ...}."""
    best = {}
    for impls in rows.values():
        for impl, v in impls.items():
            if impl.startswith("limit") and (impl not in best or v[0] > best[impl][0]):
                best[impl] = v
    return best


def markdown(rows, notes):
    lines = []
    if limits(rows):
        lines += ["Machine limits (best of the run): " +
                  ", ".join(f"{name[len('limit_'):]} {v[0]:.3g} {v[1]}" for name, v in sorted(limits(rows).items())),
                  ""]
    lines += ["| workload | tapeflow | LibTorch | machine limit | speed vs LibTorch | speed vs limit | note |",
             "|---|---|---|---|---|---|---|"]

    def fmt(v):
        return f"{v[0]:.3g} {v[1]}" if v else "-"

    def sfmt(s):
        return f"{s:.2f}x" if s is not None else "-"

    for workload, tf, limit, torch in table(rows):
        lines.append(f"| {workload} | {fmt(tf)} | {fmt(torch)} | {fmt(limit)} | {sfmt(speed(tf, torch))} | "
                     f"{sfmt(speed(tf, limit))} | {notes.get(workload, '')} |")
    return "\n".join(lines) + "\n"


def chart(path, rows):
    from ratio_chart import write_chart
    data = [(w, [speed(tf, torch), speed(tf, limit)]) for w, tf, limit, torch in table(rows)
            if torch or limit]
    write_chart(path, "tapeflow vs LibTorch and the machine's limits", ["vs LibTorch", "vs machine limit"], data)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("json", nargs="*", default=["ops.json"])
    parser.add_argument("--markdown", help="write the markdown table here instead of printing text")
    parser.add_argument("--chart", help="also write a PNG bar chart of the speed ratios here")
    args = parser.parse_args(argv)
    rows, notes, ctx = load(args.json)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(markdown(rows, notes))
    else:
        print_text(rows, ctx)
    if args.chart:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        chart(args.chart, rows)


if __name__ == "__main__":
    main(sys.argv[1:])
