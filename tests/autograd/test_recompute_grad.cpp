// tf::recompute_grad: gradients equal the plain ones bit for bit (inputs and variables), higher
// order through the recompute, dropout replay, the peak-memory reduction (measured with the
// allocator's peak counter) and the errors.
#include <cmath>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;
using Catch::Contains;

namespace {

std::vector<float> floats(const tf::Tensor& t) {
    return t.to_vector<float>();
}

// A pre-norm residual MLP block, the shape of a transformer's feed-forward half.
struct Block {
    tf::Variable gamma, beta, w1, b1, w2;
};

Block make_block(int64_t width, uint64_t seed) {
    return {tf::Variable(tf::ones({width})),
            tf::Variable(tf::zeros({width})),
            tf::Variable(tf::random::normal({width, 2 * width}, 0, 0.1, tf::float32, seed)),
            tf::Variable(tf::fill({2 * width}, 0.01f)),
            tf::Variable(tf::random::normal({2 * width, width}, 0, 0.1, tf::float32, seed + 1))};
}

tf::Tensor run_block(const Block& b, const tf::Tensor& x, double dropout = 0) {
    const tf::Tensor h = tf::nn::layer_norm(x, b.gamma, b.beta);
    tf::Tensor u = tf::nn::relu(tf::matmul(h, b.w1) + b.b1);
    if (dropout > 0) u = tf::nn::dropout(u, dropout);
    return x + tf::matmul(u, b.w2);
}

std::vector<tf::Variable> variables_of(const std::vector<Block>& blocks) {
    std::vector<tf::Variable> v;
    for (const Block& b : blocks)
        v.insert(v.end(), {b.gamma, b.beta, b.w1, b.b1, b.w2});
    return v;
}

// The stack's output, each block checkpointed or not.
tf::Tensor run_stack(const std::vector<Block>& blocks,
                     const tf::Tensor& x,
                     bool checkpoint,
                     double dropout) {
    tf::Tensor y = x;
    for (const Block& b : blocks) {
        if (checkpoint) {
            auto f = tf::recompute_grad([&b, dropout](const std::vector<tf::Tensor>& in) {
                return run_block(b, in[0], dropout);
            });
            y = f({y});
        } else {
            y = run_block(b, y, dropout);
        }
    }
    return y;
}

// d sum(y^2) / dx through the stack, each block checkpointed or not (a non-persistent tape).
tf::Tensor stack_gradient(const std::vector<Block>& blocks,
                          const tf::Tensor& x,
                          bool checkpoint,
                          double dropout = 0) {
    tf::GradientTape tape;
    tape.watch(x);
    const tf::Tensor y = run_stack(blocks, x, checkpoint, dropout);
    return tape.gradient(tf::reduce_sum(tf::square(y)), x).dense();
}

// Same, [dx, dvar...] from one persistent tape.
std::vector<tf::Tensor> all_gradients(const std::vector<Block>& blocks,
                                      const tf::Tensor& x,
                                      bool checkpoint,
                                      double dropout = 0) {
    tf::GradientTape tape(/*persistent=*/true);
    tape.watch(x);
    const tf::Tensor y = run_stack(blocks, x, checkpoint, dropout);
    const tf::Tensor loss = tf::reduce_sum(tf::square(y));
    auto pause = tape.stop_recording();
    std::vector<tf::Tensor> out{tape.gradient(loss, x).dense()};
    for (const tf::Gradient& g : tape.gradient(loss, variables_of(blocks)))
        out.push_back(g.dense());
    return out;
}

}  // namespace

TEST_CASE("recompute_grad: gradients equal the plain ones bit for bit", "[recompute_grad]") {
    std::vector<Block> blocks{make_block(32, 1), make_block(32, 3), make_block(32, 5)};
    const tf::Tensor x = tf::random::normal({16, 32}, 0, 1, tf::float32, 9);
    const std::vector<tf::Tensor> plain = all_gradients(blocks, x, false);
    const std::vector<tf::Tensor> remat = all_gradients(blocks, x, true);
    REQUIRE(plain.size() == 16);
    REQUIRE(remat.size() == plain.size());
    for (std::size_t i = 0; i < plain.size(); ++i) {
        INFO("gradient " << i);
        REQUIRE(remat[i].defined());
        CHECK(floats(remat[i]) == floats(plain[i]));
    }
    // The first-order path with a non-persistent tape gives the same dx.
    CHECK(floats(stack_gradient(blocks, x, true)) == floats(plain[0]));
}

