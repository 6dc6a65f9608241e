// The bad-input table: bad calls across the public API (shapes, dtypes, indices, sizes near the
// int64 limits, empty tensors, tape and optimizer misuse, bad files and directories, unwritable
// paths, bad pipeline arguments). Each must raise the typed error docs/errors.md documents, with
// a message naming the op or the file; a crash, a foreign exception (std::bad_alloc, ...) or no
// error at all fails the case. Every failing row is listed, not only the first.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>

#include <catch2/catch.hpp>
#include <unistd.h>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;
namespace fs = std::filesystem;
using Code = tf::errors::Code;

namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kBig = int64_t{1} << 62;

struct BadCall {
    const char* what;
    Code code;
    std::string names;  // a part of the message: the op's "[Op:...]", its name, or the file
    std::function<void()> call;
};

const fs::path& scratch() {
    static const fs::path dir = [] {
        fs::path d =
            fs::temp_directory_path() / ("tapeflow_bad_inputs_" + std::to_string(::getpid()));
        fs::remove_all(d);
        fs::create_directories(d);
        return d;
    }();
    return dir;
}

std::string path_of(const std::string& name) {
    return (scratch() / name).string();
}

std::string file_with(const std::string& name, const std::string& bytes) {
    const std::string p = path_of(name);
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
}

// A path no one can write, root included: /proc refuses new files.
const std::string kUnwritable = "/proc/tapeflow_no_such_dir/file";

tf::Tensor f32(std::initializer_list<float> v) {
    return tf::constant(v);
}
tf::Tensor m23() {
    return tf::reshape(tf::range(0, 6), {2, 3});
}
tf::Tensor img() {
    return tf::ones({1, 4, 4, 1});
}

// A built Sequential with one Dense layer of `units` (Keras weight files).
std::shared_ptr<tf::keras::Sequential> bad_h5_model(int64_t units = 3) {
    auto m = std::make_shared<tf::keras::Sequential>(
        std::vector<std::shared_ptr<tf::keras::layers::Layer>>{
            std::make_shared<tf::keras::layers::Dense>(units)});
    (*m)(tf::ones({1, 2}));
    return m;
}

