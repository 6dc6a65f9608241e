// TensorBoard from C++: a small regression trained with GradientTape writes scalars, histograms,
// an image, audio, text and the graph to a logdir, then reads the event file back.
//   build/samples/tensorboard_demo logs/demo && tensorboard --logdir logs
#include <set>

#include <fmt/format.h>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;

int main(int argc, char** argv) {
    const std::string logdir = argc > 1 ? argv[1] : "logs/tensorboard_demo";
    auto writer = tf::summary::create_file_writer(logdir + "/train");
    auto scope = writer.as_default();  // the free functions below write here

    // y = 3x - 1 plus noise, fitted by gradient descent on w and b.
    tf::random::set_seed(7);
    auto x = tf::random::uniform({64, 1}, -1, 1);
    auto y = 3.0f * x - 1.0f + tf::random::normal({64, 1}, 0, 0.1);
    tf::Variable w(tf::zeros({1, 1}), {.name = "dense/kernel"});
    tf::Variable b(tf::zeros({1}), {.name = "dense/bias"});
    tf::Graph graph;
    for (int64_t step = 0; step < 100; ++step) {
        tf::GradientTape tape;
        tf::Tensor loss;
        {
            auto ns = tf::name_scope("model");
            loss = tf::reduce_mean(tf::square(tf::matmul(x, w) + b - y));
        }
        if (step == 0) graph = tape.graph();  // before gradient(), which releases the tape
        auto grads = tape.gradient(loss, std::vector<tf::Variable>{w, b});
        w.assign_sub(0.1f * grads[0].dense());
        b.assign_sub(0.1f * grads[1].dense());

        tf::summary::scalar("loss", loss, step);  // tags group by the text before '/'
        {
            auto ns = tf::name_scope("dense");
            tf::summary::scalar("kernel", tf::reshape(w.value(), tf::Shape{}), step);
            auto every_10 = tf::summary::record_if(step % 10 == 0);  // histograms every 10 steps
            tf::summary::histogram(
                "kernel_grad", grads[0].dense() + tf::random::normal({256}, 0, 0.05), step);
        }
    }

    // An image: a 32x48 RGB gradient (float in [0, 1]).
    std::vector<float> pixels;
    for (int r = 0; r < 32; ++r) {
        for (int c = 0; c < 48; ++c)
            pixels.insert(pixels.end(), {r / 31.f, c / 47.f, 0.5f});
    }
    tf::summary::image("samples/gradient", tf::constant(pixels, {1, 32, 48, 3}), 0);
    // Audio: one second of a 440 Hz tone at 8 kHz, mono.
    auto t = tf::range(0.0, 8000.0) / 8000.0f;
    tf::summary::audio("samples/tone",
                       tf::reshape(0.5f * tf::sin(2 * 3.14159265f * 440 * t), {1, 8000, 1}),
                       8000,
                       0);
    tf::summary::text("notes",
                      fmt::format("**final** w = {:.3f}, b = {:.3f}",
                                  w.value().to_vector<float>()[0],
                                  b.value().item<float>()),
                      99);
    writer.graph(graph);
    tf::train::write_graph(graph, logdir, "graph.pbtxt");
    writer.close();

    // Read everything back.
    std::set<std::string> kinds;
    std::size_t n = 0;
    for (const auto& event : tf::summary::summary_iterator(writer.path())) {
        ++n;
        if (!event.graph_def.empty()) kinds.insert("graph");
        for (const auto& v : event.values)
            kinds.insert(v.kind);
    }
    fmt::print("wrote {} events to {}\nkinds: {}\n", n, writer.path(), fmt::join(kinds, ", "));
    fmt::print("open it with: tensorboard --logdir {}\n", logdir);
    return kinds.size() == 6 && graph.num_nodes() > 0 ? 0 : 1;
}
