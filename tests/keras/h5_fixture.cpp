// The tapeflow side of check_h5.py: builds one of a few small Sequential models, then saves its
// weights (set to a known formula) or loads a file into it, and prints every weight as JSON.
// Usage: h5_fixture save|load <mlp|conv|embed|attention> <file> [by_name]
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include <fmt/format.h>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;
namespace layers = tf::keras::layers;

namespace {

std::shared_ptr<tf::keras::Sequential> build(const std::string& kind) {
    std::shared_ptr<tf::keras::Sequential> model;
    tf::Tensor x;
    if (kind == "mlp") {
        model = std::make_shared<tf::keras::Sequential>(std::vector<std::shared_ptr<layers::Layer>>{
            std::make_shared<layers::Dense>(4, layers::DenseOptions{.activation = "relu"}),
            std::make_shared<layers::Dropout>(0.5),
            std::make_shared<layers::Dense>(3)});
        x = tf::ones({2, 5});
    } else if (kind == "conv") {
        model = std::make_shared<tf::keras::Sequential>(std::vector<std::shared_ptr<layers::Layer>>{
            std::make_shared<layers::Conv2D>(2, tf::Ints{3, 3}),
            std::make_shared<layers::BatchNormalization>(),
            std::make_shared<layers::Flatten>(),
            std::make_shared<layers::Dense>(2)});
        x = tf::ones({1, 5, 5, 3});
    } else if (kind == "embed") {
        model = std::make_shared<tf::keras::Sequential>(std::vector<std::shared_ptr<layers::Layer>>{
            std::make_shared<layers::Embedding>(10, 4),
            std::make_shared<layers::LayerNormalization>(),
            std::make_shared<layers::Dense>(2)});
        x = tf::zeros({2, 3}, tf::int32);
    } else if (kind == "attention") {
        model = std::make_shared<tf::keras::Sequential>(std::vector<std::shared_ptr<layers::Layer>>{
            std::make_shared<layers::MultiHeadAttention>(2, 3)});
        x = tf::ones({1, 4, 6});
    } else {
        throw tf::errors::InvalidArgumentError("unknown model kind " + kind);
    }
    (*model)(x);
    return model;
}

void print(const tf::keras::Model& model) {
    std::string out = "[";
    for (const tf::Variable& v : model.variables()) {
        if (out.size() > 1) out += ",";
        out += fmt::format("{{\"name\":\"{}\",\"shape\":[{}],\"values\":[{:.9g}]}}",
                           v.name(),
                           fmt::join(v.shape().dims(), ","),
                           fmt::join(v.value().to_vector<float>(), ","));
    }
    std::cout << out << "]\n";
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 4) {
        std::cerr << "usage: h5_fixture save|load <kind> <file> [by_name]\n";
        return 2;
    }
    const std::string mode = argv[1], kind = argv[2], file = argv[3];
    try {
        auto model = build(kind);
        if (mode == "save") {
            // Weight k, element j: (k + 1) + j * 0.01 (check_h5.py computes the same).
            int k = 0;
            for (tf::Variable v : model->variables()) {
                std::vector<float> values(static_cast<std::size_t>(v.shape().num_elements()));
                for (std::size_t j = 0; j < values.size(); ++j)
                    values[j] = static_cast<float>((k + 1) + static_cast<double>(j) * 0.01);
                v.assign(tf::constant(values, v.shape()));
                ++k;
            }
            model->save_weights(file);
        } else {
            tf::keras::LoadWeightsOptions options;
            options.by_name = argc > 4 && std::string(argv[4]) == "by_name";
            model->load_weights(file, options);
        }
        print(*model);
    } catch (const std::exception& e) {
        std::cerr << e.what() << "\n";
        return 1;
    }
    return 0;
}
