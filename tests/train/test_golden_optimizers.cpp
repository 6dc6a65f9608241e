// Every optimizer case of tf-training.json: the TF1 family (tf::train) and the Keras 3 family
// (tf::keras::optimizers), dense and IndexedSlices gradients, slots and intermediate steps.
#include <catch2/catch.hpp>

#include "train/training_golden.hpp"

namespace tf = tapeflow;
using tf::testing::run_optimizer_case;
using tf::testing::training_cases;

TEST_CASE("golden: TF1 optimizers", "[train][golden]") {
    for (const char* family : {"sgd/", "momentum/", "adagrad/", "adadelta/", "adam/", "ftrl/", "rmsprop/",
                               "proximal_adagrad/", "proximal_gd/"}) {
        for (const auto& c : training_cases(family)) {
            SECTION(c.at("id").get<std::string>()) { run_optimizer_case(c); }
        }
    }
}