std::vector<BadCall> table() {
    const Code IA = Code::invalid_argument, NF = Code::not_found, FP = Code::failed_precondition,
               RE = Code::resource_exhausted, DL = Code::data_loss, UN = Code::unimplemented;
    const std::string not_a_dir = file_with("plain_file", "x") + "/sub";
    const std::string garbage = file_with("garbage.bin", "this is not a record file at all");
    // clang-format off: one row per bad call reads better than clang-format's layout of lambdas
    std::vector<BadCall> t = {
        // ---- sizes near the int64 limits (issue 22's crashes) ----
        {"range count +inf",
         IA,
         "[Op:Range]",
         [] {
             tf::range(0, 1e300, 1e-300);
         }},
        {"range 1e15 elements",
         RE,
         "OOM when allocating tensor of shape [1000000000000000]",
         [] {
             tf::range(0, 1e15);
         }},
        {"range 2^46 int32",
         RE,
         "type int32",
         [] {
             tf::range(0, double(int64_t{1} << 46), 1, tf::int32);
         }},
        {"range 2^63 elements",
         IA,
         "[Op:Range]",
         [] {
             tf::range(0, 9.3e18);
         }},
        {"range NaN delta",
         IA,
         "[Op:Range]",
         [] {
             tf::range(0, 1, std::nan(""));
         }},
        {"range delta 0",
         IA,
         "[Op:Range]",
         [] {
             tf::range(0, 1, 0);
         }},
        {"range wrong direction",
         IA,
         "[Op:Range]",
         [] {
             tf::range(5, 1, 1);
         }},
        {"linspace 2^50",
         RE,
         "OOM when allocating tensor",
         [] {
             tf::linspace(0, 1, int64_t{1} << 50);
         }},
        {"linspace num 0",
         IA,
         "[Op:LinSpace]",
         [] {
             tf::linspace(0, 1, 0);
         }},
        {"linspace num -1",
         IA,
         "[Op:LinSpace]",
         [] {
             tf::linspace(0, 1, -1);
         }},
        {"eye 2^32",
         IA,
         "[Op:Eye]",
         [] {
             tf::eye(int64_t{1} << 32);
         }},
        {"eye 2^24",
         RE,
         "OOM when allocating tensor of shape [16777216,16777216]",
         [] {
             tf::eye(1 << 24);
         }},
        {"eye -1",
         IA,
         "[Op:Eye]",
         [] {
             tf::eye(-1);
         }},
        {"pad near 2^62",
         RE,
         "[Op:Pad]",
         [] {
             tf::pad(tf::ones({3}), {{0, kBig}});
         }},
        {"pad overflow",
         IA,
         "[Op:Pad]",
         [] {
             tf::pad(tf::ones({3}), {{kMax, kMax}});
         }},
        {"pad negative",
         IA,
         "[Op:Pad]",
         [] {
             tf::pad(tf::ones({3}), {{-1, 0}});
         }},
        {"pad rank",
         IA,
         "[Op:Pad]",
         [] {
             tf::pad(tf::ones({3}), {{0, 0}, {0, 0}});
         }},
        {"pad mode",
         IA,
         "[Op:Pad]",
         [] {
             tf::pad(tf::ones({3}), {{0, 0}}, "WRAP");
         }},
        {"pad reflect too wide",
         IA,
         "[Op:MirrorPad]",
         [] {
             tf::pad(tf::ones({3}), {{3, 0}}, "REFLECT");
         }},
        {"slice size INT64_MAX",
         IA,
         "[Op:Slice]",
         [] {
             tf::slice(tf::range(0, 4), {1}, {kMax});
         }},
        {"slice begin INT64_MAX",
         IA,
         "[Op:Slice]",
         [] {
             tf::slice(tf::range(0, 4), {kMax}, {1});
         }},
        {"slice negative size",
         IA,
         "[Op:Slice]",
         [] {
             tf::slice(tf::range(0, 4), {1}, {-2});
         }},
        {"slice rank",
         IA,
         "[Op:Slice]",
         [] {
             tf::slice(tf::range(0, 4), {1, 0}, {1, 1});
         }},
        {"split 2^40 of empty",
         IA,
         "[Op:Split]",
         [] {
             tf::split(tf::zeros({0}), int64_t{1} << 40);
         }},
        {"split 0 ways",
         IA,
         "[Op:Split]",
         [] {
             tf::split(tf::zeros({4}), 0);
         }},
        {"split uneven",
         IA,
         "[Op:Split]",
         [] {
             tf::split(tf::zeros({4}), 3);
         }},
        {"split axis",
         IA,
         "[Op:Split]",
         [] {
             tf::split(tf::zeros({4}), 2, 1);
         }},
        {"split_v sizes overflow",
         IA,
         "[Op:SplitV]",
         [] {
             tf::split(tf::zeros({4}), std::vector<int64_t>{kMax, kMax, -1});
         }},
        {"split_v sum",
         IA,
         "[Op:SplitV]",
         [] {
             tf::split(tf::zeros({4}), std::vector<int64_t>{1, 2});
         }},
        {"split_v two -1",
         IA,
         "[Op:SplitV]",
         [] {
             tf::split(tf::zeros({4}), std::vector<int64_t>{-1, -1});
         }},
        {"split_v empty",
         IA,
         "[Op:SplitV]",
         [] {
             tf::split(tf::zeros({4}), std::vector<int64_t>{});
         }},
        {"unstack 2^62 rows of nothing",
         IA,
         "[Op:Unpack]",
         [] {
             tf::unstack(tf::zeros({kBig, 0}));
         }},
        {"zeros 2^62 floats",
         RE,
         "OOM when allocating tensor of shape [4611686018427387904] and type float",
         [] {
             tf::zeros({kBig});
         }},
        {"ones 2^31 x 2^31",
         RE,
         "[Op:Fill]",
         [] {
             tf::ones({int64_t{1} << 31, int64_t{1} << 31});
         }},
        {"zeros element overflow",
         IA,
         "more than 2^63-1",
         [] {
             tf::zeros({kBig, 4});
         }},
        {"negative dimension",
         IA,
         "[-1]",
         [] {
             tf::zeros({-1});
         }},
        {"tile overflow",
         IA,
         "[Op:Tile]",
         [] {
             tf::tile(tf::ones({2}), {kMax});
         }},
        {"tile element overflow",
         IA,
         "[Op:Tile]",
         [] {
             tf::tile(tf::ones({2, 2}), {kBig, kBig});
         }},
        {"tile huge",
         RE,
         "[Op:Tile]",
         [] {
             tf::tile(tf::ones({2}), {kBig / 2});
         }},
        {"tile negative",
         IA,
         "[Op:Tile]",
         [] {
             tf::tile(tf::ones({2}), {-1});
         }},
        {"tile rank",
         IA,
         "[Op:Tile]",
         [] {
             tf::tile(tf::ones({2}), {1, 1});
         }},
        {"concat long empties",
         IA,
         "[Op:ConcatV2]",
         [] {
             tf::concat({tf::zeros({kMax, 0}), tf::zeros({kMax, 0})}, 0);
         }},
        {"broadcast_to huge",
         RE,
         "[Op:BroadcastTo]",
         [] {
             tf::broadcast_to(tf::ones({1}), tf::Shape{kBig});
         }},
        {"one_hot huge depth",
         RE,
         "[Op:OneHot]",
         [] {
             tf::one_hot(tf::constant({1, 2}), kBig / 2);
         }},
        {"one_hot depth overflow",
         IA,
         "[Op:OneHot]",
         [] {
             tf::one_hot(tf::constant({1, 2}), kMax);
         }},
        {"one_hot negative depth",
         IA,
         "[Op:OneHot]",
         [] {
             tf::one_hot(tf::constant({1, 2}), -1);
         }},
        {"one_hot float indices",
         IA,
         "[Op:OneHot]",
         [] {
             tf::one_hot(f32({1}), 3);
         }},
        {"one_hot axis",
         IA,
         "[Op:OneHot]",
         [] {
             tf::one_hot(tf::constant({1}), 3, 1, 0, 5);
         }},
        {"random normal huge",
         RE,
         "OOM when allocating tensor",
         [] {
             tf::random::normal({kBig});
         }},
        {"random uniform huge",
         RE,
         "OOM when allocating tensor",
         [] {
             tf::random::uniform({kBig});
         }},
        {"fill huge",
         RE,
         "[Op:Fill]",
         [] {
             tf::fill({kBig}, 1.0);
         }},
        {"reshape to huge",
         IA,
         "[Op:Reshape]",
         [] {
             tf::reshape(tf::ones({4}), {kBig});
         }},
        {"reshape overflow",
         IA,
         "[Op:Reshape]",
         [] {
             tf::reshape(tf::ones({4}), {kBig, 4});
         }},
        {"reshape two -1",
         IA,
         "[Op:Reshape]",
         [] {
             tf::reshape(tf::ones({4}), {-1, -1});
         }},
        {"reshape count",
         IA,
         "[Op:Reshape]",
         [] {
             tf::reshape(tf::ones({4}), {3});
         }},
        {"reshape -2",
         IA,
         "[Op:Reshape]",
         [] {
             tf::reshape(tf::ones({4}), {-2, -2});
         }},
        {"reshape empty -1 next to 0",
         IA,
         "Reshape cannot infer the missing input size for an empty tensor",
         [] {
             tf::reshape(tf::zeros({0}), {-1, 0});
         }},

        // ---- shapes ----
        {"add shapes",
         IA,
         "[Op:AddV2]",
         [] {
             tf::add(tf::ones({2, 3}), tf::ones({4}));
         }},
        {"subtract shapes",
         IA,
         "[Op:Sub]",
         [] {
             tf::subtract(tf::ones({2}), tf::ones({3}));
         }},
        {"multiply shapes",
         IA,
         "[Op:Mul]",
         [] {
             tf::multiply(tf::ones({2}), tf::ones({3}));
         }},
        {"divide shapes",
         IA,
         "[Op:RealDiv]",
         [] {
             tf::divide(tf::ones({2}), tf::ones({3}));
         }},
        {"maximum shapes",
         IA,
         "[Op:Maximum]",
         [] {
             tf::maximum(tf::ones({2}), tf::ones({3}));
         }},
        {"pow shapes",
         IA,
         "[Op:Pow]",
         [] {
             tf::pow(tf::ones({2}), tf::ones({3}));
         }},
        {"equal shapes",
         IA,
         "[Op:Equal]",
         [] {
             tf::equal(tf::ones({2}), tf::ones({3}));
         }},
        {"less shapes",
         IA,
         "[Op:Less]",
         [] {
             tf::less(tf::ones({2}), tf::ones({3}));
         }},
        {"where shapes",
         IA,
         "[Op:SelectV2]",
         [] {
             tf::where(tf::constant({true, false}), tf::ones({3}), tf::ones({3}));
         }},
        {"add_n shapes",
         IA,
         "[Op:AddN]",
         [] {
             tf::add_n({tf::ones({2}), tf::ones({3})});
         }},
        {"add_n empty",
         IA,
         "AddN",
         [] {
             tf::add_n({});
         }},
        {"matmul inner",
         IA,
         "[Op:MatMul]",
         [] {
             tf::matmul(tf::ones({2, 3}), tf::ones({2, 3}));
         }},
        {"matmul rank 1",
         IA,
         "[Op:MatMul]",
         [] {
             tf::matmul(tf::ones({3}), tf::ones({3}));
         }},
        {"matmul batch",
         IA,
         "MatMul",
         [] {
             tf::matmul(tf::ones({2, 2, 3}), tf::ones({3, 3, 2}));
         }},
        {"transpose perm",
         IA,
         "[Op:Transpose]",
         [] {
             tf::transpose(m23(), {0, 0});
         }},
        {"transpose perm rank",
         IA,
         "[Op:Transpose]",
         [] {
             tf::transpose(m23(), {0});
         }},
        {"transpose perm range",
         IA,
         "[Op:Transpose]",
         [] {
             tf::transpose(m23(), {0, 5});
         }},
        {"expand_dims axis",
         IA,
         "[Op:ExpandDims]",
         [] {
             tf::expand_dims(m23(), 5);
         }},
        {"squeeze not 1",
         IA,
         "[Op:Squeeze]",
         [] {
             tf::squeeze(m23(), 0);
         }},
        {"squeeze axis",
         IA,
         "[Op:Squeeze]",
         [] {
             tf::squeeze(m23(), 7);
         }},
        {"concat ranks",
         IA,
         "[Op:ConcatV2]",
         [] {
             tf::concat({tf::ones({2}), tf::ones({2, 2})}, 0);
         }},
        {"concat dims",
         IA,
         "[Op:ConcatV2]",
         [] {
             tf::concat({tf::ones({2, 3}), tf::ones({2, 2})}, 0);
         }},
        {"concat axis",
         IA,
         "[Op:ConcatV2]",
         [] {
             tf::concat({tf::ones({2}), tf::ones({2})}, 3);
         }},
        {"concat empty list",
         IA,
         "ConcatV2",
         [] {
             tf::concat({}, 0);
         }},
        {"concat dtypes",
         IA,
         "[Op:ConcatV2]",
         [] {
             tf::concat({tf::ones({2}), tf::ones({2}, tf::float64)}, 0);
         }},
        {"stack shapes",
         IA,
         "[Op:Pack]",
         [] {
             tf::stack({tf::ones({2}), tf::ones({3})});
         }},
        {"stack axis",
         IA,
         "[Op:Pack]",
         [] {
             tf::stack({tf::ones({2}), tf::ones({2})}, 4);
         }},
        {"stack empty list",
         IA,
         "Pack",
         [] {
             tf::stack({});
         }},
        {"unstack axis",
         IA,
         "[Op:Unpack]",
         [] {
             tf::unstack(m23(), 2);
         }},
        {"unstack scalar",
         IA,
         "[Op:Unpack]",
         [] {
             tf::unstack(tf::constant(1.f));
         }},
        {"broadcast_to shapes",
         IA,
         "[Op:BroadcastTo]",
         [] {
             tf::broadcast_to(tf::ones({3}), tf::Shape{2, 2});
         }},
        {"broadcast_to rank",
         IA,
         "[Op:BroadcastTo]",
         [] {
             tf::broadcast_to(tf::ones({1, 3}), tf::Shape{3});
         }},
        {"strided_slice stride 0",
         IA,
         "[Op:StridedSlice]",
         [] {
             tf::strided_slice(tf::range(0, 4), {0}, {4}, {0});
         }},
        {"strided_slice rank",
         IA,
         "[Op:StridedSlice]",
         [] {
             tf::strided_slice(tf::range(0, 4), {0, 0}, {1}, {1});
         }},
        {"strided_slice shrink out of range",
         IA,
         "[Op:StridedSlice]",
         [] {
             tf::strided_slice(tf::range(0, 4), {9}, {10}, {1}, 0, 0, 0, 0, 1);
         }},
        {"reduce axis",
         IA,
         "[Op:Sum]",
         [] {
             tf::reduce_sum(m23(), 2);
         }},
        {"reduce duplicate axis",
         IA,
         "[Op:Sum]",
         [] {
             tf::reduce_sum(m23(), tf::Axes{0, 0});
         }},
        {"reduce_mean axis",
         IA,
         "[Op:Mean]",
         [] {
             tf::reduce_mean(m23(), -3);
         }},
        {"reduce_max axis",
         IA,
         "[Op:Max]",
         [] {
             tf::reduce_max(m23(), 9);
         }},
        {"reduce_prod axis",
         IA,
         "[Op:Prod]",
         [] {
             tf::reduce_prod(m23(), 9);
         }},
        {"reduce_any float",
         UN,
         "[Op:Any]",
         [] {
             tf::reduce_any(m23());
         }},
        {"argmax axis",
         IA,
         "[Op:ArgMax]",
         [] {
             tf::argmax(m23(), 2);
         }},
        {"argmax empty",
         IA,
         "[Op:ArgMax]",
         [] {
             tf::argmax(tf::zeros({0}));
         }},
        {"argmin output type",
         IA,
         "[Op:ArgMin]",
         [] {
             tf::argmin(m23(), 0, tf::float32);
         }},
        {"cumsum axis",
         IA,
         "[Op:Cumsum]",
         [] {
             tf::cumsum(m23(), 5);
         }},
        {"cumprod axis",
         IA,
         "[Op:Cumprod]",
         [] {
             tf::cumprod(m23(), -5);
         }},
        {"softmax axis",
         IA,
         "Softmax",
         [] {
             tf::nn::softmax(m23(), 3);
         }},
        {"log_softmax axis",
         IA,
         "LogSoftmax",
         [] {
             tf::nn::log_softmax(m23(), 3);
         }},
        {"softmax_xent shapes",
         IA,
         "SoftmaxCrossEntropyWithLogits",
         [] {
             tf::nn::softmax_cross_entropy_with_logits(tf::ones({2, 3}), tf::ones({2, 4}));
         }},
        {"sparse_xent label range",
         IA,
         "SparseSoftmaxCrossEntropyWithLogits",
         [] {
             namespace nn = tf::nn;
             nn::sparse_softmax_cross_entropy_with_logits(tf::constant({5}), tf::ones({1, 3}));
         }},
        {"sparse_xent label shape",
         IA,
         "SparseSoftmaxCrossEntropyWithLogits",
         [] {
             namespace nn = tf::nn;
             nn::sparse_softmax_cross_entropy_with_logits(tf::constant({1, 1}), tf::ones({1, 3}));
         }},
        {"sparse_xent float labels",
         IA,
         "SparseSoftmaxCrossEntropyWithLogits",
         [] {
             tf::nn::sparse_softmax_cross_entropy_with_logits(f32({1}), tf::ones({1, 3}));
         }},
        {"sigmoid_xent shapes",
         IA,
         "logistic_loss",
         [] {
             tf::nn::sigmoid_cross_entropy_with_logits(tf::ones({2}), tf::ones({3}));
         }},
        {"bias_add shape",
         IA,
         "[Op:BiasAdd]",
         [] {
             tf::nn::bias_add(tf::ones({2, 3}), tf::ones({2}));
         }},
        {"bias_add format",
         IA,
         "BiasAdd",
         [] {
             tf::nn::bias_add(tf::ones({2, 3}), tf::ones({3}), "NCDHW");
         }},
        {"conv2d channels",
         IA,
         "[Op:Conv2D]",
         [] {
             tf::nn::conv2d(img(), tf::ones({3, 3, 2, 1}), 1, "SAME");
         }},
        {"conv2d rank",
         IA,
         "Conv2D",
         [] {
             tf::nn::conv2d(tf::ones({4, 4}), tf::ones({3, 3, 1, 1}), 1, "SAME");
         }},
        {"conv2d padding name",
         IA,
         "Conv2D",
         [] {
             tf::nn::conv2d(img(), tf::ones({3, 3, 1, 1}), 1, "FULL");
         }},
        {"conv2d stride 0",
         IA,
         "Conv2D",
         [] {
             tf::nn::conv2d(img(), tf::ones({3, 3, 1, 1}), 0, "SAME");
         }},
        {"conv2d huge stride",
         IA,
         "Conv2D",
         [] {
             tf::nn::conv2d(img(), tf::ones({3, 3, 1, 1}), -kMax, "VALID");
         }},
        {"conv2d dilation 0",
         IA,
         "Conv2D",
         [] {
             tf::nn::conv2d(img(), tf::ones({3, 3, 1, 1}), 1, "SAME", "NHWC", 0);
         }},
        {"conv2d dilation overflow",
         IA,
         "[Op:Conv2D]",
         [] {
             tf::nn::conv2d(img(), tf::ones({3, 3, 1, 1}), 1, "SAME", "NHWC", kBig);
         }},
        {"max_pool ksize 0",
         IA,
         "MaxPool",
         [] {
             tf::nn::max_pool2d(img(), 0, 1, "VALID");
         }},
        {"avg_pool stride 0",
         IA,
         "AvgPool",
         [] {
             tf::nn::avg_pool2d(img(), 2, 0, "VALID");
         }},
        {"avg_pool padding",
         IA,
         "AvgPool",
         [] {
             tf::nn::avg_pool2d(img(), 2, 2, "same-ish");
         }},
        {"dropout rate",
         IA,
         "dropout",
         [] {
             tf::nn::dropout(tf::ones({3}), 1.5);
         }},
        {"batch_norm shapes",
         IA,
         "",
         [] {
             const tf::Tensor four = tf::ones({4});
             tf::nn::batch_normalization(tf::ones({2, 3}), four, four, four, four, 1e-3);
         }},
        {"moments axis",
         IA,
         "",
         [] {
             tf::nn::moments(m23(), tf::Axes{4});
         }},

        // ---- dtypes ----
        // TensorFlow's conversion of a number operand (issue 32): no op runs, so the message is
        // TensorFlow's own, quoting the number and the dtype.
        {"int32 tensor * 2.5",
         IA,
         "Cannot convert 2.5 to EagerTensor of dtype int32",
         [] {
             (void)(tf::constant({1, 2}) * 2.5);
         }},
        {"int64 tensor + 5.0",
         IA,
         "Cannot convert 5.0 to EagerTensor of dtype int64",
         [] {
             (void)(tf::constant(int64_t{1}) + 5.0);
         }},
        {"0.0 / uint8 tensor",
         IA,
         "Cannot convert 0.0 to EagerTensor of dtype uint8",
         [] {
             (void)(0.0 / tf::constant({uint8_t{1}}));
         }},
        {"uint8 tensor + 300",
         IA,
         "Cannot convert 300 to EagerTensor of dtype uint8",
         [] {
             (void)(tf::constant({uint8_t{1}}) + 300);
         }},
        {"int32 tensor - 2^40",
         IA,
         "Cannot convert 1099511627776 to EagerTensor of dtype int32",
         [] {
             (void)(tf::constant({1}) - (int64_t{1} << 40));
         }},
        {"bool tensor + 1",
         IA,
         "Cannot convert 1 to EagerTensor of dtype bool",
         [] {
             (void)(tf::constant(true) + 1);
         }},
        {"range 300 as uint8",
         IA,
         "Cannot convert 300 to EagerTensor of dtype uint8 [Op:Range]",
         [] {
             tf::range(0, 300, 1, tf::uint8);
         }},
        {"range uint64 max",
         IA,
         "[Op:Range]",
         [] {
             tf::range(0, std::numeric_limits<uint64_t>::max());
         }},
        {"int floordiv by zero",
         IA,
         "Integer division by zero [Op:FloorDiv]",
         [] {
             tf::floordiv(tf::constant({4, 5}), tf::constant({1, 0}));
         }},
        {"int64 floormod by zero",
         IA,
         "Integer division by zero [Op:FloorMod]",
         [] {
             tf::floormod(tf::constant(int64_t{4}), tf::constant(int64_t{0}));
         }},
        {"truediv int32 by int64",
         IA,
         "[Op:RealDiv]",
         [] {
             (void)(tf::constant({4}) / tf::constant(int64_t{2}));
         }},
        {"add dtypes",
         IA,
         "[Op:AddV2]",
         [] {
             tf::add(tf::ones({2}), tf::ones({2}, tf::float64));
         }},
        {"matmul dtypes",
         IA,
         "[Op:MatMul]",
         [] {
             tf::matmul(tf::ones({2, 2}), tf::ones({2, 2}, tf::float64));
         }},
        {"matmul bool",
         UN,
         "MatMul",
         [] {
             tf::matmul(tf::ones({2, 2}, tf::bool_), tf::ones({2, 2}, tf::bool_));
         }},
        {"logical_and floats",
         IA,
         "LogicalAnd",
         [] {
             tf::logical_and(tf::ones({2}), tf::ones({2}));
         }},
        {"logical_not ints",
         IA,
         "LogicalNot",
         [] {
             tf::logical_not(tf::constant({1, 2}));
         }},
        {"where float condition",
         IA,
         "SelectV2",
         [] {
             tf::where(tf::ones({2}), tf::ones({2}), tf::ones({2}));
         }},
        {"sqrt of int",
         UN,
         "Sqrt",
         [] {
             tf::sqrt(tf::constant({4, 9}));
         }},
        {"exp of bool",
         UN,
         "Exp",
         [] {
             tf::exp(tf::ones({2}, tf::bool_));
         }},
        {"floormod of float16 bool",
         UN,
         "FloorMod",
         [] {
             tf::floormod(tf::ones({2}, tf::bool_), tf::ones({2}, tf::bool_));
         }},
        {"softmax of int",
         IA,
         "Softmax",
         [] {
             tf::nn::softmax(tf::constant({1, 2}));
         }},
        {"data<T> wrong type",
         IA,
         "data<T>()",
         [] {
             (void)tf::ones({2}).data<double>();
         }},
        {"item of many",
         IA,
         "item()",
         [] {
             (void)tf::ones({2}).item<float>();
         }},
        {"item of empty",
         IA,
         "item()",
         [] {
             (void)tf::zeros({0}).item<float>();
         }},
        {"constant count",
         IA,
         "constant",
         [] {
             tf::constant(std::vector<float>{1, 2, 3}, tf::Shape{2, 2});
         }},
        {"constant ragged",
         IA,
         "constant",
         [] {
             tf::constant({{1.f, 2.f}, {3.f}});
         }},

        // ---- indices ----
        {"gather out of range",
         IA,
         "[Op:GatherV2]",
         [] {
             tf::gather(tf::range(0, 4), tf::constant({7}));
         }},
        {"gather negative",
         IA,
         "[Op:GatherV2]",
         [] {
             tf::gather(tf::range(0, 4), tf::constant({-1}));
         }},
        {"gather INT64_MAX",
         IA,
         "[Op:GatherV2]",
         [] {
             tf::gather(tf::range(0, 4), tf::constant({kMax}));
         }},
        {"gather float indices",
         IA,
         "[Op:GatherV2]",
         [] {
             tf::gather(tf::range(0, 4), f32({1}));
         }},
        {"gather axis",
         IA,
         "[Op:GatherV2]",
         [] {
             tf::gather(tf::range(0, 4), tf::constant({1}), 3);
         }},
        {"gather batch_dims",
         IA,
         "[Op:GatherV2]",
         [] {
             tf::gather(m23(), tf::constant({1}), 1, 2);
         }},
        {"gather scalar params",
         IA,
         "[Op:GatherV2]",
         [] {
             tf::gather(tf::constant(1.f), tf::constant({0}));
         }},
        {"gather_nd out of range",
         IA,
         "[Op:GatherNd]",
         [] {
             tf::gather_nd(m23(), tf::constant({{5, 0}}));
         }},
        {"gather_nd depth",
         IA,
         "[Op:GatherNd]",
         [] {
             tf::gather_nd(m23(), tf::constant({{0, 0, 0}}));
         }},
        {"scatter_nd out of range",
         IA,
         "[Op:ScatterNd]",
         [] {
             tf::scatter_nd(tf::constant({{9}}), f32({1}), tf::Shape{4});
         }},
        {"scatter_nd shapes",
         IA,
         "[Op:ScatterNd]",
         [] {
             tf::scatter_nd(tf::constant({{1}}), f32({1, 2}), tf::Shape{4});
         }},
        {"segment_sum shape",
         IA,
         "[Op:UnsortedSegmentSum]",
         [] {
             tf::unsorted_segment_sum(f32({1, 2}), tf::constant({0}), 2);
         }},
        {"segment_sum negative count",
         IA,
         "[Op:UnsortedSegmentSum]",
         [] {
             tf::unsorted_segment_sum(f32({1, 2}), tf::constant({0, 1}), -1);
         }},
        {"segment_sum huge count",
         RE,
         "[Op:UnsortedSegmentSum]",
         [] {
             tf::unsorted_segment_sum(f32({1, 2}), tf::constant({0, 1}), kBig);
         }},
        {"embedding id range",
         IA,
         "",
         [] {
             tf::nn::embedding_lookup(tf::ones({3, 2}), tf::constant({3}));
         }},

        // ---- empty and undefined tensors ----
        {"add undefined",
         IA,
         "[Op:AddV2]",
         [] {
             tf::add(tf::Tensor(), tf::ones({1}));
         }},
        {"relu undefined",
         IA,
         "Relu",
         [] {
             tf::nn::relu(tf::Tensor());
         }},
        {"matmul undefined",
         IA,
         "MatMul",
         [] {
             tf::matmul(tf::Tensor(), tf::ones({1, 1}));
         }},
        {"shape of undefined",
         FP,
         "undefined",
         [] {
             (void)tf::Tensor().shape();
         }},
        {"reduce_max of empty",
         IA,
         "[Op:Max]",
         [] {
             tf::reduce_max(tf::zeros({0}), 1);
         }},
        {"slice empty axis",
         IA,
         "[Op:Slice]",
         [] {
             tf::slice(tf::zeros({0}), {0}, {1});
         }},
        {"gather from empty",
         IA,
         "[Op:GatherV2]",
         [] {
             tf::gather(tf::zeros({0}), tf::constant({0}));
         }},
        {"split empty into 3 of 1",
         IA,
         "[Op:SplitV]",
         [] {
             tf::split(tf::zeros({0}), std::vector<int64_t>{1});
         }},
        {"global_norm of int32",
         UN,
         "[Op:Sqrt]",
         [] {
             tf::global_norm({tf::Tensor(), tf::ones({2}, tf::int32)});
         }},
        {"clip_by_value bounds",
         IA,
         "[Op:Minimum]",
         [] {
             tf::clip_by_value(tf::ones({2}), tf::ones({3}), tf::ones({3}));
         }},
        {"clip_by_norm negative",
         IA,
         "clip_by_norm",
         [] {
             tf::clip_by_norm(tf::ones({2}), tf::ones({3}));
         }},
        {"cast undefined",
         IA,
         "Cast",
         [] {
             tf::cast(tf::Tensor(), tf::float64);
         }},
        {"zeros_like undefined",
         FP,
         "undefined",
         [] {
             tf::zeros_like(tf::Tensor());
         }},

        // ---- tapes ----
        {"tape: second gradient",
         FP,
         "non-persistent GradientTape",
         [] {
             const tf::Tensor x = tf::constant(2.0);
             tf::GradientTape tape;
             tape.watch(x);
             const tf::Tensor y = x * x;
             (void)tape.gradient(y, x);
             (void)tape.gradient(y, x);
         }},
        {"tape: jacobian after gradient",
         FP,
         "GradientTape",
         [] {
             const tf::Tensor x = tf::constant({2.0});
             tf::GradientTape tape;
             tape.watch(x);
             const tf::Tensor y = x * x;
             (void)tape.gradient(y, x);
             (void)tape.jacobian(y, x);
         }},
        {"tape: output gradient shape",
         IA,
         "output_gradients",
         [] {
             const tf::Tensor x = tf::constant({1.0, 2.0});
             tf::GradientTape tape;
             tape.watch(x);
             const tf::Tensor y = x * x;
             tf::GradientOptions o;
             o.output_gradients = {tf::constant({1.0})};
             (void)tape.gradient(y, x, o);
         }},
        {"tape: undefined target",
         IA,
         "gradient",
         [] {
             const tf::Tensor x = tf::constant(2.0);
             tf::GradientTape tape;
             tape.watch(x);
             (void)tape.gradient(tf::Tensor(), x);
         }},
        {"tape: stop_recording twice",
         IA,
         "stop_recording",
         [] {
             tf::GradientTape tape;
             auto a = tape.stop_recording();
             auto b = tape.stop_recording();
         }},
        {"tape: batch_jacobian non-persistent twice",
         FP,
         "GradientTape",
         [] {
             const tf::Tensor x = tf::ones({2, 2});
             tf::GradientTape tape;
             tape.watch(x);
             const tf::Tensor y = x * x;
             (void)tape.batch_jacobian(y, x);
             (void)tape.batch_jacobian(y, x);
         }},
        {"variable: undefined initial",
         IA,
         "Variable",
         [] {
             tf::Variable v{tf::Tensor()};
         }},
        {"variable: assign shape",
         IA,
         "bad_assign",
         [] {
             tf::Variable v(tf::ones({2}), {.name = "bad_assign"});
             v.assign(tf::ones({3}));
         }},
        {"variable: assign dtype",
         IA,
         "bad_assign_dtype",
         [] {
             tf::Variable v(tf::ones({2}), {.name = "bad_assign_dtype"});
             v.assign(tf::ones({2}, tf::float64));
         }},
        {"variable: assign_add shape",
         IA,
         "bad_assign_add",
         [] {
             tf::Variable v(tf::ones({2}), {.name = "bad_assign_add"});
             v.assign_add(tf::ones({3}));
         }},
        {"variable: scatter index",
         IA,
         "bad_scatter",
         [] {
             tf::Variable v(tf::ones({2, 2}), {.name = "bad_scatter"});
             v.scatter_update(
                 tf::IndexedSlices{tf::ones({1, 2}), tf::constant({int64_t{5}}), tf::Shape{2, 2}});
         }},
        {"variable: empty handle",
         FP,
         "Variable handle is empty",
         [] {
             (void)tf::Variable().name();
         }},
        {"get_variable: exists",
         IA,
         "gv_twice",
         [] {
             tf::Variable a = tf::get_variable("gv_twice", {.shape = tf::Shape{1}});
             tf::get_variable("gv_twice", {.shape = tf::Shape{1}});
         }},
        {"get_variable: reuse missing",
         IA,
         "gv_missing",
         [] {
             auto scope = tf::variable_scope("", true);
             tf::get_variable("gv_missing", {.shape = tf::Shape{1}});
         }},
        {"get_variable: no shape",
         IA,
         "gv_noshape",
         [] {
             tf::get_variable("gv_noshape");
         }},

        // ---- optimizers ----
        {"sgd: no variables",
         IA,
         "No variables provided",
         [] {
             tf::train::GradientDescentOptimizer opt(0.1);
             opt.apply_gradients({});
         }},
        {"sgd: no gradients",
         IA,
         "No gradients provided",
         [] {
             tf::train::GradientDescentOptimizer opt(0.1);
             tf::Variable v(tf::ones({2}), {.name = "opt_nograd"});
             opt.apply_gradients({{tf::Gradient(), v}});
         }},
        {"sgd: grad shape",
         IA,
         "[Op:ResourceApplyGradientDescent]",
         [] {
             tf::train::GradientDescentOptimizer opt(0.1);
             tf::Variable v(tf::ones({2}), {.name = "opt_shape"});
             opt.apply_gradients({{tf::ones({3}), v}});
         }},
        {"sgd: grad dtype",
         IA,
         "float64",
         [] {
             tf::train::GradientDescentOptimizer opt(0.1);
             tf::Variable v(tf::ones({2}), {.name = "opt_dtype"});
             opt.apply_gradients({{tf::ones({2}, tf::float64), v}});
         }},
        {"sgd: negative rate",
         IA,
         "learning_rate",
         [] {
             tf::train::GradientDescentOptimizer opt(-1);
         }},
        {"sgd: empty name",
         IA,
         "optimizer name",
         [] {
             tf::train::GradientDescentOptimizer opt(0.1, {.name = ""});
         }},
        {"sgd: int loss",
         IA,
         "Invalid type int32 for loss",
         [] {
             tf::train::GradientDescentOptimizer opt(0.1);
             tf::Variable v(tf::ones({2}), {.name = "opt_intloss"});
             opt.minimize([=] { return tf::cast(tf::reduce_sum(v.value()), tf::int32); });
         }},
        {"sgd: nothing to optimize",
         IA,
         "No variables to optimize",
         [] {
             tf::train::GradientDescentOptimizer opt(0.1);
             opt.minimize([] { return tf::constant(1.f); });
         }},
        {"adam: beta1",
         IA,
         "beta1",
         [] {
             tf::train::AdamOptimizer opt(0.1, {.beta1 = 1.0});
         }},
        {"adagrad: accumulator",
         IA,
         "initial_accumulator_value",
         [] {
             tf::train::AdagradOptimizer opt(0.1, {.initial_accumulator_value = -1});
         }},
        {"momentum: sparse index",
         IA,
         "out of range",
         [] {
             tf::train::MomentumOptimizer opt(0.1, 0.9);
             tf::Variable v(tf::ones({2}), {.name = "opt_sparse"});
             const tf::IndexedSlices bad{f32({1}), tf::constant({5}), tf::Shape{2}};
             opt.apply_gradients({{bad, v}});
         }},
        {"global step: bad dtype",
         IA,
         "global_step",
         [] {
             tf::train::GradientDescentOptimizer opt(0.1);
             tf::Variable v(tf::ones({1}), {.name = "opt_step_v"});
             tf::Variable bad(tf::constant(0.f), {.name = "opt_bad_step"});  // int32/64 are fine
             opt.apply_gradients({{f32({1}), v}}, bad);
         }},

        // ---- files and directories ----
        {"tfrecord reader: missing",
         NF,
         "missing.tfrecord",
         [] {
             tf::io::TFRecordReader r(path_of("missing.tfrecord"));
         }},
        {"tfrecord reader: directory",
         IA,
         "is a directory",
         [] {
             tf::io::read_tfrecords(scratch().string());
         }},
        {"tfrecord reader: garbage",
         DL,
         "garbage.bin",
         [=] {
             tf::io::read_tfrecords(garbage);
         }},
        {"tfrecord reader: garbage gzip",
         DL,
         "garbage.bin",
         [=] {
             tf::io::read_tfrecords(garbage, "GZIP");
         }},
        {"tfrecord reader: garbage zlib",
         DL,
         "garbage.bin",
         [=] {
             tf::io::read_tfrecords(garbage, "ZLIB");
         }},
        {"tfrecord reader: compression name",
         IA,
         "LZ4",
         [] {
             tf::io::TFRecordReader r(path_of("x"), "LZ4");
         }},
        {"tfrecord writer: unwritable",
         NF,
         kUnwritable,
         [] {
             tf::io::TFRecordWriter w(kUnwritable);
         }},
        {"tfrecord writer: under a file",
         FP,
         "plain_file",
         [=] {
             tf::io::TFRecordWriter w(not_a_dir);
         }},
        {"tfrecord writer: compression name",
         IA,
         "LZ4",
         [] {
             tf::io::TFRecordWriter w(path_of("w.rec"), "LZ4");
         }},
        {"tfrecord writer: write after close",
         FP,
         "",
         [] {
             tf::io::TFRecordWriter w(path_of("closed.rec"));
             w.close();
             w.write("late");
         }},
        {"summary_iterator: missing",
         NF,
         "no_events",
         [] {
             tf::summary::summary_iterator(path_of("no_events"));
         }},
        {"summary_iterator: garbage",
         DL,
         "garbage.bin",
         [=] {
             tf::summary::summary_iterator(garbage);
         }},
        {"summary writer: unwritable",
         NF,
         "/proc/tapeflow_no_such_dir",
         [] {
             tf::summary::create_file_writer("/proc/tapeflow_no_such_dir/logs");
         }},
        {"summary writer: under a file",
         FP,
         "plain_file",
         [=] {
             tf::summary::create_file_writer(not_a_dir);
         }},
        {"summary writer: empty handle",
         FP,
         "",
         [] {
             tf::summary::SummaryWriter().scalar("x", 1, 0);
         }},
        {"saver: restore missing",
         NF,
         "nowhere",
         [] {
             tf::Variable v(tf::ones({1}), {.name = "saver_missing"});
             tf::train::Saver({v}).restore(path_of("nowhere/model-1"));
         }},
        {"saver: restore garbage",
         DL,
         "garbage.safetensors",
         [=] {
             tf::Variable v(tf::ones({1}), {.name = "saver_garbage"});
             tf::train::Saver({v}).restore(file_with("garbage.safetensors", "not a checkpoint"));
         }},
        {"load_weights: missing .weights.h5",
         NF,
         "nowhere.weights.h5",
         [] {
             bad_h5_model()->load_weights(path_of("nowhere.weights.h5"));
         }},
        {"load_weights: garbage .weights.h5",
         DL,
         "garbage.weights.h5",
         [=] {
             bad_h5_model()->load_weights(file_with("garbage.weights.h5", "not an HDF5 file"));
         }},
        {"load_weights: truncated .h5",
         DL,
         "cut.h5",
         [=] {
             const auto m = bad_h5_model();
             m->save_weights(path_of("whole.h5"));
             std::ifstream in(path_of("whole.h5"), std::ios::binary);
             const std::string bytes(std::istreambuf_iterator<char>(in), {});
             m->load_weights(file_with("cut.h5", bytes.substr(0, bytes.size() / 2)));
         }},
        {"load_weights: another architecture",
         IA,
         "dense",
         [=] {
             bad_h5_model()->save_weights(path_of("arch.weights.h5"));
             bad_h5_model(5)->load_weights(path_of("arch.weights.h5"));
         }},
        {"save_weights: unbuilt model",
         FP,
         "unbuilt.weights.h5",
         [] {
             tf::keras::Sequential m({std::make_shared<tf::keras::layers::Dense>(2)});
             m.save_weights(path_of("unbuilt.weights.h5"));
         }},
        {"load_npy: missing",
         NF,
         "nowhere.npy",
         [] {
             tf::io::load_npy(path_of("nowhere.npy"));
         }},
        {"load_npy: garbage",
         DL,
         "garbage.npy",
         [=] {
             tf::io::load_npy(file_with("garbage.npy", "not an array"));
         }},
        {"load_npy: object array",
         IA,
         "object.npy",
         [=] {
             std::string header = "{'descr': '|O', 'fortran_order': False, 'shape': (1,), }";
             header.append(117 - header.size(), ' ');
             tf::io::load_npy(file_with("object.npy",
                                        std::string("\x93NUMPY\x01\x00\x76\x00", 10) + header +
                                            "\n" + std::string(8, '\0')));
         }},
        {"save_npy: bfloat16",
         IA,
         "bfloat16",
         [] {
             tf::io::save_npy(path_of("bf16.npy"), tf::ones({2}).cast(tf::bfloat16));
         }},
        {"save_npy: unwritable",
         NF,
         "/proc/tapeflow_no_such_dir",
         [] {
             tf::io::save_npy("/proc/tapeflow_no_such_dir/x.npy", tf::ones({2}));
         }},
        {"load_npz: garbage",
         DL,
         "garbage.npz",
         [=] {
             tf::io::load_npz(file_with("garbage.npz", "PK\x03\x04 not really a zip archive"));
         }},
        {"saver: save unwritable",
         NF,
         "/proc/tapeflow_no_such_dir",
         [] {
             tf::Variable v(tf::ones({1}), {.name = "saver_unwritable"});
             tf::train::Saver({v}).save("/proc/tapeflow_no_such_dir/model", 1);
         }},
        {"saver: save under a file",
         FP,
         "plain_file",
         [=] {
             tf::Variable v(tf::ones({1}), {.name = "saver_notdir"});
             tf::train::Saver({v}).save(not_a_dir + "/model", 1);
         }},
        {"saver: restore wrong shape",
         IA,
         "saver_shape",
         [] {
             tf::Variable v(tf::ones({2}), {.name = "saver_shape"});
             const std::string prefix =
                 tf::train::Saver({{"saver_shape", v}}).save(path_of("shape/model"), 1);
             tf::Variable w(tf::ones({3}), {.name = "saver_shape_other"});
             tf::train::Saver({{"saver_shape", w}}).restore(prefix);
         }},
        {"saver: restore missing variable",
         NF,
         "not_in_file",
         [] {
             tf::Variable v(tf::ones({2}), {.name = "saver_have"});
             const std::string prefix =
                 tf::train::Saver({{"saver_have", v}}).save(path_of("have/model"), 1);
             tf::train::Saver({{"not_in_file", v}}).restore(prefix);
         }},
        {"write_graph: unwritable",
         NF,
         "/proc/tapeflow_no_such_dir",
         [] {
             tf::Graph g;
             tf::train::write_graph(g, "/proc/tapeflow_no_such_dir", "g.pbtxt");
         }},
        {"text lines: missing file",
         NF,
         "none.txt",
         [] {
             tf::data::TextLineDataset({path_of("none.txt")}).to_vector();
         }},
        {"tfrecord dataset: missing file",
         NF,
         "none.rec",
         [] {
             tf::data::TFRecordDataset({path_of("none.rec")}).to_vector();
         }},
        {"tfrecord dataset: compression",
         IA,
         "LZMA",
         [] {
             tf::data::TFRecordDataset({path_of("x")}, "LZMA");
         }},
        {"tfrecord dataset: garbage",
         DL,
         "garbage.bin",
         [=] {
             tf::data::TFRecordDataset({garbage}).to_vector();
         }},

        // ---- Examples ----
        {"parse_example: garbage",
         IA,
         "Could not parse example input",
         [] {
             tf::io::parse_example({"\x0a\x05\x0a"}, {{"x", {1}}});
         }},
        {"parse_example: missing feature",
         IA,
         "Feature: y",
         [] {
             tf::io::parse_example({tf::io::Example().serialize()}, {{"y", {1}}});
         }},
        {"parse_example: int32 dtype",
         IA,
         "",
         [] {
             tf::io::parse_example({tf::io::Example().serialize()}, {{"x", {1}, tf::int32}});
         }},
        {"Example::parse garbage",
         DL,
         "Example",
         [] {
             tf::io::Example::parse("\xff\xff\xff");
         }},

        // ---- pipeline arguments ----
        {"data: batch 0",
         IA,
         "batch_size",
         [] {
             tf::data::from_vector<int>({1, 2}).batch(0);
         }},
        {"data: batch -1",
         IA,
         "batch_size",
         [] {
             tf::data::from_vector<int>({1, 2}).batch(-1);
         }},
        {"data: shuffle 0",
         IA,
         "buffer_size",
         [] {
             tf::data::from_vector<int>({1, 2}).shuffle(0);
         }},
        {"data: prefetch -5",
         IA,
         "buffer_size",
         [] {
             tf::data::from_vector<int>({1, 2}).prefetch(-5);
         }},
        {"data: map 0 calls",
         IA,
         "num_parallel_calls",
         [] {
             tf::data::from_vector<int>({1, 2}).map([](const int& i) { return i; }, 0);
         }},
        {"data: interleave cycle 0",
         IA,
         "cycle_length",
         [] {
             const auto one = [](const int& i) {
                 return tf::data::from_vector<int>({i});
             };
             tf::data::from_vector<int>({1, 2}).interleave(one, 0);
         }},
        {"data: shard 0",
         IA,
         "num_shards",
         [] {
             tf::data::from_vector<int>({1, 2}).shard(0, 0);
         }},
        {"data: shard index",
         IA,
         "index",
         [] {
             tf::data::from_vector<int>({1, 2}).shard(2, 2);
         }},
        {"data: batch ragged tensors",
         IA,
         "Cannot batch tensors",
         [] {
             tf::data::from_vector<tf::Tensor>({tf::ones({2}), tf::ones({3})}).batch(2).to_vector();
         }},
        {"data: from_tensor_slices rows",
         IA,
         "",
         [] {
             tf::data::from_tensor_slices({tf::ones({2}), tf::ones({3})});
         }},
        {"data: from_tensor_slices scalar",
         IA,
         "",
         [] {
             tf::data::from_tensor_slices({tf::constant(1.f)});
         }},
        {"data: map throws typed",
         IA,
         "[Op:AddV2]",
         [] {
             const auto bad = [](const int&) {
                 return tf::add(tf::ones({2}), tf::ones({3}));
             };
             tf::data::from_vector<int>({1, 2}).map(bad, 2).to_vector();
         }},

        // ---- threads, devices, misc ----
        {"set_num_threads 0",
         IA,
         "",
         [] {
             tf::set_num_threads(0);
         }},
        {"truncated_normal stddev",
         IA,
         "",
         [] {
             tf::random::truncated_normal({2}, 0, -1);
         }},
        // ---- tf::image ----
        {"resize size beyond int32",
         IA,
         "tf.image.resize",
         [] {
             tf::image::resize(tf::ones({1, 2, 2, 1}), {kMax, 2});
         }},
        {"resize output element overflow",
         IA,
         "[Op:ResizeBilinear]",
         [] {
             tf::image::resize(tf::ones({4, 2, 2, 3}), {2147483647, 2147483647});
         }},
        {"resize output too large",
         RE,
         "OOM when allocating tensor of shape [1,2147483647,2147483647,1]",
         [] {
             tf::image::resize(tf::ones({1, 2, 2, 1}), {2147483647, 2147483647});
         }},
        {"random_crop larger than the value",
         IA,
         "random_crop",
         [] {
             tf::image::random_crop(tf::ones({2, 2, 1}), {kMax, 1, 1});
         }},
        {"central_crop fraction",
         IA,
         "central_crop",
         [] {
             tf::image::central_crop(tf::ones({2, 2, 1}), 1.5);
         }},
        {"decode_png empty",
         IA,
         "decode_png",
         [] {
             tf::image::decode_png("");
         }},
    };
    // clang-format on
    return t;
}

}  // namespace

