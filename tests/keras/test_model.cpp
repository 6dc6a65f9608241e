// Model.compile / fit / evaluate / predict / summary, History, callbacks (user, TensorBoard,
// ModelCheckpoint, EarlyStopping) and the progress bar.
#include <filesystem>

#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

#include "keras/progress_bar.hpp"

namespace tf = tapeflow;
namespace kl = tf::keras::layers;
namespace ko = tf::keras::optimizers;
namespace fs = std::filesystem;

namespace {

// Points in [-1, 1]^2 labelled by quadrant parity (XOR): needs the hidden layer.
std::pair<tf::Tensor, tf::Tensor> quadrants(int64_t n, uint64_t seed) {
    const tf::Tensor x = tf::random::uniform({n, 2}, -1, 1, tf::float32, seed);
    const tf::Tensor prod = tf::reduce_prod(x, {1});
    return {x, tf::cast(tf::greater(prod, tf::zeros_like(prod)), tf::int32)};
}

std::shared_ptr<tf::keras::Sequential> classifier() {
    return std::make_shared<tf::keras::Sequential>(std::vector<std::shared_ptr<kl::Layer>>{
        std::make_shared<kl::Dense>(32, kl::DenseOptions{.activation = "relu"}),
        std::make_shared<kl::Dense>(2)});
}

void compile(tf::keras::Model& model, double lr = 0.02) {
    model.compile(std::make_shared<ko::Adam>(ko::AdamOptions{.learning_rate = lr}),
                  std::make_shared<tf::keras::losses::SparseCategoricalCrossentropy>(
                      tf::keras::losses::CrossentropyOptions{.from_logits = true}),
                  {std::make_shared<tf::keras::metrics::SparseCategoricalAccuracy>("accuracy")});
}

fs::path scratch(const std::string& name) {
    const fs::path dir = fs::temp_directory_path() / ("tapeflow_keras_model_" + name);
    fs::remove_all(dir);
    return dir;
}

struct Recorder : tf::keras::callbacks::Callback {
    std::vector<std::string> events;
    std::vector<double> batch_losses;
    void on_train_begin(const tf::keras::callbacks::Logs&) override {
        events.push_back("train_begin");
    }
    void on_epoch_begin(int64_t e, const tf::keras::callbacks::Logs&) override {
        events.push_back("epoch_begin " + std::to_string(e));
    }
    void on_train_batch_end(int64_t, const tf::keras::callbacks::Logs& logs) override {
        batch_losses.push_back(logs.at("loss"));
    }
    void on_epoch_end(int64_t e, const tf::keras::callbacks::Logs& logs) override {
        events.push_back("epoch_end " + std::to_string(e) + (logs.count("val_loss") ? " val" : ""));
        if (e == 1) model()->stop_training = true;
    }
    void on_train_end(const tf::keras::callbacks::Logs&) override { events.push_back("train_end"); }
};

}  // namespace

TEST_CASE("fit trains a small model to > 95% and fills History", "[keras][model][fit]") {
    tf::random::set_seed(3);
    auto [x, y] = quadrants(1024, 11);
    auto model = classifier();
    compile(*model);
    const auto history =
        model->fit(x, y, {.batch_size = 32, .epochs = 25, .verbose = 0, .validation_split = 0.25});
    REQUIRE(history.history.at("loss").size() == 25);
    CHECK(history.history.count("accuracy") == 1);
    CHECK(history.history.count("val_loss") == 1);
    CHECK(history.history.count("val_accuracy") == 1);
    CHECK(history.history.at("loss").back() < history.history.at("loss").front());
    auto [xt, yt] = quadrants(512, 12);
    const auto scores = model->evaluate(xt, yt);
    CHECK(scores.at("accuracy") > 0.95);
    const tf::Tensor logits = model->predict(xt, 100);
    CHECK(logits.shape() == tf::Shape{512, 2});
    const double agree =
        tf::reduce_mean(tf::cast(tf::equal(tf::argmax(logits, 1, tf::int32), yt), tf::float32))
            .item<double>();
    CHECK(agree == Approx(scores.at("accuracy")).margin(1e-6));
}

