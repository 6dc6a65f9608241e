// GPU tests of the core: device copies, factories under a device scope, and seeded random numbers
// identical to the CPU's. Runs only where a GPU is present (see gpu_gate.cpp).
#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

#include "ops/apply.hpp"
#include "ops/dispatch.hpp"

namespace tf = tapeflow;

TEST_CASE("round trip host -> GPU -> host keeps every byte", "[gpu]") {
    auto x = tf::constant({{1.5f, -2.f, 3.f}, {4.f, 5.f, 6.25f}});
    auto g = x.to(tf::Device::cuda(0));
    CHECK(g.device() == tf::Device::cuda(0));
    CHECK(g.shape() == x.shape());
    CHECK(g.cpu().to_vector<float>() == x.to_vector<float>());
}

TEST_CASE("factories follow tf::device", "[gpu]") {
    auto scope = tf::device(tf::Device::parse("/gpu:0"));
    auto z = tf::zeros({3, 4}, tf::float64);
    CHECK(z.device().is_cuda());
    CHECK(z.to_vector<double>() == std::vector<double>(12, 0.0));
    auto c = tf::constant({1, 2, 3});
    CHECK(c.device().is_cuda());
    CHECK(c.to_vector<int>() == std::vector<int>{1, 2, 3});
}

TEST_CASE("seeded random numbers are identical on CPU and GPU", "[gpu][random]") {
    // Non-power-of-two scales, so that an fma in the affine step would show; every dtype bit for
    // bit (float64 normals are drawn on the host with glibc's log and sincos, as TensorFlow's).
    for (auto dtype : {tf::float32, tf::float64, tf::float16, tf::bfloat16}) {
        INFO(tf::dtype_name(dtype));
        tf::random::set_seed(7);
        const auto cpu_n = tf::random::normal({1001}, 0.3, 1.7, dtype).to_vector<double>();
        const auto cpu_u = tf::random::uniform({1001}, -1.1, 3.3, dtype).to_vector<double>();
        const auto cpu_t = tf::random::truncated_normal({1001}, 1, 0.07, dtype).to_vector<double>();
        tf::random::set_seed(7);
        auto scope = tf::device(tf::Device::cuda(0));
        auto gpu_n = tf::random::normal({1001}, 0.3, 1.7, dtype);
        CHECK(gpu_n.device().is_cuda());
        CHECK(gpu_n.to_vector<double>() == cpu_n);
        CHECK(tf::random::uniform({1001}, -1.1, 3.3, dtype).to_vector<double>() == cpu_u);
        CHECK(tf::random::truncated_normal({1001}, 1, 0.07, dtype).to_vector<double>() == cpu_t);
    }
    for (auto dtype : {tf::int32, tf::int64}) {
        tf::random::set_seed(9);
        const auto cpu = tf::random::uniform({999}, -5, 1000003, dtype).to_vector<int64_t>();
        tf::random::set_seed(9);
        auto scope = tf::device(tf::Device::cuda(0));
        CHECK(tf::random::uniform({999}, -5, 1000003, dtype).to_vector<int64_t>() == cpu);
    }
    tf::random::set_seed(3);
    auto rows = tf::reshape(tf::range(0, 3000, 1, tf::int32), {1000, 3});
    const auto cpu = tf::random::shuffle(rows).to_vector<int32_t>();
    tf::random::set_seed(3);
    const auto gpu = tf::random::shuffle(rows.to(tf::Device::cuda(0)));
    CHECK(gpu.device().is_cuda());
    CHECK(gpu.to_vector<int32_t>() == cpu);
}

TEST_CASE("a missing GPU kernel names the op, device and dtype", "[gpu]") {
    try {
        (void)tf::kernel_registry().find(tf::Op::sqrt, tf::Device::cuda(0), tf::int32);
        FAIL("expected UnimplementedError");
    } catch (const tf::errors::UnimplementedError& e) {
        CHECK_THAT(e.what(),
                   Catch::Contains("sqrt") && Catch::Contains("/device:GPU:0") &&
                       Catch::Contains("int32"));
    }
}

namespace {

// f on x and on x's GPU copy: the results must be equal element for element (pure data movement,
// integer arithmetic, or float sums in the CPU's order).
template <class F>
void check_same_on_gpu(const tf::Tensor& x, F&& f) {
    const tf::Tensor cpu = f(x);
    const tf::Tensor gpu = f(x.to(tf::Device::cuda(0)));
    CHECK(gpu.device().is_cuda());
    CHECK(gpu.shape() == cpu.shape());
    CHECK(gpu.to_vector<double>() == cpu.to_vector<double>());
}

tf::Tensor counting(std::vector<int64_t> dims, tf::DType dtype) {
    int64_t n = 1;
    for (int64_t d : dims)
        n *= d;
    return tf::cast(tf::reshape(tf::range(0, static_cast<double>(n), 1, tf::float64), dims), dtype);
}

}  // namespace

