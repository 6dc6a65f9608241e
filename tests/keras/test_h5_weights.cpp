// Model::save_weights / load_weights: the Keras weight files h5py wrote (tests/golden/keras_h5,
// made by check_h5.py --golden in Keras' layouts) load exactly; round trips in the three formats;
// every mismatch and bad file raises a typed error naming the layer, weight or file.
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;
namespace kl = tf::keras::layers;
namespace fs = std::filesystem;

namespace {

fs::path golden(const std::string& name) {
    const char* env = std::getenv("TAPEFLOW_GOLDEN_DIR");
    return fs::path(env ? env : "tests/golden") / "keras_h5" / name;
}

fs::path scratch(const std::string& name) {
    const fs::path dir = fs::temp_directory_path() / ("tapeflow_h5_weights_" + name);
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}

using Layers = std::vector<std::shared_ptr<kl::Layer>>;

// The architectures of check_h5.py's MODELS, built by one call.
std::shared_ptr<tf::keras::Sequential> model(const std::string& kind, int64_t first_units = 4) {
    std::shared_ptr<tf::keras::Sequential> m;
    tf::Tensor x;
    if (kind == "mlp") {
        m = std::make_shared<tf::keras::Sequential>(
            Layers{std::make_shared<kl::Dense>(first_units, kl::DenseOptions{.activation = "relu"}),
                   std::make_shared<kl::Dropout>(0.5),
                   std::make_shared<kl::Dense>(3)});
        x = tf::ones({2, 5});
    } else if (kind == "conv") {
        m = std::make_shared<tf::keras::Sequential>(
            Layers{std::make_shared<kl::Conv2D>(2, tf::Ints{3, 3}),
                   std::make_shared<kl::BatchNormalization>(),
                   std::make_shared<kl::Flatten>(),
                   std::make_shared<kl::Dense>(2)});
        x = tf::ones({1, 5, 5, 3});
    } else if (kind == "embed") {
        m = std::make_shared<tf::keras::Sequential>(
            Layers{std::make_shared<kl::Embedding>(10, 4),
                   std::make_shared<kl::LayerNormalization>(),
                   std::make_shared<kl::Dense>(2)});
        x = tf::zeros({2, 3}, tf::int32);
    } else {
        m = std::make_shared<tf::keras::Sequential>(
            Layers{std::make_shared<kl::MultiHeadAttention>(2, 3)});
        x = tf::ones({1, 4, 6});
    }
    (*m)(x);
    return m;
}

// check_h5.py's formula: weight k, element j = (k + 1) + j * 0.01 (float32).
void require_formula(const tf::keras::Model& m) {
    int k = 0;
    for (const tf::Variable& v : m.variables()) {
        const std::vector<float> got = v.value().to_vector<float>();
        for (std::size_t j = 0; j < got.size(); ++j)
            REQUIRE(got[j] == static_cast<float>((k + 1) + static_cast<double>(j) * 0.01));
        ++k;
    }
}

void require_same(const tf::keras::Model& a, const tf::keras::Model& b) {
    const auto va = a.get_weights(), vb = b.get_weights();
    REQUIRE(va.size() == vb.size());
    for (std::size_t i = 0; i < va.size(); ++i) {
        REQUIRE(va[i].shape() == vb[i].shape());
        REQUIRE(va[i].to_vector<float>() == vb[i].to_vector<float>());
    }
}

template <class E, class F>
std::string error_of(F&& f) {
    try {
        f();
    } catch (const E& e) {
        return e.what();
    }
    FAIL("no error raised");
    return "";
}

}  // namespace

TEST_CASE("h5py-written Keras 3 .weights.h5 files load exactly", "[keras][h5][golden]") {
    for (const std::string kind : {"mlp", "conv", "embed", "attention"}) {
        INFO(kind);
        auto m = model(kind);
        m->load_weights(golden(kind + ".weights.h5").string());
        require_formula(*m);
    }
}

