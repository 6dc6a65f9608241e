#!/usr/bin/env python3
"""docs/architecture.md's "The layers" holds: every #include that points up the stack, or sideways
between two folders of one layer, is one the page lists (EXCEPTIONS below, each with the page's
reason), and each listed one still exists.

Layers, bottom up: core; kernels (lib/kernels/*, cuda/); ops; autograd; data, summary, io,
distribute, interop, proto; profiler and function; train; keras. A file of include/tapeflow/ belongs to the layer of the
folder that implements it. Checked: the `#include "..."` and `#include <tapeflow/...>` lines of
every file of lib/, cuda/ and include/tapeflow/. Usage: check_layers.py <source root>
"""
import os
import re
import sys

RANK = {"core": 0, "kernels": 1, "cuda": 1, "ops": 2, "autograd": 3, "data": 4, "summary": 4,
        "io": 4, "distribute": 4, "interop": 4, "proto": 4, "distributions": 4, "profiler": 5, "function": 5,
        "train": 6, "keras": 7}
# Public headers outside a folder: the layer of the code that implements them.
PUBLIC_TOP = {"version.hpp": "core", "random.hpp": "ops", "data.hpp": "data",
              "summary.hpp": "summary", "io.hpp": "io", "distribute.hpp": "distribute",
              "dlpack.hpp": "interop", "profiler.hpp": "profiler",
              "distributions.hpp": "distributions", "function.hpp": "function",
              "tapeflow.hpp": None}
# tf::image (lib/image/, image.hpp) is written with public ops: the middle layer.
RANK["image"] = 4
PUBLIC_TOP["image.hpp"] = "image"
INCLUDE = re.compile(r'^\s*#\s*include\s+([<"])([^>"]+)[>"]', re.M)

# The upward and sideways includes docs/architecture.md lists ("The layers"), as (including file or
# folder, included file). A folder stands for every file in it.
EXCEPTIONS = {
    # Core calls tf::cast.
    ("lib/core/tensor.cpp", "include/tapeflow/ops/creation.hpp"),
    # Kernels are written against the ops layer's types and share a few of its helpers.
    ("kernels", "lib/ops/dispatch.hpp"),
    ("kernels", "lib/ops/op_families.hpp"),
    ("kernels", "lib/ops/attrs.hpp"),
    ("kernels", "lib/ops/apply.hpp"),
    ("kernels", "lib/ops/nn_common.hpp"),
    ("kernels", "lib/ops/attention_operands.hpp"),
    ("cuda", "lib/ops/op.hpp"),
    ("cuda", "lib/ops/dispatch.hpp"),
    ("cuda", "lib/ops/nn_common.hpp"),
    ("cuda", "lib/ops/attention_operands.hpp"),
    ("cuda", "lib/ops/backend_plugin.hpp"),
    # The CUDA plugin's NCCL collectives use the MPI transport.
    ("cuda", "lib/distribute/transport.hpp"),
    ("cuda", "lib/distribute/wire.hpp"),
    ("cuda", "include/tapeflow/distribute.hpp"),
    # The ops layer reaches into autograd.
    ("lib/ops/apply.cpp", "lib/autograd/tape.hpp"),
    ("lib/ops/attention.cpp", "lib/autograd/tape.hpp"),
    ("lib/ops/layer_norm.cpp", "lib/autograd/tape.hpp"),
    ("lib/ops/rnn.cpp", "lib/autograd/tape.hpp"),
    ("lib/ops/rnn.cpp", "include/tapeflow/autograd/gradient_tape.hpp"),
    ("lib/ops/training_ops.cpp", "lib/autograd/variable_update.hpp"),
    ("lib/ops/training_ops.hpp", "include/tapeflow/autograd/variable.hpp"),
    ("lib/ops/op_def.hpp", "include/tapeflow/autograd/gradient.hpp"),
    ("include/tapeflow/ops/clip.hpp", "include/tapeflow/autograd/gradient.hpp"),
    # The profiler observes ops, the backward walk and the thread pool's chunks.
    ("lib/core/parallel.cpp", "lib/profiler/hooks.hpp"),
    ("lib/ops/apply.cpp", "lib/profiler/op_scope.hpp"),
    ("lib/autograd/backward.cpp", "lib/profiler/hooks.hpp"),
    # A tf::function's trace hears of what the layers below do (variable reads, random seeds,
    # host steps) through one hook header.
    ("lib/ops/random_ops.cpp", "lib/function/trace_hooks.hpp"),
    ("lib/ops/print.cpp", "lib/function/trace_hooks.hpp"),
    ("lib/autograd/variable.cpp", "lib/function/trace_hooks.hpp"),
    ("lib/summary/summary_writer.cpp", "lib/function/trace_hooks.hpp"),
    # Sideways in the middle layer.
    ("lib/data/file_datasets.cpp", "include/tapeflow/io.hpp"),
    ("lib/data/file_datasets.cpp", "lib/io/record_file.hpp"),
    ("summary", "lib/io/record_file.hpp"),
    ("summary", "lib/io/file_util.hpp"),
    ("lib/summary/summary_writer.cpp", "include/tapeflow/distribute.hpp"),
    # tf::image::encode_png uses summary's libpng encoder (libpng's headers stay in that part).
    ("lib/image/png_image.cpp", "lib/summary/encoders.hpp"),
    ("include/tapeflow/distribute.hpp", "include/tapeflow/data.hpp"),
    # Distribute wraps train's optimizers.
    ("include/tapeflow/distribute.hpp", "include/tapeflow/train/optimizer.hpp"),
    ("lib/distribute/distributed_optimizer.cpp", "lib/train/traced_apply.hpp"),
    # A ps task finds the optimizer a push names among the live ones.
    ("lib/distribute/parameter_server.cpp", "lib/train/remote_apply.hpp"),
    # tf.train.Checkpoint walks Keras objects.
    ("lib/train/checkpoint/trackable.hpp", "include/tapeflow/keras/module.hpp"),
    ("lib/train/checkpoint/trackable.cpp", "include/tapeflow/keras/model.hpp"),
    ("lib/train/checkpoint/trackable.cpp", "include/tapeflow/keras/layers/attention.hpp"),
    ("lib/train/checkpoint/trackable.cpp", "include/tapeflow/keras/optimizers.hpp"),
    ("lib/train/checkpoint/object_checkpoint.cpp", "include/tapeflow/keras/layer.hpp"),
    ("lib/train/checkpoint/object_checkpoint.cpp", "include/tapeflow/keras/optimizers.hpp"),
}


