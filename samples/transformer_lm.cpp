// A small decoder-only transformer (GPT-style) learns a character language model of a plain-text
// corpus: 2 layers, 4 heads, width 128, a context of 64 characters, written with the ops directly
// (Variables, embeddings by gather, tf::nn::layer_norm, tf::nn::dot_product_attention with the
// causal mask, Adam). It prints the loss curve (also written as TensorBoard scalars), the unigram
// baseline (the entropy of the corpus' character frequencies: the best loss of a model that
// ignores the context) and a generated sample, and exits 1 unless the held-out loss ends well
// below that baseline. The corpus is samples/data/debian_bug_docs.txt (provenance in its README).
//   build/samples/transformer_lm [--short] [--steps N] [--data FILE] [--logdir DIR]
// --short (or TAPEFLOW_SAMPLE_SHORT=1) trains for a few seconds, as the samples suite runs it.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <tapeflow/tapeflow.hpp>

#include "transformer_model.hpp"

namespace tf = tapeflow;
using namespace transformer_model;  // NOLINT: the model's constants and functions

namespace {

struct Corpus {
    std::vector<int32_t> ids;          // the text as vocabulary ids
    std::vector<unsigned char> chars;  // id -> byte
    int64_t vocab() const { return static_cast<int64_t>(chars.size()); }
};

Corpus load_corpus(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw tf::errors::NotFoundError("cannot open " + path);
    std::stringstream buffer;
    buffer << in.rdbuf();
    const std::string text = buffer.str();
    Corpus c;
    std::map<unsigned char, int32_t> index;
    for (const unsigned char ch : text)
        index.emplace(ch, 0);
    for (auto& [ch, id] : index) {
        id = static_cast<int32_t>(c.chars.size());
        c.chars.push_back(ch);
    }
    for (const unsigned char ch : text)
        c.ids.push_back(index[ch]);
    return c;
}

// The cross-entropy (nats per character) of the unigram model fitted to `train`, on `eval`.
double unigram_loss(const std::vector<int32_t>& train,
                    const std::vector<int32_t>& eval,
                    int64_t vocab) {
    std::vector<double> counts(static_cast<std::size_t>(vocab), 1.0);  // add-one smoothing
    for (const int32_t id : train)
        counts[id] += 1;
    double total = 0;
    for (const double n : counts)
        total += n;
    double loss = 0;
    for (const int32_t id : eval)
        loss -= std::log(counts[id] / total);
    return loss / static_cast<double>(eval.size());
}

// `batch` random windows of kContext + 1 characters of `ids`: inputs [B, T] and targets [B * T].
std::pair<tf::Tensor, tf::Tensor> windows(const std::vector<int32_t>& ids,
                                          int64_t batch,
                                          std::mt19937_64& rng) {
    std::uniform_int_distribution<std::size_t> start(0, ids.size() - kContext - 1);
    std::vector<int32_t> x, y;
    for (int64_t i = 0; i < batch; ++i) {
        const std::size_t s = start(rng);
        x.insert(x.end(), ids.begin() + s, ids.begin() + s + kContext);
        y.insert(y.end(), ids.begin() + s + 1, ids.begin() + s + kContext + 1);
    }
    return {tf::constant(x, {batch, kContext}), tf::constant(y, {batch * kContext})};
}

// Samples `n` characters after `prompt` (temperature 0.8), feeding back the last kContext.
std::string generate(
    const Model& m, const Corpus& c, const std::string& prompt, int n, std::mt19937_64& rng) {
    std::vector<int32_t> ids;
    for (const unsigned char ch : prompt) {
        const auto it = std::find(c.chars.begin(), c.chars.end(), ch);
        if (it != c.chars.end()) ids.push_back(static_cast<int32_t>(it - c.chars.begin()));
    }
    std::string out = prompt;
    for (int i = 0; i < n; ++i) {
        const int64_t len = std::min<int64_t>(kContext, static_cast<int64_t>(ids.size()));
        const std::vector<int32_t> window(ids.end() - len, ids.end());
        const tf::Tensor logits = forward(m, tf::constant(window, {1, len}));
        const tf::Tensor last = tf::slice(logits, {len - 1, 0}, {1, c.vocab()});
        const std::vector<float> p = tf::nn::softmax(last * 1.25f).to_vector<float>();
        std::discrete_distribution<int32_t> pick(p.begin(), p.end());
        ids.push_back(pick(rng));
        out.push_back(static_cast<char>(c.chars[ids.back()]));
    }
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    bool short_run = std::getenv("TAPEFLOW_SAMPLE_SHORT") != nullptr;
    int64_t steps = -1;
    std::string data = TAPEFLOW_SAMPLES_DATA_DIR "/debian_bug_docs.txt";
    std::string logdir = "logs/transformer_lm";
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--short") short_run = true;
        if (arg == "--steps" && i + 1 < argc) steps = std::atoll(argv[++i]);
        if (arg == "--data" && i + 1 < argc) data = argv[++i];
        if (arg == "--logdir" && i + 1 < argc) logdir = argv[++i];
    }
    if (steps < 0) steps = short_run ? 40 : 1000;
    const int64_t batch = short_run ? 16 : 32;

    tf::random::set_seed(20);
    const Corpus corpus = load_corpus(data);
    const std::size_t split = corpus.ids.size() * 9 / 10;
    const std::vector<int32_t> train(corpus.ids.begin(), corpus.ids.begin() + split);
    const std::vector<int32_t> held_out(corpus.ids.begin() + split, corpus.ids.end());
    const double baseline = unigram_loss(train, held_out, corpus.vocab());
    fmt::print("corpus: {} characters, vocabulary {}; unigram baseline {:.3f} nats/char\n",
               corpus.ids.size(),
               corpus.vocab(),
               baseline);

    Model model = make_model(corpus.vocab());
    tf::train::AdamOptimizer optimizer(3e-3);
    auto writer = tf::summary::create_file_writer(logdir);
    std::mt19937_64 rng(7);
    std::mt19937_64 eval_rng(8);
    const auto [eval_x, eval_y] = windows(held_out, 32, eval_rng);
    const auto start = std::chrono::steady_clock::now();
    double eval_loss = 0;
    const int64_t every = std::max<int64_t>(1, steps / 10);
    // The training step, traced once and replayed (tf::function: docs/function.md).
    auto train_step = tf::function([&](const tf::Tensor& x, const tf::Tensor& y) {
        return optimizer.minimize([&] { return loss_of(model, x, y); });
    });
    for (int64_t step = 1; step <= steps; ++step) {
        const auto [x, y] = windows(train, batch, rng);
        const double loss = train_step(x, y).item<float>();
        writer.scalar("loss", loss, step);
        if (step % every == 0 || step == steps) {
            eval_loss = loss_of(model, eval_x, eval_y).item<float>();
            writer.scalar("held_out_loss", eval_loss, step);
            const double seconds =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            fmt::print("step {:5}: loss {:.3f}, held-out {:.3f} ({:.0f} tokens/s)\n",
                       step,
                       loss,
                       eval_loss,
                       static_cast<double>(step * batch * kContext) / seconds);
        }
    }
    writer.close();
    fmt::print("sample:\n{}\n",
               generate(model, corpus, "To report a bug", short_run ? 80 : 300, rng));
    // Short runs only begin to learn (bigram statistics); full runs go well below the baseline.
    const double bound = short_run ? 0.95 : 0.7;
    fmt::print("held-out loss {:.3f} = {:.2f} x the unigram baseline (must be below {:.2f} x)\n",
               eval_loss,
               eval_loss / baseline,
               bound);
    return eval_loss < bound * baseline ? 0 : 1;
}
