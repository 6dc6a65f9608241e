// Every ops.json case of the nn ops (and tf.one_hot): forward values, gradients for the given
// upstream and the Hessian-vector products, through tapeflow's tf::nn functions.
#include <map>
#include <string>

#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

#include "support/golden.hpp"

namespace tf = tapeflow;

namespace {

using Json = nlohmann::json;
using Tensors = std::vector<tf::Tensor>;
using tf::testing::GoldenFn;

std::vector<int64_t> ints(const Json& args, const char* name) {
    return args[name].get<std::vector<int64_t>>();
}

// conv2d's padding argument: "SAME"/"VALID" or TensorFlow's list of (before, after) pairs.
tf::Tensor conv2d_call(const Tensors& in, const Json& args) {
    const tf::Ints strides(ints(args, "strides"));
    const std::string format = args.value("data_format", "NHWC");
    const tf::Ints dilations = args.contains("dilations") ? tf::Ints(ints(args, "dilations")) : 1;
    if (args["padding"].is_string()) {
        return tf::nn::conv2d(
            in[0], in[1], strides, args["padding"].get<std::string>(), format, dilations);
    }
    tf::Paddings pads;
    for (const auto& p : args["padding"])
        pads.emplace_back(p[0].get<int64_t>(), p[1].get<int64_t>());
    return tf::nn::conv2d(in[0], in[1], strides, pads, format, dilations);
}

template <class Pool>
GoldenFn pool(Pool f) {
    return [f](const Tensors& in, const Json& args) {
        return Tensors{f(in[0],
                         ints(args, "ksize"),
                         ints(args, "strides"),
                         args["padding"].get<std::string>(),
                         args.value("data_format", "NHWC"))};
    };
}

GoldenFn unary(tf::Tensor (*f)(const tf::Tensor&)) {
    return [f](const Tensors& in, const Json&) {
        return Tensors{f(in[0])};
    };
}

// labels first, logits second: TensorFlow's positional order and tapeflow's.
GoldenFn loss(tf::Tensor (*f)(const tf::Tensor&, const tf::Tensor&)) {
    return [f](const Tensors& in, const Json&) {
        return Tensors{f(in[0], in[1])};
    };
}

const std::map<std::string, GoldenFn>& golden_ops() {
    static const std::map<std::string, GoldenFn> ops = {
        {"tf.nn.relu", unary(tf::nn::relu)},
        {"tf.nn.relu6", unary(tf::nn::relu6)},
        {"tf.nn.elu", unary(tf::nn::elu)},
        {"tf.nn.selu", unary(tf::nn::selu)},
        {"tf.nn.softplus", unary(tf::nn::softplus)},
        {"tf.nn.l2_loss", unary(tf::nn::l2_loss)},
        {"tf.nn.leaky_relu",
         [](const Tensors& in, const Json& args) {
             return Tensors{tf::nn::leaky_relu(in[0], args.value("alpha", 0.2))};
         }},
        {"tf.nn.softmax",
         [](const Tensors& in, const Json& args) {
             return Tensors{tf::nn::softmax(in[0], args.value("axis", int64_t{-1}))};
         }},
        {"tf.nn.log_softmax",
         [](const Tensors& in, const Json& args) {
             return Tensors{tf::nn::log_softmax(in[0], args.value("axis", int64_t{-1}))};
         }},
        {"tf.nn.bias_add",
         [](const Tensors& in, const Json& args) {
             return Tensors{tf::nn::bias_add(in[0], in[1], args.value("data_format", "NHWC"))};
         }},
        {"tf.nn.softmax_cross_entropy_with_logits",
         [](const Tensors& in, const Json& args) {
             return Tensors{tf::nn::softmax_cross_entropy_with_logits(
                 in[0], in[1], args.value("axis", int64_t{-1}))};
         }},
        {"tf.nn.sparse_softmax_cross_entropy_with_logits",
         loss(tf::nn::sparse_softmax_cross_entropy_with_logits)},
        {"tf.nn.sigmoid_cross_entropy_with_logits",
         loss(tf::nn::sigmoid_cross_entropy_with_logits)},
        {"tf.nn.moments",
         [](const Tensors& in, const Json& args) {
             auto [mean, variance] =
                 tf::nn::moments(in[0], ints(args, "axes"), args.value("keepdims", false));
             return Tensors{mean, variance};
         }},
        {"tf.nn.batch_normalization",
         [](const Tensors& in, const Json& args) {
             return Tensors{tf::nn::batch_normalization(
                 in[0], in[1], in[2], in[3], in[4], args["variance_epsilon"].get<double>())};
         }},
        {"tf.nn.conv2d",
         [](const Tensors& in, const Json& args) {
             return Tensors{conv2d_call(in, args)};
         }},
        {"tf.nn.max_pool2d", pool(tf::nn::max_pool2d)},
        {"tf.nn.avg_pool2d", pool(tf::nn::avg_pool2d)},
        {"tf.one_hot",
         [](const Tensors& in, const Json& args) {
             const tf::DType dtype = tf::parse_dtype(args.value("dtype", "float32"));
             return Tensors{tf::one_hot(in[0],
                                        args["depth"].get<int64_t>(),
                                        args.value("on_value", 1.0),
                                        args.value("off_value", 0.0),
                                        args.value("axis", int64_t{-1}),
                                        dtype)};
         }},
    };
    return ops;
}

}  // namespace

TEST_CASE("nn ops match the golden values, gradients and HVPs", "[nn][golden]") {
    for (const auto& [op, fn] : golden_ops()) {
        SECTION(op) {
            for (const auto& c : tf::testing::golden_cases(op)) {
                INFO(c.id);
                tf::testing::run_golden_case(c, fn);
            }
        }
    }
}

TEST_CASE("every nn case of ops.json is covered", "[nn][golden]") {
    for (const auto& c : tf::testing::all_golden_cases()) {
        if (c.op.rfind("tf.nn.", 0) == 0) CHECK(golden_ops().count(c.op) == 1);
    }
}
