// The UCI handwritten digits of samples/data/digits.csv.gz (8x8 images, 1797 of them), read with
// zlib, and the seeded train/test split that samples/demo.cpp and samples/keras_digits.cpp share,
// so both train and test on the same images; and the demo's convnet (samples/profile_step.cpp
// profiles its training step).
#pragma once

#include <cmath>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <zlib.h>

#include <tapeflow/tapeflow.hpp>

namespace samples {

namespace tf = tapeflow;

struct Digits {
    tf::Tensor images;  // [N, 8, 8, 1] float32 in [0, 1]
    tf::Tensor labels;  // [N] int32
    int64_t size() const { return labels.shape()[0]; }
};

// Reads the gzipped CSV (64 pixels 0..16, then the label, per row) with zlib.
inline Digits load_digits(const std::string& path) {
    gzFile file = gzopen(path.c_str(), "rb");
    if (file == nullptr) throw tf::errors::NotFoundError("cannot open " + path);
    std::string text;
    char buffer[1 << 16];
    int n;
    while ((n = gzread(file, buffer, sizeof buffer)) > 0)
        text.append(buffer, static_cast<std::size_t>(n));
    const bool failed = n < 0;
    gzclose(file);
    if (failed) throw tf::errors::DataLossError("corrupt gzip stream in " + path);

    std::vector<float> pixels;
    std::vector<int32_t> labels;
    std::vector<int> row;
    const char* p = text.data();
    const char* end = p + text.size();
    while (p < end) {
        char* next = nullptr;
        row.push_back(static_cast<int>(std::strtol(p, &next, 10)));
        p = next;
        if (p < end && *p == ',') {
            ++p;
            continue;
        }
        while (p < end && (*p == '\n' || *p == '\r'))
            ++p;
        if (row.size() != 65)
            throw tf::errors::DataLossError(
                fmt::format("{}: a row has {} values, not 65", path, row.size()));
        for (int i = 0; i < 64; ++i)
            pixels.push_back(static_cast<float>(row[i]) / 16.f);
        labels.push_back(row[64]);
        row.clear();
    }
    const auto count = static_cast<int64_t>(labels.size());
    return {tf::constant(pixels, {count, 8, 8, 1}), tf::constant(labels, {count})};
}

// A seeded shuffle, then the first (1 - test_fraction) for training and the rest for testing.
inline std::pair<Digits, Digits> split(const Digits& all, double test_fraction) {
    auto order =
        tf::random::shuffle(tf::range(0, static_cast<double>(all.size()), 1, tf::int32), 1998);
    const auto n_test = static_cast<int64_t>(static_cast<double>(all.size()) * test_fraction);
    const int64_t n_train = all.size() - n_test;
    auto train = tf::slice(order, {0}, {n_train});
    auto test = tf::slice(order, {n_train}, {n_test});
    return {{tf::gather(all.images, train), tf::gather(all.labels, train)},
            {tf::gather(all.images, test), tf::gather(all.labels, test)}};
}

// conv 3x3x16 -> relu -> max pool -> conv 3x3x32 -> relu -> max pool -> dense 10.
struct ConvNet {
    static tf::Tensor he_normal(const tf::Shape& shape, double fan_in) {
        return tf::random::truncated_normal(shape, 0, std::sqrt(2.0 / fan_in));
    }
    tf::Variable conv1_w{he_normal({3, 3, 1, 16}, 9), {.name = "conv1/kernel"}};
    tf::Variable conv1_b{tf::zeros({16}), {.name = "conv1/bias"}};
    tf::Variable conv2_w{he_normal({3, 3, 16, 32}, 144), {.name = "conv2/kernel"}};
    tf::Variable conv2_b{tf::zeros({32}), {.name = "conv2/bias"}};
    tf::Variable dense_w{he_normal({128, 10}, 128), {.name = "dense/kernel"}};
    tf::Variable dense_b{tf::zeros({10}), {.name = "dense/bias"}};

    std::vector<tf::Variable> variables() const {
        return {conv1_w, conv1_b, conv2_w, conv2_b, dense_w, dense_b};
    }

    tf::Tensor logits(const tf::Tensor& images) const {
        auto block = [](std::string_view name,
                        const tf::Tensor& x,
                        const tf::Variable& w,
                        const tf::Variable& b) {
            auto scope = tf::name_scope(name);
            auto h = tf::nn::relu(tf::nn::bias_add(tf::nn::conv2d(x, w, 1, "SAME"), b));
            return tf::nn::max_pool2d(h, 2, 2, "SAME");
        };
        auto h = block("conv2", block("conv1", images, conv1_w, conv1_b), conv2_w, conv2_b);
        auto scope = tf::name_scope("dense");
        return tf::nn::bias_add(tf::matmul(tf::reshape(h, {-1, 128}), dense_w), dense_b);
    }

    tf::Tensor loss(const tf::Tensor& images, const tf::Tensor& labels) const {
        auto scope = tf::name_scope("loss");
        return tf::reduce_mean(
            tf::nn::sparse_softmax_cross_entropy_with_logits(labels, logits(images)));
    }

    tf::Tensor predict(const tf::Tensor& images) const {
        return tf::argmax(logits(images), 1, tf::int32);
    }
};

}  // namespace samples
