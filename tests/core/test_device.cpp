// Device parsing, naming, default-device scopes and CUDA discovery on GPU-less machines.
#include <thread>

#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;

TEST_CASE("device strings parse in TensorFlow and PyTorch spellings", "[device]") {
    CHECK(tf::Device::parse("/cpu:0") == tf::Device::cpu());
    CHECK(tf::Device::parse("cpu") == tf::Device::cpu());
    CHECK(tf::Device::parse("CPU:0") == tf::Device::cpu());
    CHECK(tf::Device::parse("/job:localhost/replica:0/task:0/device:CPU:0") == tf::Device::cpu());
    CHECK(tf::Device::parse("/gpu:1") == tf::Device::cuda(1));
    CHECK(tf::Device::parse("cuda:0") == tf::Device::cuda(0));
    CHECK(tf::Device::parse("cuda") == tf::Device::cuda(0));
    CHECK(tf::Device::parse("GPU:0") == tf::Device::cuda(0));
    CHECK(tf::Device::parse("/device:GPU:3") == tf::Device::cuda(3));
    CHECK(tf::Device::parse("/device:GPU:3").index() == 3);
    CHECK(tf::Device::parse("gpu:2").is_cuda());
    CHECK(tf::Device::cpu().is_cpu());
}

TEST_CASE("device names", "[device]") {
    CHECK(tf::Device::cpu().str() == "/device:CPU:0");
    CHECK(tf::Device::cuda(0).str() == "/device:GPU:0");
    CHECK(fmt::format("{}", tf::Device::cuda(2)) == "/device:GPU:2");
    CHECK(tf::Device::parse(tf::Device::cuda(5).str()) == tf::Device::cuda(5));
}

TEST_CASE("unparseable device strings raise InvalidArgumentError", "[device][errors]") {
    for (const char* bad :
         {"", "tpu:0", "gpu:", "gpu:x", "gpu:-1", "cpu:1", "/device:", "gpu:1a"}) {
        CAPTURE(bad);
        CHECK_THROWS_AS(tf::Device::parse(bad), tf::errors::InvalidArgumentError);
    }
    CHECK_THROWS_WITH(tf::Device::parse("tpu:0"),
                      Catch::Contains("'tpu:0'") && Catch::Contains("tpu"));
    CHECK_THROWS_AS(tf::Device::cuda(-1), tf::errors::InvalidArgumentError);
}

TEST_CASE("tf::device scopes nest and are per thread", "[device]") {
    CHECK(tf::default_device() == tf::Device::cpu());
    {
        auto outer = tf::device(tf::Device::cuda(1));
        CHECK(tf::default_device() == tf::Device::cuda(1));
        {
            auto inner = tf::device(tf::Device::cpu());
            CHECK(tf::default_device() == tf::Device::cpu());
        }
        CHECK(tf::default_device() == tf::Device::cuda(1));
        tf::Device seen_by_other_thread = tf::Device::cuda(9);
        std::thread([&] { seen_by_other_thread = tf::default_device(); }).join();
        CHECK(seen_by_other_thread == tf::Device::cpu());
    }
    CHECK(tf::default_device() == tf::Device::cpu());
}

TEST_CASE("CUDA discovery never crashes", "[device]") {
    const int count = tf::cuda::device_count();
    CHECK(count >= 0);
    CHECK(tf::cuda::is_available() == (count > 0));
    if (count == 0) {
        // Creating a tensor on a missing GPU is an error, not a crash.
        auto scope = tf::device(tf::Device::cuda(0));
        CHECK_THROWS_AS(tf::zeros({2}), tf::errors::OpError);
        CHECK_THROWS_AS(tf::constant(1.f).to(tf::Device::cuda(0)), tf::errors::OpError);
    }
}
