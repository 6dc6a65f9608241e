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

TEST_CASE("DeviceSpec: TensorFlow's partial device names", "[device]") {
    const auto full = tf::DeviceSpec::from_string("/job:ps/replica:0/task:1/device:GPU:2");
    CHECK(full.job == "ps");
    CHECK(full.replica == 0);
    CHECK(full.task == 1);
    CHECK(full.device_type == "GPU");
    CHECK(full.device_index == 2);
    CHECK(full.to_string() == "/job:ps/replica:0/task:1/device:GPU:2");
    CHECK(tf::DeviceSpec::from_string("/job:worker/task:3").to_string() == "/job:worker/task:3");
    CHECK(tf::DeviceSpec::from_string("/gpu:1").to_string() == "/device:GPU:1");
    CHECK(tf::DeviceSpec::from_string("/device:CPU:*").device_index == std::nullopt);
    CHECK(tf::DeviceSpec::from_string("/task:2").task == 2);
    // The inner name's parts win (nested tf.device scopes, make_merged_spec).
    const auto merged = tf::DeviceSpec::from_string("/job:ps/task:0/device:CPU:0")
                            .make_merged_spec(tf::DeviceSpec::from_string("/task:1/gpu:0"));
    CHECK(merged.to_string() == "/job:ps/task:1/device:GPU:0");
    // A task's name alone is that task's CPU for Device::parse.
    CHECK(tf::Device::parse("/job:worker/task:7") == tf::Device::cpu());
    CHECK(tf::Device::parse("/job:worker/task:1/device:GPU:0") == tf::Device::cuda(0));
    for (const char* bad :
         {"/job:", "/task:x", "/task:*", "/job:a/job:b", "/cpu:0/gpu:0", "/foo:1"}) {
        CAPTURE(bad);
        CHECK_THROWS_AS(tf::DeviceSpec::from_string(bad), tf::errors::InvalidArgumentError);
    }
}

TEST_CASE("tf::device with names and device functions places tensors and variables", "[device]") {
    std::vector<std::string> asked;
    {
        auto scope = tf::device([&](const tf::PlacementRequest& r) {
            asked.push_back(r.op_type + ":" + r.name);
            return std::string(r.op_type.empty() ? "/job:worker/task:0/device:CPU:0"
                                                 : "/job:ps/task:0");
        });
        CHECK(tf::default_device() == tf::Device::cpu());
        // Without a tf::train::Server the job and task are accepted and the variable is local.
        tf::Variable v(tf::zeros({2}), {.name = "placed"});
        CHECK(v.device() == tf::Device::cpu());
    }
    // Asked once, for the scope's default device; variables are asked for only by a running
    // tf::train::Server (tests/distribute/test_cluster.cpp).
    REQUIRE(asked.size() == 1);
    CHECK(asked[0] == ":");
    {
        auto outer = tf::device("/job:worker/task:1/device:GPU:3");
        CHECK(tf::default_device() == tf::Device::cuda(3));
        auto inner = tf::device("/job:ps");  // no device part: the default device is kept
        CHECK(tf::default_device() == tf::Device::cuda(3));
    }
    CHECK(tf::default_device() == tf::Device::cpu());
    CHECK_THROWS_AS(tf::device(tf::DeviceFunction{}), tf::errors::InvalidArgumentError);
    CHECK_THROWS_AS(tf::device("/job:ps/task:x"), tf::errors::InvalidArgumentError);
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
