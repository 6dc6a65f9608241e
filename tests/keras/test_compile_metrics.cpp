// compile()'s string identifiers and the metrics AUC, MeanSquaredError, MeanAbsoluteError,
// TopKCategoricalAccuracy and F1Score: Keras' docstring numbers and float64 references written
// here.
#include <algorithm>
#include <cmath>

#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;
namespace kl = tf::keras::layers;
namespace km = tf::keras::metrics;

namespace {

std::shared_ptr<tf::keras::Sequential> small_model() {
    return std::make_shared<tf::keras::Sequential>(std::vector<std::shared_ptr<kl::Layer>>{
        std::make_shared<kl::Dense>(8), std::make_shared<kl::Dense>(1)});
}

// ROC AUC by its definition, in float64: counts at each threshold, then trapezoids.
double reference_roc_auc(const std::vector<double>& label,
                         const std::vector<double>& score,
                         int n) {
    std::vector<double> thr{-1e-7};
    for (int i = 1; i < n - 1; ++i)
        thr.push_back(static_cast<double>(i) / (n - 1));
    thr.push_back(1 + 1e-7);
    std::vector<double> tpr, fpr;
    for (double t : thr) {
        double tp = 0, fp = 0, fn = 0, tn = 0;
        for (std::size_t i = 0; i < label.size(); ++i) {
            const bool p = score[i] > t;
            (label[i] > 0 ? (p ? tp : fn) : (p ? fp : tn)) += 1;
        }
        tpr.push_back(tp + fn > 0 ? tp / (tp + fn) : 0);
        fpr.push_back(fp + tn > 0 ? fp / (fp + tn) : 0);
    }
    double area = 0;
    for (std::size_t i = 0; i + 1 < thr.size(); ++i)
        area += (fpr[i] - fpr[i + 1]) * (tpr[i] + tpr[i + 1]) / 2;
    return area;
}

}  // namespace

TEST_CASE("compile with Keras' string identifiers", "[keras][compile]") {
    tf::random::set_seed(1);
    auto model = small_model();
    model->compile("adam", "mse", {"mae", "mse"});
    REQUIRE(model->compiled());
    REQUIRE(model->metrics().size() == 2);
    CHECK(model->metrics()[0]->name() == "mae");  // named by the identifier, as Keras
    CHECK(dynamic_cast<tf::keras::optimizers::Adam*>(model->optimizer()) != nullptr);
    CHECK(dynamic_cast<tf::keras::losses::MeanSquaredError*>(model->loss()) != nullptr);
    const tf::Tensor x = tf::random::uniform({64, 3}, -1, 1, tf::float32, 2);
    const tf::Tensor y = tf::reduce_sum(x, {1}, true);
    const auto history = model->fit(x, y, {.batch_size = 16, .epochs = 3, .verbose = 0});
    CHECK(history.history.count("mae") == 1);
    // MSE of the model equals the "mse" metric evaluated on the same data.
    const auto scores = model->evaluate(x, y, 64);
    CHECK(scores.at("mse") == Approx(scores.at("loss")).epsilon(1e-5));

    auto other = small_model();
    other->compile(std::make_shared<tf::keras::optimizers::SGD>(), "mean_absolute_error");
    other->compile("RMSprop", std::make_shared<tf::keras::losses::Huber>());
    CHECK(dynamic_cast<tf::keras::optimizers::RMSprop*>(other->optimizer()) != nullptr);
    CHECK_THROWS_AS(other->compile("adamm", "mse"), tf::errors::InvalidArgumentError);
    CHECK_THROWS_WITH(other->compile("adamm", "mse"),
                      Catch::Contains("unknown optimizer identifier \"adamm\"") &&
                          Catch::Contains("adam, adamax, adamw"));
    CHECK_THROWS_WITH(other->compile("sgd", "msee"), Catch::Contains("unknown loss identifier"));
    CHECK_THROWS_WITH(other->compile("sgd", "mse", {"acuracy"}),
                      Catch::Contains("unknown metric identifier \"acuracy\""));
}

