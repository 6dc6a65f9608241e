// Keras' recurrent layers: values against a float64 step loop written here from Keras 3's cell
// formulas, the fused op against the op loop, gradients (first and second order) against finite
// differences, shapes for every option, masks, go_backwards, stateful, Bidirectional's merge
// modes, TimeDistributed and bad inputs.
#include <cmath>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

#include "keras/keras_support.hpp"
#include "ops/rnn.hpp"

namespace tf = tapeflow;
namespace kl = tf::keras::layers;
using tf::testing::check_close;
using tf::testing::check_gradients;
using tf::testing::check_variable_gradients;
using tf::testing::random_f64;

namespace {

enum class Kind { simple, lstm, gru, gru_before };

double sigm(double v) {
    return 1 / (1 + std::exp(-v));
}

struct RefOut {
    std::vector<double> seq;  // [B, T, U]: Keras' outputs, in processing order
    std::vector<double> h, c;
};

// Keras 3's formulas, one step at a time on host vectors (activation tanh, recurrent sigmoid).
// mask: [B, T] of 0/1 (empty: none). h0/c0: [B, U] (empty: zeros).
RefOut reference(Kind kind,
                 const std::vector<double>& x,
                 int64_t B,
                 int64_t T,
                 int64_t F,
                 int64_t U,
                 const std::vector<double>& W,
                 const std::vector<double>& R,
                 const std::vector<double>& bias,
                 std::vector<double> mask,
                 bool go_backwards,
                 std::vector<double> h,
                 std::vector<double> c,
                 bool zero_output = false) {
    const int64_t G = kind == Kind::simple ? 1 : kind == Kind::lstm ? 4 : 3;
    const auto n = [](int64_t v) {
        return static_cast<std::size_t>(v);
    };
    if (h.empty()) h.assign(n(B * U), 0);
    if (c.empty()) c.assign(n(B * U), 0);
    RefOut out;
    out.seq.assign(n(B * T * U), 0);
    std::vector<double> prev_out(n(B * U), 0);
    for (int64_t s = 0; s < T; ++s) {
        const int64_t t = go_backwards ? T - 1 - s : s;
        for (int64_t b = 0; b < B; ++b) {
            const double* xt = &x[n((b * T + t) * F)];
            const double* hp = &h[n(b * U)];
            std::vector<double> xw(n(G * U), 0), hr(n(G * U), 0);
            for (int64_t j = 0; j < G * U; ++j) {
                for (int64_t f = 0; f < F; ++f)
                    xw[n(j)] += xt[f] * W[n(f * G * U + j)];
                for (int64_t k = 0; k < U; ++k)
                    hr[n(j)] += hp[k] * R[n(k * G * U + j)];
                if (!bias.empty()) xw[n(j)] += bias[n(j)];
                if (kind == Kind::gru && !bias.empty()) hr[n(j)] += bias[n(G * U + j)];
            }
            std::vector<double> hn(n(U)), cn(n(U));
            for (int64_t j = 0; j < U; ++j) {
                if (kind == Kind::simple) {
                    hn[n(j)] = std::tanh(xw[n(j)] + hr[n(j)]);
                } else if (kind == Kind::lstm) {
                    const double i = sigm(xw[n(j)] + hr[n(j)]);
                    const double f = sigm(xw[n(U + j)] + hr[n(U + j)]);
                    const double g = std::tanh(xw[n(2 * U + j)] + hr[n(2 * U + j)]);
                    const double o = sigm(xw[n(3 * U + j)] + hr[n(3 * U + j)]);
                    cn[n(j)] = f * c[n(b * U + j)] + i * g;
                    hn[n(j)] = o * std::tanh(cn[n(j)]);
                } else {
                    const double z = sigm(xw[n(j)] + hr[n(j)]);
                    const double r = sigm(xw[n(U + j)] + hr[n(U + j)]);
                    double hh = 0;
                    if (kind == Kind::gru) {
                        hh = std::tanh(xw[n(2 * U + j)] + r * hr[n(2 * U + j)]);
                    } else {
                        double acc = 0;  // (r * h_prev) @ R_h
                        for (int64_t k = 0; k < U; ++k) {
                            const double rk = sigm(xw[n(U + k)] + hr[n(U + k)]);
                            acc += rk * hp[k] * R[n(k * G * U + 2 * U + j)];
                        }
                        hh = std::tanh(xw[n(2 * U + j)] + acc);
                    }
                    hn[n(j)] = z * hp[j] + (1 - z) * hh;
                }
            }
            const bool keep = mask.empty() || mask[n(b * T + t)] != 0;
            for (int64_t j = 0; j < U; ++j) {
                if (keep) {
                    h[n(b * U + j)] = hn[n(j)];
                    if (kind == Kind::lstm) c[n(b * U + j)] = cn[n(j)];
                    prev_out[n(b * U + j)] = hn[n(j)];
                }
                const double o = keep ? hn[n(j)] : (zero_output ? 0.0 : prev_out[n(b * U + j)]);
                out.seq[n((b * T + s) * U + j)] = o;
            }
        }
    }
    out.h = h;
    out.c = c;
    return out;
}

std::vector<double> values(const tf::Tensor& t) {
    return t.to_vector<double>();
}

std::shared_ptr<kl::Recurrent> make(Kind kind, int64_t units, kl::RNNOptions o = {}) {
    switch (kind) {
        case Kind::simple:
            return std::make_shared<kl::SimpleRNN>(units, o);
        case Kind::lstm:
            return std::make_shared<kl::LSTM>(units, o);
        case Kind::gru:
            o.reset_after = true;
            return std::make_shared<kl::GRU>(units, o);
        case Kind::gru_before:
            o.reset_after = false;
            return std::make_shared<kl::GRU>(units, o);
    }
    return nullptr;
}

const char* name_of(Kind k) {
    return k == Kind::simple ? "SimpleRNN"
           : k == Kind::lstm ? "LSTM"
           : k == Kind::gru  ? "GRU"
                             : "GRU(reset_after=false)";
}

// Random non-zero biases (Keras starts them at zeros / the forget ones) so the bias paths count.
void randomize_bias(kl::Recurrent& layer, uint64_t seed) {
    if (!layer.bias().defined()) return;
    tf::Variable b = layer.bias();
    b.assign(random_f64(b.shape(), -0.5, 0.5, seed));
}

const std::vector<Kind> kAllKinds{Kind::simple, Kind::lstm, Kind::gru, Kind::gru_before};

}  // namespace

