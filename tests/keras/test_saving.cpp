// Whole-model saving: Config's JSON (as Python's json.dumps), get_config with Keras 3's keys and
// the registry's round trip for every built-in layer, Model::save / load_model for Sequential and
// Functional models (predictions bit for bit), the archive's layout, and the errors.
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>

#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

#include "io/zip.hpp"
#include "keras/saving/h5_file.hpp"

namespace tf = tapeflow;
namespace kl = tf::keras::layers;
namespace kk = tf::keras;
namespace ks = tf::keras::saving;
namespace fs = std::filesystem;

namespace {

fs::path scratch(const std::string& name) {
    const fs::path dir = fs::temp_directory_path() / ("tapeflow_saving_" + name);
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}

std::string slurp(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<float> floats(const tf::Tensor& t) {
    return tf::cast(t, tf::float32).to_vector<float>();
}

std::vector<std::string> keys(const kk::Config& c) {
    std::vector<std::string> out;
    for (const auto& [k, v] : c.as_object())
        out.push_back(k);
    return out;
}

// A user layer: y = x * scale (a weight), registered under its class name.
struct Scale : kl::Layer {
    explicit Scale(double init, std::string name = "") : kl::Layer(std::move(name)), init_(init) {}
    void build(const tf::Shape& s) override {
        w = add_weight("w", {s[-1]}, tf::keras::initializers::constant(init_));
    }
    tf::Tensor call(const tf::Tensor& x, bool) override { return x * w; }
    kk::Config get_config() const override {
        kk::Config c = Layer::get_config();
        c.set("init", init_);
        return c;
    }
    double init_;
    tf::Variable w;
};

}  // namespace

TEST_CASE("Config writes JSON as Python's json.dumps and parses it back",
          "[keras][saving][config]") {
    kk::Config c;
    c.set("name", "dense");
    c.set("units", 4);
    c.set("rate", 0.5);
    c.set("one", 1.0);
    c.set("eps", 1e-7);
    c.set("shape", kk::Config::shape({-1, 28, 28}));
    c.set("seed", kk::Config());
    c.set("flag", true);
    c.set("text", "a\"b\\c\n");
    c.set("empty", kk::Config::object());
    CHECK(c.dump() ==
          "{\"name\": \"dense\", \"units\": 4, \"rate\": 0.5, \"one\": 1.0, \"eps\": 1e-07, "
          "\"shape\": [null, 28, 28], \"seed\": null, \"flag\": true, \"text\": "
          "\"a\\\"b\\\\c\\n\", \"empty\": {}}");
    const kk::Config back = kk::Config::parse(c.dump());
    CHECK(back == c);
    CHECK(back["shape"].as_shape() == std::vector<int64_t>{-1, 28, 28});
    CHECK(back["units"].as_double() == 4.0);
    CHECK(keys(back).front() == "name");  // key order kept
    c.set("units", 8);                    // replaces in place
    CHECK(keys(c)[1] == "units");
    CHECK(c["units"].as_int() == 8);
    CHECK_THROWS_WITH(c["missing"], Catch::Contains("no key \"missing\""));
    CHECK_THROWS_WITH(c["name"].as_int(), Catch::Contains("expected an integer"));
    CHECK_THROWS_AS(kk::Config::parse("{\"a\": ", "x.json"), tf::errors::DataLossError);
    CHECK(c.get("missing", 3).as_int() == 3);
}

TEST_CASE("get_config: Keras 3's keys; every built-in layer round trips through the registry",
          "[keras][saving][config]") {
    kl::Dense dense(3, {.activation = "relu", .name = "d"});
    const kk::Config dc = dense.get_config();
    CHECK(keys(dc) == std::vector<std::string>{"name",
                                               "trainable",
                                               "dtype",
                                               "units",
                                               "activation",
                                               "use_bias",
                                               "kernel_initializer",
                                               "bias_initializer",
                                               "kernel_regularizer",
                                               "bias_regularizer",
                                               "kernel_constraint",
                                               "bias_constraint",
                                               "quantization_config"});
    CHECK(dc["dtype"].dump() ==
          "{\"module\": \"keras\", \"class_name\": \"DTypePolicy\", \"config\": {\"name\": "
          "\"float32\"}, \"registered_name\": null}");
    CHECK(dc["kernel_initializer"]["class_name"].as_string() == "GlorotUniform");
    CHECK(dc["activation"].as_string() == "relu");

    const tf::Tensor image = tf::random::uniform({2, 8, 8, 3}, -1, 1, tf::float32, 1);
    const tf::Tensor seq = tf::random::uniform({2, 5, 4}, -1, 1, tf::float32, 2);
    const tf::Tensor flat = tf::random::uniform({2, 6}, -1, 1, tf::float32, 3);
    struct Case {
        std::shared_ptr<kl::Layer> layer;
        tf::Tensor input;
    };
    std::vector<Case> cases = {
        {std::make_shared<kl::Dense>(4, kl::DenseOptions{.activation = "tanh", .use_bias = false}),
         flat},
        {std::make_shared<kl::Activation>("gelu"), flat},
        {std::make_shared<kl::Dropout>(0.25, 7), flat},
        {std::make_shared<kl::Flatten>(), image},
        {std::make_shared<kl::Embedding>(10, 3), tf::constant({{1, 2}, {3, 4}})},
        {std::make_shared<kl::Conv2D>(
             5, tf::Ints{3, 2}, kl::Conv2DOptions{.strides = 2, .padding = "same"}),
         image},
        {std::make_shared<kl::Conv1D>(2, 3, kl::Conv2DOptions{.padding = "causal"}), seq},
        {std::make_shared<kl::MaxPooling2D>(2, tf::Ints{1}, "same"), image},
        {std::make_shared<kl::AveragePooling2D>(tf::Ints{2, 3}), image},
        {std::make_shared<kl::GlobalAveragePooling2D>(), image},
        {std::make_shared<kl::BatchNormalization>(kl::BatchNormalizationOptions{.momentum = 0.9}),
         image},
        {std::make_shared<kl::LayerNormalization>(kl::LayerNormalizationOptions{.epsilon = 1e-5}),
         seq},
        {std::make_shared<kl::MultiHeadAttention>(
             2, 3, kl::MultiHeadAttentionOptions{.value_dim = 4, .dropout = 0.1, .seed = 3}),
         seq},
    };
    for (auto& [layer, input] : cases) {
        INFO(layer->class_name());
        const tf::Tensor y = (*layer)(input);
        const kk::Config serialized = ks::serialize_layer(*layer);
        CHECK(serialized["class_name"].as_string() == layer->class_name());
        CHECK(serialized["module"].as_string() == "keras.layers");
        CHECK(serialized["build_config"]["input_shape"].as_shape()[0] == -1);
        const auto rebuilt = ks::deserialize_layer(kk::Config::parse(serialized.dump()));
        CHECK(rebuilt->built());
        CHECK(rebuilt->get_config().dump() == layer->get_config().dump());
        CHECK(rebuilt->count_params() == layer->count_params());
        if (!rebuilt->variables().empty()) {
            // Same weights, same outputs (inference mode).
            std::vector<tf::Variable> a = layer->variables(), b = rebuilt->variables();
            REQUIRE(a.size() == b.size());
            for (std::size_t i = 0; i < a.size(); ++i)
                b[i].assign(a[i].value());
            CHECK(floats((*rebuilt)(input)) == floats(y));
        }
    }
}

TEST_CASE("Sequential: save and load_model give the same predictions bit for bit",
          "[keras][saving][archive]") {
    tf::random::set_seed(4);
    const fs::path dir = scratch("sequential");
    auto model = std::make_shared<kk::Sequential>(
        std::vector<std::shared_ptr<kl::Layer>>{
            std::make_shared<kl::Conv2D>(4, tf::Ints{3}, kl::Conv2DOptions{.activation = "relu"}),
            std::make_shared<kl::BatchNormalization>(),
            std::make_shared<kl::MaxPooling2D>(),
            std::make_shared<kl::Flatten>(),
            std::make_shared<kl::Dropout>(0.3),
            std::make_shared<kl::Dense>(3, kl::DenseOptions{.activation = "softmax"})},
        "digits");
    model->compile("adam", "sparse_categorical_crossentropy");
    const tf::Tensor x = tf::random::uniform({16, 8, 8, 1}, 0, 1, tf::float32, 5);
    const tf::Tensor y = tf::cast(tf::random::uniform({16}, 0, 3, tf::float32, 6), tf::int32);
    model->fit(x, y, {.batch_size = 8, .epochs = 2, .verbose = 0});  // moving stats move
    const std::string path = (dir / "m.keras").string();
    model->save(path);
    const auto members = tf::io::zip::read_archive(slurp(path), path);
    REQUIRE(members.size() == 3);
    CHECK(members[0].name == "metadata.json");
    CHECK(members[1].name == "config.json");
    CHECK(members[2].name == "model.weights.h5");
    const std::string raw = slurp(path);
    CHECK(raw.substr(0, 4) == std::string("PK\x03\x04", 4));
    CHECK(raw[8] == 0);  // compression method 0: stored, as Keras writes
    const kk::Config config = kk::Config::parse(members[1].bytes);
    CHECK(config["class_name"].as_string() == "Sequential");
    CHECK(config["config"]["name"].as_string() == "digits");
    CHECK(config["config"]["layers"].as_array().size() == 6);
    CHECK(config["config"]["build_input_shape"].as_shape() == std::vector<int64_t>{-1, 8, 8, 1});
    CHECK(kk::Config::parse(members[0].bytes)["keras_version"].is_string());

    const auto loaded = kk::models::load_model(path);
    CHECK(loaded->name() == "digits");
    // Keras 2.15's .keras config: an InputLayer with "batch_input_shape", no build_input_shape.
    {
        kk::Config old_style = config;
        kk::Config inner = old_style["config"];
        kk::Config list = kk::Config::array();
        kk::Config input;
        input.set("module", "keras.layers");
        input.set("class_name", "InputLayer");
        input.set(
            "config",
            kk::Config::parse(R"({"batch_input_shape": [null, 8, 8, 1], "dtype": "float32", )"
                              R"("sparse": false, "ragged": false, "name": "conv2d_input"})"));
        list.push_back(input);
        for (const kk::Config& layer : inner["layers"].as_array())
            list.push_back(layer);
        inner.set("layers", list);
        inner.set("build_input_shape", kk::Config());
        old_style.set("config", inner);
        const std::string old_path = (dir / "old.keras").string();
        tf::io::zip::write_archive(old_path,
                                   {{"metadata.json", {members[0].bytes}},
                                    {"config.json", {old_style.dump()}},
                                    {"model.weights.h5", {members[2].bytes}}},
                                   false);
        CHECK(floats(kk::models::load_model(old_path)->predict(x)) == floats(model->predict(x)));
    }
    CHECK(loaded->class_name() == "Sequential");
    CHECK_FALSE(loaded->compiled());
    CHECK(floats(loaded->predict(x)) == floats(model->predict(x)));
    const auto a = model->get_weights(), b = loaded->get_weights();
    REQUIRE(a.size() == b.size());
    for (std::size_t i = 0; i < a.size(); ++i)
        CHECK(floats(a[i]) == floats(b[i]));
    fs::remove_all(dir);
}

TEST_CASE("Functional: save / load_model with two inputs, a shared layer and a nested model",
          "[keras][saving][archive]") {
    const fs::path dir = scratch("functional");
    const auto ix = kk::Input({4});
    auto d1 = std::make_shared<kl::Dense>(6, kl::DenseOptions{.activation = "relu"});
    auto inner = std::make_shared<kk::Functional>(
        std::vector<kk::KerasTensor>{ix}, std::vector<kk::KerasTensor>{(*d1)(ix)}, "inner");
    const auto a = kk::Input({4}, tf::float32, "left");
    const auto b = kk::Input({4}, tf::float32, "right");
    auto shared = std::make_shared<kl::Dense>(4, kl::DenseOptions{.name = "shared"});
    auto norm = std::make_shared<kl::LayerNormalization>();
    auto head = std::make_shared<kl::Dense>(2, kl::DenseOptions{.name = "head"});
    auto side = std::make_shared<kl::Dense>(1, kl::DenseOptions{.name = "side"});
    const auto ha = (*shared)(a);
    const auto hb = (*shared)(b);
    const auto out1 = (*head)((*norm)((*inner)(ha)));
    const auto out2 = (*side)(hb);
    kk::Functional model({a, b}, {out1, out2}, "two_towers");
    const std::string path = (dir / "f.keras").string();
    model.save(path);
    const kk::Config config =
        kk::Config::parse(tf::io::zip::read_archive(slurp(path), path)[1].bytes);
    CHECK(config["class_name"].as_string() == "Functional");
    const kk::Config& cfg = config["config"];
    CHECK(cfg["input_layers"].dump() == "[[\"left\", 0, 0], [\"right\", 0, 0]]");
    CHECK(cfg["output_layers"].dump() == "[[\"head\", 0, 0], [\"side\", 0, 0]]");
    // The shared layer's two calls; the nested model's first call is its node 1, as Keras.
    for (const kk::Config& layer : cfg["layers"].as_array()) {
        if (layer["name"].as_string() == "shared")
            CHECK(layer["inbound_nodes"].as_array().size() == 2);
        if (layer["name"].as_string() == norm->name())
            CHECK(
                layer["inbound_nodes"][0]["args"].as_array()[0]["config"]["keras_history"].dump() ==
                "[\"inner\", 1, 0]");
    }
    const auto loaded = kk::models::load_model(path);
    auto* f = dynamic_cast<kk::Functional*>(loaded.get());
    REQUIRE(f != nullptr);
    CHECK(f->name() == "two_towers");
    CHECK(f->output_names() == std::vector<std::string>{"head", "side"});
    CHECK(loaded->variables().size() == model.variables().size());
    const tf::Tensor xa = tf::random::uniform({5, 4}, -1, 1, tf::float32, 8);
    const tf::Tensor xb = tf::random::uniform({5, 4}, -1, 1, tf::float32, 9);
    const auto want = model.predict({xa, xb});
    const auto got = loaded->predict({xa, xb});
    REQUIRE(got.size() == 2);
    CHECK(floats(got[0]) == floats(want[0]));
    CHECK(floats(got[1]) == floats(want[1]));
    CHECK(f->summary() == model.summary());
    fs::remove_all(dir);
}

TEST_CASE("Saving: registered user layers, unknown classes and bad calls",
          "[keras][saving][errors]") {
    const fs::path dir = scratch("errors");
    ks::register_layer("Scale", [](const kk::Config& c) {
        return std::make_shared<Scale>(c["init"].as_double(), c["name"].as_string());
    });
    auto model = std::make_shared<kk::Sequential>(std::vector<std::shared_ptr<kl::Layer>>{
        std::make_shared<Scale>(2.5, "scale"), std::make_shared<kl::Dense>(2)});
    const tf::Tensor x = tf::ones({3, 4});
    const tf::Tensor y = (*model)(x);
    const std::string path = (dir / "custom.keras").string();
    model->save(path);
    CHECK(floats(kk::models::load_model(path)->predict(x)) == floats(y));

    // An archive naming a class nobody registered.
    const std::string config =
        R"({"module": "keras", "class_name": "Sequential", "config": {"name": "s", "layers": [)"
        R"({"module": "my", "class_name": "MyFancyLayer", "config": {"name": "f"}}]}})";
    const std::string bad = (dir / "unknown.keras").string();
    tf::io::zip::write_archive(bad, {{"config.json", {config}}}, false);
    CHECK_THROWS_AS(kk::models::load_model(bad), tf::errors::NotFoundError);
    CHECK_THROWS_WITH(
        kk::models::load_model(bad),
        Catch::Contains("Could not locate class 'MyFancyLayer'") && Catch::Contains("Dense"));
    CHECK_THROWS_AS(
        ks::deserialize_layer(kk::Config::parse(R"({"class_name": "Nope", "config": {}})")),
        tf::errors::NotFoundError);
    CHECK_THROWS_AS(kk::models::load_model((dir / "missing.keras").string()),
                    tf::errors::NotFoundError);
    tf::io::zip::write_archive((dir / "empty.keras").string(), {{"metadata.json", {"{}"}}}, false);
    CHECK_THROWS_WITH(kk::models::load_model((dir / "empty.keras").string()),
                      Catch::Contains("no config.json"));
    CHECK_THROWS_AS(model->save((dir / "m.h5").string()), tf::errors::InvalidArgumentError);
    auto unbuilt = std::make_shared<kk::Sequential>(
        std::vector<std::shared_ptr<kl::Layer>>{std::make_shared<kl::Dense>(2)});
    CHECK_THROWS_AS(unbuilt->save((dir / "u.keras").string()), tf::errors::FailedPreconditionError);
    struct Sub : kk::Model {
        std::shared_ptr<kl::Dense> d = track(std::make_shared<kl::Dense>(1));
        tf::Tensor call(const tf::Tensor& in, bool training) override { return (*d)(in, training); }
    };
    auto sub = std::make_shared<Sub>();
    (*sub)(x);
    CHECK_THROWS_AS(sub->save((dir / "s.keras").string()), tf::errors::UnimplementedError);
    CHECK_THROWS_AS(ks::register_layer("", nullptr), tf::errors::InvalidArgumentError);
    // A layer class nobody registered cannot be saved (load_model could not read it back).
    struct Unregistered : kl::Layer {
        Unregistered() : kl::Layer("unregistered") {}
        tf::Tensor call(const tf::Tensor& in, bool) override { return in; }
    };
    auto odd = std::make_shared<kk::Sequential>(std::vector<std::shared_ptr<kl::Layer>>{
        std::make_shared<kl::Dense>(2), std::make_shared<Unregistered>()});
    (*odd)(x);
    CHECK_THROWS_AS(odd->save((dir / "odd.keras").string()), tf::errors::UnimplementedError);
    CHECK_THROWS_WITH(odd->save((dir / "odd.keras").string()),
                      Catch::Contains("has no registered from_config"));
    fs::remove_all(dir);
}

namespace {

// Serializes `layer` (called once on `input`), rebuilds it from the JSON and checks the rebuilt
// layer: same config, same parameter count and, with the weights copied, the same outputs.
void check_round_trip(const std::shared_ptr<kl::Layer>& layer, const tf::Tensor& input) {
    INFO(layer->class_name());
    const tf::Tensor y = (*layer)(input);
    const kk::Config serialized = ks::serialize_layer(*layer);
    CHECK(serialized["class_name"].as_string() == layer->class_name());
    CHECK(serialized["module"].as_string() == "keras.layers");
    const auto rebuilt = ks::deserialize_layer(kk::Config::parse(serialized.dump()));
    CHECK(rebuilt->built());
    CHECK(rebuilt->get_config().dump() == layer->get_config().dump());
    CHECK(rebuilt->count_params() == layer->count_params());
    std::vector<tf::Variable> a = layer->variables(), b = rebuilt->variables();
    REQUIRE(a.size() == b.size());
    for (std::size_t i = 0; i < a.size(); ++i)
        b[i].assign(a[i].value());
    CHECK(floats((*rebuilt)(input)) == floats(y));
}

}  // namespace

TEST_CASE("get_config: the recurrent, reshaping, preprocessing, conv and norm layers round trip",
          "[keras][saving][config]") {
    const tf::Tensor image = tf::random::uniform({2, 8, 8, 4}, -1, 1, tf::float32, 11);
    const tf::Tensor seq = tf::random::uniform({2, 5, 4}, -1, 1, tf::float32, 12);
    const tf::Tensor flat = tf::random::uniform({2, 6}, -1, 1, tf::float32, 13);
    const std::vector<std::pair<std::shared_ptr<kl::Layer>, tf::Tensor>> cases = {
        {std::make_shared<kl::SimpleRNN>(3, kl::RNNOptions{.activation = "relu"}), seq},
        {std::make_shared<kl::LSTM>(
             3, kl::RNNOptions{.unit_forget_bias = false, .return_sequences = true, .seed = 4}),
         seq},
        {std::make_shared<kl::GRU>(
             2, kl::RNNOptions{.recurrent_activation = "hard_sigmoid", .reset_after = false}),
         seq},
        {std::make_shared<kl::GRU>(2, kl::RNNOptions{.go_backwards = true}), seq},
        {std::make_shared<kl::Bidirectional>(std::make_shared<kl::LSTM>(2), "sum"), seq},
        {std::make_shared<kl::Bidirectional>(
             std::make_shared<kl::GRU>(2, kl::RNNOptions{.return_sequences = true})),
         seq},
        {std::make_shared<kl::TimeDistributed>(std::make_shared<kl::Dense>(3)), seq},
        {std::make_shared<kl::Reshape>(std::vector<int64_t>{-1, 2}), flat},
        {std::make_shared<kl::Permute>(std::vector<int64_t>{2, 1}), seq},
        {std::make_shared<kl::RepeatVector>(3), flat},
        {std::make_shared<kl::ZeroPadding2D>(
             kl::ZeroPadding2DOptions{.padding = kl::Sides2D({{1, 2}, {0, 3}})}),
         image},
        {std::make_shared<kl::Cropping2D>(kl::Cropping2DOptions{.cropping = kl::Sides2D({1, 2})}),
         image},
        {std::make_shared<kl::UpSampling2D>(
             kl::UpSampling2DOptions{.size = tf::Ints{2, 3}, .interpolation = "bilinear"}),
         image},
        {std::make_shared<kl::Rescaling>(1.0 / 255, kl::RescalingOptions{.offset = -0.5}), image},
        {std::make_shared<kl::Normalization>(
             kl::NormalizationOptions{.mean = std::vector<double>{0.5, 1, 2, 3},
                                      .variance = std::vector<double>{1, 2, 3, 4}}),
         image},
        {std::make_shared<kl::Normalization>(kl::NormalizationOptions{.axis = {}, .invert = true}),
         flat},
        {std::make_shared<kl::RandomFlip>(kl::RandomFlipOptions{.mode = "horizontal", .seed = 3}),
         image},
        {std::make_shared<kl::RandomCrop>(4, 5, kl::RandomCropOptions{.seed = 2}), image},
        {std::make_shared<kl::Resizing>(
             5, 3, kl::ResizingOptions{.interpolation = "nearest", .crop_to_aspect_ratio = true}),
         image},
        {std::make_shared<kl::Conv2DTranspose>(
             3,
             tf::Ints{3, 2},
             kl::Conv2DTransposeOptions{
                 .strides = 2, .padding = "valid", .output_padding = tf::Ints{1, 0}}),
         image},
        {std::make_shared<kl::DepthwiseConv2D>(
             tf::Ints{3}, kl::DepthwiseConv2DOptions{.depth_multiplier = 2, .activation = "relu"}),
         image},
        {std::make_shared<kl::SeparableConv2D>(
             5, tf::Ints{2}, kl::SeparableConv2DOptions{.padding = "same", .use_bias = false}),
         image},
        {std::make_shared<kl::MaxPooling1D>(2, kl::Pooling1DOptions{.strides = 1}), seq},
        {std::make_shared<kl::AveragePooling1D>(3, kl::Pooling1DOptions{.padding = "same"}), seq},
        {std::make_shared<kl::GlobalMaxPooling2D>(kl::GlobalPoolingOptions{.keepdims = true}),
         image},
        {std::make_shared<kl::GlobalAveragePooling1D>(), seq},
        {std::make_shared<kl::GroupNormalization>(
             kl::GroupNormalizationOptions{.groups = 2, .epsilon = 1e-5}),
         image},
        {std::make_shared<kl::UnitNormalization>(kl::UnitNormalizationOptions{.axis = {1, 2}}),
         seq},
    };
    for (const auto& [layer, input] : cases)
        check_round_trip(layer, input);

    // Keras 3's keys and values.
    const kk::Config lstm = kl::LSTM(4, {.name = "l"}).get_config();
    CHECK(keys(lstm) == std::vector<std::string>{"name",
                                                 "trainable",
                                                 "dtype",
                                                 "return_sequences",
                                                 "return_state",
                                                 "go_backwards",
                                                 "stateful",
                                                 "unroll",
                                                 "zero_output_for_mask",
                                                 "units",
                                                 "activation",
                                                 "recurrent_activation",
                                                 "use_bias",
                                                 "kernel_initializer",
                                                 "recurrent_initializer",
                                                 "bias_initializer",
                                                 "unit_forget_bias",
                                                 "kernel_regularizer",
                                                 "recurrent_regularizer",
                                                 "bias_regularizer",
                                                 "activity_regularizer",
                                                 "kernel_constraint",
                                                 "recurrent_constraint",
                                                 "bias_constraint",
                                                 "dropout",
                                                 "recurrent_dropout",
                                                 "seed"});
    CHECK(lstm["recurrent_initializer"]["class_name"].as_string() == "Orthogonal");
    CHECK(kl::GRU(2).get_config()["reset_after"].as_bool());
    CHECK_FALSE(kl::SimpleRNN(2).get_config().contains("recurrent_activation"));
    kl::Bidirectional bi(std::make_shared<kl::LSTM>(2, kl::RNNOptions{.name = "l"}), "none");
    const kk::Config bc = bi.get_config();
    CHECK(bc["merge_mode"].is_null());
    CHECK(bc["layer"]["class_name"].as_string() == "LSTM");
    CHECK(bc["layer"]["config"]["name"].as_string() == "forward_l");
    CHECK(bc["backward_layer"]["config"]["name"].as_string() == "backward_l");
    CHECK(bc["backward_layer"]["config"]["go_backwards"].as_bool());
    CHECK(kl::Reshape({-1, 3}).get_config()["target_shape"].dump() == "[-1, 3]");
    CHECK(kl::ZeroPadding2D({.padding = 2}).get_config()["padding"].dump() == "[[2, 2], [2, 2]]");
    CHECK(kl::Cropping2D({.cropping = kl::Sides2D({1, 2})}).get_config()["cropping"].dump() ==
          "[[1, 1], [2, 2]]");
    CHECK(kl::Dot(tf::Ints{1, 2}).get_config()["axes"].dump() == "[1, 2]");
    CHECK(kl::Dot(tf::Ints{1}).get_config()["axes"].dump() == "1");
    CHECK(kl::Concatenate({.axis = 1}).get_config()["axis"].as_int() == 1);
    CHECK(kl::MaxPooling1D(3).get_config()["strides"].dump() == "[3]");
    CHECK(kl::Normalization().get_config()["axis"].dump() == "[-1]");
    CHECK(kl::Normalization().get_config()["mean"].is_null());
    CHECK(kl::Conv2DTranspose(2, tf::Ints{3}).get_config()["output_padding"].is_null());
    // Keras' own forms read back: merge_mode None, an int padding, int pool sizes.
    CHECK(std::dynamic_pointer_cast<kl::Bidirectional>(
              ks::deserialize_layer(kk::Config::parse(ks::serialize_layer(bi).dump())))
              ->merge_mode() == "none");
    const auto pad = ks::deserialize_layer(kk::Config::parse(
        R"({"class_name": "ZeroPadding2D", "config": {"name": "p", "padding": 1}})"));
    CHECK(pad->get_config()["padding"].dump() == "[[1, 1], [1, 1]]");
    const auto pool = ks::deserialize_layer(kk::Config::parse(
        R"({"class_name": "MaxPooling1D", "config": {"pool_size": 2, "strides": null}})"));
    CHECK(pool->get_config()["strides"].dump() == "[2]");
    // Bad configs: typed errors naming the layer.
    CHECK_THROWS_WITH(ks::deserialize_layer(kk::Config::parse(
                          R"({"class_name": "Bidirectional", "config": {"name": "bi", "layer": )"
                          R"({"class_name": "Dense", "config": {"units": 2}}}})")),
                      Catch::Contains("layer \"bi\" (Bidirectional)") && Catch::Contains("Dense"));
    CHECK_THROWS_AS(ks::deserialize_layer(kk::Config::parse(
                        R"({"class_name": "Cropping2D", "config": {"cropping": [1, 2, 3]}})")),
                    tf::errors::InvalidArgumentError);
    CHECK_THROWS_AS(
        ks::deserialize_layer(kk::Config::parse(
            R"({"class_name": "LSTM", "config": {"units": 2, "activation": {"a": 1}}})")),
        tf::errors::UnimplementedError);
}

TEST_CASE("Saving: recurrent models round trip with Keras' weight paths in model.weights.h5",
          "[keras][saving][archive]") {
    tf::random::set_seed(21);
    const fs::path dir = scratch("recurrent");
    auto model = std::make_shared<kk::Sequential>(
        std::vector<std::shared_ptr<kl::Layer>>{
            std::make_shared<kl::Bidirectional>(
                std::make_shared<kl::LSTM>(3, kl::RNNOptions{.return_sequences = true})),
            std::make_shared<kl::GRU>(4, kl::RNNOptions{.return_sequences = true}),
            std::make_shared<kl::TimeDistributed>(std::make_shared<kl::Dense>(2)),
            std::make_shared<kl::SimpleRNN>(3),
            std::make_shared<kl::RepeatVector>(2),
            std::make_shared<kl::Reshape>(std::vector<int64_t>{6}),
            std::make_shared<kl::Dense>(1)},
        "seq");
    const tf::Tensor x = tf::random::uniform({4, 5, 3}, -1, 1, tf::float32, 22);
    const tf::Tensor want = model->predict(x);
    const std::string path = (dir / "r.keras").string();
    model->save(path);
    const auto members = tf::io::zip::read_archive(slurp(path), path);
    REQUIRE(members.size() == 3);
    const auto loaded = kk::models::load_model(path);
    CHECK(floats(loaded->predict(x)) == floats(want));
    CHECK(ks::serialize_layer(*loaded).dump() == ks::serialize_layer(*model).dump());

    // Keras 3's object paths: an RNN's weights live in its "cell", a wrapper's layers in its
    // attributes (forward_layer, backward_layer, layer); LSTM/GRU order kernel, recurrent, bias.
    const std::string h5_path = (dir / "model.weights.h5").string();
    {
        std::ofstream out(h5_path, std::ios::binary);
        out << members[2].bytes;
    }
    loaded->load_weights(h5_path);  // the archive's weights file loads on its own too
    CHECK(floats(loaded->predict(x)) == floats(want));
    model->save_weights(h5_path);
    const std::lock_guard lock(tf::keras::h5::hdf5_mutex());
    const auto file = tf::keras::h5::File::open(h5_path);
    const auto root = file.root();
    const std::map<std::string, std::vector<int64_t>> first_dims = {
        {"layers/bidirectional/forward_layer/cell/vars", {3, 3, 12}},  // [3, 12], [3, 12], [12]
        {"layers/bidirectional/backward_layer/cell/vars", {3, 3, 12}},
        {"layers/gru/cell/vars", {6, 4, 2}},  // [6, 12], [4, 12], [2, 12]
        {"layers/time_distributed/layer/vars", {4, 2}},
        {"layers/simple_rnn/cell/vars", {2, 3, 3}}};
    for (const auto& [group, dims] : first_dims) {
        INFO(group);
        REQUIRE(root.has_group(group));
        const auto vars = root.group(group);
        for (std::size_t i = 0; i < dims.size(); ++i) {
            const tf::Tensor w = vars.read_dataset(std::to_string(i));
            CHECK(w.shape()[0] == dims[i]);
        }
        CHECK_FALSE(vars.has_dataset(std::to_string(dims.size())));
    }
    CHECK(root.group("layers/gru/vars").children().empty());
    fs::remove_all(dir);
}

TEST_CASE("Saving: a functional model with merge, conv and norm layers round trips bit for bit",
          "[keras][saving][archive]") {
    tf::random::set_seed(31);
    const fs::path dir = scratch("merging");
    const auto a = kk::Input({6, 6, 3}, tf::float32, "a");
    const auto b = kk::Input({6, 6, 3}, tf::float32, "b");
    const auto ca = (*std::make_shared<kl::SeparableConv2D>(
        4, tf::Ints{3}, kl::SeparableConv2DOptions{.padding = "same"}))(a);
    const auto cb = (*std::make_shared<kl::DepthwiseConv2D>(
        tf::Ints{3}, kl::DepthwiseConv2DOptions{.padding = "same", .depth_multiplier = 2}))(
        (*std::make_shared<kl::Rescaling>(0.5))(b));
    const auto cb4 = (*std::make_shared<kl::Conv2D>(4, tf::Ints{1}))(cb);
    std::vector<kk::KerasTensor> pair{ca, cb4};
    const auto merged = (*std::make_shared<kl::Concatenate>())(
        std::vector<kk::KerasTensor>{(*std::make_shared<kl::Add>())(pair),
                                     (*std::make_shared<kl::Subtract>())(pair),
                                     (*std::make_shared<kl::Multiply>())(pair),
                                     (*std::make_shared<kl::Average>())(pair),
                                     (*std::make_shared<kl::Maximum>())(pair),
                                     (*std::make_shared<kl::Minimum>())(pair)});
    const auto up = (*std::make_shared<kl::Conv2DTranspose>(
        2, tf::Ints{2}, kl::Conv2DTransposeOptions{.strides = 2}))(
        (*std::make_shared<kl::GroupNormalization>(kl::GroupNormalizationOptions{.groups = 4}))(
            merged));
    const auto g1 = (*std::make_shared<kl::GlobalMaxPooling2D>())(up);
    const auto g2 = (*std::make_shared<kl::GlobalAveragePooling1D>())(
        (*std::make_shared<kl::Reshape>(std::vector<int64_t>{-1, 2}))(up));
    const auto dot = (*std::make_shared<kl::Dot>(tf::Ints{1}, kl::DotOptions{.normalize = true}))(
        std::vector<kk::KerasTensor>{g1, g2});
    const auto out = (*std::make_shared<kl::UnitNormalization>())(
        (*std::make_shared<kl::Concatenate>())(std::vector<kk::KerasTensor>{g1, g2, dot}));
    kk::Functional model({a, b}, {out}, "merging");
    const tf::Tensor xa = tf::random::uniform({3, 6, 6, 3}, -1, 1, tf::float32, 32);
    const tf::Tensor xb = tf::random::uniform({3, 6, 6, 3}, -1, 1, tf::float32, 33);
    const auto want = model.predict({xa, xb});
    const std::string path = (dir / "m.keras").string();
    model.save(path);
    const auto loaded = kk::models::load_model(path);
    const auto got = loaded->predict({xa, xb});
    REQUIRE(got.size() == 1);
    CHECK(floats(got[0]) == floats(want[0]));
    CHECK(ks::serialize_layer(*loaded).dump() == ks::serialize_layer(model).dump());
    fs::remove_all(dir);
}

TEST_CASE("Saving: image preprocessing and reshaping layers in a Sequential round trip",
          "[keras][saving][archive]") {
    tf::random::set_seed(41);
    const fs::path dir = scratch("preprocessing");
    const tf::Tensor x = tf::random::uniform({3, 9, 10, 2}, 0, 255, tf::float32, 42);
    auto norm = std::make_shared<kl::Normalization>();
    norm->adapt(x);
    auto model = std::make_shared<kk::Sequential>(
        std::vector<std::shared_ptr<kl::Layer>>{
            norm,
            std::make_shared<kl::Resizing>(8, 8),
            std::make_shared<kl::RandomFlip>(kl::RandomFlipOptions{.seed = 1}),
            std::make_shared<kl::RandomCrop>(6, 6, kl::RandomCropOptions{.seed = 2}),
            std::make_shared<kl::ZeroPadding2D>(),
            std::make_shared<kl::Cropping2D>(kl::Cropping2DOptions{.cropping = 2}),
            std::make_shared<kl::UpSampling2D>(),
            std::make_shared<kl::Permute>(std::vector<int64_t>{2, 1, 3}),
            std::make_shared<kl::Reshape>(std::vector<int64_t>{-1, 2}),
            std::make_shared<kl::MaxPooling1D>(),
            std::make_shared<kl::AveragePooling1D>(2, kl::Pooling1DOptions{.padding = "same"}),
            std::make_shared<kl::UnitNormalization>()},
        "images");
    const tf::Tensor want = model->predict(x);
    const std::string path = (dir / "p.keras").string();
    model->save(path);
    const auto loaded = kk::models::load_model(path);
    CHECK(floats(loaded->predict(x)) == floats(want));
    CHECK(ks::serialize_layer(*loaded).dump() == ks::serialize_layer(*model).dump());
    // The adapted statistics travel as weights (the config's mean / variance stay null).
    const auto* n = dynamic_cast<const kl::Normalization*>(
        std::static_pointer_cast<kk::Sequential>(loaded)->layers().at(0).get());
    REQUIRE(n != nullptr);
    CHECK(floats(n->mean()) == floats(norm->mean()));
    fs::remove_all(dir);
}