TEST_CASE("fit on a tf::data pipeline with validation data", "[keras][model][fit]") {
    auto [x, y] = quadrants(256, 21);
    auto model = classifier();
    compile(*model, 0.03);
    auto data = tf::data::from_tensor_slices({x, y}).shuffle(256, 1).batch(32);
    auto val = tf::data::from_tensor_slices({x, y}).batch(64);
    const auto history = model->fit(data, {.epochs = 3, .verbose = 0}, val);
    CHECK(history.history.at("val_accuracy").size() == 3);
    CHECK_THROWS_AS(model->fit(data, {.verbose = 0, .validation_split = 0.1}),
                    tf::errors::InvalidArgumentError);
    CHECK(model->evaluate(val).count("loss") == 1);
}

TEST_CASE("fit before compile, mismatched samples", "[keras][model][errors]") {
    auto model = classifier();
    CHECK_THROWS_WITH(model->fit(tf::ones({4, 2}), tf::zeros({4}, tf::int32)),
                      Catch::Contains("compile()") && Catch::Contains(model->name()));
    CHECK_THROWS_AS(model->fit(tf::ones({4, 2}), tf::zeros({4}, tf::int32)),
                    tf::errors::FailedPreconditionError);
    compile(*model);
    CHECK_THROWS_WITH(model->fit(tf::ones({4, 2}), tf::zeros({3}, tf::int32), {.verbose = 0}),
                      Catch::Contains("4 samples"));
}

TEST_CASE("Callbacks see the epochs, batches and stop_training", "[keras][model][callbacks]") {
    auto [x, y] = quadrants(64, 31);
    auto model = classifier();
    compile(*model);
    auto rec = std::make_shared<Recorder>();
    const auto history = model->fit(x,
                                    y,
                                    {.batch_size = 16,
                                     .epochs = 5,
                                     .verbose = 0,
                                     .callbacks = {rec},
                                     .validation_split = 0.25});
    CHECK(history.history.at("loss").size() == 2);  // stopped after epoch 1
    CHECK(rec->events == std::vector<std::string>{"train_begin",
                                                  "epoch_begin 0",
                                                  "epoch_end 0 val",
                                                  "epoch_begin 1",
                                                  "epoch_end 1 val",
                                                  "train_end"});
    CHECK(rec->batch_losses.size() == 2 * 3);  // 48 training rows in batches of 16
}

TEST_CASE("EarlyStopping follows Keras 3's patience rule and restores the best weights",
          "[keras][model][callbacks]") {
    // A model whose monitored value is scripted: the callback only reads logs.
    auto model = classifier();
    compile(*model);
    model->predict(tf::ones({1, 2}));
    tf::keras::callbacks::EarlyStopping stop(
        tf::keras::callbacks::EarlyStoppingOptions{.patience = 2, .restore_best_weights = true});
    stop.set_model(model.get());
    stop.on_train_begin({});
    const std::vector<double> val_loss{1.0, 0.8, 0.9, 0.85, 0.7};
    tf::Variable w = model->variables()[0];
    std::vector<tf::Tensor> at_best;
    int64_t epoch = 0;
    for (; epoch < int64_t(val_loss.size()) && !model->stop_training; ++epoch) {
        w.assign(tf::fill(w.shape(), double(epoch)));
        if (epoch == 1) at_best = model->get_weights();
        stop.on_epoch_end(epoch, {{"val_loss", val_loss[epoch]}});
    }
    CHECK(epoch == 4);  // epochs 2 and 3 did not improve on 0.8: stopped at 3
    CHECK(stop.stopped_epoch() == 3);
    CHECK(stop.best_epoch() == 1);
    stop.on_train_end({});
    CHECK(tf::reduce_all(tf::equal(w.value(), at_best[0])).item<bool>());
    model->stop_training = false;
    tf::keras::callbacks::EarlyStopping unknown("val_auc");
    unknown.set_model(model.get());
    CHECK_THROWS_AS(unknown.on_train_begin({}), tf::errors::InvalidArgumentError);
}