TEST_CASE("Recurrent layers match Keras' formulas step by step", "[keras][recurrent]") {
    const int64_t B = 3, T = 5, F = 4, U = 3;
    const tf::Tensor x = random_f64({B, T, F}, -1, 1, 11);
    const std::vector<double> xv = values(x);
    const std::vector<double> mask{1,
                                   1,
                                   0,
                                   1,
                                   0,  //
                                   0,
                                   1,
                                   1,
                                   1,
                                   1,  //
                                   1,
                                   1,
                                   1,
                                   0,
                                   0};
    for (const Kind kind : kAllKinds) {
        for (const bool backwards : {false, true}) {
            for (const bool masked : {false, true}) {
                INFO(name_of(kind) << " go_backwards=" << backwards << " mask=" << masked);
                auto layer = make(kind, U, {.return_sequences = true, .go_backwards = backwards});
                (*layer)(x);
                randomize_bias(*layer, 5);
                const tf::Tensor m =
                    masked ? tf::constant(mask, tf::Shape{B, T}, tf::float64) : tf::Tensor();
                const std::vector<tf::Tensor> r = layer->call_with_states(x, m);
                REQUIRE(r.size() == static_cast<std::size_t>(1 + layer->num_states()));
                const RefOut ref = reference(
                    kind,
                    xv,
                    B,
                    T,
                    F,
                    U,
                    values(layer->kernel()),
                    values(layer->recurrent_kernel()),
                    layer->bias().defined() ? values(layer->bias()) : std::vector<double>{},
                    masked ? mask : std::vector<double>{},
                    backwards,
                    {},
                    {});
                check_close(
                    r[0], tf::constant(ref.seq, tf::Shape{B, T, U}, tf::float64), 1e-12, 1e-12);
                check_close(r[1], tf::constant(ref.h, tf::Shape{B, U}, tf::float64), 1e-12, 1e-12);
                if (kind == Kind::lstm)
                    check_close(
                        r[2], tf::constant(ref.c, tf::Shape{B, U}, tf::float64), 1e-12, 1e-12);
            }
        }
    }
}

