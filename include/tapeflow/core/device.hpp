// Device: where a tensor's data lives (the CPU or one CUDA GPU), and the default-device scope.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
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

/// TensorFlow's tf.DeviceSpec: a possibly partial device name "/job:<job>/replica:<r>/task:<t>
/// /device:<TYPE>:<index>" (any part may be missing; an index "*" is none). In one process
/// only the device part names where tensors live; the job and task name a process of a
/// tf::train::Server's cluster, where variables created in a tf::device scope are placed.
///
///     auto spec = tf::DeviceSpec::from_string("/job:ps/task:1/device:CPU:0");
///     spec.job == "ps";  spec.task == 1;  spec.to_string() == "/job:ps/task:1/device:CPU:0"
struct DeviceSpec {
    std::optional<std::string> job;
    std::optional<int> replica;
    std::optional<int> task;
    std::optional<std::string> device_type;  // upper case: "CPU", "GPU"
    std::optional<int> device_index;

    /// Accepts every spelling Device::parse does, and partial names ("/job:ps", "/task:2").
    /// Malformed text raises InvalidArgumentError quoting it.
    static DeviceSpec from_string(std::string_view spec);
    /// The canonical name of the parts present ("" when none is).
    std::string to_string() const;
    /// This spec with the parts `other` has replacing its own (TF's make_merged_spec).
    DeviceSpec make_merged_spec(const DeviceSpec& other) const;
    bool operator==(const DeviceSpec& other) const = default;
};

/// What a device function is asked to place: for a Variable, op_type "VarHandleOp" and its name;
/// for every other op (the scope's default device), op_type "" and name "".
struct PlacementRequest {
    std::string op_type;
    std::string name;
};
/// TF1's device functions (tf.train.replica_device_setter): returns a device string for the op.
using DeviceFunction = std::function<std::string(const PlacementRequest&)>;

namespace detail {
struct Placement;
}

/// RAII guard returned by tf::device(): while alive, factory functions (constant, zeros, random,
/// ...) on this thread create their tensors on its device. Scopes nest; destruction restores the
/// previous one.
class [[nodiscard]] DeviceScope {
public:
    explicit DeviceScope(Device device);
    /// A device name or a device function: also places the variables created in the scope (see
    /// tf::device(std::string_view)).
    explicit DeviceScope(std::string_view spec);
    explicit DeviceScope(DeviceFunction function);
    ~DeviceScope();
    DeviceScope(const DeviceScope&) = delete;
    DeviceScope& operator=(const DeviceScope&) = delete;

private:
    void push(std::shared_ptr<detail::Placement> placement);
    Device previous_;
    bool placed_ = false;
    std::shared_ptr<const detail::Placement> previous_placement_;
};

/// Makes `device` the default for new tensors on this thread until the returned scope ends:
///
///     { auto scope = tf::device(tf::Device::cuda(0)); auto x = tf::zeros({2, 2}); /* on the GPU */
///     }
[[nodiscard]] DeviceScope device(Device device);
/// TensorFlow's `with tf.device("/job:worker/task:1/device:GPU:0")`: tensors are created on the
/// device part (kept from the enclosing scope when the name has none), and variables created in
/// the scope are placed on the named task of the tf::train::Server's cluster ("/job:ps/task:0":
/// the parameter server holds it). Nested names merge, the inner parts winning. Without a Server
/// in the process, job and task are accepted and ignored (one process is every task).
[[nodiscard]] DeviceScope device(std::string_view spec);
/// A device function (tf::train::replica_device_setter): asked once per variable created in the
/// scope, and once for the scope's default device.
[[nodiscard]] DeviceScope device(DeviceFunction function);
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
