// tf::Module and Keras naming: unique default names, explicit names, variables in registration
// order without duplicates, submodules, scopes of nested builds, checkpoints of model.variables().
#include <filesystem>

#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;
namespace kl = tf::keras::layers;

namespace {

struct Affine : tf::Module {
    Affine() : Module("affine") {
        w = add_weight("w", {3, 2}, tf::keras::initializers::ones());
        b = add_weight("b", {2}, tf::keras::initializers::zeros(), tf::float32, false);
    }
    tf::Variable w, b;
};

struct Pair : tf::Module {
    explicit Pair(std::shared_ptr<Affine> shared) {
        first = track(shared);
        second = track(shared);  // tracked twice: its variables appear once
        track(first->w);
    }
    std::shared_ptr<Affine> first, second;
};

struct MyModel : tf::keras::Model {
    MyModel() {
        hidden = track(std::make_shared<kl::Dense>(4, kl::DenseOptions{.activation = "relu"}));
        out = track(std::make_shared<kl::Dense>(2));
    }
    tf::Tensor call(const tf::Tensor& x, bool training) override {
        return (*out)((*hidden)(x, training), training);
    }
    std::shared_ptr<kl::Dense> hidden, out;
};

std::string unique_prefix() {
    static int n = 0;
    return "modtest" + std::to_string(n++);
}

}  // namespace

TEST_CASE("Module names its variables in its scope and collects them once", "[keras][module]") {
    auto a = std::make_shared<Affine>();
    CHECK(a->name().rfind("affine", 0) == 0);
    CHECK(a->w.name() == a->name() + "/w");
    CHECK(a->variables().size() == 2);
    CHECK(a->trainable_variables().size() == 1);
    CHECK(a->non_trainable_variables().size() == 1);
    Pair p(a);
    CHECK(p.name().rfind("pair", 0) == 0);  // snake case of the C++ class
    const auto vars = p.variables();
    REQUIRE(vars.size() == 2);
    CHECK(vars[0] == a->w);
    CHECK(vars[1] == a->b);
    CHECK(p.submodules().size() == 1);
}

TEST_CASE("Keras default names are unique per class; explicit names are kept", "[keras][module]") {
    kl::Dense d1(3), d2(3);
    const std::string base = d1.name();
    REQUIRE(base.rfind("dense", 0) == 0);
    CHECK(d2.name() != d1.name());
    CHECK(d2.name().rfind("dense_", 0) == 0);
    kl::Dense named(3, {.name = "head"});
    CHECK(named.name() == "head");
    kl::Conv2D conv(4, 3);
    CHECK(conv.name().rfind("conv2d", 0) == 0);
    kl::MaxPooling2D pool;
    CHECK(pool.name().rfind("max_pooling2d", 0) == 0);
    kl::GlobalAveragePooling2D gap;
    CHECK(gap.name().rfind("global_average_pooling2d", 0) == 0);
    kl::BatchNormalization bn;
    CHECK(bn.name().rfind("batch_normalization", 0) == 0);
    kl::MultiHeadAttention mha(2, 4);
    CHECK(mha.name().rfind("multi_head_attention", 0) == 0);
    MyModel m;
    CHECK(m.name().rfind("my_model", 0) == 0);
    CHECK(m.class_name() == "MyModel");
    CHECK(tf::keras::detail::snake_case("MaxPooling2D") == "max_pooling2d");
    CHECK(tf::keras::detail::snake_case("MultiHeadAttention") == "multi_head_attention");
    CHECK(tf::keras::detail::snake_case("Conv1D") == "conv1d");
}

TEST_CASE("Weights built inside a Sequential carry its scope", "[keras][module]") {
    const std::string name = unique_prefix();
    auto dense = std::make_shared<kl::Dense>(3);
    tf::keras::Sequential model({dense, std::make_shared<kl::Dense>(2)}, name);
    CHECK_FALSE(dense->built());
    model(tf::ones({4, 5}));
    CHECK(dense->built());
    const auto vars = model.variables();
    REQUIRE(vars.size() == 4);
    CHECK(vars[0].name() == name + "/" + dense->name() + "/kernel");
    CHECK(vars[1].name() == name + "/" + dense->name() + "/bias");
    CHECK(vars[0].shape() == tf::Shape{5, 3});
    CHECK(model.submodules().size() == 2);
    CHECK(model.count_params() == 5 * 3 + 3 + 3 * 2 + 2);
}

TEST_CASE("Saver and MonitoredTrainingSession checkpoint model.variables() by name",
          "[keras][module][checkpoint]") {
    const auto dir = std::filesystem::temp_directory_path() / ("tapeflow_keras_" + unique_prefix());
    std::filesystem::remove_all(dir);
    const std::string name = unique_prefix();
    tf::keras::Sequential model({std::make_shared<kl::Dense>(3, kl::DenseOptions{.name = "dense"})},
                                name);
    model(tf::ones({1, 2}));
    tf::train::Saver saver(model.variables());
    const std::string prefix = saver.save((dir / "model").string());
    const auto listed = tf::train::list_variables(prefix);
    CHECK(listed.count(name + "/dense/kernel") == 1);
    CHECK(listed.count(name + "/dense/bias") == 1);
    const tf::Tensor before = model.variables()[0].value();
    tf::Variable kernel = model.variables()[0];
    kernel.assign(tf::zeros({2, 3}));
    saver.restore(prefix);
    CHECK(tf::reduce_all(tf::equal(kernel.value(), before)).item<bool>());
    std::filesystem::remove_all(dir);
}

TEST_CASE("MonitoredTrainingSession checkpoints and restores a model's variables by name",
          "[keras][module][checkpoint]") {
    const auto dir = std::filesystem::temp_directory_path() / ("tapeflow_keras_" + unique_prefix());
    std::filesystem::remove_all(dir);
    const std::string name = unique_prefix();
    tf::keras::Sequential model({std::make_shared<kl::Dense>(2, kl::DenseOptions{.name = "dense"})},
                                name);
    const tf::Tensor x = tf::ones({1, 3});
    model(x);
    CHECK(model.variables()[0].name() == name + "/dense/kernel");
    tf::train::GradientDescentOptimizer opt(0.1);
    tf::Variable step = tf::train::get_or_create_global_step();
    {
        tf::train::MonitoredTrainingSession session({.checkpoint_dir = dir.string()});
        for (int i = 0; i < 3; ++i)
            session.run([&] {
                return opt.minimize(
                    [&] { return tf::reduce_sum(model(x)); }, model.trainable_variables(), step);
            });
        session.close();
    }
    const auto names = tf::train::list_variables(*tf::train::latest_checkpoint(dir.string()));
    CHECK(names.count(name + "/dense/kernel") == 1);
    CHECK(names.count(name + "/dense/bias") == 1);
    const std::vector<float> trained = model.variables()[0].value().to_vector<float>();
    // A restarted job: the session restores the model's variables from the checkpoint.
    for (tf::Variable v : model.variables())
        v.assign(tf::zeros_like(v.value()));
    tf::train::MonitoredTrainingSession session({.checkpoint_dir = dir.string()});
    CHECK(model.variables()[0].value().to_vector<float>() == trained);
    session.close();
    std::filesystem::remove_all(dir);
}
