// Device parsing and naming, the thread-local default-device scope, and the device backends.
#include <cctype>
#include <charconv>
#include <cstring>
#include <string>

#include <tapeflow/core/device.hpp>
#include <tapeflow/core/error.hpp>

#include "core/backend.hpp"
#include "core/placement.hpp"

namespace tapeflow {
namespace {

thread_local Device tls_default_device;
thread_local std::shared_ptr<const detail::Placement> tls_placement;

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

namespace {

// A non-negative decimal, or nullopt for "*" (TF: any index).
std::optional<int> parse_index(std::string_view spec,
                               std::string_view text,
                               std::string_view what) {
    if (text == "*") return std::nullopt;
    if (text.empty()) bad_device(spec, fmt::format("missing {} after ':'", what));
    int value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || value < 0)
        bad_device(spec, fmt::format("'{}' is not a {}", text, what));
    return value;
}

std::string upper(std::string_view s) {
    std::string out(s);
    for (char& c : out)
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return out;
}

void set_once(std::string_view spec, bool& seen, std::string_view part) {
    if (seen) bad_device(spec, fmt::format("'{}' is given twice", part));
    seen = true;
}

}  // namespace

// The grammar of TensorFlow's device_spec.py: '/'-separated "job:<name>", "replica:<n>",
// "task:<n>", "device:<TYPE>:<n>" or the legacy "<type>:<n>"; plus PyTorch's "cuda:0" and a bare
// "cpu"/"gpu"/"cuda".
DeviceSpec DeviceSpec::from_string(std::string_view spec) {
    DeviceSpec out;
    bool seen_job = false, seen_replica = false, seen_task = false, seen_device = false;
    std::size_t begin = 0;
    bool any = false;
    while (begin <= spec.size()) {
        std::size_t end = spec.find('/', begin);
        if (end == std::string_view::npos) end = spec.size();
        const std::string_view part = spec.substr(begin, end - begin);
        begin = end + 1;
        if (part.empty()) continue;
        any = true;
        const std::string low = lower(part);
        const auto colon = low.find(':');
        const std::string key = low.substr(0, colon);
        const std::string_view rest =
            colon == std::string::npos ? std::string_view() : part.substr(colon + 1);
        if (key == "job") {
            set_once(spec, seen_job, "job");
            if (rest.empty()) bad_device(spec, "empty job name");
            out.job = std::string(rest);
        } else if (key == "replica") {
            set_once(spec, seen_replica, "replica");
            out.replica = parse_index(spec, rest, "replica index");
            if (!out.replica) bad_device(spec, "the replica index cannot be '*'");
        } else if (key == "task") {
            set_once(spec, seen_task, "task");
            out.task = parse_index(spec, rest, "task index");
            if (!out.task) bad_device(spec, "the task index cannot be '*'");
        } else {
            // "device:TYPE[:n]" or "TYPE[:n]".
            std::string_view type_and_index = part;
            if (key == "device") {
                if (colon == std::string::npos || rest.empty()) bad_device(spec, "no device type");
                type_and_index = rest;
            }
            set_once(spec, seen_device, "device");
            const auto c = type_and_index.find(':');
            const std::string_view type = type_and_index.substr(0, c);
            if (type.empty()) bad_device(spec, "no device type");
            const std::string t = lower(type);
            if (t != "cpu" && t != "gpu" && t != "cuda")
                bad_device(spec, fmt::format("unknown device type '{}'", t));
            out.device_type = t == "cpu" ? "CPU" : "GPU";
            if (c != std::string_view::npos) {
                out.device_index = parse_index(spec, type_and_index.substr(c + 1), "device index");
            }
        }
    }
    if (!any) bad_device(spec, "no device type");
    return out;
}

std::string DeviceSpec::to_string() const {
    std::string out;
    if (job) out += fmt::format("/job:{}", *job);
    if (replica) out += fmt::format("/replica:{}", *replica);
    if (task) out += fmt::format("/task:{}", *task);
    if (device_type)
        out += fmt::format(
            "/device:{}:{}", *device_type, device_index ? std::to_string(*device_index) : "*");
    return out;
}

DeviceSpec DeviceSpec::make_merged_spec(const DeviceSpec& other) const {
    DeviceSpec out = *this;
    if (other.job) out.job = other.job;
    if (other.replica) out.replica = other.replica;
    if (other.task) out.task = other.task;
    if (other.device_type) {
        if (out.device_type != other.device_type) out.device_index.reset();
        out.device_type = other.device_type;
    }
    if (other.device_index) out.device_index = other.device_index;
    return out;
}

Device Device::parse(std::string_view spec) {
    const DeviceSpec parts = DeviceSpec::from_string(spec);
    // A task's name without a device part ("/job:ps/task:0") is that task's CPU.
    if (!parts.device_type) return cpu();
    const int index = parts.device_index.value_or(0);
    if (*parts.device_type == "CPU") {
        if (index != 0) bad_device(spec, "tapeflow has one CPU device, /cpu:0");
        return cpu();
    }
    return cuda(index);
}

std::string Device::str() const {
    return fmt::format("/device:{}:{}", is_cpu() ? "CPU" : "GPU", index_);
}

DeviceScope::DeviceScope(Device device) : previous_(tls_default_device) {
    tls_default_device = device;
}

DeviceScope::DeviceScope(std::string_view spec) : previous_(tls_default_device) {
    auto p = std::make_shared<detail::Placement>();
    p->spec = DeviceSpec::from_string(spec);
    push(std::move(p));
}

DeviceScope::DeviceScope(DeviceFunction function) : previous_(tls_default_device) {
    if (!function) throw errors::InvalidArgumentError("tf::device: the device function is empty");
    auto p = std::make_shared<detail::Placement>();
    p->function = std::move(function);
    push(std::move(p));
}

void DeviceScope::push(std::shared_ptr<detail::Placement> placement) {
    placement->outer = tls_placement;
    // The default device: the device part of what the scopes give an op that is not a variable.
    const DeviceSpec spec = placement->resolve({});
    if (spec.device_type) tls_default_device = Device::parse(spec.to_string());
    previous_placement_ = tls_placement;
    tls_placement = std::move(placement);
    placed_ = true;
}

DeviceScope::~DeviceScope() {
    tls_default_device = previous_;
    if (placed_) tls_placement = std::move(previous_placement_);
}

DeviceScope device(Device device) {
    return DeviceScope(device);
}

DeviceScope device(std::string_view spec) {
    return DeviceScope(spec);
}

DeviceScope device(DeviceFunction function) {
    return DeviceScope(std::move(function));
}

namespace detail {

DeviceSpec Placement::resolve(const PlacementRequest& request) const {
    DeviceSpec base = outer ? outer->resolve(request) : DeviceSpec{};
    if (spec) return base.make_merged_spec(*spec);
    return base.make_merged_spec(DeviceSpec::from_string(function(request)));
}

std::optional<DeviceSpec> variable_placement(std::string_view name) {
    if (!tls_placement) return std::nullopt;
    return tls_placement->resolve({"VarHandleOp", std::string(name)});
}

}  // namespace detail

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