TEST_CASE("recompute_grad: several inputs, one passed twice, an integer one and no tape",
          "[recompute_grad]") {
    auto f = tf::recompute_grad([](const std::vector<tf::Tensor>& in) {
        return tf::gather(in[0] * tf::sin(in[1]), in[2]);
    });
    const tf::Tensor x = tf::constant({0.5f, -1.0f, 2.0f});
    const tf::Tensor idx = tf::constant({2, 0, 2});
    {
        tf::GradientTape tape;
        tape.watch(x);
        const tf::Tensor y = tf::reduce_sum(f({x, x, idx}));
        const tf::Tensor g = tape.gradient(y, x);
        tf::GradientTape plain_tape;
        plain_tape.watch(x);
        const tf::Tensor plain_y = tf::reduce_sum(tf::gather(x * tf::sin(x), idx));
        CHECK(floats(g) == floats(plain_tape.gradient(plain_y, x).dense()));
        CHECK(floats(y) == floats(plain_y));
    }
    // No tape: fn just runs.
    CHECK(floats(f({x, x, idx})) == floats(tf::gather(x * tf::sin(x), idx)));
}

TEST_CASE("recompute_grad: a persistent tape computes the gradient twice", "[recompute_grad]") {
    Block b = make_block(8, 11);
    const tf::Tensor x = tf::random::normal({4, 8}, 0, 1, tf::float32, 12);
    auto f =
        tf::recompute_grad([&b](const std::vector<tf::Tensor>& in) { return run_block(b, in[0]); });
    tf::GradientTape tape(true);
    const tf::Tensor loss = tf::reduce_sum(tf::square(f({x})));
    auto pause = tape.stop_recording();
    const tf::Tensor first = tape.gradient(loss, b.w1);
    const tf::Tensor second = tape.gradient(loss, b.w1);
    CHECK(floats(first) == floats(second));
    CHECK(tape.watched_variables().size() == 5);
}

TEST_CASE("recompute_grad: nested tapes give second derivatives", "[recompute_grad]") {
    tf::Variable w(tf::constant({1.5, -0.5}));
    auto f = tf::recompute_grad(
        [&w](const std::vector<tf::Tensor>& in) { return in[0] * in[0] * in[0] * w; });
    const tf::Tensor x = tf::constant({2.0, 3.0});
    tf::GradientTape outer;
    outer.watch(x);
    tf::Tensor dx;
    tf::Tensor dw;
    {
        tf::GradientTape inner;
        inner.watch(x);
        const tf::Tensor y = tf::reduce_sum(f({x}));
        dx = inner.gradient(y, x);  // 3 x^2 w
    }
    CHECK(dx.to_vector<double>() == std::vector<double>{18.0, -13.5});
    const std::vector<tf::Gradient> second = outer.gradient(dx, std::vector<tf::Tensor>{x});
    CHECK(second[0].dense().to_vector<double>() == std::vector<double>{18.0, -9.0});  // 6 x w
    // d/dw of 3 x^2 w through the recompute: 3 x^2.
    tf::GradientTape outer_w;
    {
        tf::GradientTape inner;
        inner.watch(x);
        dx = inner.gradient(tf::reduce_sum(f({x})), x);
    }
    CHECK(outer_w.gradient(tf::reduce_sum(dx), w).dense().to_vector<double>() ==
          std::vector<double>{12.0, 27.0});
    // Forward over reverse: a Hessian-vector product through the recompute.
    const tf::Tensor v = tf::constant({1.0, 0.0});
    tf::Tensor hvp;
    {
        tf::autodiff::ForwardAccumulator acc({x}, {v});
        tf::GradientTape tape;
        tape.watch(x);
        const tf::Tensor g = tape.gradient(tf::reduce_sum(f({x})), x);
        hvp = acc.jvp(g);
    }
    CHECK(hvp.to_vector<double>() == std::vector<double>{18.0, 0.0});
    // A forward accumulator alone: the op's JVP comes from its (recomputing) gradient.
    {
        tf::autodiff::ForwardAccumulator acc({x}, {v});
        CHECK(acc.jvp(f({x})).to_vector<double>() == std::vector<double>{18.0, 0.0});  // 3 x^2 w v
    }
    // tf::hessians walks through the recompute (one walk per row for the custom op).
    tf::GradientTape tape;
    tape.watch(x);
    const tf::Tensor h = tf::hessians(tf::reduce_sum(f({x})), x);
    CHECK(h.to_vector<double>() == std::vector<double>{18.0, 0.0, 0.0, -9.0});  // diag(6 x w)
}

