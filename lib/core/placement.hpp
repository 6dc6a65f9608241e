// The thread's device-name and device-function scopes (tf::device(string), tf::device(function)),
// as a variable sees them when it is created: tf::train::Server places variables on the cluster's
// tasks with it. Not public API.
#pragma once

#include <memory>
#include <optional>
#include <string_view>

#include <tapeflow/core/device.hpp>

namespace tapeflow::detail {

/// One open scope: a fixed name or a function, over the scope it was opened in.
struct Placement {
    std::optional<DeviceSpec> spec;
    DeviceFunction function;
    std::shared_ptr<const Placement> outer;

    /// The merged name for `request`: the outer scopes' result with this scope's parts on top.
    DeviceSpec resolve(const PlacementRequest& request) const;
};

/// Where the open scopes place a variable named `name` (nullopt: no name or function scope is
/// open in this thread).
std::optional<DeviceSpec> variable_placement(std::string_view name);

}  // namespace tapeflow::detail
