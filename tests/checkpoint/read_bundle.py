#!/usr/bin/env python3
"""An independent reader of TensorFlow's tensor_bundle checkpoints (pure python3 + numpy).

Written from the format's description, sharing nothing with tapeflow's C++ reader: the leveldb
table of "<prefix>.index" (48-byte footer with TF's magic number, index block -> data blocks,
each block with a compression byte and a masked CRC-32C, prefix-compressed entries), the
hand-decoded BundleHeaderProto / BundleEntryProto, and the data files' tensors, each checked
against its entry's CRC-32C.

    read_bundle.py PREFIX                 prints key, dtype, shape and values of every entry
    read_bundle.py --check FIXTURE DIR [GOLDEN]
        runs FIXTURE DIR/ckpt and checks what it wrote, then FIXTURE --saver DIR/saver (the
        Saver's TF-format output: TF1 keys, Adam values, state file); with GOLDEN (tests/golden), first checks
        this reader on the checkpoints TensorFlow wrote (tf_checkpoints/README.md)
    read_bundle.py --check-objects FIXTURE DIR
        runs FIXTURE DIR/objects (object_fixture.cpp) and checks the TF2 object-based checkpoint
        it wrote: keys, values and the TrackableObjectGraph (decoded here from the wire format)
        exactly as TensorFlow lays them out for tf.train.Checkpoint(model=..., optimizer=...)
"""
import os
import struct
import subprocess
import sys

import numpy as np

MAGIC = 0xDB4775248B80FB57
DTYPES = {1: np.float32, 2: np.float64, 3: np.int32, 4: np.uint8, 5: np.int16, 6: np.int8,
          9: np.int64, 10: np.bool_, 14: "bfloat16", 17: np.uint16, 19: np.float16,
          22: np.uint32, 23: np.uint64}
DT_STRING = 7

_TABLE = []
for _i in range(256):
    _c = _i
    for _ in range(8):
        _c = (_c >> 1) ^ 0x82F63B78 if _c & 1 else _c >> 1
    _TABLE.append(_c)


def crc32c(data, crc=0):
    crc ^= 0xFFFFFFFF
    for b in data:
        crc = _TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def mask(crc):
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


class Corrupt(Exception):
    pass


def varint(buf, pos):
    value = shift = 0
    while True:
        if pos >= len(buf) or shift > 63:
            raise Corrupt("truncated varint")
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return value, pos


def snappy_decompress(buf):
    n, pos = varint(buf, 0)
    out = bytearray()
    while pos < len(buf):
        tag = buf[pos]
        pos += 1
        kind = tag & 3
        if kind == 0:  # literal
            length = tag >> 2
            if length >= 60:
                extra = length - 59
                length = int.from_bytes(buf[pos:pos + extra], "little")
                pos += extra
            length += 1
            out += buf[pos:pos + length]
            pos += length
            continue
        if kind == 1:
            length = 4 + ((tag >> 2) & 7)
            offset = ((tag >> 5) << 8) | buf[pos]
            pos += 1
        else:
            size = 2 if kind == 2 else 4
            length = (tag >> 2) + 1
            offset = int.from_bytes(buf[pos:pos + size], "little")
            pos += size
        if offset == 0 or offset > len(out):
            raise Corrupt("bad snappy copy")
        for _ in range(length):
            out.append(out[-offset])
    if len(out) != n:
        raise Corrupt("snappy length mismatch")
    return bytes(out)


def read_block(data, offset, size):
    if offset + size + 5 > len(data):
        raise Corrupt("block outside the file")
    contents = data[offset:offset + size]
    kind = data[offset + size]
    stored = struct.unpack_from("<I", data, offset + size + 1)[0]
    if stored != mask(crc32c(data[offset:offset + size + 1])):
        raise Corrupt("block CRC mismatch at %d" % offset)
    if kind == 1:
        return snappy_decompress(contents)
    if kind != 0:
        raise Corrupt("unknown compression %d" % kind)
    return contents


