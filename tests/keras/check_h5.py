#!/usr/bin/env python3
"""Keras weight files between h5py and tapeflow. h5py writes the layouts exactly as Keras does
(Keras 3's ".weights.h5": keras/src/saving/saving_lib.py H5IOStore; tf.keras 2's ".h5":
legacy_h5_format.save_weights_to_hdf5_group) for h5_fixture to load, and the files h5_fixture
writes are read back the way Keras' loaders read them, attribute types compared byte for byte with
what h5py writes.
Usage: check_h5.py <h5_fixture> <output dir>      (checks; exit 77 without h5py/numpy)
       check_h5.py --golden <dir>                  (writes the committed tests/golden/keras_h5 files)"""
import json
import os
import shutil
import subprocess
import sys

try:
    import h5py
    import numpy as np
except ImportError:  # meson: exit code 77 = skipped
    print("h5py/numpy are not installed (Debian: python3-h5py)")
    sys.exit(77)

# Per model kind (h5_fixture.cpp builds the same): the layers of a fresh Sequential in order,
# as (Keras class, layer name, [(weight attribute, shape)]), weights in Keras' order.
MODELS = {
    "mlp": [("Dense", "dense", [("kernel", (5, 4)), ("bias", (4,))]),
            ("Dropout", "dropout", []),
            ("Dense", "dense_1", [("kernel", (4, 3)), ("bias", (3,))])],
    "conv": [("Conv2D", "conv2d", [("kernel", (3, 3, 3, 2)), ("bias", (2,))]),
             ("BatchNormalization", "batch_normalization",
              [("gamma", (2,)), ("beta", (2,)), ("moving_mean", (2,)), ("moving_variance", (2,))]),
             ("Flatten", "flatten", []),
             ("Dense", "dense", [("kernel", (18, 2)), ("bias", (2,))])],
    "embed": [("Embedding", "embedding", [("embeddings", (10, 4))]),
              ("LayerNormalization", "layer_normalization", [("gamma", (4,)), ("beta", (4,))]),
              ("Dense", "dense", [("kernel", (4, 2)), ("bias", (2,))])],
    "attention": [("MultiHeadAttention", "multi_head_attention",
                   [("query/kernel", (6, 2, 3)), ("query/bias", (2, 3)),
                    ("key/kernel", (6, 2, 3)), ("key/bias", (2, 3)),
                    ("value/kernel", (6, 2, 3)), ("value/bias", (2, 3)),
                    ("attention_output/kernel", (2, 3, 6)), ("attention_output/bias", (6,))])],
}
SNAKE = {"Dense": "dense", "Dropout": "dropout", "Conv2D": "conv2d", "Flatten": "flatten",
         "BatchNormalization": "batch_normalization", "Embedding": "embedding",
         "LayerNormalization": "layer_normalization", "MultiHeadAttention": "multi_head_attention"}
# Keras 3's MultiHeadAttention stores its projections in EinsumDense sublayers (attribute names).
MHA_ATTRS = {"query": "_query_dense", "key": "_key_dense", "value": "_value_dense",
             "attention_output": "_output_dense"}


def values(k, shape, offset=0.0):
    """Weight k of a model: (k + 1) + j * 0.01 for element j (h5_fixture's save formula)."""
    n = int(np.prod(shape)) if shape else 1
    return ((k + 1 + offset) + np.arange(n) * 0.01).astype(np.float32).reshape(shape)


def weights_of(kind, offset=0.0):
    """[(layer name, attribute, value)] in the model's variable order."""
    out, k = [], 0
    for _, name, weights in MODELS[kind]:
        for attr, shape in weights:
            out.append((name, attr, values(k, shape, offset)))
            k += 1
    return out


def keras3_paths(kind):
    """(class, layer name, object path) as saving_lib._save_container_state names them."""
    used, out = {}, []
    for cls, name, _ in MODELS[kind]:
        snake = SNAKE[cls]
        if snake in used:
            used[snake] += 1
            snake = f"{snake}_{used[snake]}"
        else:
            used[snake] = 0
        out.append((cls, name, "layers/" + snake))
    return out