// (by_name needs the layers named as in the file: check_h5.py runs it in a fresh process, and
// "by_name loads the layers whose names the file has" below names them.)
TEST_CASE("h5py-written tf.keras 2 .h5 files load by order", "[keras][h5][golden]") {
    for (const std::string kind : {"mlp", "conv", "embed", "attention"}) {
        INFO(kind);
        auto m = model(kind);
        m->load_weights(golden(kind + ".h5").string());
        require_formula(*m);
    }
}

TEST_CASE("tf.keras 2 files with fixed-length name strings (h5py 2) load", "[keras][h5][golden]") {
    auto m = model("mlp");
    m->load_weights(golden("mlp.fixed_strings.h5").string());
    require_formula(*m);
}

TEST_CASE("checkpoint-prefix weights check shapes and honour skip_mismatch",
          "[keras][h5][errors]") {
    const fs::path dir = scratch("tf_format");
    const std::string prefix = (dir / "weights").string();
    auto a = model("mlp");
    a->save_weights(prefix);
    auto wide = model("mlp", 6);
    const auto before = wide->get_weights();
    REQUIRE_THROWS_AS(wide->load_weights(prefix), tf::errors::InvalidArgumentError);
    wide->load_weights(prefix, /*skip_mismatch=*/true);
    const auto after = wide->get_weights();
    REQUIRE(after[0].to_vector<float>() == before[0].to_vector<float>());
    REQUIRE(after[3].to_vector<float>() == a->get_weights()[3].to_vector<float>());
}

TEST_CASE("checkpoint-prefix weights are a TF2 object checkpoint with the model as root",
          "[keras][h5]") {
    const fs::path dir = scratch("tf_object_graph");
    const std::string prefix = (dir / "weights").string();
    auto a = model("mlp");
    a->save_weights(prefix);
    // What tf.keras 2's model.load_weights(prefix) needs: the object graph, keys by position.
    const auto reader = tf::train::load_checkpoint(prefix);
    REQUIRE(reader.has_tensor("_CHECKPOINTABLE_OBJECT_GRAPH"));
    REQUIRE(reader.has_tensor("layer_with_weights-0/kernel/.ATTRIBUTES/VARIABLE_VALUE"));
    REQUIRE_FALSE(reader.has_tensor("save_counter/.ATTRIBUTES/VARIABLE_VALUE"));
    // The same file through tf::train::Checkpoint(root=model), as TensorFlow reads it.
    auto b = model("mlp");
    tf::train::Checkpoint(b).read(prefix).assert_consumed();
    require_same(*a, *b);
}

TEST_CASE("save_weights round trips in the three formats", "[keras][h5]") {
    const fs::path dir = scratch("round_trip");
    for (const std::string kind : {"mlp", "conv", "embed", "attention"}) {
        for (const std::string file : {"w.weights.h5", "w.h5", "w.hdf5", "ckpt/w"}) {
            INFO(kind << " " << file);
            auto a = model(kind);
            auto b = model(kind);  // other random initial values
            const std::string path = (dir / (kind + "_" + file)).string();
            if (file == "ckpt/w") fs::create_directories(dir / (kind + "_ckpt"));
            a->save_weights(path);
            b->load_weights(path);
            require_same(*a, *b);
        }
    }
    // No temporary files stay behind (writes are temp file + rename).
    for (const auto& entry : fs::directory_iterator(dir))
        REQUIRE(entry.path().filename().string().find("tmp") == std::string::npos);
}

TEST_CASE("save_weights overwrites an existing file", "[keras][h5]") {
    const fs::path dir = scratch("overwrite");
    const std::string path = (dir / "m.weights.h5").string();
    auto a = model("mlp");
    a->save_weights(path);
    auto b = model("mlp");
    b->save_weights(path);
    auto c = model("mlp");
    c->load_weights(path);
    require_same(*b, *c);
}

