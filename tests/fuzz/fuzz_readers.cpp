// The reader fuzzers: one target per reader of outside bytes, each read through the public API.
// What a target accepts must be what was written (every format here but Example has checksums);
// what it rejects must be a typed tapeflow error; anything else, a crash or a hang fails.
//   fuzz_readers <target|all> [--iterations N] [--seconds S] [--seed K] [--crash-dir D]
//   fuzz_readers <target> --replay FILE      (runs one saved input)
// Targets: tfrecord, tfrecord-gzip, tfrecord-zlib, events, safetensors, tensor-bundle,
// object-graph, example, npy, npz.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <unistd.h>

#include <tapeflow/tapeflow.hpp>

#include "checkpoint/corrupt_files.hpp"
#include "fuzz/fuzz_driver.hpp"
#include "train/checkpoint/tensor_bundle.hpp"

namespace tf = tapeflow;
namespace fs = std::filesystem;

namespace {

const fs::path& work_dir() {
    static const fs::path dir = [] {
        const fs::path shm = "/dev/shm";
        fs::path d = (fs::is_directory(shm) ? shm : fs::temp_directory_path()) /
                     ("tapeflow_fuzz_" + std::to_string(::getpid()));
        fs::create_directories(d);
        return d;
    }();
    return dir;
}

std::string scratch_file(const std::string& name, const std::string& bytes) {
    const std::string path = (work_dir() / name).string();
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
    return path;
}

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

// ---- TFRecord (plain, GZIP, ZLIB): every record read must be one that was written ----

const std::vector<std::string>& tfrecord_records() {
    static const std::vector<std::string> records = {
        "",
        "a",
        "record-1",
        std::string(300, 'x'),
        std::string("\0\1\2\xff", 4),
        tf::io::Example().add_int64("label", {3}).add_float("x", {1.5f, -2.f}).serialize()};
    return records;
}

fuzz::Target tfrecord_target(const std::string& compression) {
    const std::string suffix = compression.empty() ? "" : "-" + compression;
    fuzz::Target t;
    t.name = "tfrecord" + std::string(compression.empty()     ? ""
                                      : compression == "GZIP" ? "-gzip"
                                                              : "-zlib");
    for (std::size_t n : {std::size_t{1}, std::size_t{3}, tfrecord_records().size()}) {
        const std::string path = (work_dir() / ("seed" + suffix + std::to_string(n))).string();
        {
            tf::io::TFRecordWriter w(path, compression);
            for (std::size_t i = 0; i < n; ++i)
                w.write(tfrecord_records()[i]);
        }
        t.seeds.push_back(read_file(path));
    }
    t.run = [compression, name = t.name](const std::string& bytes) {
        static const std::set<std::string> written(tfrecord_records().begin(),
                                                   tfrecord_records().end());
        for (const std::string& r :
             tf::io::read_tfrecords(scratch_file(name, bytes), compression)) {
            if (!written.count(r)) throw fuzz::WrongValue("a record that was never written");
        }
    };
    return t;
}

// ---- event files: every event read back must be one that was written ----

fuzz::Target events_target() {
    fuzz::Target t;
    t.name = "events";
    const std::string dir = (work_dir() / "events_seed").string();
    {
        auto w = tf::summary::create_file_writer(dir);
        for (int i = 0; i < 6; ++i)
            w.scalar("loss", 0.25 * i, i);
        w.histogram("h", tf::constant({1.0, 2.0, 2.5}), 6);
        w.text("note", "hello", 7);
        w.close();
        t.seeds.push_back(read_file(w.path()));
    }
    t.run = [](const std::string& bytes) {
        for (const tf::summary::Event& e :
             tf::summary::summary_iterator(scratch_file("events", bytes))) {
            for (const tf::summary::SummaryValue& v : e.values) {
                const bool ok = v.tag == "loss"
                                    ? v.scalar_value == 0.25 * double(e.step) && e.step < 6
                                : v.tag == "h" ? e.step == 6 && v.tensor.shape().rank() == 2
                                : v.tag == "note"
                                    ? e.step == 7 && v.strings == std::vector<std::string>{"hello"}
                                    : false;
                if (!ok)
                    throw fuzz::WrongValue("event '" + v.tag + "' at step " +
                                           std::to_string(e.step));
            }
        }
    };
    return t;
}

// ---- safetensors checkpoints: a tensor read must have the bytes that were saved ----

const std::map<std::string, tf::Tensor>& checkpoint_tensors() {
    static const std::map<std::string, tf::Tensor> tensors = {
        {"a/w", tf::reshape(tf::constant({1.5f, -2.f, 3.25f, 0.f, 8.f, -0.5f}), {2, 3})},
        {"b", tf::constant({int64_t{7}, int64_t{-9}})},
        {"c", tf::constant({1.0, 2.0})},
        {"e", tf::zeros({0, 3})},
        {"flag", tf::constant({true, false, true})},
        {"h", tf::constant({1.f, 2.f}).cast(tf::float16)},
        {"i", tf::constant({3, 4, 5}, tf::int32)},
        {"u", tf::constant({1, 2}, tf::uint8)},
        {"z", tf::constant({1.f, 2.f}).cast(tf::bfloat16)},
    };
    return tensors;
}

std::string bytes_of(const tf::Tensor& t) {
    return std::string(static_cast<const char*>(t.raw_data()), t.nbytes());
}

// Replaces a run of digits in the JSON header by a number chosen to break lengths and offsets.
void mutate_header_number(std::string& s, fuzz::Rng& rng) {
    static const std::vector<std::string> numbers = {"0",
                                                     "1",
                                                     "7",
                                                     "8",
                                                     "-1",
                                                     "4294967296",
                                                     "9223372036854775807",
                                                     "18446744073709551615",
                                                     "18446744073709551616",
                                                     "1e308",
                                                     "0.5",
                                                     "99999999999999999999999999",
                                                     "null",
                                                     "\"x\"",
                                                     "[]",
                                                     "{}"};
    if (s.size() < 9) return;
    uint64_t header = 0;
    for (int i = 7; i >= 0; --i)
        header = (header << 8) | static_cast<unsigned char>(s[static_cast<std::size_t>(i)]);
    const std::size_t end = static_cast<std::size_t>(std::min<uint64_t>(s.size(), 8 + header));
    if (end <= 8) return;
    std::size_t b = 8 + fuzz::pick(rng, end - 8);
    while (b < end && !std::isdigit(static_cast<unsigned char>(s[b])))
        ++b;
    std::size_t e = b;
    while (e < end && std::isdigit(static_cast<unsigned char>(s[e])))
        ++e;
    if (b < e) s.replace(b, e - b, numbers[fuzz::pick(rng, numbers.size())]);
}

fuzz::Target safetensors_target() {
    fuzz::Target t;
    t.name = "safetensors";
    std::map<std::string, tf::Variable> vars;
    for (const auto& [name, value] : checkpoint_tensors())
        vars.emplace(name, tf::Variable(value, {.name = "fuzz_" + name}));
    const std::string many =
        tf::train::Saver(vars).save((work_dir() / "ckpt" / "many").string(), 123);
    const std::string one = tf::train::Saver({{"w", tf::Variable(tf::constant(2.5f))}})
                                .save((work_dir() / "ckpt" / "one").string());
    t.seeds = {read_file(many + ".safetensors"),
               read_file(one + ".safetensors"),
               ckpt_test::safetensors_bytes(
                   "{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}",
                   std::string(4, '\1'))};
    t.mutate = mutate_header_number;
    t.run = [](const std::string& bytes) {
        const std::string path = scratch_file("fuzz.safetensors", bytes);
        for (const auto& [name, meta] : tf::train::list_variables(path)) {
            const tf::Tensor value = tf::train::load_variable(path, name);
            if (value.shape() != meta.first || value.dtype() != meta.second) {
                throw fuzz::WrongValue("'" + name +
                                       "' read back with another shape or dtype than listed");
            }
            // Every tapeflow checkpoint has a CRC per tensor: a tensor it saved reads back
            // unchanged.
            const auto it = checkpoint_tensors().find(name);
            if (it != checkpoint_tensors().end() && value.dtype() == it->second.dtype() &&
                value.shape() == it->second.shape() && bytes_of(value) != bytes_of(it->second)) {
                throw fuzz::WrongValue("tensor '" + name + "' has changed bytes");
            }
        }
    };
    return t;
}

// ---- TensorFlow checkpoints (tensor_bundle): the index is fuzzed, its data file stays; every
// tensor read must be one that was written (each entry and block has a CRC) ----

const std::map<std::string, tf::Tensor>& bundle_tensors() {
    static const std::map<std::string, tf::Tensor> tensors = [] {
        std::map<std::string, tf::Tensor> t = checkpoint_tensors();
        for (int i = 0; i < 40; ++i)
            t.emplace("many/var_" + std::to_string(i), tf::constant({i, -i}, tf::int32));
        return t;
    }();
    return tensors;
}
const std::vector<std::string> kBundleStrings = {"", "abc", std::string(70, 's')};

fuzz::Target tensor_bundle_target() {
    namespace bundle = tf::train::ckpt::bundle;
    fuzz::Target t;
    t.name = "tensor-bundle";
    // Two indexes over the same data file (the data's layout does not depend on the index's
    // options): TF's defaults, and small Snappy blocks with short restart intervals.
    const auto write = [](const std::string& prefix, bundle::BundleWriterOptions options) {
        bundle::BundleWriter w(prefix, options);
        for (const auto& [name, value] : bundle_tensors())
            w.add(name, value);
        w.add_strings("strings", {3}, kBundleStrings);
        w.finish();
        return read_file(prefix + ".index");
    };
    t.seeds = {write((work_dir() / "bundle_seed").string(), {}),
               write((work_dir() / "bundle").string(),
                     {.index_compression = tf::io::table::Compression::snappy,
                      .block_size = 200,
                      .block_restart_interval = 3})};
    t.run = [](const std::string& bytes) {
        scratch_file("bundle.index", bytes);
        const auto reader = tf::train::load_checkpoint((work_dir() / "bundle").string());
        // Every block has a CRC: an index that opens lists every key that was written.
        if (reader.get_variable_to_shape_map().size() != bundle_tensors().size() + 1)
            throw fuzz::WrongValue("an index that opens has lost keys");
        for (const auto& [key, shape] : reader.get_variable_to_shape_map()) {
            if (reader.dtype_name(key) == "string") {
                if (reader.get_tensor_bytes(key) != kBundleStrings)
                    throw fuzz::WrongValue("string tensor '" + key + "' has changed");
                continue;
            }
            const tf::Tensor value = reader.get_tensor(key);
            const auto it = bundle_tensors().find(key);
            if (value.shape() != shape || it == bundle_tensors().end() ||
                value.dtype() != it->second.dtype() || value.shape() != it->second.shape() ||
                bytes_of(value) != bytes_of(it->second)) {
                throw fuzz::WrongValue("tensor '" + key + "' read back changed");
            }
        }
    };
    return t;
}

// ---- TF2 object-based checkpoints: the serialized TrackableObjectGraph is fuzzed (written into
// a bundle with the values, so its CRC holds) and restored into a fixed module tree: a graph that
// is accepted may only ever give a variable the saved value of its own shape ----

std::shared_ptr<tf::Module> object_tree(float b, float w) {
    auto inner = std::make_shared<tf::Module>("inner");
    inner->track_as("w", tf::Variable(tf::fill({2}, w), {.name = "w"}));
    auto root = std::make_shared<tf::Module>("root");
    root->track_as("inner", inner);
    root->track_as("b", tf::Variable(tf::constant(b), {.name = "b"}));
    return root;
}

fuzz::Target object_graph_target() {
    fuzz::Target t;
    t.name = "object-graph";
    const std::string seed = (work_dir() / "objects_seed").string();
    tf::train::Checkpoint(object_tree(3.f, 1.5f)).write(seed);
    t.seeds = {
        tf::train::CheckpointReader(seed).get_tensor_bytes("_CHECKPOINTABLE_OBJECT_GRAPH")[0]};
    t.run = [](const std::string& bytes) {
        const std::string prefix = (work_dir() / "objects").string();
        tf::train::ckpt::bundle::BundleWriter w(prefix);
        w.add("b/.ATTRIBUTES/VARIABLE_VALUE", tf::constant(3.f));
        w.add("inner/w/.ATTRIBUTES/VARIABLE_VALUE", tf::fill({2}, 1.5f));
        w.add_strings("_CHECKPOINTABLE_OBJECT_GRAPH", tf::Shape{}, {bytes});
        w.finish();
        const auto root = object_tree(0.f, 0.f);
        tf::train::Checkpoint(root).read(prefix).expect_partial();
        const float b = root->own_variables()[0].value().item<float>();
        const std::vector<float> wv =
            root->children()[0]->own_variables()[0].value().to_vector<float>();
        if (b != 0.f && b != 3.f) throw fuzz::WrongValue("b restored to a value never saved");
        if (wv != std::vector<float>{0.f, 0.f} && wv != std::vector<float>{1.5f, 1.5f})
            throw fuzz::WrongValue("inner/w restored to a value never saved");
    };
    return t;
}

// ---- tf.train.Example: Example::parse and parse_example (no checksum: no crash, typed errors)
// ----

fuzz::Target example_target() {
    fuzz::Target t;
    t.name = "example";
    t.seeds = {
        tf::io::Example()
            .add_int64("label", {3})
            .add_float("x", {1.5f, -2.f, 0.f, 4.f})
            .serialize(),
        tf::io::Example().add_bytes("name", {"abc", ""}).add_int64("label", {-1}).serialize(),
        tf::io::Example().serialize()};
    t.run = [](const std::string& bytes) {
        const tf::io::Example e = tf::io::Example::parse(bytes);
        for (const std::string& name : e.names())
            (void)e.features().at(name);
        (void)tf::io::parse_example({bytes, bytes},
                                    {{"label", {}, tf::int64, std::vector<double>{0}},
                                     {"x", {4}, tf::float32, std::vector<double>(4, 0.0)}});
    };
    return t;
}

// ---- NumPy .npy files (no checksum: no crash, typed errors, a consistent tensor) and .npz
// archives (a CRC per member: an array read from a seed's member is the one saved) ----

// Replaces a piece of the .npy header dict by a value chosen to break the parser or the sizes.
void mutate_npy_header(std::string& s, fuzz::Rng& rng) {
    static const std::vector<std::string> pieces = {"(",
                                                    ")",
                                                    ",",
                                                    "'",
                                                    "{",
                                                    "}",
                                                    "True",
                                                    "-1",
                                                    "0",
                                                    "(0,)",
                                                    "99999999999999999999",
                                                    "4294967296",
                                                    "(1, 2, 3)",
                                                    "'|O'",
                                                    "'>f8'",
                                                    "'<u8'",
                                                    "[('a', '<f4')]",
                                                    "None",
                                                    "\\"};
    const std::size_t start = s.find('{');
    const std::size_t end = s.find('\n');
    if (start == std::string::npos || end == std::string::npos || end <= start) return;
    const std::size_t at = start + fuzz::pick(rng, end - start);
    const std::size_t len = fuzz::pick(rng, std::min<std::size_t>(6, end - at));
    s.replace(at, len, pieces[fuzz::pick(rng, pieces.size())]);
}

void check_consistent(const tf::Tensor& t) {
    if (t.num_elements() < 0 || t.nbytes() != t.num_elements() * tf::dtype_size(t.dtype()))
        throw fuzz::WrongValue("a loaded array's size disagrees with its shape");
    (void)t.cast(tf::float64).to_vector<double>();
}

fuzz::Target npy_target() {
    fuzz::Target t;
    t.name = "npy";
    for (const auto& [name, value] : checkpoint_tensors()) {
        if (value.dtype() == tf::bfloat16) continue;
        const std::string path =
            (work_dir() / ("seed_" + std::to_string(t.seeds.size()) + ".npy")).string();
        tf::io::save_npy(path, value);
        t.seeds.push_back(read_file(path));
    }
    t.mutate = mutate_npy_header;
    t.run = [](const std::string& bytes) {
        check_consistent(tf::io::load_npy(scratch_file("fuzz.npy", bytes)));
    };
    return t;
}

fuzz::Target npz_target() {
    fuzz::Target t;
    t.name = "npz";
    std::map<std::string, tf::Tensor> arrays;
    for (const auto& [name, value] : checkpoint_tensors())
        if (value.dtype() != tf::bfloat16) arrays.emplace(name.substr(0, 1), value);
    for (bool compressed : {false, true}) {
        const std::string path = (work_dir() / (compressed ? "seed_c.npz" : "seed.npz")).string();
        tf::io::save_npz(path, arrays, compressed);
        t.seeds.push_back(read_file(path));
    }
    t.run = [arrays](const std::string& bytes) {
        for (const auto& [name, value] : tf::io::load_npz(scratch_file("fuzz.npz", bytes))) {
            check_consistent(value);
            const auto it = arrays.find(name);
            if (it != arrays.end() && value.dtype() == it->second.dtype() &&
                value.shape() == it->second.shape() && bytes_of(value) != bytes_of(it->second))
                throw fuzz::WrongValue("array '" + name + "' has changed bytes");
        }
    };
    return t;
}

// ---- Keras weight files (HDF5): files tapeflow wrote, loaded into the model that wrote them.
// HDF5 checksums its metadata, not the data, so a file that loads may hold other values; what is
// checked is that every input loads or raises a typed error. Not in the meson suite: libhdf5
// 1.10.8 itself segfaults on some mutated files (H5F__accum_read, H5HG_read) within a few hundred
// inputs; `fuzz_readers keras-h5 --iterations 4000` reproduces it (docs/interchange.md).

std::shared_ptr<tf::keras::Sequential> h5_model() {
    namespace kl = tf::keras::layers;
    auto m = std::make_shared<tf::keras::Sequential>(std::vector<std::shared_ptr<kl::Layer>>{
        std::make_shared<kl::Dense>(3), std::make_shared<kl::BatchNormalization>()});
    (*m)(tf::ones({2, 4}));
    return m;
}

fuzz::Target keras_h5_target() {
    fuzz::Target t;
    t.name = "keras-h5";
    const auto model = h5_model();
    for (const std::string name : {"seed.weights.h5", "seed.h5"}) {  // both layouts as inputs
        const std::string path = (work_dir() / name).string();
        model->save_weights(path);
        t.seeds.push_back(read_file(path));
    }
    t.run = [model](const std::string& bytes) {
        model->load_weights(scratch_file("fuzz.weights.h5", bytes));
    };
    return t;
}

// ---- PNG (tf::image::decode_png): images tapeflow encoded, of each channel count. libpng checks
// each chunk's CRC, so a mutant that decodes is the image or a rejected one; what is checked is
// that every input decodes (to a consistent uint8 tensor, in every channel mode) or raises a
// typed error.

fuzz::Target png_target() {
    fuzz::Target t;
    t.name = "png";
    for (int64_t channels = 1; channels <= 4; ++channels) {
        std::vector<int32_t> values;
        for (int64_t i = 0; i < 5 * 6 * channels; ++i)
            values.push_back(int32_t((i * 37) % 256));
        t.seeds.push_back(
            tf::image::encode_png(tf::constant(values, tf::Shape{5, 6, channels}).cast(tf::uint8)));
    }
    t.run = [](const std::string& bytes) {
        for (int channels : {0, 1, 3, 4}) {
            const tf::Tensor image = tf::image::decode_png(bytes, channels);
            if (image.dtype() != tf::uint8 || image.rank() != 3 ||
                (channels != 0 && image.shape()[2] != channels))
                throw fuzz::WrongValue("decode_png gave a tensor of the wrong kind");
            check_consistent(image);
        }
    };
    return t;
}

std::vector<fuzz::Target> targets(const std::string& which) {
    std::vector<fuzz::Target> all;
    const auto want = [&](const std::string& name) {
        return which == "all" || which == name;
    };
    if (want("tfrecord")) all.push_back(tfrecord_target(""));
    if (want("tfrecord-gzip")) all.push_back(tfrecord_target("GZIP"));
    if (want("tfrecord-zlib")) all.push_back(tfrecord_target("ZLIB"));
    if (want("events")) all.push_back(events_target());
    if (want("safetensors")) all.push_back(safetensors_target());
    if (want("tensor-bundle")) all.push_back(tensor_bundle_target());
    if (want("object-graph")) all.push_back(object_graph_target());
    if (want("example")) all.push_back(example_target());
    if (want("npy")) all.push_back(npy_target());
    if (want("npz")) all.push_back(npz_target());
    if (want("keras-h5")) all.push_back(keras_h5_target());
    if (want("png")) all.push_back(png_target());
    return all;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr,
                     "usage: %s <target|all> [--iterations N] [--seconds S] [--seed K] "
                     "[--crash-dir D] [--replay FILE]\n",
                     argv[0]);
        return 2;
    }
    fuzz::Options options;
    std::string replay;
    for (int i = 2; i + 1 < argc; i += 2) {
        const std::string flag = argv[i];
        const char* value = argv[i + 1];
        if (flag == "--iterations")
            options.iterations = std::atol(value);
        else if (flag == "--seconds")
            options.seconds = std::atof(value);
        else if (flag == "--seed")
            options.seed = std::strtoull(value, nullptr, 10);
        else if (flag == "--crash-dir")
            options.crash_dir = value;
        else if (flag == "--replay")
            replay = value;
        else {
            std::fprintf(stderr, "unknown option %s\n", flag.c_str());
            return 2;
        }
    }
    tf::logging::set_verbosity(tf::logging::ERROR);  // torn event files log a warning each
    const std::vector<fuzz::Target> list = targets(argv[1]);
    if (list.empty()) {
        std::fprintf(stderr, "no fuzz target '%s'\n", argv[1]);
        return 2;
    }
    int status = 0;
    for (const fuzz::Target& t : list) {
        if (!replay.empty()) {  // a crash, or an uncaught foreign exception, shows the failure
            try {
                t.run(read_file(replay));
                std::printf("fuzz %s: %s reads fine\n", t.name.c_str(), replay.c_str());
            } catch (const tf::errors::OpError& e) {
                std::printf(
                    "fuzz %s: %s is rejected: %s\n", t.name.c_str(), replay.c_str(), e.what());
            }
            continue;
        }
        status |= fuzz::run(t, options);
    }
    fs::remove_all(work_dir());
    return status;
}