TEST_CASE("Recurrent layers: initial states, zero_output_for_mask and the last output",
          "[keras][recurrent]") {
    const int64_t B = 2, T = 4, F = 3, U = 2;
    const tf::Tensor x = random_f64({B, T, F}, -1, 1, 21);
    const std::vector<double> mask{0, 1, 1, 0, 1, 1, 0, 0};
    const tf::Tensor m = tf::constant(mask, tf::Shape{B, T}, tf::float64);
    for (const Kind kind : kAllKinds) {
        INFO(name_of(kind));
        auto layer = make(kind, U, {.zero_output_for_mask = true});
        (*layer)(x);
        randomize_bias(*layer, 3);
        std::vector<tf::Tensor> init{random_f64({B, U}, -1, 1, 4)};
        if (kind == Kind::lstm) init.push_back(random_f64({B, U}, -1, 1, 5));
        const std::vector<tf::Tensor> r = layer->call_with_states(x, m, init);
        const RefOut ref = reference(kind,
                                     values(x),
                                     B,
                                     T,
                                     F,
                                     U,
                                     values(layer->kernel()),
                                     values(layer->recurrent_kernel()),
                                     values(layer->bias()),
                                     mask,
                                     false,
                                     values(init[0]),
                                     kind == Kind::lstm ? values(init[1]) : std::vector<double>{},
                                     true);
        std::vector<double> last;
        for (int64_t b = 0; b < B; ++b)
            for (int64_t j = 0; j < U; ++j)
                last.push_back(ref.seq[static_cast<std::size_t>((b * T + T - 1) * U + j)]);
        check_close(r[0], tf::constant(last, tf::Shape{B, U}, tf::float64), 1e-12, 1e-12);
        check_close(r[1], tf::constant(ref.h, tf::Shape{B, U}, tf::float64), 1e-12, 1e-12);
    }
}

TEST_CASE("The fused RNNSequence op agrees with the op loop", "[keras][recurrent]") {
    const int64_t B = 4, T = 6, U = 5;
    for (const Kind kind : kAllKinds) {
        for (const std::string act : {"tanh", "relu", "hard_sigmoid", "linear"}) {
            INFO(name_of(kind) << " " << act);
            namespace rnn = tf::rnn;
            const int64_t G = kind == Kind::simple ? 1 : kind == Kind::lstm ? 4 : 3;
            rnn::SequenceSpec spec;
            spec.cell = kind == Kind::simple ? rnn::Cell::simple
                        : kind == Kind::lstm ? rnn::Cell::lstm
                        : kind == Kind::gru  ? rnn::Cell::gru
                                             : rnn::Cell::gru_before;
            spec.units = U;
            spec.activation = act;
            spec.recurrent_activation = act == "tanh" ? "sigmoid" : act;
            spec.activation_fn = tf::keras::activations::get(spec.activation);
            spec.recurrent_activation_fn = tf::keras::activations::get(spec.recurrent_activation);
            rnn::SequenceInputs in;
            in.xproj = random_f64({B, T, G * U}, -1, 1, 1);
            in.recurrent_kernel = random_f64({U, G * U}, -0.6, 0.6, 2);
            in.h0 = random_f64({B, U}, -1, 1, 3);
            if (kind == Kind::lstm) in.c0 = random_f64({B, U}, -1, 1, 4);
            if (kind == Kind::gru) in.recurrent_bias = random_f64({G * U}, -1, 1, 5);
            in.mask = tf::constant(std::vector<double>{1, 1, 0, 1, 0, 1, 0, 1, 1, 1, 1, 1,
                                                       1, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 0},
                                   tf::Shape{B, T},
                                   tf::float64);
            REQUIRE(rnn::uses_fused(spec, in));
            std::vector<tf::Tensor> srcs{in.xproj, in.recurrent_kernel, in.h0};
            if (in.c0.defined()) srcs.push_back(in.c0);
            if (in.recurrent_bias.defined()) srcs.push_back(in.recurrent_bias);
            const tf::Tensor w = random_f64({B, T, U}, -1, 1, 9);
            std::vector<std::vector<tf::Tensor>> grads;
            std::vector<tf::Tensor> outs;
            for (const bool fused : {true, false}) {
                tf::GradientTape tape;
                tape.watch(srcs);
                const rnn::SequenceOutputs o = rnn::run_sequence(spec, in, fused);
                tf::Tensor loss = tf::reduce_sum(o.states * w);
                if (o.cells.defined()) loss = loss + tf::reduce_sum(tf::square(o.cells));
                outs.push_back(o.states);
                std::vector<tf::Tensor> g;
                for (const tf::Gradient& gi : tape.gradient(loss, srcs))
                    g.push_back(gi.dense());
                grads.push_back(g);
            }
            check_close(outs[0], outs[1], 1e-12, 1e-12);
            for (std::size_t k = 0; k < srcs.size(); ++k) {
                INFO("gradient " << k);
                check_close(grads[0][k], grads[1][k], 1e-11, 1e-11);
            }
        }
    }
}