def write_keras3(path, kind, offset=0.0):
    """H5IOStore as save_weights_only drives it: "<path>/vars" per object, name attribute."""
    w = weights_of(kind, offset)
    with h5py.File(path, "w") as f:
        f.create_group("vars").attrs["name"] = "sequential"
        for (cls, name, obj), (_, _, weights) in zip(keras3_paths(kind), MODELS[kind]):
            vars_ = f.create_group(obj).create_group("vars")
            vars_.attrs["name"] = name
            mine = [v for (n, _, v) in w if n == name]
            if cls == "MultiHeadAttention":
                for i, sub in enumerate(["query", "key", "value", "attention_output"]):
                    g = f.create_group(f"{obj}/{MHA_ATTRS[sub]}").create_group("vars")
                    g.attrs["name"] = sub
                    g["0"], g["1"] = mine[2 * i], mine[2 * i + 1]
                for extra, extra_name in [("_dropout_layer", "dropout"), ("_softmax", "softmax")]:
                    f.create_group(f"{obj}/{extra}").create_group("vars").attrs["name"] = extra_name
                continue
            for i, v in enumerate(mine):
                vars_[str(i)] = v


def write_legacy(path, kind, offset=0.0, fixed=False):
    """tf.keras 2's save_weights_to_hdf5_group. h5py 3 stores its lists of bytes as
    variable-length strings; fixed=True stores numpy "S" arrays (fixed-length, NUL padded), as
    files written with h5py 2 hold them."""
    w = weights_of(kind, offset)
    conv = (lambda x: np.array(x) if len(x) else x) if fixed else (lambda x: x)
    with h5py.File(path, "w") as f:
        f.attrs["layer_names"] = conv([name.encode("utf8") for _, name, _ in MODELS[kind]])
        f.attrs["backend"] = np.bytes_(b"tensorflow") if fixed else b"tensorflow"
        f.attrs["keras_version"] = np.bytes_(b"2.15.0") if fixed else b"2.15.0"
        for _, name, _ in MODELS[kind]:
            g = f.create_group(name)
            mine = [(f"{name}/{attr}:0".encode("utf8"), v) for (n, attr, v) in w if n == name]
            g.attrs["weight_names"] = conv([n for n, _ in mine])
            for n, v in mine:
                ds = g.create_dataset(n, v.shape, dtype=v.dtype)
                ds[:] = v


def same_attr_type(got_obj, want_obj, name, where):
    got, want = got_obj.attrs.get_id(name), want_obj.attrs.get_id(name)
    assert got.get_type() == want.get_type(), (where, name, got.dtype, want.dtype)
    assert got.shape == want.shape, (where, name, got.shape, want.shape)
    assert got.get_type().get_class() == want.get_type().get_class(), (where, name)
    if got.get_type().get_class() == h5py.h5t.STRING and not got.get_type().is_variable_str():
        assert got.get_type().get_strpad() == want.get_type().get_strpad(), (where, name)
        assert got.get_type().get_cset() == want.get_type().get_cset(), (where, name)


def check_tapeflow_keras3(path, kind, ref):
    """Reads tapeflow's file as Keras 3's _load_state would, and compares with h5py's layout."""
    w = weights_of(kind)
    with h5py.File(path, "r") as f, h5py.File(ref, "r") as r:
        assert f["vars"].attrs["name"] == "sequential"
        same_attr_type(f["vars"], r["vars"], "name", "/vars")
        assert len(f["vars"]) == 0
        for (cls, name, obj) in keras3_paths(kind):
            mine = [v for (n, _, v) in w if n == name]
            g = f[obj + "/vars"]
            assert g.attrs["name"] == name, (obj, g.attrs["name"])
            same_attr_type(g, r[obj + "/vars"], "name", obj)
            if cls == "MultiHeadAttention":
                assert len(g) == 0
                for i, sub in enumerate(["query", "key", "value", "attention_output"]):
                    s = f[f"{obj}/{MHA_ATTRS[sub]}/vars"]
                    assert sorted(s.keys()) == ["0", "1"], (obj, sub, list(s.keys()))
                    for j in range(2):
                        assert s[str(j)].dtype == np.float32
                        assert np.array_equal(s[str(j)][()], mine[2 * i + j]), (obj, sub, j)
                continue
            assert sorted(g.keys()) == [str(i) for i in range(len(mine))], (obj, list(g.keys()))
            for i, v in enumerate(mine):
                ds = g[str(i)]
                assert ds.dtype == np.float32 and ds.shape == v.shape, (obj, i, ds.dtype, ds.shape)
                assert np.array_equal(ds[()], v), (obj, i)