TEST_CASE("a shape mismatch names the layer, the weight and both shapes", "[keras][h5][errors]") {
    for (const std::string file : {"mlp.weights.h5", "mlp.h5"}) {
        INFO(file);
        auto m = model("mlp", 6);  // first Dense: kernel [5,6] instead of [5,4]
        const auto before = m->get_weights();
        const std::string message = error_of<tf::errors::InvalidArgumentError>(
            [&] { m->load_weights(golden(file).string()); });
        REQUIRE_THAT(message, Catch::Contains("dense") && Catch::Contains("kernel"));
        REQUIRE_THAT(message, Catch::Contains("[5,6]") && Catch::Contains("[5,4]"));
        // Nothing was assigned.
        const auto after = m->get_weights();
        for (std::size_t i = 0; i < before.size(); ++i)
            REQUIRE(before[i].to_vector<float>() == after[i].to_vector<float>());
    }
}

TEST_CASE("skip_mismatch skips mismatched weights and loads the others", "[keras][h5][errors]") {
    for (const std::string file : {"mlp.weights.h5", "mlp.h5"}) {
        INFO(file);
        auto m = model("mlp", 6);
        const auto before = m->get_weights();
        m->load_weights(golden(file).string(), /*skip_mismatch=*/true);
        const auto after = m->get_weights();
        // The first Dense's kernel and bias keep their values (its bias [6] mismatches too);
        // the second Dense is skipped in the Keras 3 layout (count matches, shapes differ:
        // kernel [6,3] vs [4,3]) and in the legacy one alike; nothing else exists.
        REQUIRE(before[0].to_vector<float>() == after[0].to_vector<float>());
        REQUIRE(before[1].to_vector<float>() == after[1].to_vector<float>());
        REQUIRE(before[2].to_vector<float>() == after[2].to_vector<float>());
        // dense_1/bias [3] matches the file's: loaded (weight 3 of the formula).
        REQUIRE(after[3].to_vector<float>() == std::vector<float>{4.0f, 4.01f, 4.02f});
    }
}

TEST_CASE("a file of another architecture raises InvalidArgumentError", "[keras][h5][errors]") {
    for (const std::string other : {"conv", "embed", "attention"}) {
        for (const std::string ext : {".weights.h5", ".h5"}) {
            INFO(other << ext);
            auto m = model("mlp");
            REQUIRE_THROWS_AS(m->load_weights(golden(other + ext).string()),
                              tf::errors::InvalidArgumentError);
        }
    }
    // tf.keras 2 layout: the layer count and the weight count are checked by order.
    auto m = model("mlp");
    const std::string count = error_of<tf::errors::InvalidArgumentError>(
        [&] { m->load_weights(golden("embed.h5").string()); });
    REQUIRE_THAT(count, Catch::Contains("layer count mismatch"));
    auto no_bias = std::make_shared<tf::keras::Sequential>(
        Layers{std::make_shared<kl::Dense>(4, kl::DenseOptions{.use_bias = false}),
               std::make_shared<kl::Dense>(3)});
    (*no_bias)(tf::ones({2, 5}));
    const std::string weights = error_of<tf::errors::InvalidArgumentError>(
        [&] { no_bias->load_weights(golden("mlp.h5").string(), true); });
    REQUIRE_THAT(weights, Catch::Contains("weight count mismatch") && Catch::Contains("dense"));
    const std::string keras3 = error_of<tf::errors::InvalidArgumentError>(
        [&] { no_bias->load_weights(golden("mlp.weights.h5").string()); });
    REQUIRE_THAT(keras3, Catch::Contains("expects 1 variables") && Catch::Contains("holds 2"));
}

