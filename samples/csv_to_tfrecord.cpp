// From CSV to a trained model through TFRecord, as the TensorFlow tutorial does with pandas and
// TFRecordWriter: write a CSV, convert each row to a tf.train.Example in a TFRecord file, then
// read it back with TensorFlow 1's read_and_decode + Coordinator loop, and train a linear
// regression from it with TFRecordDataset -> map(parse) -> shuffle -> batch -> prefetch, minimizing
// the mean squared error with tf::train::GradientDescentOptimizer.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;

namespace {

constexpr int kRows = 2000;
constexpr float kTrueW[3] = {2.0f, -3.0f, 0.5f};
constexpr float kTrueB = 1.0f;

// A CSV like the tutorial's: a header, then x1,x2,x3,y with y = w.x + b + small noise.
void write_csv(const std::string& path) {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> x(-1.f, 1.f);
    std::normal_distribution<float> noise(0.f, 0.01f);
    std::ofstream out(path);
    out << "x1,x2,x3,y\n";
    for (int i = 0; i < kRows; ++i) {
        float a = x(rng), b = x(rng), c = x(rng);
        float y = kTrueW[0] * a + kTrueW[1] * b + kTrueW[2] * c + kTrueB + noise(rng);
        out << fmt::format("{},{},{},{}\n", a, b, c, y);
    }
}

// CSV rows -> tf.train.Example records, the CSV read by tf.data.experimental.CsvDataset (header
// skipped, four float32 columns, each required).
void csv_to_tfrecord(const std::string& csv, const std::string& tfrecord) {
    const tf::Tensor required = tf::constant(std::vector<float>{}, {0});
    tf::io::TFRecordWriter writer(tfrecord);
    for (const std::vector<tf::Tensor>& row :
         tf::data::CsvDataset({csv}, {required, required, required, required}, /*header=*/true)) {
        writer.write(
            tf::io::Example()
                .add_float("features",
                           {row[0].item<float>(), row[1].item<float>(), row[2].item<float>()})
                .add_float("label", {row[3].item<float>()})
                .serialize());
    }
    writer.close();
}

// TensorFlow 1's queue-era reading loop, line by line on tf::data: string_input_producer's
// num_epochs is repeat(), the TFRecordReader a TFRecordDataset, shuffle_batch's queue runners the
// pipeline's own threads; the loop runs until get_next() raises OutOfRangeError, under a
// Coordinator.
std::vector<tf::Tensor> read_and_decode(const std::string& serialized) {
    auto features = tf::io::parse_single_example(serialized, {{"features", {3}}, {"label", {}}});
    return {features[0], features[1]};
}

int64_t read_with_coordinator(const std::string& records, int num_epochs) {
    auto examples = tf::data::TFRecordDataset({records}).repeat(num_epochs).map(read_and_decode);
    auto batches = tf::train::shuffle_batch(examples,
                                            {.batch_size = 100,
                                             .capacity = 2000,
                                             .min_after_dequeue = 1000,
                                             .num_threads = 2,
                                             .seed = 1});
    auto iterator = batches.make_one_shot_iterator();
    tf::train::Coordinator coord;
    int64_t seen = 0;
    try {
        while (!coord.should_stop()) {
            const std::vector<tf::Tensor> batch = iterator.get_next();  // sess.run([x, y])
            seen += batch[0].shape()[0];
        }
    } catch (const tf::errors::OutOfRangeError&) {
        fmt::print("Done reading -- epoch limit reached: {} examples\n", seen);
    }
    coord.request_stop();
    coord.join();
    return seen;
}

// One serialized Example -> (features [3], label []).
std::vector<tf::Tensor> parse(const std::string& record) {
    auto ex = tf::io::Example::parse(record);
    return {tf::constant(ex.get_float("features"), {3}), tf::constant(ex.get_float("label")[0])};
}

}  // namespace

int main(int argc, char** argv) {
    namespace fs = std::filesystem;
    fs::path dir = argc > 1 ? fs::path(argv[1]) : fs::temp_directory_path() / "csv_to_tfrecord";
    fs::create_directories(dir);
    const std::string csv = (dir / "data.csv").string();
    const std::string records = (dir / "data.tfrecord").string();
    write_csv(csv);
    csv_to_tfrecord(csv, records);
    if (read_with_coordinator(records, 2) != 2 * kRows) return 1;

    auto dataset = tf::data::TFRecordDataset({records})
                       .map(parse, 2)  // two parser threads, order kept
                       .shuffle(512, 42)
                       .batch(32)
                       .prefetch(2);  // the next batch is parsed while this one trains

    tf::Variable w(tf::zeros({3, 1}));
    tf::Variable b(tf::zeros({}));
    tf::train::GradientDescentOptimizer optimizer(0.1);
    float first_loss = -1, loss_value = 0;
    for (int epoch = 0; epoch < 10; ++epoch) {
        double sum = 0;
        int batches = 0;
        for (const std::vector<tf::Tensor>& batch : dataset) {  // reshuffled every epoch
            auto loss = optimizer.minimize([&] {
                auto prediction = tf::reshape(tf::matmul(batch[0], w), {-1}) + b.value();
                return tf::reduce_mean(tf::square(prediction - batch[1]));
            });
            sum += loss.item<float>();
            ++batches;
        }
        loss_value = static_cast<float>(sum / batches);
        if (first_loss < 0) first_loss = loss_value;
        fmt::print("epoch {}: {} batches, mean loss {:.5f}\n", epoch, batches, loss_value);
    }
    auto wv = w.value().to_vector<float>();
    fmt::print("w = [{:.3f}, {:.3f}, {:.3f}] (true [2, -3, 0.5]), b = {:.3f} (true 1)\n",
               wv[0],
               wv[1],
               wv[2],
               b.value().item<float>());
    bool ok = loss_value < 0.01f * first_loss && std::abs(wv[0] - kTrueW[0]) < 0.05f &&
              std::abs(wv[1] - kTrueW[1]) < 0.05f && std::abs(wv[2] - kTrueW[2]) < 0.05f;
    if (!ok) fmt::print("training did not converge\n");
    return ok ? 0 : 1;
}