def block_entries(block):
    (num_restarts,) = struct.unpack_from("<I", block, len(block) - 4)
    limit = len(block) - 4 - 4 * num_restarts
    restarts = struct.unpack_from("<%dI" % num_restarts, block, limit)
    pos, key, out = 0, b"", []
    while pos < limit:
        if pos in restarts:
            starts_here = True
        else:
            starts_here = False
        shared, pos = varint(block, pos)
        unshared, pos = varint(block, pos)
        vlen, pos = varint(block, pos)
        if starts_here and shared != 0:
            raise Corrupt("restart point with a shared prefix")
        key = key[:shared] + block[pos:pos + unshared]
        pos += unshared
        out.append((key, block[pos:pos + vlen]))
        pos += vlen
    if pos != limit:
        raise Corrupt("entries overrun the restart array")
    return out


def read_table(data):
    if len(data) < 48:
        raise Corrupt("short file")
    footer = data[-48:]
    if struct.unpack_from("<Q", footer, 40)[0] != MAGIC:
        raise Corrupt("bad magic")
    pos = 0
    _meta_off, pos = varint(footer, pos)
    _meta_size, pos = varint(footer, pos)
    idx_off, pos = varint(footer, pos)
    idx_size, pos = varint(footer, pos)
    rows = []
    for sep, handle in block_entries(read_block(data, idx_off, idx_size)):
        off, p = varint(handle, 0)
        size, _ = varint(handle, p)
        for key, value in block_entries(read_block(data, off, size)):
            if rows and key <= rows[-1][0]:
                raise Corrupt("keys out of order")
            if key > sep:
                raise Corrupt("key past its index separator")
            rows.append((key, value))
    return rows


def fields(msg):
    pos, out = 0, []
    while pos < len(msg):
        tag, pos = varint(msg, pos)
        num, wire = tag >> 3, tag & 7
        if wire == 0:
            val, pos = varint(msg, pos)
        elif wire == 2:
            n, pos = varint(msg, pos)
            val = msg[pos:pos + n]
            pos += n
        elif wire == 5:
            val = struct.unpack_from("<I", msg, pos)[0]
            pos += 4
        elif wire == 1:
            val = struct.unpack_from("<Q", msg, pos)[0]
            pos += 8
        else:
            raise Corrupt("wire type %d" % wire)
        out.append((num, wire, val))
    return out


def parse_entry(msg):
    e = {"dtype": 0, "shape": [], "shard_id": 0, "offset": 0, "size": 0, "crc32c": None}
    for num, _wire, val in fields(msg):
        if num == 1:
            e["dtype"] = val
        elif num == 2:
            for dnum, _w, dim in fields(val):
                if dnum == 2:
                    size = dict((n, v) for n, _, v in fields(dim)).get(1, 0)
                    e["shape"].append(size)
        elif num == 3:
            e["shard_id"] = val
        elif num == 4:
            e["offset"] = val
        elif num == 5:
            e["size"] = val
        elif num == 6:
            e["crc32c"] = val
    return e


def read_bundle(prefix):
    """{key: (dtype name, shape, numpy array or list of bytes)}, everything checked."""
    with open(prefix + ".index", "rb") as f:
        rows = read_table(f.read())
    if not rows or rows[0][0] != b"":
        raise Corrupt("no header entry")
    header = dict((n, v) for n, _, v in fields(rows[0][1]))
    num_shards = header.get(1, 0)
    if num_shards < 1 or header.get(2, 0) != 0:
        raise Corrupt("bad header")
    version = dict((n, v) for n, _, v in fields(header.get(3, b"")))
    if version.get(1) != 1:
        raise Corrupt("producer %r" % version.get(1))
    shards = []
    for s in range(num_shards):
        with open("%s.data-%05d-of-%05d" % (prefix, s, num_shards), "rb") as f:
            shards.append(f.read())
    out = {}
    for key, value in rows[1:]:
        e = parse_entry(value)
        raw = shards[e["shard_id"]][e["offset"]:e["offset"] + e["size"]]
        if len(raw) != e["size"]:
            raise Corrupt("%s: data past the end of its shard" % key)
        count = int(np.prod(e["shape"], dtype=np.int64))
        if e["dtype"] == DT_STRING:
            lengths, pos, crc = [], 0, 0
            for _ in range(count):
                n, pos = varint(raw, pos)
                lengths.append(n)
                crc = crc32c(struct.pack("<I" if n < 2**32 else "<Q", n), crc)
            if count or e["size"]:
                (stored,) = struct.unpack_from("<I", raw, pos)
                if stored != mask(crc):
                    raise Corrupt("%s: string length checksum" % key)
                crc = crc32c(raw[pos:pos + 4], crc)
                pos += 4
            values = []
            for n in lengths:
                values.append(bytes(raw[pos:pos + n]))
                crc = crc32c(values[-1], crc)
                pos += n
            if pos != len(raw):
                raise Corrupt("%s: bytes after the strings" % key)
            arr, name = values, "string"
        else:
            np_type = DTYPES[e["dtype"]]
            crc = crc32c(raw)
            if np_type == "bfloat16":
                bits = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
                arr, name = bits.view(np.float32).reshape(e["shape"]), "bfloat16"
            else:
                dt = np.dtype(np_type).newbyteorder("<")
                if count * dt.itemsize != len(raw):
                    raise Corrupt("%s: size %d for %d elements" % (key, len(raw), count))
                arr, name = np.frombuffer(raw, dtype=dt).reshape(e["shape"]), dt.name
        if mask(crc) != e["crc32c"]:
            raise Corrupt("%s: entry CRC mismatch" % key)
        out[key.decode()] = (name, list(e["shape"]), arr)
    return out