TEST_CASE("TensorBoard writes Keras' runs and tags; ModelCheckpoint saves with Saver",
          "[keras][model][callbacks]") {
    const fs::path dir = scratch("tb");
    auto [x, y] = quadrants(64, 41);
    auto model = classifier();
    compile(*model);
    auto board = std::make_shared<tf::keras::callbacks::TensorBoard>((dir / "logs").string());
    auto ckpt = std::make_shared<tf::keras::callbacks::ModelCheckpoint>(
        (dir / "ckpt" / "model-{epoch}").string());
    model->fit(x,
               y,
               {.batch_size = 16,
                .epochs = 2,
                .verbose = 0,
                .callbacks = {board, ckpt},
                .validation_split = 0.25});
    auto tags = [](const fs::path& run) {
        std::map<std::string, std::vector<int64_t>> out;
        for (const auto& entry : fs::directory_iterator(run))
            for (const auto& event : tf::summary::summary_iterator(entry.path().string()))
                for (const auto& v : event.values)
                    out[v.tag].push_back(event.step);
        return out;
    };
    const auto train = tags(dir / "logs" / "train");
    CHECK(train.at("epoch_loss") == std::vector<int64_t>{0, 1});
    CHECK(train.count("epoch_accuracy") == 1);
    CHECK(train.count("epoch_learning_rate") == 1);
    const auto validation = tags(dir / "logs" / "validation");
    CHECK(validation.at("epoch_loss") == std::vector<int64_t>{0, 1});
    CHECK(validation.count("epoch_accuracy") == 1);
    CHECK(validation.at("evaluation_loss_vs_iterations") == std::vector<int64_t>{3, 6});
    REQUIRE(ckpt->saved().size() == 2);
    CHECK(ckpt->saved()[1] == (dir / "ckpt" / "model-2").string());
    CHECK(tf::train::latest_checkpoint((dir / "ckpt").string()) == ckpt->saved()[1]);
    const auto names = tf::train::list_variables(ckpt->saved()[1]);
    CHECK(names.count(model->variables()[0].name()) == 1);
    fs::remove_all(dir);
}

TEST_CASE("summary prints Keras' table with parameter counts", "[keras][model][summary]") {
    tf::keras::Sequential model(
        {std::make_shared<kl::Conv2D>(8, 3, kl::Conv2DOptions{.name = "c"}),
         std::make_shared<kl::Flatten>(std::string("f")),
         std::make_shared<kl::BatchNormalization>(kl::BatchNormalizationOptions{.name = "bn"}),
         std::make_shared<kl::Dense>(10, kl::DenseOptions{.name = "d"})},
        "net");
    CHECK(model.summary().find("0 (unbuilt)") != std::string::npos);
    model(tf::ones({1, 6, 6, 1}));
    const std::string s = model.summary();
    INFO(s);
    CHECK(s.find("Model: \"net\"") != std::string::npos);
    CHECK(s.find("c (Conv2D)") != std::string::npos);
    CHECK(s.find("(None, 4, 4, 8)") != std::string::npos);
    CHECK(s.find("(None, 128)") != std::string::npos);
    // 80 + 512 (4 x 128) + 1,290; BN's moving statistics are non-trainable.
    CHECK(s.find("Total params: 1,882 (7.35 KB)") != std::string::npos);
    CHECK(s.find("Trainable params: 1,626 (6.35 KB)") != std::string::npos);
    CHECK(s.find("Non-trainable params: 256 (1.00 KB)") != std::string::npos);
}

TEST_CASE("The progress bar: a bar on a terminal, one line per epoch otherwise",
          "[keras][model][progress]") {
    const tf::keras::callbacks::Logs logs{{"loss", 0.5}, {"accuracy", 0.875}};
    std::FILE* sink = std::tmpfile();
    tf::keras::detail::ProgressBar bar(1, 2, 10, 45, sink, true);
    const std::string line = bar.render(12, logs, false);
    CHECK(line.find("12/45") != std::string::npos);
    CHECK(line.find("\u2501") != std::string::npos);
    CHECK(line.find("- accuracy: 0.8750 - loss: 0.5000") != std::string::npos);
    tf::keras::detail::ProgressBar plain(1, 2, 10, 45, sink, false);
    const std::string text = plain.render(45, logs, true);
    CHECK(text.rfind("Epoch 3/10 - 45/45", 0) == 0);
    CHECK(text.find("\u2501") == std::string::npos);
    CHECK_FALSE(plain.due());
    std::fclose(sink);
}
