// Resumed training is exact: for every optimizer of both families (and the EMA), N steps, a save,
// a restore into fresh objects and M more steps give bitwise the variables — weights, slots,
// optimizer state — of N+M uninterrupted steps. The model mixes dense and sparse (gather)
// gradients.
#include <functional>
#include <memory>

#include <catch2/catch.hpp>

#include "checkpoint/checkpoint_test_util.hpp"

namespace tf = tapeflow;
namespace t = tapeflow::train;
namespace ko = tapeflow::keras::optimizers;
using ckpt_test::bitwise_equal;

namespace {

using Factory = std::function<std::unique_ptr<t::Optimizer>()>;

struct Case {
    std::string label;
    Factory make;
    bool keras;
    bool ema = false;  // also keep a tf::train::ExponentialMovingAverage of the weights
};

std::vector<Case> cases() {
    const t::ExponentialDecay schedule{0.1, 3, 0.7};
    return {
        {"GradientDescent",
         [] { return std::make_unique<t::GradientDescentOptimizer>(0.1); },
         false,
         true},
        {"GradientDescent+schedule",
         [=] { return std::make_unique<t::GradientDescentOptimizer>(schedule); },
         false},
        {"Momentum",
         [] {
             return std::make_unique<t::MomentumOptimizer>(
                 0.05, 0.9, t::MomentumOptimizerOptions{.use_nesterov = true});
         },
         false},
        {"Adagrad", [] { return std::make_unique<t::AdagradOptimizer>(0.1); }, false},
        {"Adadelta", [] { return std::make_unique<t::AdadeltaOptimizer>(1.0); }, false},
        {"Adam", [] { return std::make_unique<t::AdamOptimizer>(0.05); }, false},
        {"Ftrl",
         [] {
             return std::make_unique<t::FtrlOptimizer>(
                 0.1, t::FtrlOptimizerOptions{.l1_regularization_strength = 0.01});
         },
         false},
        {"RMSProp",
         [] {
             return std::make_unique<t::RMSPropOptimizer>(
                 0.01, t::RMSPropOptimizerOptions{.momentum = 0.5, .centered = true});
         },
         false},
        {"ProximalGradientDescent",
         [] {
             return std::make_unique<t::ProximalGradientDescentOptimizer>(
                 0.1,
                 t::ProximalGradientDescentOptimizerOptions{.l1_regularization_strength = 0.01});
         },
         false},
        {"ProximalAdagrad",
         [] { return std::make_unique<t::ProximalAdagradOptimizer>(0.1); },
         false},
        {"keras SGD",
         [] {
             return std::make_unique<ko::SGD>(
                 ko::SGDOptions{.learning_rate = 0.05, .momentum = 0.9});
         },
         true},
        {"keras SGD+schedule",
         [=] { return std::make_unique<ko::SGD>(ko::SGDOptions{.learning_rate = schedule}); },
         true},
        {"keras RMSprop",
         [] {
             return std::make_unique<ko::RMSprop>(
                 ko::RMSpropOptions{.momentum = 0.3, .centered = true});
         },
         true},
        {"keras Adam",
         [] {
             return std::make_unique<ko::Adam>(
                 ko::AdamOptions{.learning_rate = 0.05, .amsgrad = true});
         },
         true},
        {"keras Adam+ema",
         [] {
             return std::make_unique<ko::Adam>(ko::AdamOptions{
                 .learning_rate = 0.05, .use_ema = true, .ema_overwrite_frequency = 3});
         },
         true},
        {"keras AdamW",
         [] { return std::make_unique<ko::AdamW>(ko::AdamWOptions{.learning_rate = 0.05}); },
         true},
        {"keras Adamax",
         [] { return std::make_unique<ko::Adamax>(ko::AdamaxOptions{.learning_rate = 0.05}); },
         true},
        {"keras Nadam",
         [] { return std::make_unique<ko::Nadam>(ko::NadamOptions{.learning_rate = 0.05}); },
         true},
        {"keras Adagrad",
         [] { return std::make_unique<ko::Adagrad>(ko::AdagradOptions{.learning_rate = 0.1}); },
         true},
        {"keras Adadelta",
         [] { return std::make_unique<ko::Adadelta>(ko::AdadeltaOptions{.learning_rate = 1.0}); },
         true},
        {"keras Ftrl",
         [] { return std::make_unique<ko::Ftrl>(ko::FtrlOptions{.learning_rate = 0.1}); },
         true},
    };
}

// The objects of one training "process"; names are the same in every instance.
struct Run {
    tf::Variable step;
    tf::Variable emb{tf::reshape(tf::constant({0.1f,
                                               -0.2f,
                                               0.3f,
                                               0.4f,
                                               -0.5f,
                                               0.6f,
                                               0.7f,
                                               0.8f,
                                               -0.9f,
                                               1.0f,
                                               -1.1f,
                                               1.2f,
                                               0.05f,
                                               -0.15f,
                                               0.25f}),
                                 {5, 3}),
                     {.name = "rs_emb"}};
    tf::Variable w{tf::reshape(tf::constant({0.3f, -0.1f, 0.2f, 0.5f, -0.4f, 0.05f}), {3, 2}),
                   {.name = "rs_w"}};
    tf::Variable b{tf::constant({0.01f, -0.02f}), {.name = "rs_b"}};
    std::unique_ptr<t::Optimizer> opt;
    std::unique_ptr<t::ExponentialMovingAverage> ema;

