// EarlyStopping's Keras 3 arguments (positional order, options, baseline, start_from_epoch),
// ReduceLROnPlateau, LearningRateScheduler, CSVLogger, TerminateOnNaN and BackupAndRestore.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;
namespace kl = tf::keras::layers;
namespace kc = tf::keras::callbacks;
namespace fs = std::filesystem;

namespace {

std::shared_ptr<tf::keras::Sequential> built_model(double lr = 0.1) {
    auto model = std::make_shared<tf::keras::Sequential>(
        std::vector<std::shared_ptr<kl::Layer>>{std::make_shared<kl::Dense>(1)});
    model->compile(std::make_shared<tf::keras::optimizers::SGD>(
                       tf::keras::optimizers::SGDOptions{.learning_rate = lr}),
                   "mse");
    (*model)(tf::ones({1, 2}));
    return model;
}

// The epoch at which `cb` stops a model fed these monitor values (0 = never).
int64_t stops_at(kc::EarlyStopping& cb, const std::vector<double>& values) {
    auto model = built_model();
    cb.set_model(model.get());
    cb.on_train_begin({});
    for (std::size_t e = 0; e < values.size() && !model->stop_training; ++e)
        cb.on_epoch_end(static_cast<int64_t>(e), {{"loss", values[e]}});
    return cb.stopped_epoch();
}

fs::path scratch(const std::string& name) {
    const fs::path dir = fs::temp_directory_path() / ("tapeflow_callbacks_" + name);
    fs::remove_all(dir);
    return dir;
}

std::string slurp(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

struct Interrupt : kc::Callback {
    int64_t at;
    explicit Interrupt(int64_t epoch) : at(epoch) {}
    void on_epoch_end(int64_t epoch, const kc::Logs&) override {
        if (epoch == at) throw std::runtime_error("interrupted");
    }
};

}  // namespace

TEST_CASE("EarlyStopping: Keras 3's positional order and EarlyStoppingOptions",
          "[keras][callbacks][early_stopping]") {
    // (monitor, min_delta, patience): improvements smaller than min_delta do not count.
    kc::EarlyStopping by_delta("loss", 0.1, 2);
    CHECK(stops_at(by_delta, {1.0, 0.95, 0.92, 0.91, 0.9}) == 2);
    kc::EarlyStopping same(
        kc::EarlyStoppingOptions{.monitor = "loss", .min_delta = 0.1, .patience = 2});
    CHECK(stops_at(same, {1.0, 0.95, 0.92, 0.91, 0.9}) == 2);
    // A baseline: improvements that do not beat it leave the wait running (Keras still never
    // stops on an improving epoch).
    kc::EarlyStopping baseline("loss", 0, 3, 0, "min", 0.5);
    CHECK(stops_at(baseline, {1.0, 0.9, 0.8, 0.85}) == 3);
    kc::EarlyStopping no_baseline("loss", 0, 3, 0, "min");
    CHECK(stops_at(no_baseline, {1.0, 0.9, 0.8, 0.85}) == 0);
    // start_from_epoch: the first epochs are not looked at.
    kc::EarlyStopping late(
        kc::EarlyStoppingOptions{.monitor = "loss", .patience = 1, .start_from_epoch = 3});
    CHECK(stops_at(late, {1.0, 2.0, 3.0, 4.0, 5.0, 6.0}) == 4);
    kc::EarlyStopping max_mode("loss", 0, 1, 0, "max");
    CHECK(stops_at(max_mode, {1.0, 0.5}) == 1);
    CHECK_THROWS_AS(kc::EarlyStopping("loss", 0, 1, 0, "lowest"), tf::errors::InvalidArgumentError);
    CHECK_THROWS_AS(kc::EarlyStopping("loss", 0, -1), tf::errors::InvalidArgumentError);
}

TEST_CASE("ReduceLROnPlateau: factor after patience, cooldown, min_lr", "[keras][callbacks][lr]") {
    auto model = built_model(0.1);
    kc::ReduceLROnPlateau cb(
        {.monitor = "loss", .factor = 0.5, .patience = 2, .cooldown = 1, .min_lr = 0.02});
    cb.set_model(model.get());
    cb.on_train_begin({});
    std::vector<double> lrs;
    for (int64_t e = 0; e < 8; ++e) {
        cb.on_epoch_end(e, {{"loss", 1.0}});
        lrs.push_back(model->optimizer()->current_learning_rate());
    }
    // Keras' order: epoch 0 sets the best; waits 1, 2 -> 0.05 at epoch 2; at epoch 3 the cooldown
    // ends and the wait is 1; 2 at epoch 4 -> 0.025; the same again -> 0.0125, floored at 0.02.
    const std::vector<double> want{0.1, 0.1, 0.05, 0.05, 0.025, 0.025, 0.02, 0.02};
    for (std::size_t i = 0; i < want.size(); ++i)
        CHECK(lrs[i] == Approx(want[i]));
    cb.on_epoch_end(8, {{"loss", 1.0}});
    cb.on_epoch_end(9, {{"loss", 1.0}});
    CHECK(model->optimizer()->current_learning_rate() == Approx(0.02));  // floored at min_lr
    CHECK_THROWS_AS(kc::ReduceLROnPlateau({.factor = 1.0}), tf::errors::InvalidArgumentError);
}

TEST_CASE("LearningRateScheduler sets the rate the optimizer applies", "[keras][callbacks][lr]") {
    auto model = built_model(0.1);
    auto schedule = std::make_shared<kc::LearningRateScheduler>(
        [](int64_t epoch, double lr) { return epoch == 0 ? lr : lr * 0.5; });
    const tf::Tensor x = tf::ones({4, 2});
    const tf::Tensor y = tf::zeros({4, 1});
    const std::vector<tf::Tensor> before = model->get_weights();
    model->fit(
        x,
        y,
        {.batch_size = 4, .epochs = 3, .verbose = 0, .callbacks = {schedule}, .shuffle = false});
    CHECK(model->optimizer()->current_learning_rate() == Approx(0.025));
    // One SGD step at the scheduled rate: w -= lr * dL/dw, checked on a fresh model by hand.
    auto one = built_model(0.1);
    one->set_weights(before);
    auto halve = std::make_shared<kc::LearningRateScheduler>([](int64_t, double) { return 0.05; });
    one->fit(x, y, {.batch_size = 4, .epochs = 1, .verbose = 0, .callbacks = {halve}});
    const double w0 = before[0].to_vector<float>()[0], b0 = before[1].to_vector<float>()[0];
    const double w1 = before[0].to_vector<float>()[1];
    const double pred = w0 + w1 + b0;  // every row is (1, 1)
    const double grad_b = 2 * pred;    // mse over one output
    CHECK(one->get_weights()[1].to_vector<float>()[0] == Approx(b0 - 0.05 * grad_b).epsilon(1e-5));
    CHECK_THROWS_AS(kc::LearningRateScheduler(nullptr), tf::errors::InvalidArgumentError);
}

TEST_CASE("CSVLogger writes Keras' CSV", "[keras][callbacks][csv]") {
    const fs::path dir = scratch("csv");
    fs::create_directories(dir);
    const fs::path file = dir / "log.csv";
    auto model = built_model(0.05);
    const tf::Tensor x = tf::random::uniform({16, 2}, -1, 1, tf::float32, 3);
    const tf::Tensor y = tf::reduce_sum(x, {1}, true);
    auto logger = std::make_shared<kc::CSVLogger>(file.string());
    const auto history = model->fit(x,
                                    y,
                                    {.batch_size = 8,
                                     .epochs = 2,
                                     .verbose = 0,
                                     .callbacks = {logger},
                                     .validation_data = {x, y}});
    const std::string text = slurp(file);
    std::istringstream lines(text);
    std::string header, row0, row1;
    std::getline(lines, header);
    std::getline(lines, row0);
    std::getline(lines, row1);
    CHECK(header == "epoch,loss,val_loss\r");
    CHECK(row0.rfind("0,", 0) == 0);
    // The values read back exactly (shortest round-trip text).
    const std::size_t c1 = row1.find(',', 2);
    CHECK(std::stod(row1.substr(2, c1 - 2)) == history.history.at("loss")[1]);
    CHECK(std::stod(row1.substr(c1 + 1)) == history.history.at("val_loss")[1]);
    // Without validation: val_ columns with NA; append keeps the rows and adds no header.
    auto no_val = std::make_shared<kc::CSVLogger>((dir / "b.csv").string(), ";");
    model->fit(x, y, {.batch_size = 8, .epochs = 1, .verbose = 0, .callbacks = {no_val}});
    const std::string b = slurp(dir / "b.csv");
    CHECK(b.rfind("epoch;loss;val_loss\r\n0;", 0) == 0);
    CHECK(b.find(";NA\r\n") != std::string::npos);
    auto again = std::make_shared<kc::CSVLogger>((dir / "b.csv").string(), ";", true);
    model->fit(x, y, {.batch_size = 8, .epochs = 1, .verbose = 0, .callbacks = {again}});
    const std::string b2 = slurp(dir / "b.csv");
    CHECK(b2.rfind(b, 0) == 0);
    CHECK(b2.find("epoch", 1) == std::string::npos);
    fs::remove_all(dir);
}

TEST_CASE("TerminateOnNaN stops (or raises) at a NaN loss", "[keras][callbacks][nan]") {
    auto model = built_model();
    const tf::Tensor x = tf::constant({{1.0f, NAN}, {1.0f, 1.0f}});
    const tf::Tensor y = tf::zeros({2, 1});
    const auto history = model->fit(x,
                                    y,
                                    {.batch_size = 1,
                                     .epochs = 3,
                                     .verbose = 0,
                                     .callbacks = {std::make_shared<kc::TerminateOnNaN>()},
                                     .shuffle = false});
    CHECK(history.history.at("loss").size() == 1);
    CHECK(std::isnan(history.history.at("loss")[0]));
    auto fresh = built_model();
    CHECK_THROWS_WITH(fresh->fit(x,
                                 y,
                                 {.batch_size = 1,
                                  .epochs = 1,
                                  .verbose = 0,
                                  .callbacks = {std::make_shared<kc::TerminateOnNaN>(true)},
                                  .shuffle = false}),
                      Catch::Contains("NaN or Inf loss encountered at batch 0"));
}

TEST_CASE("BackupAndRestore resumes an interrupted fit", "[keras][callbacks][backup]") {
    const fs::path dir = scratch("backup");
    auto model = built_model();
    const tf::Tensor x = tf::random::uniform({8, 2}, -1, 1, tf::float32, 5);
    const tf::Tensor y = tf::reduce_sum(x, {1}, true);
    auto backup = std::make_shared<kc::BackupAndRestore>(dir.string());
    CHECK_THROWS_WITH(model->fit(x,
                                 y,
                                 {.batch_size = 4,
                                  .epochs = 5,
                                  .verbose = 0,
                                  .callbacks = {backup, std::make_shared<Interrupt>(1)}}),
                      Catch::Contains("interrupted"));
    REQUIRE(fs::exists(dir / "latest.weights.h5"));
    CHECK(slurp(dir / "training_metadata.json") == "{\"batch\":0,\"epoch\":2}");
    const std::vector<tf::Tensor> saved = model->get_weights();
    // A fresh model (same architecture) resumes at epoch 2 from the saved weights.
    auto resumed = built_model();
    auto seen = std::make_shared<kc::LearningRateScheduler>([&](int64_t epoch, double lr) {
        if (epoch == 2)
            CHECK(resumed->get_weights()[0].to_vector<float>() == saved[0].to_vector<float>());
        return lr;
    });
    const auto history = resumed->fit(
        x, y, {.batch_size = 4, .epochs = 5, .verbose = 0, .callbacks = {backup, seen}});
    CHECK(history.epoch == std::vector<int64_t>{2, 3, 4});
    CHECK_FALSE(fs::exists(dir));  // deleted when fit ends normally
    CHECK_THROWS_AS(kc::BackupAndRestore(""), tf::errors::InvalidArgumentError);
}
