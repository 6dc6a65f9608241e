// Models exchanged with TensorFlow, Keras and NumPy (docs/interchange.md). A small Keras model is
// trained in tapeflow and written in every format those tools read: a TF2 object checkpoint
// (model and optimizer), a TF1 Saver checkpoint, Keras 3's .weights.h5, tf.keras 2's .h5 and a
// .npy. Each file is loaded back into a fresh model, which must predict exactly what the trained
// one does. The reverse direction: TensorFlow's own half_plus_two checkpoint (written by
// TensorFlow, copied from tensorflow/serving into tests/golden) restores into a tf::Module.
// Exits 1 when a round trip or the TensorFlow checkpoint gives other numbers.
//   build/samples/interchange DIR [GOLDEN_TF_CHECKPOINTS_DIR]
#include <cstdio>
#include <filesystem>
#include <string>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;
namespace kl = tf::keras::layers;
namespace ko = tf::keras::optimizers;

namespace {

std::shared_ptr<tf::keras::Sequential> make_model() {
    auto model = std::make_shared<tf::keras::Sequential>(std::vector<std::shared_ptr<kl::Layer>>{
        std::make_shared<kl::Dense>(8, kl::DenseOptions{.activation = "relu"}),
        std::make_shared<kl::Dense>(1)});
    (*model)(tf::zeros({1, 3}));  // builds the weights
    return model;
}

bool same(const tf::Tensor& a, const tf::Tensor& b) {
    return tf::reduce_all(tf::equal(a, b)).item<bool>();
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: interchange DIR [GOLDEN_TF_CHECKPOINTS_DIR]\n");
        return 2;
    }
    const std::string dir = argv[1];
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    tf::random::set_seed(7);

    // y = x0 - 2 x1 + 0.5 x2, learned by a small MLP.
    const tf::Tensor x = tf::random::normal({256, 3});
    const tf::Tensor y = tf::matmul(x, tf::constant(std::vector<float>{1.f, -2.f, 0.5f}, {3, 1}));
    auto model = make_model();
    auto adam = std::make_shared<ko::Adam>(ko::AdamOptions{.learning_rate = 0.01});
    model->compile(adam, std::make_shared<tf::keras::losses::MeanSquaredError>());
    model->fit(x, y, {.batch_size = 32, .epochs = 20, .verbose = 0});
    const tf::Tensor expected = (*model)(x);
    int failures = 0;
    auto check = [&](const char* what, tf::keras::Sequential& other) {
        const bool ok = same(other(x), expected);
        std::printf("%-44s %s\n", what, ok ? "same predictions" : "DIFFERENT predictions");
        failures += ok ? 0 : 1;
    };

    // [interchange-save]
    // TF2: tf.train.Checkpoint(model=model, optimizer=optimizer).save(dir + "/ckpt")
    tf::train::Checkpoint ckpt({{"model", model}, {"optimizer", adam}});
    const std::string tf2_prefix = ckpt.save(dir + "/tf2/ckpt");  // dir/tf2/ckpt-1
    // TF1: tf.compat.v1.train.Saver().save(sess, dir + "/tf1/model.ckpt")
    tf::train::Saver(model->variables()).save(dir + "/tf1/model.ckpt");
    // Keras 3 and tf.keras 2 weight files; NumPy for one array.
    model->save_weights(dir + "/model.weights.h5");
    model->save_weights(dir + "/model.h5");
    tf::io::save_npy(dir + "/kernel0.npy", model->layers()[0]->variables()[0].value());
    // [interchange-save]

    {
        auto fresh = make_model();
        auto fresh_adam = std::make_shared<ko::Adam>(ko::AdamOptions{.learning_rate = 0.01});
        tf::train::Checkpoint restored({{"model", fresh}, {"optimizer", fresh_adam}});
        // The Adam slots do not exist before a step; they are restored when created.
        restored.restore(tf2_prefix).expect_partial();
        check("tf::train::Checkpoint (TF2 object graph)", *fresh);
    }
    {
        auto fresh = make_model();
        std::map<std::string, tf::Variable> by_name;
        for (std::size_t i = 0; i < fresh->variables().size(); ++i)
            by_name.emplace(model->variables()[i].name(), fresh->variables()[i]);
        tf::train::Saver(by_name).restore(dir + "/tf1/model.ckpt");
        check("tf::train::Saver (TF1 names)", *fresh);
    }
    for (const char* file : {"model.weights.h5", "model.h5"}) {
        auto fresh = make_model();
        fresh->load_weights(dir + "/" + file);
        check(file, *fresh);
    }
    {
        const tf::Tensor kernel = tf::io::load_npy(dir + "/kernel0.npy");
        const bool ok = same(kernel, model->layers()[0]->variables()[0].value());
        std::printf("%-44s %s\n", "kernel0.npy", ok ? "same values" : "DIFFERENT values");
        failures += ok ? 0 : 1;
    }

    // The reverse: a checkpoint TensorFlow wrote (tf.Module with variables a, b, c).
    if (argc > 2) {
        // [interchange-load-tf]
        auto half_plus_two = std::make_shared<tf::Module>("half_plus_two");
        for (const char* name : {"a", "b", "c"})
            half_plus_two->track_as(name, tf::Variable(tf::constant(0.f), {.name = name}));
        tf::train::Checkpoint(half_plus_two)
            .restore(std::string(argv[2]) + "/saved_model_half_plus_two_tf2_cpu/variables")
            .assert_consumed();
        // [interchange-load-tf]
        const auto vars = half_plus_two->own_variables();
        const float a = vars[0].value().item<float>(), b = vars[1].value().item<float>(),
                    c = vars[2].value().item<float>();
        const bool ok = a == 0.5f && b == 2.f && c == 3.f;
        std::printf("TensorFlow's half_plus_two: a=%g b=%g c=%g %s\n", a, b, c, ok ? "" : "WRONG");
        failures += ok ? 0 : 1;
    }
    return failures == 0 ? 0 : 1;
}
