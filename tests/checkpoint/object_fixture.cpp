// Writes the TF2 object-based checkpoint that tests/checkpoint/read_bundle.py --check-objects
// decodes on its own (bundle, TrackableObjectGraph by hand): tf.train.Checkpoint(model=...,
// optimizer=...) of a Keras Sequential Dense(3) -> BatchNormalization after one Adam step, with
// kernel = [[0, 1, 2], [3, 4, 5]] / 10 before the step.
//   object_fixture PREFIX      (writes PREFIX-1)
#include <cstdio>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;
namespace kl = tapeflow::keras::layers;

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: object_fixture PREFIX\n");
        return 2;
    }
    auto dense = std::make_shared<kl::Dense>(3);
    auto model = std::make_shared<tf::keras::Sequential>(
        std::vector<std::shared_ptr<kl::Layer>>{dense, std::make_shared<kl::BatchNormalization>()});
    (*model)(tf::zeros({4, 2}));
    dense->kernel().assign(
        tf::constant(std::vector<float>{0, 0.1F, 0.2F, 0.3F, 0.4F, 0.5F}, {2, 3}));
    auto adam = std::make_shared<tf::keras::optimizers::Adam>();
    const tf::Tensor x = tf::constant(std::vector<float>{1, 2, -1, 0.5F, 3, -2, 0, 1}, {4, 2});
    adam->minimize([&] { return tf::reduce_mean(tf::square((*model)(x, true))); },
                   model->trainable_variables());
    tf::train::Checkpoint ckpt({{"model", model}, {"optimizer", adam}});
    std::printf("%s\n", ckpt.save(argv[1]).c_str());
    return 0;
}
