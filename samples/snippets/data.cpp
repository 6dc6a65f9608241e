// The code blocks of docs/data.md, compiled and run as a test (tests/docs checks that the page's
// blocks occur here): two TFRecord files of Examples read, shuffled, batched, parsed and
// prefetched for 10 epochs. Exits 1 unless every epoch sees every record once.
// Laid out as in the page, not by clang-format (tests/docs/check_code_blocks.py compares them).
// clang-format off
#include <filesystem>

#include <tapeflow/tapeflow.hpp>
namespace tf = tapeflow;

namespace {

int64_t seen = 0;
void train_step(const tf::Tensor& x, const tf::Tensor& label) {
    seen += label.shape()[0];
    (void)x;
}

}  // namespace

int main(int argc, char** argv) {
    namespace fs = std::filesystem;
    const fs::path dir = argc > 1 ? fs::path(argv[1]) : fs::temp_directory_path() / "tapeflow_data_snippet";
    fs::create_directories(dir);
    fs::current_path(dir);
    for (int part = 0; part < 2; ++part) {
        tf::io::TFRecordWriter out(fmt::format("part-{}.tfrecord", part));
        for (int i = 0; i < 300; ++i)
            out.write(tf::io::Example().add_float("x", {1.f, 2.f, 3.f, float(i)}).add_int64("label", {i % 10}).serialize());
    }

    const std::vector<tf::io::FixedLenFeature> spec{{"x", {4}}, {"label", {}, tf::int64}};
    auto ds = tf::data::TFRecordDataset({"part-0.tfrecord", "part-1.tfrecord"}, "", 2)
              .shuffle(10000, 42)                 // seeded; a new order every epoch
              .batch(256)                         // 256 serialized records per element
              .map([&](const std::vector<std::string>& records) {
                  return tf::io::parse_example(records, spec);   // {x [256,4], label [256]}
              }, 2)                               // two parser threads, order kept
              .prefetch(2);                       // the next batch is ready while this one trains
    for (int epoch = 0; epoch < 10; ++epoch)
        for (const std::vector<tf::Tensor>& batch : ds) train_step(batch[0], batch[1]);

    fmt::print("{} records in 10 epochs\n", seen);
    return seen == 6000 ? 0 : 1;
}