def check_fixture(fixture, directory):
    """What tests/checkpoint/bundle_fixture.cpp writes, value by value."""
    prefix = directory + "/ckpt"
    subprocess.run([fixture, prefix], check=True)
    got = read_bundle(prefix)
    expected = {
        "bool": ("bool", [2, 2], np.array([[True, False], [False, True]])),
        "empty": ("float32", [0, 3], np.zeros((0, 3), np.float32)),
        "f16": ("float16", [3], np.array([0.5, -2.0, 1024.0], np.float16)),
        "f32": ("float32", [2, 3], np.arange(6, dtype=np.float32).reshape(2, 3) * 0.25),
        "f64": ("float64", [4], np.array([1e-300, -2.5, 3.0, 1e300])),
        "i32": ("int32", [3], np.array([-7, 0, 2**31 - 1], np.int32)),
        "i64": ("int64", [2], np.array([-(2**62), 2**40], np.int64)),
        "scalar": ("float32", [], np.array(3.0, np.float32)),
        "u8": ("uint8", [5], np.array([0, 1, 127, 128, 255], np.uint8)),
        "bf16": ("bfloat16", [2], np.array([1.0, -0.5], np.float32)),
        "strings": ("string", [3], [b"", b"hello", b"\x00\xff bytes"]),
    }
    for i in range(300):
        expected["many/var_%04d" % i] = ("int64", [1], np.array([i * 3], np.int64))
    if sorted(got) != sorted(expected):
        raise AssertionError("keys differ: %s" % sorted(set(got) ^ set(expected)))
    for key, (name, shape, value) in expected.items():
        gname, gshape, gvalue = got[key]
        if (gname, gshape) != (name, shape):
            raise AssertionError("%s: %s %s, expected %s %s" % (key, gname, gshape, name, shape))
        if name == "string":
            ok = gvalue == value
        else:
            ok = np.array_equal(np.asarray(gvalue), value)
        if not ok:
            raise AssertionError("%s: %r, expected %r" % (key, gvalue, value))
    print("read_bundle: %d entries of %s read and checked" % (len(got), prefix))


def check_saver(fixture, directory):
    """tf::train::Saver's output (bundle_fixture --saver): TF1's keys and Adam's values, the state
    file in TF's text format, the older checkpoint deleted (max_to_keep 1)."""
    directory = os.path.join(directory, "saver")
    os.makedirs(directory, exist_ok=True)
    for name in os.listdir(directory):
        os.remove(os.path.join(directory, name))
    subprocess.run([fixture, "--saver", directory], check=True)
    files = sorted(os.listdir(directory))
    if files != ["checkpoint", "model.ckpt-2.data-00000-of-00001", "model.ckpt-2.index"]:
        raise AssertionError("saver files: %r" % files)
    with open(os.path.join(directory, "checkpoint")) as f:
        state = f.read()
    if state != 'model_checkpoint_path: "model.ckpt-2"\n' \
            'all_model_checkpoint_paths: "model.ckpt-2"\n':
        raise AssertionError("state file: %r" % state)
    # TF1's AdamOptimizer, two steps on loss sum(w^2)/2 (gradient w), in float64.
    w = np.array([1.0, -2.0, 0.5])
    m = np.zeros(3)
    v = np.zeros(3)
    b1p, b2p = 0.9, 0.999
    for _ in range(2):
        g = w.copy()
        lr_t = 0.1 * np.sqrt(1 - b2p) / (1 - b1p)
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        w = w - lr_t * m / (np.sqrt(v) + 1e-8)
        b1p *= 0.9
        b2p *= 0.999
    expected = {"w": ("float32", [3], w), "w/Adam": ("float32", [3], m),
                "w/Adam_1": ("float32", [3], v), "beta1_power": ("float32", [], b1p),
                "beta2_power": ("float32", [], b2p), "global_step": ("int64", [], 2)}
    got = read_bundle(os.path.join(directory, "model.ckpt-2"))
    if sorted(got) != sorted(expected):
        raise AssertionError("saver keys: %r" % sorted(got))
    for key, (name, shape, value) in expected.items():
        gname, gshape, gvalue = got[key]
        if (gname, gshape) != (name, shape) or \
                not np.allclose(np.asarray(gvalue, np.float64), value, rtol=1e-5, atol=1e-7):
            raise AssertionError("%s: %s %s %r, expected %s %s %r"
                                 % (key, gname, gshape, gvalue, name, shape, value))
    print("read_bundle: the Saver's checkpoint has TF1's keys and Adam's values")


