// A small U-Net that denoises the UCI digits (samples/digits.hpp: the 8x8 images, the demo's
// seeded split) with tf::keras' functional API: Input, Conv2D, MaxPooling2D, UpSampling2D, a
// Concatenate skip connection, trained with fit (Adam, MeanSquaredError). Gaussian noise (stddev
// 0.3, seeded tf::random::normal) is added to every image; the model maps noisy to clean.
//
// Augmentation lives in the model: RandomFlip("horizontal") flips in training only. The flip must
// flip the target with the input, so the training model takes the noisy and the clean image as
// two channels of one input, flips the pair, splits it (a two-line user layer), runs the U-Net on
// the noisy channel and outputs prediction - clean, which fit drives to zero under MSE (the same
// loss as MSE(prediction, clean)). The U-Net itself is a Functional model, called as a layer.
//
//   build/samples/unet_denoise [--short] [--epochs N] [--data FILE]
//
// --short (or TAPEFLOW_SAMPLE_SHORT=1) trains 6 epochs, as the samples suite runs it; a full run
// trains 40. Both check that the test images' MSE after denoising is clearly below (under 60% of)
// the noisy images' MSE, and that the flip changes the training model's output in training only;
// they exit 1 otherwise.
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>

#include <tapeflow/tapeflow.hpp>

#include "digits.hpp"

namespace tf = tapeflow;
namespace kl = tf::keras::layers;

namespace {

constexpr double kNoise = 0.3;

// Channel c of an [N, H, W, C] batch, as [N, H, W, 1] (Python: a Lambda layer).
class Channel : public kl::Layer {
public:
    explicit Channel(int64_t c, std::string name) : kl::Layer(std::move(name)), c_(c) {}
    tf::Tensor call(const tf::Tensor& x, bool /*training*/) override {
        const tf::Shape s = x.shape();
        return tf::slice(x, {0, 0, 0, c_}, {s[0], s[1], s[2], 1});
    }

private:
    int64_t c_;
};

double mse(const tf::Tensor& a, const tf::Tensor& b) {
    return tf::reduce_mean(tf::square(a - b)).to_vector<float>()[0];
}

std::shared_ptr<tf::keras::Model> unet() {
    auto conv = [](int64_t filters) {
        return std::make_shared<kl::Conv2D>(
            filters, 3, kl::Conv2DOptions{.padding = "same", .activation = "relu"});
    };
    auto noisy = tf::keras::Input({8, 8, 1}, tf::float32, "noisy");
    auto down = (*conv(16))(noisy);                                  // 8x8x16
    auto pooled = (*std::make_shared<kl::MaxPooling2D>(2))(down);    // 4x4x16
    auto bottom = (*conv(32))(pooled);                               // 4x4x32
    auto up = (*std::make_shared<kl::UpSampling2D>())(bottom);       // 8x8x32
    auto skip = (*std::make_shared<kl::Concatenate>())({up, down});  // 8x8x48
    auto mixed = (*conv(16))(skip);                                  // 8x8x16
    auto clean = (*std::make_shared<kl::Conv2D>(
        1, 1, kl::Conv2DOptions{.activation = "sigmoid", .name = "clean"}))(mixed);
    return tf::keras::functional({noisy}, {clean}, "unet");
}

}  // namespace

int main(int argc, char** argv) {
    bool short_run = std::getenv("TAPEFLOW_SAMPLE_SHORT") != nullptr;
    int64_t epochs = 0;
    std::string data = TAPEFLOW_SAMPLES_DATA_DIR "/digits.csv.gz";
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--short") {
            short_run = true;
        } else if (a == "--epochs" && i + 1 < argc) {
            epochs = std::stoll(argv[++i]);
        } else if (a == "--data" && i + 1 < argc) {
            data = argv[++i];
        } else {
            fmt::print(stderr, "usage: unet_denoise [--short] [--epochs N] [--data FILE]\n");
            return 2;
        }
    }
    if (epochs == 0) epochs = short_run ? 6 : 40;
    tf::random::set_seed(31);

    const auto [train, test] = samples::split(samples::load_digits(data), 0.2);
    auto noisy = [](const tf::Tensor& clean, uint64_t seed) {
        return clean + tf::random::normal(clean.shape(), 0, kNoise, tf::float32, seed);
    };
    const tf::Tensor train_noisy = noisy(train.images, 1);
    const tf::Tensor test_noisy = noisy(test.images, 2);
    fmt::print(
        "{} training and {} test digits, noise stddev {}\n", train.size(), test.size(), kNoise);

    // The U-Net, and the training model around it: flip (noisy, clean) together, then compare.
    auto denoiser = unet();
    auto pair = tf::keras::Input({8, 8, 2}, tf::float32, "noisy_and_clean");
    auto flipped = (*std::make_shared<kl::RandomFlip>(
        kl::RandomFlipOptions{.mode = "horizontal", .seed = 5}))(pair);
    auto prediction = (*denoiser)((*std::make_shared<Channel>(0, "noisy_channel"))(flipped));
    auto target = (*std::make_shared<Channel>(1, "clean_channel"))(flipped);
    auto error = (*std::make_shared<kl::Subtract>())({prediction, target});
    auto trainer = tf::keras::functional({pair}, {error}, "unet_trainer");
    trainer->compile(std::make_shared<tf::keras::optimizers::Adam>(
                         tf::keras::optimizers::AdamOptions{.learning_rate = 0.003}),
                     std::make_shared<tf::keras::losses::MeanSquaredError>());
    const tf::Tensor x = tf::concat({train_noisy, train.images}, 3);
    const tf::keras::History h = trainer->fit(
        x, tf::zeros_like(train.images), {.batch_size = 32, .epochs = epochs, .verbose = 0});
    fmt::print("{}", denoiser->summary());
    const auto& loss = h.history.at("loss");
    fmt::print(
        "training loss {:.4f} -> {:.4f} after {} epochs\n", loss.front(), loss.back(), epochs);

    // The flip acts in training only: in inference the trainer's output is the U-Net's error.
    const tf::Tensor few = tf::slice(x, {0, 0, 0, 0}, {64, 8, 8, 2});
    const tf::Tensor few_noisy = tf::slice(train_noisy, {0, 0, 0, 0}, {64, 8, 8, 1});
    const tf::Tensor few_clean = tf::slice(train.images, {0, 0, 0, 0}, {64, 8, 8, 1});
    const double inference_gap =
        mse((*trainer)(few, false), (*denoiser)(few_noisy, false) - few_clean);
    const double training_gap = mse((*trainer)(few, true), (*trainer)(few, false));
    fmt::print(
        "flip: training vs inference outputs differ by {:.2e} (mean square), inference "
        "output vs U-Net error {:.1e}\n",
        training_gap,
        inference_gap);

    const double noisy_mse = mse(test_noisy, test.images);
    const double denoised_mse = mse(denoiser->predict(test_noisy), test.images);
    fmt::print("test MSE: noisy {:.4f}, denoised {:.4f}\n", noisy_mse, denoised_mse);
    const bool ok = denoised_mse < 0.6 * noisy_mse && training_gap > 0 && inference_gap < 1e-10;
    if (!ok)
        fmt::print(
            "FAILED: the denoised images are not clearly closer to the clean ones, or the "
            "flip is not active in training only\n");
    return ok ? 0 : 1;
}
