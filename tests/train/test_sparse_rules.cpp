// Each TF1 optimizer's IndexedSlices rule: duplicates summed first, then lazy
// optimizers update only the listed rows (exactly as a dense update of just those rows would),
// while Adam updates everything as the dense rule with zeros in the unlisted rows.
#include <functional>
#include <memory>

#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;
namespace t = tapeflow::train;

namespace {

using Factory = std::function<std::unique_ptr<t::Optimizer>()>;

std::vector<float> run_steps(const Factory& make,
                             const tf::Tensor& init,
                             const std::vector<tf::Gradient>& grads) {
    tf::Variable v(init, {.name = "v"});
    auto opt = make();
    for (const tf::Gradient& g : grads)
        opt->apply_gradients({{g, v}});
    return v.value().to_vector<float>();
}

}  // namespace

TEST_CASE("sparse rules: lazy optimizers touch only listed rows, duplicates summed",
          "[train][sparse]") {
    const std::vector<std::pair<const char*, Factory>> lazy = {
        {"GradientDescent",
         [] {
             return std::make_unique<t::GradientDescentOptimizer>(0.5);
         }},
        {"Momentum",
         [] {
             return std::make_unique<t::MomentumOptimizer>(0.5, 0.9);
         }},
        {"Nesterov",
         [] {
             return std::make_unique<t::MomentumOptimizer>(
                 0.5, 0.9, t::MomentumOptimizerOptions{.use_nesterov = true});
         }},
        {"Adagrad",
         [] {
             return std::make_unique<t::AdagradOptimizer>(0.5);
         }},
        {"Adadelta",
         [] {
             return std::make_unique<t::AdadeltaOptimizer>(1.0);
         }},
        {"Ftrl",
         [] {
             return std::make_unique<t::FtrlOptimizer>(
                 0.5,
                 t::FtrlOptimizerOptions{.l1_regularization_strength = 0.01,
                                         .l2_regularization_strength = 0.1,
                                         .l2_shrinkage_regularization_strength = 0.05});
         }},
        {"RMSProp",
         [] {
             return std::make_unique<t::RMSPropOptimizer>(
                 0.5, t::RMSPropOptimizerOptions{.momentum = 0.5});
         }},
        {"CenteredRMSProp",
         [] {
             return std::make_unique<t::RMSPropOptimizer>(
                 0.5, t::RMSPropOptimizerOptions{.momentum = 0.5, .centered = true});
         }},
        {"ProximalGD",
         [] {
             return std::make_unique<t::ProximalGradientDescentOptimizer>(
                 0.5,
                 t::ProximalGradientDescentOptimizerOptions{.l1_regularization_strength = 0.1,
                                                            .l2_regularization_strength = 0.2});
         }},
        {"ProximalAdagrad",
         [] {
             return std::make_unique<t::ProximalAdagradOptimizer>(
                 0.5,
                 t::ProximalAdagradOptimizerOptions{.l1_regularization_strength = 0.1,
                                                    .l2_regularization_strength = 0.2});
         }},
    };
    const tf::Tensor init = tf::constant(std::vector<float>{1, 2, 3, 4, 5, 6}, tf::Shape{3, 2});
    // Rows 0 (twice: summed) and 2; row 1 is never listed.
    const tf::IndexedSlices slices{
        tf::constant(std::vector<float>{0.1f, 0.2f, 0.3f, -0.4f, 0.5f, 0.6f}, tf::Shape{3, 2}),
        tf::constant({0, 2, 0}),
        tf::Shape{3, 2}};
    // The same update as a dense one on a variable holding only rows 0 and 2.
    const tf::Tensor rows_init = tf::constant(std::vector<float>{1, 2, 5, 6}, tf::Shape{2, 2});
    const tf::Tensor rows_grad =
        tf::constant(std::vector<float>{0.6f, 0.8f, 0.3f, -0.4f}, tf::Shape{2, 2});
    for (const auto& [name, make] : lazy) {
        INFO(name);
        const auto sparse = run_steps(make, init, {slices, slices});
        const auto dense_rows = run_steps(make, rows_init, {rows_grad, rows_grad});
        CHECK(sparse[2] == 3.f);  // untouched row
        CHECK(sparse[3] == 4.f);
        CHECK(sparse[0] == Approx(dense_rows[0]).epsilon(1e-6));
        CHECK(sparse[1] == Approx(dense_rows[1]).epsilon(1e-6));
        CHECK(sparse[4] == Approx(dense_rows[2]).epsilon(1e-6));
        CHECK(sparse[5] == Approx(dense_rows[3]).epsilon(1e-6));
    }
}

TEST_CASE("sparse rules: Adam is not lazy (the dense rule with zeros in unlisted rows)",
          "[train][sparse]") {
    const Factory adam = [] {
        return std::make_unique<t::AdamOptimizer>(0.1);
    };
    const tf::Tensor init = tf::constant(std::vector<float>{1, 2, 3, 4}, tf::Shape{2, 2});
    const tf::IndexedSlices row0{tf::constant(std::vector<float>{1, 1}, tf::Shape{1, 2}),
                                 tf::constant({0}),
                                 tf::Shape{2, 2}};
    const tf::IndexedSlices row1{tf::constant(std::vector<float>{1, 1}, tf::Shape{1, 2}),
                                 tf::constant({1}),
                                 tf::Shape{2, 2}};
    const auto sparse = run_steps(adam, init, {row0, row1});
    const tf::Tensor dense0 = tf::constant(std::vector<float>{1, 1, 0, 0}, tf::Shape{2, 2});
    const tf::Tensor dense1 = tf::constant(std::vector<float>{0, 0, 1, 1}, tf::Shape{2, 2});
    const auto dense = run_steps(adam, init, {dense0, dense1});
    CHECK(sparse == dense);
    CHECK(sparse[0] != 1.f - 0.1f);  // row 0 kept drifting on its momentum at step 2
}

TEST_CASE("sparse rules: a dense zero gradient still moves Ftrl and ProximalGD, sparse does not",
          "[train][sparse]") {
    const Factory prox = [] {
        return std::make_unique<t::ProximalGradientDescentOptimizer>(
            1.0, t::ProximalGradientDescentOptimizerOptions{.l2_regularization_strength = 1.0});
    };
    const tf::Tensor init = tf::constant({2.f, 4.f});
    const auto dense = run_steps(prox, init, {tf::constant({0.f, 0.f})});
    CHECK(dense == std::vector<float>{1.f, 2.f});  // shrunk by 1/(1 + lr·l2)
    const tf::IndexedSlices none_listed{
        tf::constant(std::vector<float>{0.f}, tf::Shape{1}), tf::constant({0}), tf::Shape{2}};
    const auto sparse = run_steps(prox, init, {none_listed});
    CHECK(sparse == std::vector<float>{1.f, 4.f});
}