def check_golden(golden):
    """This reader on TensorFlow's own files: the values of the export scripts."""
    half = {"a": 0.5, "b": 2.0, "c": 3.0}
    for name, values in [
            ("saved_model_half_plus_two_cpu", dict(half, a2=0.5, c2=3.0)),
            ("saved_model_half_plus_two_tf2_cpu",
             {k + "/.ATTRIBUTES/VARIABLE_VALUE": v for k, v in half.items()}),
            ("saved_model_counter", {"counter": 0.0})]:
        got = read_bundle("%s/tf_checkpoints/%s/variables" % (golden, name))
        graph = got.pop("_CHECKPOINTABLE_OBJECT_GRAPH", None)
        if graph is not None and (graph[0], len(graph[2][0])) != ("string", 613):
            raise AssertionError("%s: object graph %r" % (name, graph[:2]))
        if {k: (v[0], v[1], float(v[2])) for k, v in got.items()} != \
                {k: ("float32", [], v) for k, v in values.items()}:
            raise AssertionError("%s: %r" % (name, got))
    print("read_bundle: TensorFlow's checkpoints read as expected")


def parse_object_graph(msg):
    """TrackableObjectGraph (trackable_object_graph.proto) -> list of node dicts."""
    nodes = []
    for num, wire, node in fields(msg):
        if num != 1 or wire != 2:
            raise Corrupt("object graph field %d" % num)
        n = {"children": [], "attributes": [], "slots": [], "has_values": None}
        for fnum, _w, val in fields(node):
            sub = dict((k, v) for k, _, v in fields(val)) if fnum in (1, 2, 3, 5) else {}
            if fnum == 1:
                n["children"].append((sub.get(1, 0), sub.get(2, b"").decode()))
            elif fnum == 2:
                n["attributes"].append(tuple(sub.get(k, b"").decode() for k in (1, 2, 3)))
            elif fnum == 3:
                n["slots"].append((sub.get(1, 0), sub.get(2, b"").decode(), sub.get(3, 0)))
            elif fnum == 5:
                n["has_values"] = bool(sub.get(1, 0))
        nodes.append(n)
    return nodes


