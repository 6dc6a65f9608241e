// tf::image and Keras' preprocessing layers: a synthetic RGB image through PNG and back, resized
// with TF2's half-pixel rules, augmented by a Sequential of RandomCrop / RandomFlip / Rescaling,
// and fed to a small convnet with the layers of docs/keras.md. Checks its own results.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;
namespace kl = tf::keras::layers;

#define CHECK(cond)                                            \
    do {                                                       \
        if (!(cond)) {                                         \
            std::fprintf(stderr, "check failed: %s\n", #cond); \
            std::exit(1);                                      \
        }                                                      \
    } while (0)

int main() {
    // A 48x64 RGB gradient as uint8, encoded to PNG and decoded again.
    std::vector<int32_t> pixels;
    for (int y = 0; y < 48; ++y)
        for (int x = 0; x < 64; ++x)
            for (int c = 0; c < 3; ++c)
                pixels.push_back((x * 4 + y * 2 + c * 60) % 256);
    const tf::Tensor rgb = tf::cast(tf::constant(pixels, tf::Shape{48, 64, 3}), tf::uint8);

    const std::string png = tf::image::encode_png(rgb);
    const tf::Tensor decoded = tf::image::decode_png(png);  // uint8 [48, 64, 3]
    const tf::Tensor gray = tf::image::decode_png(png, 1);  // uint8 [48, 64, 1]
    CHECK(decoded.to_vector<uint8_t>() == rgb.to_vector<uint8_t>());
    CHECK(gray.shape() == tf::Shape({48, 64, 1}));

    // uint8 [0, 255] -> float32 [0, 1], then TF2's resize (half-pixel centers).
    const tf::Tensor image = tf::image::convert_image_dtype(decoded, tf::float32);
    const tf::Tensor small = tf::image::resize(image, {24, 32});  // bilinear
    const tf::Tensor thumb = tf::image::resize(image, {12, 16}, "bilinear", false, true);
    const tf::Tensor fit = tf::image::resize(image, {40, 40}, "area", true);  // keeps 3:4
    CHECK(small.shape() == tf::Shape({24, 32, 3}));
    CHECK(thumb.shape() == tf::Shape({12, 16, 3}));
    CHECK(fit.shape() == tf::Shape({30, 40, 3}));

    // A batch of 8 augmented crops: random only when training.
    const tf::Tensor batch = tf::stack(std::vector<tf::Tensor>(8, decoded));  // [8, 48, 64, 3]
    kl::Sequential augment(
        {std::make_shared<kl::RandomCrop>(40, 40, kl::RandomCropOptions{.seed = 1}),
         std::make_shared<kl::RandomFlip>(kl::RandomFlipOptions{.mode = "horizontal", .seed = 2}),
         std::make_shared<kl::Rescaling>(1.0 / 255)});
    const tf::Tensor train_view = augment(batch, /*training=*/true);  // float32 [8, 40, 40, 3]
    CHECK(train_view.shape() == tf::Shape({8, 40, 40, 3}));
    CHECK(augment(batch).shape() == tf::Shape({8, 48, 64, 3}));  // inference: crop and flip off

    // A convnet with the newer layers: separable and transposed convolutions, group norm.
    kl::Sequential net(
        {std::make_shared<kl::SeparableConv2D>(
             8, 3, kl::SeparableConv2DOptions{.padding = "same", .activation = "relu"}),
         std::make_shared<kl::GroupNormalization>(kl::GroupNormalizationOptions{.groups = 4}),
         std::make_shared<kl::MaxPooling2D>(2),
         std::make_shared<kl::Conv2DTranspose>(
             4, 3, kl::Conv2DTransposeOptions{.strides = 2, .padding = "same"}),
         std::make_shared<kl::GlobalMaxPooling2D>()});
    const tf::Tensor features = net(train_view, true);
    CHECK(features.shape() == tf::Shape({8, 4}));

    // Two branches merged: the tf::keras merge layers take a list of tensors.
    kl::Concatenate concat;
    kl::Add add;
    const tf::Tensor both = concat({features, add({features, features})});
    CHECK(both.shape() == tf::Shape({8, 8}));
    std::printf("png %zu bytes; resized %s; augmented %s; features %s\n",
                png.size(),
                small.shape().debug_string().c_str(),
                train_view.shape().debug_string().c_str(),
                both.shape().debug_string().c_str());
    return 0;
}