TEST_CASE("tiled transposes, row-wise walks and the new native kernels match the CPU", "[gpu]") {
    for (auto dtype : {tf::float32, tf::float64, tf::float16, tf::uint8}) {
        INFO(tf::dtype_name(dtype));
        check_same_on_gpu(counting({67, 129}, dtype),
                          [](const tf::Tensor& t) { return tf::transpose(t); });
        check_same_on_gpu(counting({3, 45, 70}, dtype), [](const tf::Tensor& t) {
            return tf::transpose(t, {0, 2, 1});
        });
        check_same_on_gpu(counting({2, 1, 33, 40}, dtype), [](const tf::Tensor& t) {
            return tf::transpose(t, {1, 0, 3, 2});
        });
        check_same_on_gpu(counting({4, 5, 6}, dtype), [](const tf::Tensor& t) {
            return tf::transpose(t, {1, 2, 0});
        });
        check_same_on_gpu(counting({1, 300}, dtype),
                          [](const tf::Tensor& t) { return tf::transpose(t); });
        check_same_on_gpu(counting({50, 300}, dtype), [](const tf::Tensor& t) {
            return tf::slice(t, {3, 7}, {20, 250});
        });
    }
    check_same_on_gpu(counting({100, 300}, tf::float32), [](const tf::Tensor& t) {
        return t + tf::reshape(tf::slice(t, {0, 0}, {100, 1}), {100, 1});  // column broadcast
    });
    check_same_on_gpu(counting({7, 5, 200}, tf::int32), [](const tf::Tensor& t) {
        return t * tf::slice(t, {0, 0, 0}, {7, 1, 1});
    });
    for (auto dtype : {tf::int32, tf::int64}) {
        const tf::Tensor a = counting({33, 40}, dtype) - 600;
        check_same_on_gpu(a, [](const tf::Tensor& t) { return tf::matmul(t, tf::transpose(t)); });
        check_same_on_gpu(a, [](const tf::Tensor& t) { return tf::matmul(t, t, false, true); });
        check_same_on_gpu(a, [](const tf::Tensor& t) { return tf::matmul(t, t, true, false); });
        check_same_on_gpu(tf::reshape(a, {3, 11, 40}), [](const tf::Tensor& t) {  // batch broadcast
            return tf::matmul(t, tf::reshape(tf::slice(t, {0, 0, 0}, {1, 11, 40}), {1, 40, 11}));
        });
    }
    for (auto dtype : {tf::float32, tf::float16, tf::int32, tf::uint8}) {
        for (const char* mode : {"REFLECT", "SYMMETRIC"}) {
            check_same_on_gpu(counting({9, 70}, dtype), [&](const tf::Tensor& t) {
                return tf::apply(tf::Op::mirror_pad_grad,
                                 {t},
                                 {tf::Shape{5, 64}, dtype},
                                 tf::Attrs()
                                     .set("paddings", std::vector<int64_t>{3, 1, 2, 4})
                                     .set("mode", std::string(mode)));
            });
        }
    }
    const tf::Tensor ids = tf::constant({0, 2, 0, 1, 2, 2});
    check_same_on_gpu(counting({6, 70}, tf::uint8), [&](const tf::Tensor& t) {
        return tf::unsorted_segment_sum(t, ids.to(t.device()), 3);
    });
}

TEST_CASE("tf::function replays a GPU training step bit for bit as eager execution",
          "[gpu][function]") {
    auto scope = tf::device(tf::Device::cuda(0));
    auto run = [](bool traced) {
        tf::random::set_seed(4);
        tf::Variable w(tf::random::normal({16, 8}, 0, 0.2, tf::float32, 1));
        tf::Variable b(tf::zeros({8}));
        tf::train::AdamOptimizer opt(0.01);
        const tf::Tensor x = tf::random::normal({32, 16}, 0, 1, tf::float32, 2);
        auto step = [&] {
            tf::GradientTape tape;
            const tf::Tensor h = tf::nn::dropout(tf::nn::relu(tf::matmul(x, w) + b), 0.1, 5);
            const tf::Tensor loss = tf::reduce_mean(tf::square(h));
            const std::vector<tf::Gradient> g =
                tape.gradient(loss, std::vector<tf::Variable>{w, b});
            opt.apply_gradients({{g[0], w}, {g[1], b}});
            return loss;
        };
        auto fn = tf::function(step);
        std::vector<float> losses;
        for (int i = 0; i < 5; ++i)
            losses.push_back((traced ? fn() : step()).item<float>());
        return std::make_pair(losses, w.value().to_vector<float>());
    };
    CHECK(run(true) == run(false));
}