TEST_CASE("recompute_grad: dropout in the recompute draws the first run's numbers",
          "[recompute_grad][random]") {
    tf::random::set_seed(42);
    std::vector<Block> blocks{make_block(16, 21), make_block(16, 23)};
    const tf::Tensor x = tf::random::normal({8, 16}, 0, 1, tf::float32, 25);
    tf::random::set_seed(5);
    const std::vector<tf::Tensor> plain = all_gradients(blocks, x, false, 0.3);
    const tf::Tensor after_plain = tf::random::uniform({4});
    tf::random::set_seed(5);
    const std::vector<tf::Tensor> remat = all_gradients(blocks, x, true, 0.3);
    const tf::Tensor after_remat = tf::random::uniform({4});
    for (std::size_t i = 0; i < plain.size(); ++i) {
        INFO("gradient " << i);
        CHECK(floats(remat[i]) == floats(plain[i]));
    }
    // The recompute replayed the streams: the live ones are where the plain step left them.
    CHECK(floats(after_remat) == floats(after_plain));

    // Without any seed (numbers from the OS): the gradient of dropout(x) at x = 1 is the mask it
    // applied, so the recompute must have drawn the forward pass's mask.
    const tf::Tensor ones = tf::ones({1000});
    auto drop = tf::recompute_grad(
        [](const std::vector<tf::Tensor>& in) { return tf::nn::dropout(in[0], 0.5); });
    tf::GradientTape tape;
    tape.watch(ones);
    const tf::Tensor y = drop({ones});
    const tf::Tensor g = tape.gradient(y, ones);
    CHECK(floats(g) == floats(y));
}

TEST_CASE("recompute_grad: the step's peak memory, by the allocator's peak counter",
          "[recompute_grad][memory]") {
    std::vector<Block> blocks;
    for (uint64_t l = 0; l < 8; ++l)
        blocks.push_back(make_block(128, 100 + 2 * l));
    const tf::Tensor x = tf::random::normal({512, 128}, 0, 1, tf::float32, 99);
    const std::vector<tf::Variable> vars = variables_of(blocks);
    // A training step's gradients: the variables', from a non-persistent tape.
    const auto peak_of = [&](bool checkpoint) {
        const int64_t before = tf::memory_stats().bytes_in_use;
        tf::reset_peak_memory_stats();
        {
            tf::GradientTape tape;
            tf::Tensor y = x;
            for (const Block& b : blocks) {
                auto f = tf::recompute_grad(
                    [&b](const std::vector<tf::Tensor>& in) { return run_block(b, in[0]); });
                y = checkpoint ? f({y}) : run_block(b, y);
            }
            const std::vector<tf::Gradient> g = tape.gradient(tf::reduce_sum(tf::square(y)), vars);
            REQUIRE(g.size() == vars.size());
        }
        return tf::memory_stats().peak_bytes_in_use - before;
    };
    const int64_t plain = peak_of(false);
    const int64_t remat = peak_of(true);
    const double ratio = static_cast<double>(remat) / static_cast<double>(plain);
    WARN("8 blocks [512, 128]: peak " << plain / 1024 << " KiB plain, " << remat / 1024
                                      << " KiB checkpointed (ratio " << ratio << ")");
    CHECK(ratio <= 0.5);
}

TEST_CASE("recompute_grad: bad input", "[recompute_grad][errors]") {
    CHECK_THROWS_AS(tf::recompute_grad(nullptr), tf::errors::InvalidArgumentError);
    CHECK_THROWS_WITH(tf::recompute_grad(nullptr), Contains("recompute_grad: fn must be callable"));
    auto undefined =
        tf::recompute_grad([](const std::vector<tf::Tensor>&) { return tf::Tensor(); });
    const tf::Tensor x = tf::constant({1.0f, 2.0f});
    CHECK_THROWS_WITH(undefined({x}), Contains("fn returned an undefined tensor"));
    {
        tf::GradientTape tape;
        tape.watch(x);
        CHECK_THROWS_AS(undefined({x}), tf::errors::InvalidArgumentError);
    }
    auto identity = tf::recompute_grad([](const std::vector<tf::Tensor>& in) { return in[0]; });
    CHECK_THROWS_WITH(identity({x, tf::Tensor()}),
                      Contains("recompute_grad: input 1 is undefined"));
    // fn's exception propagates, and the tapes record again afterwards.
    auto throws = tf::recompute_grad([](const std::vector<tf::Tensor>& in) -> tf::Tensor {
        return tf::matmul(in[0], in[0]);  // rank 1: the op refuses
    });
    {
        tf::GradientTape tape;
        tape.watch(x);
        CHECK_THROWS(throws({x}));
        const tf::Tensor y = tf::reduce_sum(x * x);
        CHECK(floats(tape.gradient(y, x)) == std::vector<float>{2, 4});
    }
}