    explicit Run(const Case& c) : step(t::get_or_create_global_step()), opt(c.make()) {
        step.assign(tf::constant(int64_t{0}));
        if (c.ema) ema = std::make_unique<t::ExponentialMovingAverage>(0.9);
    }

    void train(const Case& c, int from, int to) {
        for (int i = from; i < to; ++i) {
            const tf::Tensor idx = tf::constant({i % 5, (i * 3 + 1) % 5, (i + 2) % 5}, tf::int32);
            const tf::Tensor y = tf::constant({{0.5f, -0.5f}, {1.f, 0.f}, {-0.25f, 0.75f}});
            auto loss = [&] {
                const tf::Tensor h =
                    tf::matmul(tf::gather(emb.value(), idx), w.value()) + b.value();
                return tf::reduce_mean(tf::square(h - y));
            };
            std::vector<tf::Variable> vars{emb, w, b};
            if (c.keras) {
                opt->minimize(loss, vars);
            } else {
                opt->minimize(loss, vars, step);
            }
            if (ema) ema->apply({w, b});
        }
    }

    // Every variable this run owns, by name.
    std::map<std::string, tf::Tensor> snapshot() const {
        std::map<std::string, tf::Tensor> out;
        for (const tf::Variable& v : {emb, w, b, step})
            out.emplace(v.name(), v.value());
        for (const tf::Variable& v : opt->variables())
            out.emplace(v.name(), v.value());
        if (ema) {
            for (const tf::Variable& v : {w, b})
                out.emplace(ema->average_name(v), ema->average(v)->value());
        }
        return out;
    }
};

}  // namespace

TEST_CASE(
    "N steps + save + restore into fresh objects + M steps == N+M steps, bitwise, every optimizer",
    "[checkpoint][resume]") {
    constexpr int kN = 4, kM = 5;
    const std::string dir = ckpt_test::fresh_dir("resume");
    for (const Case& c : cases()) {
        INFO(c.label);
        std::map<std::string, tf::Tensor> straight;
        {
            Run run(c);
            run.train(c, 0, kN + kM);
            straight = run.snapshot();
        }
        std::string prefix;
        {
            Run run(c);
            run.train(c, 0, kN);
            prefix = t::Saver().save(dir + "/m", kN);
        }
        std::map<std::string, tf::Tensor> resumed;
        {
            Run run(c);  // fresh objects with their initial values, no slots yet
            t::Saver saver;
            saver.restore(prefix);  // slots and optimizer state: restored when created
            run.train(c, kN, kN + kM);
            resumed = run.snapshot();
        }
        REQUIRE(resumed.size() == straight.size());
        for (const auto& [name, value] : straight) {
            INFO(name);
            REQUIRE(resumed.count(name) == 1);
            CHECK(bitwise_equal(resumed.at(name), value));
        }
    }
}

TEST_CASE("control: restoring the weights without the optimizer state does not reproduce the run",
          "[checkpoint][resume]") {
    const std::string dir = ckpt_test::fresh_dir("resume_control");
    const Case c{"keras Adam",
                 [] { return std::make_unique<ko::Adam>(ko::AdamOptions{.learning_rate = 0.05}); },
                 true};
    tf::Tensor straight;
    {
        Run run(c);
        run.train(c, 0, 6);
        straight = run.w.value();
    }
    std::string prefix;
    {
        Run run(c);
        run.train(c, 0, 3);
        prefix = t::Saver().save(dir + "/m", 3);
    }
    Run run(c);
    t::Saver(
        std::map<std::string, tf::Variable>{{"rs_emb", run.emb}, {"rs_w", run.w}, {"rs_b", run.b}})
        .restore(prefix);
    run.train(c, 3, 6);  // fresh slots and iteration counter: a different trajectory
    CHECK_FALSE(bitwise_equal(run.w.value(), straight));
}