def check_objects(fixture, directory):
    """What tests/checkpoint/object_fixture.cpp writes, against TensorFlow's layout."""
    prefix = directory + "/objects"
    subprocess.run([fixture, prefix], check=True)
    got = read_bundle(prefix + "-1")
    graph_entry = got.pop("_CHECKPOINTABLE_OBJECT_GRAPH")
    if graph_entry[:2] != ("string", []):
        raise AssertionError("object graph entry %r" % (graph_entry[:2],))
    nodes = parse_object_graph(graph_entry[2][0])
    # Breadth first from the root (children of tf.train.Checkpoint sorted, save_counter last);
    # tf.keras 2's Sequential names its layers layer_with_weights-<k> and layer-<i>; slots come
    # after every other node, per slot name ("m", then "v") and variable in node order.
    layer0, layer1 = "model/layer_with_weights-0", "model/layer_with_weights-1"
    paths = ["", "model", "optimizer", "save_counter", layer0, layer1, "optimizer/iter",
             layer0 + "/kernel", layer0 + "/bias", layer1 + "/gamma", layer1 + "/beta",
             layer1 + "/moving_mean", layer1 + "/moving_variance"]
    trainable = [7, 8, 9, 10]
    for slot in ("m", "v"):
        for var in trainable:
            paths.append("%s/.OPTIMIZER_SLOT/optimizer/%s" % (paths[var], slot))
    children = {0: [(1, "model"), (2, "optimizer"), (3, "save_counter")],
                1: [(4, "layer_with_weights-0"), (4, "layer-0"), (5, "layer_with_weights-1"),
                    (5, "layer-1")],
                2: [(6, "iter")], 4: [(7, "kernel"), (8, "bias")],
                5: [(9, "gamma"), (10, "beta"), (11, "moving_mean"), (12, "moving_variance")]}
    if len(nodes) != len(paths):
        raise AssertionError("%d nodes, expected %d" % (len(nodes), len(paths)))
    for i, node in enumerate(nodes):
        if node["children"] != children.get(i, []):
            raise AssertionError("node %d children %r" % (i, node["children"]))
        if node["has_values"] is not True:
            raise AssertionError("node %d has_checkpoint_values %r" % (i, node["has_values"]))
        expected_slots = []
        if i == 2:
            expected_slots = [(var, slot, 13 + 4 * k + j) for k, slot in enumerate(("m", "v"))
                              for j, var in enumerate(trainable)]
        if node["slots"] != expected_slots:
            raise AssertionError("node %d slot variables %r" % (i, node["slots"]))
        if i in (0, 1, 2, 4, 5):
            if node["attributes"]:
                raise AssertionError("node %d has attributes" % i)
            continue
        if len(node["attributes"]) != 1:
            raise AssertionError("node %d attributes %r" % (i, node["attributes"]))
        name, full_name, key = node["attributes"][0]
        if name != "VARIABLE_VALUE" or key != paths[i] + "/.ATTRIBUTES/VARIABLE_VALUE":
            raise AssertionError("node %d attribute %r" % (i, node["attributes"][0]))
        if i >= 13 and not full_name.endswith("/adam/" + ("momentum" if i < 17 else "velocity")):
            raise AssertionError("slot %d full name %r" % (i, full_name))
    keys = sorted(p + "/.ATTRIBUTES/VARIABLE_VALUE" for p in paths[3:] if p not in
                  (layer0, layer1))
    if sorted(got) != keys:
        raise AssertionError("keys differ: %s" % sorted(set(got) ^ set(keys)))
    scalar = lambda p: got[p + "/.ATTRIBUTES/VARIABLE_VALUE"]
    for p, dtype in (("save_counter", "int64"), ("optimizer/iter", "int64")):
        if scalar(p)[:2] != (dtype, []) or int(scalar(p)[2]) != 1:
            raise AssertionError("%s: %r" % (p, scalar(p)))
    shapes = {7: [2, 3], 8: [3], 9: [3], 10: [3], 11: [3], 12: [3]}
    for i, shape in shapes.items():
        if scalar(paths[i])[:2] != ("float32", shape):
            raise AssertionError("%s: %r" % (paths[i], scalar(paths[i])[:2]))
    for k, var in enumerate(trainable * 2):
        if scalar(paths[13 + k])[:2] != ("float32", shapes[var]):
            raise AssertionError("%s: %r" % (paths[13 + k], scalar(paths[13 + k])[:2]))
    # Adam's first step (lr 0.001) moves no element by more than lr.
    kernel = scalar(paths[7])[2]
    start = np.arange(6, dtype=np.float32).reshape(2, 3) / 10
    if not np.all(np.abs(kernel - start) <= 0.001 + 1e-6):
        raise AssertionError("kernel %r" % kernel)
    print("read_bundle: object checkpoint %s-1 decoded and checked (%d nodes)" % (prefix,
                                                                                 len(nodes)))


def main(argv):
    if len(argv) == 4 and argv[1] == "--check-objects":
        check_objects(argv[2], argv[3])
        return 0
    if len(argv) in (4, 5) and argv[1] == "--check":
        if len(argv) == 5:
            check_golden(argv[4])
        check_fixture(argv[2], argv[3])
        check_saver(argv[2], argv[3])
        return 0
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    for key, (name, shape, value) in read_bundle(argv[1]).items():
        print(key, name, shape, value if name != "string" else [len(v) for v in value])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
