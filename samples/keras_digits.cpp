// The digits convnet of samples/demo.cpp written the Keras way: Sequential layers, compile, fit
// with validation data and a TensorBoard callback, evaluate, summary. Same data, same split, same
// architecture, same optimizer; prints the test accuracy, exits 1 below 95% or when TensorBoard's
// train/ and validation/ runs lack an epoch_loss point per epoch (read back with summary_iterator).
//   build/samples/keras_digits [--logdir DIR] [--data FILE] [--epochs N]
#include <filesystem>
#include <string>

#include <tapeflow/tapeflow.hpp>

#include "digits.hpp"

namespace tf = tapeflow;
namespace kl = tf::keras::layers;
namespace ko = tf::keras::optimizers;
namespace losses = tf::keras::losses;
namespace metrics = tf::keras::metrics;
namespace callbacks = tf::keras::callbacks;

namespace {

struct Args {
    std::string logdir = "logs/keras_digits";
    std::string data = TAPEFLOW_SAMPLES_DATA_DIR "/digits.csv.gz";
    int64_t epochs = 30;
};

Args parse_args(int argc, char** argv) {
    Args args;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        if (a == "--logdir") {
            args.logdir = argv[i + 1];
        } else if (a == "--data") {
            args.data = argv[i + 1];
        } else if (a == "--epochs") {
            args.epochs = std::stoll(argv[i + 1]);
        } else {
            throw tf::errors::InvalidArgumentError(
                "usage: keras_digits [--logdir DIR] [--data digits.csv.gz] [--epochs N]; got " + a);
        }
    }
    return args;
}

// The epochs at which a run logged `tag`, from its event files.
std::vector<int64_t> logged_epochs(const std::string& run, const std::string& tag) {
    std::vector<int64_t> steps;
    for (const auto& file : std::filesystem::directory_iterator(run))
        for (const auto& event : tf::summary::summary_iterator(file.path().string()))
            for (const auto& value : event.values)
                if (value.tag == tag) steps.push_back(event.step);
    return steps;
}

}  // namespace

int main(int argc, char** argv) {
    const Args args = parse_args(argc, argv);
    std::filesystem::remove_all(args.logdir);
    tf::random::set_seed(42);
    const auto [train, test] = samples::split(samples::load_digits(args.data), 0.2);

    // [keras-model]
    const kl::Conv2DOptions same_relu{.padding = "same", .activation = "relu"};
    tf::keras::Sequential model({
        std::make_shared<kl::Conv2D>(16, 3, same_relu),
        std::make_shared<kl::MaxPooling2D>(2, std::nullopt, "same"),
        std::make_shared<kl::Conv2D>(32, 3, same_relu),
        std::make_shared<kl::MaxPooling2D>(2, std::nullopt, "same"),
        std::make_shared<kl::Flatten>(),
        std::make_shared<kl::Dense>(10),
    });
    model.compile(std::make_shared<ko::Adam>(ko::AdamOptions{.learning_rate = 0.005}),
                  std::make_shared<losses::SparseCategoricalCrossentropy>(
                      losses::CrossentropyOptions{.from_logits = true}),
                  {std::make_shared<metrics::SparseCategoricalAccuracy>("accuracy")});
    model.fit(train.images,
              train.labels,
              {.batch_size = 32,
               .epochs = args.epochs,
               .callbacks = {std::make_shared<callbacks::TensorBoard>(args.logdir)},
               .validation_data = {test.images, test.labels}});
    // [keras-model]
    fmt::print("{}", model.summary());

    const double accuracy = model.evaluate(test.images, test.labels).at("accuracy");
    fmt::print("test accuracy {:.1f}% ({} test digits)\n", 100 * accuracy, test.size());
    const auto train_epochs = logged_epochs(args.logdir + "/train", "epoch_loss");
    const auto val_epochs = logged_epochs(args.logdir + "/validation", "epoch_loss");
    const bool curves = static_cast<int64_t>(train_epochs.size()) == args.epochs &&
                        static_cast<int64_t>(val_epochs.size()) == args.epochs;
    fmt::print("TensorBoard: {} train and {} validation epoch_loss points in {}\n",
               train_epochs.size(),
               val_epochs.size(),
               args.logdir);
    return accuracy >= 0.95 && curves ? 0 : 1;
}
