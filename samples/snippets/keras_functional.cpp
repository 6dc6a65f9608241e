// The code blocks of docs/keras.md's functional API and saving sections, compiled and run as a
// test (tests/docs checks that the page's blocks occur here). Exits 1 unless the model trains and
// the reloaded model predicts the same numbers.
// Laid out as in the page, not by clang-format (tests/docs/check_code_blocks.py compares them).
// clang-format off
#include <filesystem>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;

int main() {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / "tapeflow_snippet_keras_functional";
    fs::create_directories(dir);
    const std::string path = (dir / "towers.keras").string();
    const tf::Tensor xa = tf::random::uniform({256, 4}, -1, 1, tf::float32, 1);
    const tf::Tensor xb = tf::random::uniform({256, 4}, -1, 1, tf::float32, 2);
    const tf::Tensor y_sum = tf::reduce_sum(xa + xb, {1}, true);
    const tf::Tensor y_class = tf::cast(tf::greater(tf::reduce_sum(xa, {1}), tf::zeros({256})), tf::int32);
namespace kl = tf::keras::layers;
auto a = tf::keras::Input({4}, tf::float32, "a");
auto b = tf::keras::Input({4}, tf::float32, "b");
auto shared = std::make_shared<kl::Dense>(16, kl::DenseOptions{.activation = "relu"});
auto ha = (*shared)(a), hb = (*shared)(b);          // one layer, two calls: weights counted once
auto total = (*std::make_shared<kl::Dense>(1, kl::DenseOptions{.name = "total"}))(hb);
auto label = (*std::make_shared<kl::Dense>(2, kl::DenseOptions{.name = "label"}))(ha);
auto model = tf::keras::functional({a, b}, {total, label}, "towers");
model->compile(std::make_shared<tf::keras::optimizers::Adam>(),
               {std::make_shared<tf::keras::losses::MeanSquaredError>(),
                std::make_shared<tf::keras::losses::SparseCategoricalCrossentropy>(
                    tf::keras::losses::CrossentropyOptions{.from_logits = true})},
               /*loss_weights=*/{1.0, 0.5});
auto history = model->fit({xa, xb}, {y_sum, y_class}, {.epochs = 10, .verbose = 0});
fmt::print("{}", model->summary());                 // with Keras' "Connected to" column
    // ...
model->save(path);                                  // config.json, metadata.json, model.weights.h5
auto loaded = tf::keras::models::load_model(path);  // Functional "towers", uncompiled
auto outputs = loaded->predict({xa, xb});           // the same numbers, bit for bit
    // ...
auto mlp = std::make_shared<tf::keras::Sequential>(std::vector<std::shared_ptr<kl::Layer>>{
    std::make_shared<kl::Dense>(8, kl::DenseOptions{.activation = "relu"}),
    std::make_shared<kl::Dense>(1)});
mlp->compile("adam", "mse", {"mae"});               // Keras' identifiers
    const auto h = mlp->fit(xa, y_sum, {.epochs = 2, .verbose = 0});
    const std::vector<tf::Tensor> want = model->predict({xa, xb});
    bool same = outputs.size() == 2;
    for (std::size_t i = 0; same && i < 2; ++i)
        same = outputs[i].to_vector<float>() == want[i].to_vector<float>();
    const auto& loss = history.history.at("loss");
    fmt::print("loss {} -> {}, reloaded predictions {}\n", loss.front(), loss.back(),
               same ? "identical" : "DIFFERENT");
    fs::remove_all(dir);
    return same && loss.back() < loss.front() && h.history.count("mae") == 1 ? 0 : 1;
}