TEST_CASE("Recurrent gradients match finite differences (inputs, weights, states)",
          "[keras][recurrent][gradients]") {
    const int64_t B = 2, T = 3, F = 3, U = 2;
    const tf::Tensor x = random_f64({B, T, F}, -1, 1, 31);
    const tf::Tensor m =
        tf::constant(std::vector<double>{1, 0, 1, 1, 1, 0}, tf::Shape{B, T}, tf::float64);
    for (const Kind kind : kAllKinds) {
        for (const bool seqs : {false, true}) {
            INFO(name_of(kind) << " return_sequences=" << seqs);
            auto layer = make(kind, U, {.return_sequences = seqs});
            (*layer)(x);
            randomize_bias(*layer, 8);
            check_gradients(
                [&](const std::vector<tf::Tensor>& in) {
                    std::vector<tf::Tensor> init{in[1]};
                    if (kind == Kind::lstm) init.push_back(in[2]);
                    const std::vector<tf::Tensor> r = layer->call_with_states(in[0], m, init);
                    tf::Tensor y = tf::reduce_sum(r[0] * r[0]) + tf::reduce_sum(r[1]);
                    if (kind == Kind::lstm) y = y + tf::reduce_sum(r[2] * r[2]);
                    return y;
                },
                {x, random_f64({B, U}, -1, 1, 2), random_f64({B, U}, -1, 1, 3)});
            check_variable_gradients([&] { return layer->call_with_states(x, m)[0]; },
                                     layer->variables());
        }
    }
}

TEST_CASE("Second order: the gradient of a gradient through LSTM and GRU",
          "[keras][recurrent][gradients]") {
    const int64_t B = 2, T = 3, F = 2, U = 2;
    const tf::Tensor x = random_f64({B, T, F}, -1, 1, 41);
    const tf::Tensor m =
        tf::constant(std::vector<double>{1, 1, 0, 1, 0, 1}, tf::Shape{B, T}, tf::float64);
    for (const Kind kind : {Kind::lstm, Kind::gru, Kind::gru_before, Kind::simple}) {
        INFO(name_of(kind));
        auto layer = make(kind, U, {.return_sequences = true});
        (*layer)(x);
        randomize_bias(*layer, 9);
        const tf::Tensor w = random_f64({B, T, U}, -1, 1, 5);
        // d/dx <d/dx sum(layer(x) w), v>: the inner gradient runs the BPTT formula under the
        // outer tape (the op loop's gradient), whose gradient is checked here.
        check_gradients(
            [&](const std::vector<tf::Tensor>& in) {
                tf::GradientTape tape;
                tape.watch(in[0]);
                const tf::Tensor y = tf::reduce_sum(layer->call_with_states(in[0], m)[0] * w);
                return tape.gradient(y, in[0]).dense();
            },
            {x});
        // And with respect to the recurrent kernel (the gradient of dL/dx in the weights).
        check_variable_gradients(
            [&] {
                tf::GradientTape tape;
                tape.watch(x);
                const tf::Tensor y = tf::reduce_sum(layer->call_with_states(x, m)[0] * w);
                return tape.gradient(y, x).dense();
            },
            {layer->recurrent_kernel()});
    }
}