TEST_CASE("\"accuracy\" picks binary, sparse or categorical accuracy from the shapes",
          "[keras][compile][metrics]") {
    auto model = small_model();
    model->compile("sgd", "sparse_categorical_crossentropy", {"accuracy"});
    auto& acc = *model->metrics()[0];
    // Sparse labels [B] against [B, 3] scores: 2 of 3 right.
    acc.update_state(tf::constant({0, 2, 1}),
                     tf::constant({{0.9f, 0.05f, 0.05f}, {0.1f, 0.2f, 0.7f}, {0.8f, 0.1f, 0.1f}}));
    CHECK(acc.result().item<double>() == Approx(2.0 / 3.0));
    model->compile("sgd", "binary_crossentropy", {"acc"});
    auto& binary = *model->metrics()[0];
    binary.update_state(tf::constant({{1.0f}, {0.0f}}), tf::constant({{0.7f}, {0.6f}}));
    CHECK(binary.name() == "acc");
    CHECK(binary.result().item<double>() == Approx(0.5));
    model->compile("sgd", "categorical_crossentropy", {"accuracy"});
    auto& categorical = *model->metrics()[0];
    categorical.update_state(tf::constant({{0.0f, 1.0f}, {1.0f, 0.0f}}),
                             tf::constant({{0.2f, 0.8f}, {0.3f, 0.7f}}));
    CHECK(categorical.result().item<double>() == Approx(0.5));
}

TEST_CASE("MeanSquaredError, MeanAbsoluteError, TopKCategoricalAccuracy", "[keras][metrics]") {
    km::MeanSquaredError mse;
    km::MeanAbsoluteError mae;
    const tf::Tensor t = tf::constant({{0.0, 1.0}, {0.0, 0.0}});
    const tf::Tensor p = tf::constant({{1.0, 1.0}, {1.0, 0.0}});
    mse.update_state(t, p);
    mae.update_state(t, p);
    CHECK(mse.result().item<double>() == Approx(0.5));  // Keras' docstring
    CHECK(mae.result().item<double>() == Approx(0.5));
    CHECK(mse.name() == "mean_squared_error");
    CHECK_FALSE(mse.higher_is_better());
    mse.update_state(t, p, tf::constant({1.0, 0.0}));
    CHECK(mse.result().item<double>() == Approx((0.5 + 0.5 + 0.5) / 3));
    km::TopKCategoricalAccuracy top1(1);
    top1.update_state(tf::constant({{0.0f, 0.0f, 1.0f}, {0.0f, 1.0f, 0.0f}}),
                      tf::constant({{0.1f, 0.9f, 0.8f}, {0.05f, 0.95f, 0.0f}}));
    CHECK(top1.result().item<double>() == Approx(0.5));  // Keras' docstring
    km::TopKCategoricalAccuracy top2(2);
    top2.update_state(tf::constant({{0.0f, 0.0f, 1.0f}, {0.0f, 0.0f, 1.0f}}),
                      tf::constant({{0.1f, 0.9f, 0.8f}, {0.05f, 0.95f, 0.0f}}));
    CHECK(top2.result().item<double>() == Approx(0.5));
    CHECK_THROWS_AS(km::TopKCategoricalAccuracy(0), tf::errors::InvalidArgumentError);
}

