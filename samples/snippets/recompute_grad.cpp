// The code block of docs/autograd.md's "Gradient checkpointing (recompute_grad)", compiled and run
// as a test (tests/docs checks that the page's block occurs here): a stack of transformer blocks,
// each checkpointed, gives the plain gradients bit for bit with less peak memory. Exits 1 if not.
// Laid out as in the page, not by clang-format (tests/docs/check_code_blocks.py compares them).
// clang-format off
#include <cstdio>
#include <string>
#include <vector>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;

namespace {

constexpr int64_t kBatch = 8, kTime = 64, kWidth = 64, kHeads = 4;

tf::Variable weight(int64_t rows, int64_t cols) {
    return tf::Variable(tf::random::truncated_normal({rows, cols}, 0, 0.05));
}

struct Block {
    tf::Variable ln1_g{tf::ones({kWidth})}, ln1_b{tf::zeros({kWidth})};
    tf::Variable w_qkv = weight(kWidth, 3 * kWidth), w_out = weight(kWidth, kWidth);
    tf::Variable ln2_g{tf::ones({kWidth})}, ln2_b{tf::zeros({kWidth})};
    tf::Variable w_up = weight(kWidth, 4 * kWidth), w_down = weight(4 * kWidth, kWidth);
};

// x [batch * time, width]: causal self-attention and a relu MLP (with dropout), each residual.
tf::Tensor block(const Block& p, const tf::Tensor& x) {
    const auto heads = [](const tf::Tensor& z) {
        return tf::reshape(z, {kBatch, kTime, kHeads, kWidth / kHeads});
    };
    tf::nn::DotProductAttentionOptions causal;
    causal.is_causal = true;
    const auto qkv = tf::split(tf::matmul(tf::nn::layer_norm(x, p.ln1_g, p.ln1_b), p.w_qkv), 3, 1);
    const tf::Tensor a = tf::nn::dot_product_attention(heads(qkv[0]), heads(qkv[1]), heads(qkv[2]), causal);
    const tf::Tensor h = x + tf::matmul(tf::reshape(a, {kBatch * kTime, kWidth}), p.w_out);
    const tf::Tensor up = tf::nn::relu(tf::matmul(tf::nn::layer_norm(h, p.ln2_g, p.ln2_b), p.w_up));
    return h + tf::matmul(tf::nn::dropout(up, 0.1), p.w_down);
}

tf::Tensor forward(const std::vector<Block>& blocks, tf::Tensor x, bool checkpoint) {
    for (const Block& p : blocks) {
        if (checkpoint) {
            // Keeps x and the block's output; the block's activations are recomputed in the
            // backward pass (the dropout mask too: the recompute draws the same numbers).
            auto checkpointed = tf::recompute_grad(
                [&p](const std::vector<tf::Tensor>& in) { return block(p, in[0]); });
            x = checkpointed({x});                 // the block's 8 variables get gradients too
        } else {
            x = block(p, x);
        }
    }
    return x;
}

// The gradients of one step, and the step's peak tensor memory in bytes.
std::vector<tf::Tensor> step(const std::vector<Block>& blocks, const tf::Tensor& x,
                             const std::vector<tf::Variable>& vars, bool checkpoint,
                             int64_t& peak) {
    tf::random::set_seed(1);  // the same dropout masks in both runs
    const int64_t before = tf::memory_stats().bytes_in_use;
    tf::reset_peak_memory_stats();
    std::vector<tf::Tensor> grads;
    {
        tf::GradientTape tape;
        const tf::Tensor loss = tf::reduce_mean(tf::square(forward(blocks, x, checkpoint)));
        for (const tf::Gradient& g : tape.gradient(loss, vars))
            grads.push_back(g.dense());
    }
    peak = tf::memory_stats().peak_bytes_in_use - before;
    return grads;
}

}  // namespace

int main() {
    tf::random::set_seed(0);
    const std::vector<Block> blocks(6);
    const tf::Tensor x = tf::random::normal({kBatch * kTime, kWidth});
    std::vector<tf::Variable> vars;
    for (const Block& p : blocks)
        vars.insert(vars.end(), {p.ln1_g, p.ln1_b, p.w_qkv, p.w_out, p.ln2_g, p.ln2_b, p.w_up, p.w_down});
    int64_t plain_peak = 0, remat_peak = 0;
    const auto plain = step(blocks, x, vars, false, plain_peak);
    const auto remat = step(blocks, x, vars, true, remat_peak);
    bool same = plain.size() == remat.size();
    for (std::size_t i = 0; same && i < plain.size(); ++i)
        same = plain[i].to_vector<float>() == remat[i].to_vector<float>();
    std::printf("6 blocks: gradients %s; peak %.2f MiB plain, %.2f MiB checkpointed\n",
                same ? "equal bit for bit" : "DIFFER", plain_peak / 1048576.0,
                remat_peak / 1048576.0);
    return same && remat_peak < plain_peak ? 0 : 1;
}