TEST_CASE("Recurrent shapes, weights and parameter counts follow Keras", "[keras][recurrent]") {
    const tf::Tensor x = tf::ones({2, 7, 3});
    kl::LSTM lstm(4);
    CHECK(lstm(x).shape() == tf::Shape{2, 4});
    CHECK(lstm.kernel().shape() == tf::Shape{3, 16});
    CHECK(lstm.recurrent_kernel().shape() == tf::Shape{4, 16});
    CHECK(lstm.bias().shape() == tf::Shape{16});
    CHECK(lstm.count_params() == 4 * 4 * (3 + 4 + 1));
    CHECK(lstm.name().rfind("lstm", 0) == 0);  // Keras' default name, made unique
    CHECK(lstm.kernel().name().find(lstm.name() + "/kernel") != std::string::npos);
    CHECK(lstm.recurrent_kernel().name().find("/recurrent_kernel") != std::string::npos);
    // unit_forget_bias: [zeros, ones, zeros, zeros].
    const std::vector<float> bias = lstm.bias().value().to_vector<float>();
    for (std::size_t j = 0; j < bias.size(); ++j)
        CHECK(bias[j] == (j >= 4 && j < 8 ? 1.0F : 0.0F));
    kl::GRU gru(5, {.return_sequences = true});
    CHECK(gru(x).shape() == tf::Shape{2, 7, 5});
    CHECK(gru.bias().shape() == tf::Shape{2, 15});
    CHECK(gru.count_params() == 3 * 5 * (3 + 5 + 2));
    kl::GRU gru_before(5, {.reset_after = false});
    gru_before(x);
    CHECK(gru_before.bias().shape() == tf::Shape{15});
    CHECK(gru_before.count_params() == 3 * 5 * (3 + 5 + 1));
    kl::SimpleRNN simple(6, {.use_bias = false, .return_state = true});
    const std::vector<tf::Tensor> r = simple.call_with_states(x);
    CHECK(r.size() == 2);
    CHECK(r[0].shape() == tf::Shape{2, 6});
    CHECK(r[1].shape() == tf::Shape{2, 6});
    CHECK_FALSE(simple.bias().defined());
    CHECK(simple.count_params() == 6 * (3 + 6));
    kl::LSTM states(3, {.return_sequences = true, .return_state = true});
    const std::vector<tf::Tensor> s = states.call_with_states(x);
    CHECK(s.size() == 3);
    CHECK(s[0].shape() == tf::Shape{2, 7, 3});
    CHECK(s[2].shape() == tf::Shape{2, 3});
    // The recurrent kernel is orthogonal (Keras' default): R^T R = I per gate block's columns.
    const tf::Tensor rk = simple.recurrent_kernel();
    check_close(tf::matmul(rk, rk, true, false), tf::eye(6), 1e-5, 1e-5);
}

TEST_CASE("Recurrent layers: float32 runs the fused op; dropout only while training",
          "[keras][recurrent]") {
    const tf::Tensor x = tf::random::uniform({3, 5, 4}, -1, 1, tf::float32, 3);
    kl::LSTM a(6, {.dropout = 0.3, .recurrent_dropout = 0.2, .return_sequences = true, .seed = 7});
    const tf::Tensor inference = a(x);
    CHECK(inference.dtype() == tf::float32);
    check_close(a(x), inference, 0, 0);  // no dropout outside training
    const tf::Tensor train1 = a(x, true);
    const tf::Tensor train2 = a(x, true);
    CHECK(train1.shape() == tf::Shape{3, 5, 6});
    CHECK(tf::reduce_max(tf::abs(train1 - inference)).item<float>() > 1e-4F);
    CHECK(tf::reduce_max(tf::abs(train1 - train2)).item<float>() > 1e-4F);  // a new mask per call
    // Gradients flow in training mode (the op loop with the recurrent mask).
    tf::GradientTape tape;
    const tf::Tensor loss = tf::reduce_sum(a(x, true));
    const std::vector<tf::Gradient> g = tape.gradient(loss, a.trainable_variables());
    REQUIRE(g.size() == 3);
    for (const tf::Gradient& gi : g)
        CHECK(gi.defined());
}

