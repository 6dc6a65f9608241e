// Device parsing and naming, the thread-local default-device scope, and the device backends.
#include <cctype>
#include <charconv>
#include <cstring>
#include <string>

#include <tapeflow/core/device.hpp>
#include <tapeflow/core/error.hpp>

#include "core/backend.hpp"

namespace tapeflow {
namespace {

thread_local Device tls_default_device;

[[noreturn]] void bad_device(std::string_view spec, std::string_view why) {
    throw errors::InvalidArgumentError(fmt::format(
        "Could not parse device string '{}': {}. Expected e.g. \"/cpu:0\", \"/gpu:1\", \"cpu\", "
        "\"cuda:0\", \"GPU:0\" or \"/device:GPU:0\"",
        spec,
        why));
}

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

}  // namespace

Device Device::cuda(int index) {
    if (index < 0) {
        throw errors::InvalidArgumentError(
            fmt::format("CUDA device index must be >= 0, got {}", index));
    }
    return {DeviceType::cuda, index};
}

Device Device::parse(std::string_view spec) {
    std::string s = lower(spec);
    // A fully qualified TensorFlow name: keep the part after the last "device:" (or the last '/').
    if (const auto pos = s.rfind("device:"); pos != std::string::npos) {
        s.erase(0, pos + 7);
    } else if (const auto slash = s.rfind('/'); slash != std::string::npos) {
        s.erase(0, slash + 1);
    }
    if (s.empty()) bad_device(spec, "no device type");
    std::string_view type = s;
    std::string_view index_text;
    if (const auto colon = s.find(':'); colon != std::string::npos) {
        type = std::string_view(s).substr(0, colon);
        index_text = std::string_view(s).substr(colon + 1);
        if (index_text.empty()) bad_device(spec, "missing device index after ':'");
    }
    int index = 0;
    if (!index_text.empty()) {
        const auto [end, ec] =
            std::from_chars(index_text.data(), index_text.data() + index_text.size(), index);
        if (ec != std::errc() || end != index_text.data() + index_text.size() || index < 0) {
            bad_device(spec, fmt::format("'{}' is not a device index", index_text));
        }
    }
    if (type == "cpu") {
        if (index != 0) bad_device(spec, "tapeflow has one CPU device, /cpu:0");
        return cpu();
    }
    if (type == "gpu" || type == "cuda") return cuda(index);
    bad_device(spec, fmt::format("unknown device type '{}'", type));
}

std::string Device::str() const {
    return fmt::format("/device:{}:{}", is_cpu() ? "CPU" : "GPU", index_);
}

DeviceScope::DeviceScope(Device device) : previous_(tls_default_device) {
    tls_default_device = device;
}

DeviceScope::~DeviceScope() {
    tls_default_device = previous_;
}

DeviceScope device(Device device) {
    return DeviceScope(device);
}

Device default_device() {
    return tls_default_device;
}

namespace {

class CpuBackend final : public DeviceBackend {
public:
    int device_count() override { return 1; }
    std::string unavailable_reason() override { return ""; }
    Allocator& allocator() override { return cpu_allocator(); }
    void copy(void* dst,
              Device /*dst_device*/,
              const void* src,
              Device /*src_device*/,
              std::size_t nbytes) override {
        if (nbytes != 0) std::memcpy(dst, src, nbytes);
    }
};

}  // namespace

DeviceBackend* find_backend(DeviceType type) {
    static CpuBackend cpu_backend;
    switch (type) {
        case DeviceType::cpu:
            return &cpu_backend;
        case DeviceType::cuda:
            return load_backend(type).backend;
    }
    return nullptr;
}

void check_device(Device device) {
    if (device.is_cpu()) return;
    const BackendLoad& load = load_backend(device.type());
    DeviceBackend* backend = load.backend;
    if (backend == nullptr) {
        const std::string message = fmt::format("{} requested, but {}", device.str(), load.error);
        if (!load.built) throw errors::UnimplementedError(message);
        throw errors::NotFoundError(message);
    }
    const int count = backend->device_count();
    if (device.index() >= count) {
        throw errors::InvalidArgumentError(
            count == 0
                ? fmt::format("{} requested, but no CUDA device is usable: {}",
                              device.str(),
                              backend->unavailable_reason())
                : fmt::format(
                      "{} requested, but only {} CUDA device(s) exist", device.str(), count));
    }
}

namespace cuda {

bool is_available() {
    return device_count() > 0;
}

int device_count() {
    DeviceBackend* backend = find_backend(DeviceType::cuda);
    return backend == nullptr ? 0 : backend->device_count();
}

}  // namespace cuda
}  // namespace tapeflow
