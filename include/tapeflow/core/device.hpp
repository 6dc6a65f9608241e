// Device: where a tensor's data lives (the CPU or one CUDA GPU), and the default-device scope.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <tapeflow/core/export.hpp>
#include <tapeflow/core/fmt_support.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow {

enum class DeviceType : uint8_t { cpu, cuda };

/// A device: the CPU or CUDA GPU `index`.
///
///     tf::Device::parse("/gpu:1") == tf::Device::cuda(1);  tf::Device::cpu().str() ==
///     "/device:CPU:0"
class Device {
public:
    Device() = default;  // the CPU
    static Device cpu() { return {}; }
    static Device cuda(int index = 0);
    /// Accepts TensorFlow and PyTorch spellings, case-insensitive: "cpu", "/cpu:0", "CPU:0", "gpu",
    /// "/gpu:1", "GPU:0", "cuda", "cuda:0", "/device:GPU:0",
    /// "/job:localhost/replica:0/task:0/device:CPU:0". Anything else throws InvalidArgumentError
    /// quoting the string.
    static Device parse(std::string_view spec);

    DeviceType type() const { return type_; }
    bool is_cpu() const { return type_ == DeviceType::cpu; }
    bool is_cuda() const { return type_ == DeviceType::cuda; }
    int index() const { return index_; }
    /// TensorFlow's canonical name: "/device:CPU:0", "/device:GPU:0".
    std::string str() const;
    bool operator==(const Device& other) const = default;

private:
    Device(DeviceType type, int index) : type_(type), index_(index) {}
    DeviceType type_ = DeviceType::cpu;
    int index_ = 0;
};

/// RAII guard returned by tf::device(): while alive, factory functions (constant, zeros, random,
/// ...) on this thread create their tensors on its device. Scopes nest; destruction restores the
/// previous one.
class [[nodiscard]] DeviceScope {
public:
    explicit DeviceScope(Device device);
    ~DeviceScope();
    DeviceScope(const DeviceScope&) = delete;
    DeviceScope& operator=(const DeviceScope&) = delete;

private:
    Device previous_;
};

/// Makes `device` the default for new tensors on this thread until the returned scope ends:
///
///     { auto scope = tf::device(tf::Device::cuda(0)); auto x = tf::zeros({2, 2}); /* on the GPU */
///     }
[[nodiscard]] DeviceScope device(Device device);
/// The current default device of this thread (the CPU unless a tf::device scope is active).
Device default_device();

namespace cuda {
/// True when tapeflow was built with CUDA and a usable GPU and driver are present.
bool is_available();
/// Number of usable CUDA GPUs (0 without CUDA support, driver or device).
int device_count();
}  // namespace cuda

}  // namespace tapeflow

template <>
struct fmt::formatter<tapeflow::Device> : tapeflow::detail::StrFormatter {
    template <class Ctx>
    auto format(const tapeflow::Device& v, Ctx& ctx) const {
        return write(v.str(), ctx);
    }
};

TAPEFLOW_API_END