def group(path):
    """The folder (layer key) of a repository path, or None when it is no library code."""
    parts = path.split("/")
    if parts[0] == "cuda":
        return "cuda"
    if parts[0] == "lib" and len(parts) > 2:
        return parts[1]
    if parts[:2] == ["include", "tapeflow"]:
        if len(parts) == 3:
            return PUBLIC_TOP.get(parts[2])
        return parts[2]
    return None


def target(root, source, quote, name):
    if quote == "<":
        return "include/" + name if name.startswith("tapeflow/") else None
    for base in (os.path.dirname(source), "lib"):
        candidate = os.path.normpath(os.path.join(base, name))
        if os.path.exists(os.path.join(root, candidate)):
            return candidate
    return None  # generated (protoc, configure_file) or not tapeflow's


def main():
    root = sys.argv[1]
    found = set()
    for top in ("lib", "cuda", "include/tapeflow"):
        for dirpath, _, filenames in os.walk(os.path.join(root, top)):
            for name in sorted(filenames):
                path = os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/")
                src = group(path)
                if src is None or not re.search(r"\.(cpp|hpp|h|cu|cuh|def|in)$", name):
                    continue
                with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
                    text = f.read()
                for quote, inc in INCLUDE.findall(text):
                    dst_path = target(root, path, quote, inc)
                    dst = group(dst_path) if dst_path else None
                    if dst is None or dst == src:
                        continue
                    # kernels/ and cuda/ are one layer: the CUDA glue includes the shared kernels.
                    sideways = RANK[dst] == RANK[src] and {src, dst} != {"kernels", "cuda"}
                    if RANK[dst] > RANK[src] or sideways:
                        found.add((path, dst_path))
    used = set()
    problems = []
    for path, dst_path in sorted(found):
        rules = [r for r in ((path, dst_path), (group(path), dst_path)) if r in EXCEPTIONS]
        rule = rules[0] if rules else None
        if rule is None:
            problems.append(f"{path} includes {dst_path}, which is above it (or beside it, in "
                            "another folder), and docs/architecture.md's \"The layers\" does not "
                            "say so")
        else:
            used.add(rule)
    for rule in sorted(EXCEPTIONS - used):
        problems.append(f"{rule[0]} no longer includes {rule[1]}: drop it from "
                        "docs/architecture.md's \"The layers\" and from this script")
    for p in problems:
        print(p)
    print(f"{len(found)} upward or sideways includes, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