TEST_CASE("Recurrent layers without bias, unrolled, and under a mixed policy",
          "[keras][recurrent]") {
    const int64_t B = 2, T = 4, F = 3, U = 3;
    const tf::Tensor x = random_f64({B, T, F}, -1, 1, 91);
    for (const Kind kind : kAllKinds) {
        INFO(name_of(kind));
        auto layer = make(kind, U, {.use_bias = false, .return_sequences = true, .unroll = true});
        const tf::Tensor y = (*layer)(x);
        CHECK_FALSE(layer->bias().defined());
        const RefOut ref = reference(kind,
                                     values(x),
                                     B,
                                     T,
                                     F,
                                     U,
                                     values(layer->kernel()),
                                     values(layer->recurrent_kernel()),
                                     {},
                                     {},
                                     false,
                                     {},
                                     {});
        check_close(y, tf::constant(ref.seq, tf::Shape{B, T, U}, tf::float64), 1e-12, 1e-12);
        // mixed_bfloat16: bfloat16 compute (the op loop), float32 weights.
        auto mixed = make(kind, U, {.dtype = "mixed_bfloat16"});
        const tf::Tensor ym = (*mixed)(tf::cast(x, tf::float32));
        CHECK(ym.dtype() == tf::bfloat16);
        CHECK(ym.shape() == tf::Shape{B, U});
        CHECK(mixed->kernel().dtype() == tf::float32);
    }
}

TEST_CASE("The float32 kernels agree with the float64 ones", "[keras][recurrent]") {
    const tf::Tensor x64 = random_f64({3, 7, 5}, -1, 1, 81);
    const tf::Tensor m = tf::constant(
        std::vector<double>{1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0},
        tf::Shape{3, 7},
        tf::float64);
    for (const Kind kind : kAllKinds) {
        INFO(name_of(kind));
        auto l64 = make(kind, 9, {.return_sequences = true});
        auto l32 = make(kind, 9, {.return_sequences = true});
        (*l64)(x64);
        (*l32)(tf::cast(x64, tf::float32));
        randomize_bias(*l64, 4);
        std::vector<tf::Variable> to = l32->variables();
        const std::vector<tf::Variable> from = l64->variables();
        for (std::size_t i = 0; i < to.size(); ++i)
            to[i].assign(tf::cast(from[i].value(), tf::float32));
        const tf::Tensor x32 = tf::cast(x64, tf::float32);
        const tf::Tensor m32 = tf::cast(m, tf::float32);
        check_close(tf::cast(l32->call_with_states(x32, m32)[0], tf::float64),
                    l64->call_with_states(x64, m)[0],
                    1e-5,
                    1e-5);
        // And the gradients of the weights.
        std::vector<tf::Tensor> g[2];
        for (int d = 0; d < 2; ++d) {
            auto& layer = d == 0 ? l32 : l64;
            tf::GradientTape tape;
            const tf::Tensor y = layer->call_with_states(d == 0 ? x32 : x64, d == 0 ? m32 : m)[0];
            const tf::Tensor loss = tf::reduce_sum(tf::square(y));
            for (const tf::Gradient& gi : tape.gradient(loss, layer->trainable_variables()))
                g[d].push_back(tf::cast(gi.dense(), tf::float64));
        }
        for (std::size_t i = 0; i < g[0].size(); ++i)
            check_close(g[0][i], g[1][i], 1e-4, 1e-4);
    }
}

