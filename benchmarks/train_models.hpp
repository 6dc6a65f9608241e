// The training benchmarks' models, shared by bench_train and the peak-RSS child rss_mlp_tapeflow:
// the tutorial network (2 -> 3 relu -> 1, batch 10, MSE, Adam) and the medium MLP (784 -> 512 relu
// -> 512 relu -> 10, softmax cross-entropy, batch 128, Adam).
#pragma once

#include <cmath>
#include <cstdint>

#include <tapeflow/tapeflow.hpp>

namespace train_models {

namespace tf = tapeflow;

struct Dense {
    tf::Variable w, b;
    Dense(int64_t in, int64_t out)
        : w(tf::random::normal({in, out}, 0, 1.0 / std::sqrt(static_cast<double>(in)))),
          b(tf::zeros({out})) {}
    tf::Tensor operator()(const tf::Tensor& x) const {
        return tf::nn::bias_add(tf::matmul(x, w), b);
    }
};

inline tf::Tensor relu(const tf::Tensor& x) {
    return tf::nn::relu(x);
}

struct Tutorial {
    Dense l1{2, 3}, l2{3, 1};
    tf::Tensor x = tf::random::uniform({10, 2}), y = tf::random::uniform({10, 1});
    tf::train::AdamOptimizer opt{0.01};
    void step() {
        opt.minimize([&] { return tf::reduce_mean(tf::square(l2(relu(l1(x))) - y)); });
    }
};

struct Mlp {
    Dense l1{784, 512}, l2{512, 512}, l3{512, 10};
    tf::Tensor x = tf::random::uniform({128, 784});
    tf::Tensor labels = tf::cast(tf::random::uniform({128}, 0, 10), tf::int32);
    tf::train::AdamOptimizer opt{0.001};
    tf::train::GateGradients gate = tf::train::GateGradients::gate_op;
    tf::Tensor loss() const {
        const tf::Tensor logits = l3(relu(l2(relu(l1(x)))));
        return tf::reduce_mean(tf::nn::sparse_softmax_cross_entropy_with_logits(labels, logits));
    }
    void step() {
        opt.minimize([&] { return loss(); }, {}, {}, gate);
    }
};

}  // namespace train_models
