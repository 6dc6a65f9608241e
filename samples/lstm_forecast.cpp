// An LSTM forecasting the yearly sunspot number (samples/data/sunspots.csv, 1700-2008, public
// domain: samples/data/README.md) from the previous 16 years, with tf::keras: Sequential(LSTM,
// Dense), compile(Adam, MeanSquaredError), fit, evaluate. The years up to 1958 train, the last 50
// years test; the forecast is compared with the persistence forecast (next year = this year).
//
//   build/samples/lstm_forecast [--short] [--epochs N] [--data FILE]
//
// --short (or TAPEFLOW_SAMPLE_SHORT=1) trains 8 epochs (a tenth of a second on one thread), as
// the samples suite runs it; a full run trains 200 (about a second). Both check that training
// halved the loss and that the LSTM beats persistence on the test years (RMSE about 22 and 21
// sunspots against 30).
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;
namespace kl = tf::keras::layers;

namespace {

constexpr int64_t kWindow = 16;
constexpr int64_t kTestYears = 50;

std::vector<double> load_sunspots(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw tf::errors::NotFoundError("cannot open " + path);
    std::string line;
    std::getline(in, line);  // "YEAR","SUNACTIVITY"
    std::vector<double> values;
    while (std::getline(in, line)) {
        const auto comma = line.find(',');
        if (comma != std::string::npos) values.push_back(std::stod(line.substr(comma + 1)));
    }
    return values;
}

struct Windows {
    tf::Tensor x;              // [N, kWindow, 1]
    tf::Tensor y;              // [N, 1]
    std::vector<double> last;  // the window's last value (the persistence forecast), scaled
};

// Windows whose target index is in [begin, end).
Windows windows(const std::vector<double>& s, int64_t begin, int64_t end) {
    std::vector<float> x, y;
    Windows w;
    for (int64_t t = begin; t < end; ++t) {
        for (int64_t k = t - kWindow; k < t; ++k)
            x.push_back(static_cast<float>(s[static_cast<std::size_t>(k)]));
        y.push_back(static_cast<float>(s[static_cast<std::size_t>(t)]));
        w.last.push_back(s[static_cast<std::size_t>(t - 1)]);
    }
    const int64_t n = end - begin;
    w.x = tf::constant(x, tf::Shape{n, kWindow, 1});
    w.y = tf::constant(y, tf::Shape{n, 1});
    return w;
}

}  // namespace

int main(int argc, char** argv) {
    bool short_run = std::getenv("TAPEFLOW_SAMPLE_SHORT") != nullptr;
    int64_t epochs = 0;
    std::string data = TAPEFLOW_SAMPLES_DATA_DIR "/sunspots.csv";
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--short") {
            short_run = true;
        } else if (a == "--epochs" && i + 1 < argc) {
            epochs = std::stoll(argv[++i]);
        } else if (a == "--data" && i + 1 < argc) {
            data = argv[++i];
        } else {
            fmt::print(stderr, "usage: lstm_forecast [--short] [--epochs N] [--data FILE]\n");
            return 2;
        }
    }
    if (epochs == 0) epochs = short_run ? 8 : 200;
    tf::random::set_seed(7);

    // Scale to about [0, 1] by the training years' maximum.
    std::vector<double> s = load_sunspots(data);
    const auto n = static_cast<int64_t>(s.size());
    const int64_t split = n - kTestYears;
    double top = 0;
    for (int64_t t = 0; t < split; ++t)
        top = std::max(top, s[static_cast<std::size_t>(t)]);
    for (double& v : s)
        v /= top;
    const Windows train = windows(s, kWindow, split);
    const Windows test = windows(s, split, n);
    fmt::print("{} years of sunspot numbers: {} training windows, {} test windows of {} years\n",
               n,
               train.y.shape()[0],
               test.y.shape()[0],
               kWindow);

    tf::keras::Sequential model({std::make_shared<kl::LSTM>(32), std::make_shared<kl::Dense>(1)});
    model.compile(std::make_shared<tf::keras::optimizers::Adam>(
                      tf::keras::optimizers::AdamOptions{.learning_rate = 0.01}),
                  std::make_shared<tf::keras::losses::MeanSquaredError>());
    const double before = model.evaluate(train.x, train.y).at("loss");
    const tf::keras::History h =
        model.fit(train.x, train.y, {.batch_size = 32, .epochs = epochs, .verbose = 0});
    fmt::print("{}", model.summary());
    const double after = h.history.at("loss").back();
    const double test_mse = model.evaluate(test.x, test.y).at("loss");
    double persistence = 0;
    const std::vector<float> truth = test.y.to_vector<float>();
    for (std::size_t i = 0; i < truth.size(); ++i)
        persistence += std::pow(truth[i] - test.last[i], 2);
    persistence /= static_cast<double>(truth.size());
    const double scale = top * top;  // back to squared sunspot numbers
    fmt::print("training loss {:.4f} -> {:.4f} after {} epochs\n", before, after, epochs);
    fmt::print("test RMSE: LSTM {:.1f} sunspots, persistence {:.1f} sunspots\n",
               std::sqrt(test_mse * scale),
               std::sqrt(persistence * scale));
    const bool learned = after < 0.5 * before;
    const bool beats = test_mse < persistence;
    if (!learned) fmt::print("FAILED: the training loss did not halve\n");
    if (!beats) fmt::print("FAILED: the LSTM does not beat persistence on the test years\n");
    return learned && beats ? 0 : 1;
}