TEST_CASE("every bad call in the table raises its typed error naming the op or file",
          "[errors][bad-input]") {
    const std::vector<BadCall> calls = table();
    CHECK(calls.size() >= 150);
    int failures = 0;
    for (const BadCall& c : calls) {
        std::string problem;
        try {
            c.call();
            problem = "no error";
        } catch (const tf::errors::OpError& e) {
            if (e.code() != c.code) {
                problem = fmt::format("code {} (want {}): {}",
                                      tf::errors::code_name(e.code()),
                                      tf::errors::code_name(c.code),
                                      e.what());
            } else if (std::string(e.what()).find(c.names) == std::string::npos) {
                problem = fmt::format("message does not name '{}': {}", c.names, e.what());
            }
        } catch (const std::exception& e) {
            problem = fmt::format("foreign exception {}: {}", typeid(e).name(), e.what());
        }
        if (!problem.empty()) {
            ++failures;
            UNSCOPED_INFO(c.what << ": " << problem);
        }
    }
    CHECK(failures == 0);
}

// A missing GPU: NotFoundError when the CUDA plugin (or its runtime) cannot be loaded, naming the
// library; InvalidArgumentError when it loads but the device does not exist; UnimplementedError in
// a build without CUDA (docs/errors.md; the sanitizer builds are such builds). All name the device.
TEST_CASE("a GPU that is not there raises a typed error naming the device", "[errors][bad-input]") {
    try {
        (void)tf::ones({1}).to(tf::Device::cuda(7));
        FAIL("no error");
    } catch (const tf::errors::OpError& e) {
        CHECK((e.code() == tf::errors::Code::not_found ||
               e.code() == tf::errors::Code::invalid_argument ||
               e.code() == tf::errors::Code::unimplemented));
        CHECK(std::string(e.what()).find("/device:GPU:7") != std::string::npos);
    }
}