TEST_CASE("by_name loads the layers whose names the file has", "[keras][h5]") {
    // A model whose second layer has another name: only "dense" is loaded.
    auto m = std::make_shared<tf::keras::Sequential>(
        Layers{std::make_shared<kl::Dense>(4, kl::DenseOptions{.name = "dense"}),
               std::make_shared<kl::Dense>(3, kl::DenseOptions{.name = "head"})});
    (*m)(tf::ones({2, 5}));
    const auto before = m->get_weights();
    m->load_weights(golden("mlp.h5").string(), {.by_name = true});
    const auto after = m->get_weights();
    REQUIRE(after[1].to_vector<float>() == std::vector<float>{2.0f, 2.01f, 2.02f, 2.03f});
    REQUIRE(after[2].to_vector<float>() == before[2].to_vector<float>());
}

TEST_CASE("bad weight files raise typed errors naming the file", "[keras][h5][errors]") {
    const fs::path dir = scratch("bad");
    auto m = model("mlp");
    REQUIRE_THROWS_AS(m->load_weights((dir / "missing.weights.h5").string()),
                      tf::errors::NotFoundError);
    {
        std::ofstream(dir / "garbage.weights.h5") << "this is not an HDF5 file";
        std::ofstream(dir / "empty.h5");
    }
    for (const std::string name : {"garbage.weights.h5", "empty.h5"}) {
        const std::string message =
            error_of<tf::errors::DataLossError>([&] { m->load_weights((dir / name).string()); });
        REQUIRE_THAT(message, Catch::Contains(name));
    }
    // Truncated copies of a real file, at many lengths: a typed error, never a crash.
    std::ifstream in(golden("mlp.weights.h5"), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (std::size_t length : {std::size_t{8},
                               std::size_t{100},
                               std::size_t{800},
                               bytes.size() / 2,
                               bytes.size() - 100}) {
        INFO(length);
        const fs::path cut = dir / "cut.weights.h5";
        std::ofstream(cut, std::ios::binary)
            .write(bytes.data(), static_cast<std::streamsize>(length));
        REQUIRE_THROWS_AS(m->load_weights(cut.string()), tf::errors::OpError);
    }
    // Bytes flipped through the file: loads or a typed error.
    for (std::size_t at = 0; at < bytes.size(); at += 61) {
        std::string corrupt = bytes;
        corrupt[at] = static_cast<char>(corrupt[at] ^ 0x5a);
        const fs::path bad = dir / "flip.weights.h5";
        std::ofstream(bad, std::ios::binary)
            .write(corrupt.data(), static_cast<std::streamsize>(corrupt.size()));
        try {
            m->load_weights(bad.string());
        } catch (const tf::errors::OpError&) {
        }
    }
    // A Keras 3 file under a tf.keras 2 name has no layer_names.
    fs::copy_file(golden("mlp.weights.h5"), dir / "renamed.h5");
    REQUIRE_THAT(error_of<tf::errors::InvalidArgumentError>(
                     [&] { m->load_weights((dir / "renamed.h5").string()); }),
                 Catch::Contains("layer_names"));
}

TEST_CASE("save_weights and load_weights refuse what Keras refuses", "[keras][h5][errors]") {
    const fs::path dir = scratch("refuse");
    tf::keras::Sequential unbuilt(Layers{std::make_shared<kl::Dense>(2)});
    REQUIRE_THROWS_AS(unbuilt.save_weights((dir / "u.weights.h5").string()),
                      tf::errors::FailedPreconditionError);
    REQUIRE_THROWS_AS(unbuilt.load_weights(golden("mlp.weights.h5").string()),
                      tf::errors::FailedPreconditionError);
    auto m = model("mlp");
    REQUIRE_THROWS_AS(m->save_weights((dir / "m.keras").string()),
                      tf::errors::InvalidArgumentError);
    REQUIRE_THROWS_AS(m->load_weights(golden("mlp.weights.h5").string(), {.by_name = true}),
                      tf::errors::InvalidArgumentError);
    // A directory that does not exist: an error, and no file.
    REQUIRE_THROWS_AS(m->save_weights((dir / "no" / "such" / "m.h5").string()),
                      tf::errors::OpError);
    REQUIRE_FALSE(fs::exists(dir / "no"));
}
