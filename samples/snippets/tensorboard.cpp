// The code blocks of docs/tensorboard.md, compiled and run as a test (tests/docs checks that the
// page's blocks occur here): a writer with every summary kind, reading it back, the graph export
// and TFRecord files of Examples. Exits 1 unless everything reads back.
// Laid out as in the page, not by clang-format (tests/docs/check_code_blocks.py compares them).
// clang-format off
#include <filesystem>
#include <set>

#include <tapeflow/tapeflow.hpp>
namespace tf = tapeflow;

int main(int argc, char** argv) {
    namespace fs = std::filesystem;
    const fs::path dir = argc > 1 ? fs::path(argv[1]) : fs::temp_directory_path() / "tapeflow_tb_snippet";
    fs::create_directories(dir);
    fs::current_path(dir);
    const int64_t steps = 20;
    tf::Variable w(tf::random::normal({4, 1}), {.name = "dense/kernel"});
    const auto x = tf::random::normal({8, 4});
    const auto images = tf::random::uniform({2, 8, 8, 3});
    const auto clips = 0.5f * tf::sin(tf::reshape(tf::range(0.0, 1600.0), {1, 1600, 1}) / 10.f);
    tf::Graph graph;

    auto writer = tf::summary::create_file_writer("logs/run1");   // creates the directories
    for (int64_t step = 0; step < steps; ++step) {
        tf::GradientTape tape;
        auto loss = tf::reduce_mean(tf::square(tf::matmul(x, w)));
        graph = tape.graph();                               // the ops recorded by this step's tape
        w.assign_sub(0.01f * tape.gradient(loss, w).dense());
        writer.scalar("loss", loss, step);                  // double or a one-element tensor
        writer.histogram("dense/kernel", w.value(), step);  // 30 buckets by default
    }
    const int64_t step = steps;
    writer.image("inputs", images, step, /*max_outputs=*/3);   // [N,H,W,C], C in {1,2,3,4}
    writer.audio("speech", clips, 16000, step);                // [N,T,C] float in [-1,1]
    writer.text("notes", "**Markdown** text", step);
    writer.graph(graph);                                       // the graph tab
    writer.close();                                            // or flush(); both wait for the disk

    std::set<std::string> kinds;
    for (const auto& event : tf::summary::summary_iterator(writer.path())) {
        for (const auto& v : event.values) fmt::print("{} {} {}\n", event.step, v.tag, v.kind);
        for (const auto& v : event.values) kinds.insert(v.kind);
    }

    writer = tf::summary::create_file_writer("logs/run2");  // the first one is closed
    writer.graph(graph);                                     // graph tab
    tf::train::write_graph(graph, "export", "graph.pbtxt");  // GraphDef text format
    tf::train::write_graph(graph, "export", "graph.pb", false);   // binary GraphDef
    graph.to_text();                                          // the same text as a string

    int64_t label = -1;
    {
        tf::io::TFRecordWriter out("train.tfrecord");           // or (path, "GZIP") / "ZLIB"
        out.write(tf::io::Example().add_int64("label", {3}).add_float("x", {0.5f, 1.5f})
                      .add_bytes("id", {"a7"}).serialize());
    }   // closed by the destructor; close() / flush() block until the data is on disk
    tf::io::TFRecordReader in("train.tfrecord");
    while (auto record = in.next()) {
        auto ex = tf::io::Example::parse(*record);
        ex.get_int64("label");   // {3}; NotFoundError if absent, InvalidArgumentError for another kind
        label = ex.get_int64("label")[0];
    }
    auto all = tf::io::read_tfrecords("train.tfrecord");     // every record at once

    fmt::print("kinds {}, label {}, {} record(s)\n", kinds.size(), label, all.size());
    bool ok = kinds.size() == 5 && label == 3 && all.size() == 1 && fs::exists("export/graph.pbtxt") &&
              fs::exists("export/graph.pb");
    return ok ? 0 : 1;
}