TEST_CASE("recompute_grad: a recompute that differs from the first run is an error",
          "[recompute_grad][errors]") {
    tf::Variable w(tf::constant({1.0f, 2.0f}), {.name = "rg_w"});
    tf::Variable late(tf::constant({3.0f, 4.0f}), {.name = "rg_late"});
    const tf::Tensor x = tf::constant({1.0f, -1.0f});
    bool second_run = false;
    auto reads_more = tf::recompute_grad([&](const std::vector<tf::Tensor>& in) {
        return second_run ? in[0] * w * late : in[0] * w;
    });
    {
        tf::GradientTape tape;
        const tf::Tensor y = tf::reduce_sum(reads_more({x}));
        second_run = true;
        CHECK_THROWS_WITH(tape.gradient(y, w), Contains("variable 'rg_late'"));
    }
    auto scaled = tf::recompute_grad([&](const std::vector<tf::Tensor>& in) { return in[0] * w; });
    {
        tf::GradientTape tape;
        const tf::Tensor y = tf::reduce_sum(scaled({x}));
        w.assign(tf::constant({5.0f, 6.0f}));
        CHECK_THROWS_WITH(tape.gradient(y, w), Contains("variable 'rg_w' was assigned"));
    }
    int calls = 0;
    auto random_once = tf::recompute_grad([&](const std::vector<tf::Tensor>& in) {
        return ++calls == 1 ? tf::nn::dropout(in[0], 0.5) : in[0] * 2.0f;
    });
    {
        tf::GradientTape tape;
        tape.watch(x);
        const tf::Tensor y = random_once({x});
        CHECK_THROWS_WITH(tape.gradient(y, x), Contains("random streams"));
    }
    int shape_calls = 0;
    auto reshaped = tf::recompute_grad([&](const std::vector<tf::Tensor>& in) {
        return ++shape_calls == 1 ? in[0] : tf::reshape(in[0], {1, 2});
    });
    {
        tf::GradientTape tape;
        tape.watch(x);
        const tf::Tensor y = reshaped({x});
        CHECK_THROWS_WITH(tape.gradient(y, x), Contains("the recompute returned"));
    }
}

TEST_CASE("recompute_grad: nested checkpoints, dropout inside both, and jacobians",
          "[recompute_grad][random]") {
    tf::Variable w1(tf::random::normal({6, 6}, 0, 0.5, tf::float32, 31));
    tf::Variable w2(tf::random::normal({6, 6}, 0, 0.5, tf::float32, 32));
    const auto inner_fn = [w1](const tf::Tensor& x) {
        return tf::nn::dropout(tf::tanh(tf::matmul(x, w1)), 0.25);
    };
    const auto outer_fn = [w2](const tf::Tensor& h) {
        return tf::nn::dropout(tf::matmul(h, w2), 0.5) + h;
    };
    const tf::Tensor x = tf::random::normal({3, 6}, 0, 1, tf::float32, 33);
    const auto grads = [&](bool checkpoint) {
        tf::random::set_seed(77);
        auto inner = tf::recompute_grad(
            [inner_fn](const std::vector<tf::Tensor>& in) { return inner_fn(in[0]); });
        auto outer = tf::recompute_grad([inner, outer_fn](const std::vector<tf::Tensor>& in) {
            return outer_fn(inner({in[0]}));
        });
        tf::GradientTape tape(true);
        tape.watch(x);
        const tf::Tensor y = checkpoint ? outer({x}) : outer_fn(inner_fn(x));
        const tf::Tensor loss = tf::reduce_sum(tf::square(y));
        auto pause = tape.stop_recording();
        std::vector<tf::Tensor> out{tape.gradient(loss, x).dense()};
        for (const tf::Gradient& g : tape.gradient(loss, std::vector<tf::Variable>{w1, w2}))
            out.push_back(g.dense());
        out.push_back(tape.jacobian(y, x));       // per-row walks through the checkpoint
        out.push_back(tf::random::uniform({3}));  // where the live streams stand
        return out;
    };
    const std::vector<tf::Tensor> plain = grads(false);
    const std::vector<tf::Tensor> remat = grads(true);
    REQUIRE(plain.size() == remat.size());
    for (std::size_t i = 0; i < plain.size(); ++i) {
        INFO("result " << i);
        REQUIRE(remat[i].defined());
        if (i == 3) {  // one walk per row there, one batched walk plain: rounding differs
            const double diff = tf::reduce_max(tf::abs(remat[i] - plain[i])).item<float>();
            CHECK(diff < 1e-5);
        } else {
            CHECK(floats(remat[i]) == floats(plain[i]));
        }
    }
}