TEST_CASE("Embedding(mask_zero) masks the padded steps of a recurrent layer in Sequential",
          "[keras][recurrent][mask]") {
    auto emb = std::make_shared<kl::Embedding>(10, 4, kl::EmbeddingOptions{.mask_zero = true});
    auto lstm = std::make_shared<kl::LSTM>(3);
    tf::keras::Sequential model({emb, lstm});
    // Post-padded ids: the padded row's last output is the output of its unpadded prefix.
    const tf::Tensor ids = tf::constant(
        std::vector<int32_t>{3, 5, 2, 0, 0, 7, 1, 4, 9, 2}, tf::Shape{2, 5}, tf::int32);
    const tf::Tensor y = model(ids);
    CHECK(y.shape() == tf::Shape{2, 3});
    const tf::Tensor mask = emb->compute_mask(ids, {});
    CHECK(mask.dtype() == tf::bool_);
    const tf::Tensor prefix =
        (*lstm)((*emb)(tf::constant(std::vector<int32_t>{3, 5, 2}, tf::Shape{1, 3}, tf::int32)));
    check_close(tf::slice(y, {0, 0}, {1, 3}), prefix, 1e-6, 1e-6);
    // Without mask_zero the padding counts as steps.
    CHECK(kl::Embedding(10, 4).compute_mask(ids, {}).defined() == false);
    // return_sequences passes the mask on; without it the mask stops.
    kl::GRU seq(2, {.return_sequences = true});
    CHECK(seq.compute_mask(tf::Tensor(), mask).defined());
    CHECK_FALSE(kl::GRU(2).compute_mask(tf::Tensor(), mask).defined());
}

TEST_CASE("Stateful recurrent layers carry their states between calls", "[keras][recurrent]") {
    const tf::Tensor x = random_f64({2, 6, 3}, -1, 1, 51);
    kl::GRU whole(4, {.return_sequences = true});
    const tf::Tensor full = whole(x);
    kl::GRU parts(4, {.return_sequences = true, .stateful = true});
    parts(tf::slice(x, {0, 0, 0}, {2, 3, 3}));
    std::vector<tf::Variable> to = parts.variables();
    const std::vector<tf::Variable> from = whole.variables();
    REQUIRE(to.size() == from.size());
    for (std::size_t i = 0; i < to.size(); ++i)
        to[i].assign(from[i].value());
    parts.reset_states();
    const tf::Tensor a = parts(tf::slice(x, {0, 0, 0}, {2, 3, 3}));
    const tf::Tensor b = parts(tf::slice(x, {0, 3, 0}, {2, 3, 3}));
    check_close(tf::concat({a, b}, 1), full, 1e-12, 1e-12);
    REQUIRE(parts.states().size() == 1);
    parts.reset_states();
    check_close(parts(tf::slice(x, {0, 0, 0}, {2, 3, 3})), a, 1e-12, 1e-12);
    CHECK_THROWS_WITH(parts(tf::slice(x, {0, 0, 0}, {1, 3, 3})),
                      Catch::Contains("stateful") && Catch::Contains("gru"));
}

