// tf::summary::Event <-> tensorflow.Event (event.proto), and Tensor <-> TensorProto: the one place
// that knows how each summary kind is laid out on the wire.
#pragma once

#include <string>
#include <string_view>

#include <tapeflow/summary.hpp>

#include "tapeflow_proto/event.pb.h"

namespace tapeflow::summary {

/// Numeric tensor -> dtype, full shape and little-endian tensor_content (TF's
/// AsProtoTensorContent).
void tensor_to_proto(const Tensor& t, proto::TensorProto* proto);
/// Numeric TensorProto -> Tensor (tensor_content, or the *_val field, one value filling the shape).
/// Undefined for string and unsupported dtypes; DataLossError when the sizes disagree.
Tensor tensor_from_proto(const proto::TensorProto& proto);

/// The serialized tensorflow.Event of `event`, encoding each value by its kind.
std::string serialize_event(const Event& event);
/// Decodes a serialized tensorflow.Event; DataLossError (with `where`) on malformed bytes.
Event parse_event(std::string_view bytes, const std::string& where);

}  // namespace tapeflow::summary