TEST_CASE("AUC: Keras' thresholds, ROC and PR sums", "[keras][metrics][auc]") {
    km::AUC small(km::AUCOptions{.num_thresholds = 3});
    small.update_state(tf::constant({0.0f, 0.0f, 1.0f, 1.0f}),
                       tf::constant({0.0f, 0.5f, 0.3f, 0.9f}));
    CHECK(small.result().item<double>() == Approx(0.75));  // Keras' docstring
    REQUIRE(small.thresholds().size() == 3);
    CHECK(small.thresholds()[0] == -1e-7);

    // 200 thresholds against the float64 definition, over two batches.
    const tf::Tensor labels =
        tf::cast(tf::greater(tf::random::uniform({300}, 0, 1, tf::float64, 4), tf::constant(0.6)),
                 tf::float64);
    const tf::Tensor noise = tf::random::uniform({300}, 0, 1, tf::float64, 5);
    const tf::Tensor scores =
        tf::clip_by_value(labels * tf::constant(0.3) + noise * tf::constant(0.7), 0.0, 1.0);
    km::AUC auc;
    auc.update_state(tf::slice(labels, {0}, {150}), tf::slice(scores, {0}, {150}));
    auc.update_state(tf::slice(labels, {150}, {150}), tf::slice(scores, {150}, {150}));
    const double want =
        reference_roc_auc(labels.to_vector<double>(), scores.to_vector<double>(), 200);
    CHECK(auc.result().item<double>() == Approx(want).epsilon(1e-5));
    CHECK(want > 0.6);
    auc.reset_state();
    CHECK(auc.result().item<double>() == 0.0);

    // PR, positives 0.8 and 0.9 above the negatives: precision is 1 until nothing is predicted,
    // where Keras takes 0 (divide_no_nan), so the last step (recall 0.5 -> 0) counts 0 when
    // minoring and 1 when majoring.
    km::AUC pr(km::AUCOptions{.curve = "PR", .summation_method = "minoring"});
    pr.update_state(tf::constant({0.0f, 1.0f, 0.0f, 1.0f}), tf::constant({0.1f, 0.8f, 0.2f, 0.9f}));
    CHECK(pr.result().item<double>() == Approx(0.5).margin(1e-6));
    km::AUC pr_major(km::AUCOptions{.curve = "PR", .summation_method = "majoring"});
    pr_major.update_state(tf::constant({0.0f, 1.0f, 0.0f, 1.0f}),
                          tf::constant({0.1f, 0.8f, 0.2f, 0.9f}));
    CHECK(pr_major.result().item<double>() == Approx(1.0).margin(1e-6));
    km::AUC pr_interp(km::AUCOptions{.curve = "PR"});
    pr_interp.update_state(tf::constant({0.0f, 1.0f, 0.0f, 1.0f}),
                           tf::constant({0.1f, 0.8f, 0.2f, 0.9f}));
    CHECK(pr_interp.result().item<double>() == Approx(1.0).margin(0.01));
    CHECK_THROWS_AS(km::AUC(km::AUCOptions{.curve = "roc_curve"}),
                    tf::errors::InvalidArgumentError);
    CHECK_THROWS_AS(km::AUC(km::AUCOptions{.num_thresholds = 1}), tf::errors::InvalidArgumentError);
}

TEST_CASE("F1Score: Keras' docstring numbers and the averages", "[keras][metrics][f1]") {
    const tf::Tensor t = tf::constant({{1, 1, 1}, {1, 0, 0}, {1, 1, 0}});
    const tf::Tensor p = tf::constant({{0.2f, 0.6f, 0.7f}, {0.2f, 0.6f, 0.6f}, {0.6f, 0.8f, 0.0f}});
    km::F1Score f1("", 0.5);
    f1.update_state(t, p);
    const std::vector<float> r = f1.result().to_vector<float>();
    REQUIRE(r.size() == 3);
    CHECK(r[0] == Approx(0.5f).epsilon(1e-5));
    CHECK(r[1] == Approx(0.8f).epsilon(1e-5));
    CHECK(r[2] == Approx(0.6666667f).epsilon(1e-5));
    km::F1Score f2("", 0.5, "fbeta", 2.0);
    f2.update_state(t, p);
    const std::vector<float> r2 = f2.result().to_vector<float>();
    CHECK(r2[0] == Approx(0.3846154f).epsilon(1e-5));  // FBetaScore(beta=2)'s docstring
    CHECK(r2[1] == Approx(0.90909094f).epsilon(1e-5));
    CHECK(r2[2] == Approx(0.8333334f).epsilon(1e-5));
    km::F1Score macro("macro", 0.5);
    macro.update_state(t, p);
    CHECK(macro.result().item<double>() == Approx((0.5 + 0.8 + 2.0 / 3) / 3).epsilon(1e-5));
    // micro: tp 4, fp 2, fn 2 summed over classes.
    km::F1Score micro("micro", 0.5);
    micro.update_state(t, p);
    const double prec = 4.0 / 6, rec = 4.0 / 6;
    CHECK(micro.result().item<double>() == Approx(2 * prec * rec / (prec + rec)).epsilon(1e-5));
    // weighted by the support per class (3, 2, 1).
    km::F1Score weighted("weighted", 0.5);
    weighted.update_state(t, p);
    CHECK(weighted.result().item<double>() ==
          Approx((0.5 * 3 + 0.8 * 2 + 2.0 / 3 * 1) / 6).epsilon(1e-5));
    // No threshold: the row maximum is the prediction.
    km::F1Score argmax_f1("macro");
    argmax_f1.update_state(tf::constant({{1, 0}, {0, 1}}),
                           tf::constant({{0.6f, 0.4f}, {0.3f, 0.7f}}));
    CHECK(argmax_f1.result().item<double>() == Approx(1.0).epsilon(1e-5));
    CHECK_THROWS_AS(km::F1Score("mean"), tf::errors::InvalidArgumentError);
}