TEST_CASE("Bidirectional merges the forward and the reversed backward outputs",
          "[keras][recurrent]") {
    const tf::Tensor x = random_f64({2, 4, 3}, -1, 1, 61);
    for (const std::string mode : {"concat", "sum", "mul", "ave", "none"}) {
        for (const bool seqs : {false, true}) {
            INFO(mode << " return_sequences=" << seqs);
            auto inner = std::make_shared<kl::LSTM>(2, kl::RNNOptions{.return_sequences = seqs});
            kl::Bidirectional bi(inner, mode);
            const std::vector<tf::Tensor> r = bi.call_with_states(x);
            const auto& f = bi.forward_layer();
            const auto& b = bi.backward_layer();
            CHECK(b->options().go_backwards);
            CHECK_FALSE(f->options().go_backwards);
            CHECK(f->name() == "forward_" + inner->name());
            CHECK(b->name() == "backward_" + inner->name());
            CHECK_FALSE(inner->built());  // Keras recreates the layer: the given one is unused
            const tf::Tensor yf = f->call_with_states(x)[0];
            tf::Tensor yb = b->call_with_states(x)[0];
            if (seqs) {
                // The backward layer reads x reversed: flip its outputs back in time.
                std::vector<tf::Tensor> steps = tf::unstack(yb, 1);
                std::reverse(steps.begin(), steps.end());
                yb = tf::stack(steps, 1);
            }
            if (mode == "none") {
                REQUIRE(r.size() == 2 + 4);
                check_close(r[0], yf, 1e-12, 1e-12);
                check_close(r[1], yb, 1e-12, 1e-12);
                CHECK_THROWS_AS(bi(x), tf::errors::InvalidArgumentError);
                continue;
            }
            REQUIRE(r.size() == 1 + 4);  // output, forward h c, backward h c
            const tf::Tensor expected = mode == "concat" ? tf::concat({yf, yb}, -1)
                                        : mode == "sum"  ? yf + yb
                                        : mode == "mul"  ? yf * yb
                                                         : (yf + yb) / 2.0;
            check_close(r[0], expected, 1e-12, 1e-12);
            check_close(bi(x), expected, 1e-12, 1e-12);
            CHECK(bi.count_params() == 2 * 4 * 2 * (3 + 2 + 1));
        }
    }
    CHECK_THROWS_AS(kl::Bidirectional(std::make_shared<kl::GRU>(2), "max"),
                    tf::errors::InvalidArgumentError);
}

TEST_CASE("TimeDistributed applies a layer to every step", "[keras][recurrent]") {
    const tf::Tensor x = random_f64({2, 5, 3}, -1, 1, 71);
    auto dense = std::make_shared<kl::Dense>(4);
    kl::TimeDistributed td(dense);
    const tf::Tensor y = td(x);
    CHECK(y.shape() == tf::Shape{2, 5, 4});
    check_close(y, (*dense)(x), 1e-12, 1e-12);
    CHECK(td.count_params() == 3 * 4 + 4);
    CHECK_THROWS_AS(td(tf::ones({2, 3}, tf::float64)), tf::errors::InvalidArgumentError);
    // After an LSTM with return_sequences, in a Sequential model.
    tf::keras::Sequential model(
        {std::make_shared<kl::LSTM>(3, kl::RNNOptions{.return_sequences = true}),
         std::make_shared<kl::TimeDistributed>(std::make_shared<kl::Dense>(1))});
    CHECK(model(x).shape() == tf::Shape{2, 5, 1});
}

TEST_CASE("Recurrent layers reject bad inputs with errors naming the layer",
          "[keras][recurrent][errors]") {
    kl::LSTM lstm(3, {.name = "probe"});
    CHECK_THROWS_WITH(lstm(tf::ones({4, 3})),
                      Catch::Contains("\"probe\"") && Catch::Contains("rank 3"));
    lstm(tf::ones({2, 4, 3}));
    CHECK_THROWS_WITH(lstm.call_with_states(tf::ones({2, 4, 3}), {}, {tf::zeros({2, 3})}),
                      Catch::Contains("\"probe\"") && Catch::Contains("2 initial state"));
    CHECK_THROWS_WITH(
        lstm.call_with_states(tf::ones({2, 4, 3}), {}, {tf::zeros({2, 3}), tf::zeros({3, 3})}),
        Catch::Contains("\"probe\"") && Catch::Contains("[3,3]"));
    CHECK_THROWS_WITH(lstm.call_with_states(tf::ones({2, 4, 3}), tf::ones({2, 5})),
                      Catch::Contains("\"probe\"") && Catch::Contains("mask"));
    CHECK_THROWS_WITH(lstm(tf::ones({2, 4, 5})), Catch::Contains("\"probe\""));
    CHECK_THROWS_AS(kl::GRU(0), tf::errors::InvalidArgumentError);
    CHECK_THROWS_AS(kl::SimpleRNN(2, {.dropout = 1.0}), tf::errors::InvalidArgumentError);
    CHECK_THROWS_WITH(kl::LSTM(2, {.activation = "tanhh"}), Catch::Contains("tanhh"));
}