def decode(n):
    """As legacy_h5_format.load_attributes_from_hdf5_group: h5py gives bytes or str."""
    return n.decode("utf8") if hasattr(n, "decode") else n


def check_tapeflow_legacy(path, kind, ref):
    """Reads tapeflow's file as legacy_h5_format.load_weights_from_hdf5_group would."""
    w = weights_of(kind)
    with h5py.File(path, "r") as f, h5py.File(ref, "r") as r:
        for attr in ["layer_names", "backend", "keras_version"]:
            same_attr_type(f, r, attr, "/")
        names = [decode(n) for n in f.attrs["layer_names"]]
        assert names == [name for _, name, _ in MODELS[kind]], names
        assert decode(f.attrs["backend"]) == "tensorflow"
        for name in names:
            g = f[name]
            same_attr_type(g, r[name], "weight_names", name)
            wn = [decode(n) for n in g.attrs["weight_names"]]
            mine = [(f"{name}/{attr}:0", v) for (n, attr, v) in w if n == name]
            assert wn == [n for n, _ in mine], (name, wn)
            for n, v in mine:
                assert g[n].dtype == np.float32 and np.array_equal(g[n][()], v), (name, n)


def run(fixture, *args):
    p = subprocess.run([fixture, *args], capture_output=True, text=True)
    if p.returncode != 0:
        raise AssertionError(f"h5_fixture {' '.join(args)} failed: {p.stderr}")
    return json.loads(p.stdout)


def check_loaded(got, kind, offset, what):
    want = weights_of(kind, offset)
    assert len(got) == len(want), (what, len(got), len(want))
    for g, (name, attr, v) in zip(got, want):
        assert g["name"].endswith(f"{name}/{attr}"), (what, g["name"], name, attr)
        assert tuple(g["shape"]) == v.shape, (what, g["name"], g["shape"], v.shape)
        assert np.array_equal(np.array(g["values"], dtype=np.float32), v.ravel()), (what, g["name"])


def main():
    if sys.argv[1] == "--golden":
        out = sys.argv[2]
        os.makedirs(out, exist_ok=True)
        for kind in MODELS:
            write_keras3(os.path.join(out, f"{kind}.weights.h5"), kind)
            write_legacy(os.path.join(out, f"{kind}.h5"), kind)
        write_legacy(os.path.join(out, "mlp.fixed_strings.h5"), "mlp", fixed=True)
        return
    fixture, out = sys.argv[1], sys.argv[2]
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    checks = 0
    for kind in MODELS:
        # h5py (Keras' layouts) -> tapeflow; offset 0.5 so that the values differ from the
        # fixture's own formula.
        k3, legacy = os.path.join(out, f"{kind}.h5py.weights.h5"), os.path.join(out, f"{kind}.h5py.h5")
        write_keras3(k3, kind, 0.5)
        write_legacy(legacy, kind, 0.5)
        check_loaded(run(fixture, "load", kind, k3), kind, 0.5, f"{kind} keras3")
        check_loaded(run(fixture, "load", kind, legacy), kind, 0.5, f"{kind} legacy")
        check_loaded(run(fixture, "load", kind, legacy, "by_name"), kind, 0.5, f"{kind} by_name")
        fixed = os.path.join(out, f"{kind}.h5py_fixed.h5")
        write_legacy(fixed, kind, 0.5, fixed=True)
        with h5py.File(fixed, "r") as f:
            assert not f.attrs.get_id("layer_names").get_type().is_variable_str()
        check_loaded(run(fixture, "load", kind, fixed), kind, 0.5, f"{kind} fixed-length names")
        # tapeflow -> h5py, read as Keras reads it, attribute types compared with h5py's.
        ref3, ref2 = os.path.join(out, f"{kind}.ref.weights.h5"), os.path.join(out, f"{kind}.ref.h5")
        write_keras3(ref3, kind)
        write_legacy(ref2, kind)
        t3, t2 = os.path.join(out, f"{kind}.tf.weights.h5"), os.path.join(out, f"{kind}.tf.h5")
        check_loaded(run(fixture, "save", kind, t3), kind, 0.0, f"{kind} save")
        run(fixture, "save", kind, t2)
        check_tapeflow_keras3(t3, kind, ref3)
        check_tapeflow_legacy(t2, kind, ref2)
        checks += 6
    print(f"check_h5: {checks} checks over {len(MODELS)} models passed")


if __name__ == "__main__":
    main()
