// Event encoding and decoding. TF2 layout: one Summary.Value per event, a TensorProto payload and
// plugin metadata on every value; string payloads in string_val, numeric ones in tensor_content.
#include "summary/event_proto.hpp"

#include <cstring>
#include <utility>

#include <fmt/format.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/ops/creation.hpp>

namespace tapeflow::summary {
namespace {

// tapeflow dtype <-> TensorFlow DataType, one row per dtype.
constexpr std::pair<DType, proto::DataType> kDataTypes[] = {
    {DType::float32, proto::DT_FLOAT},
    {DType::float64, proto::DT_DOUBLE},
    {DType::int32, proto::DT_INT32},
    {DType::int64, proto::DT_INT64},
    {DType::uint8, proto::DT_UINT8},
    {DType::bool_, proto::DT_BOOL},
    {DType::float16, proto::DT_HALF},
    {DType::bfloat16, proto::DT_BFLOAT16},
};

proto::DataType to_proto_dtype(DType d) {
    for (const auto& [dtype, proto] : kDataTypes) {
        if (dtype == d) return proto;
    }
    return proto::DT_INVALID;
}

bool from_proto_dtype(proto::DataType d, DType* out) {
    for (const auto& [dtype, proto] : kDataTypes) {
        if (proto == d) {
            *out = dtype;
            return true;
        }
    }
    return false;
}

void set_shape(proto::TensorProto* proto, const std::vector<int64_t>& dims) {
    auto* shape = proto->mutable_tensor_shape();  // present even for rank 0, as TF writes it
    for (int64_t d : dims)
        shape->add_dim()->set_size(d);
}

void strings_to_proto(const std::vector<std::string>& strings,
                      const std::vector<int64_t>& dims,
                      proto::TensorProto* proto) {
    proto->set_dtype(proto::DT_STRING);
    set_shape(proto, dims);
    for (const std::string& s : strings)
        proto->add_string_val(s);
}

const char* plugin_of_kind(const std::string& kind) {
    if (kind == "scalar") return "scalars";
    if (kind == "histogram") return "histograms";
    if (kind == "image") return "images";
    if (kind == "audio") return "audio";
    if (kind == "text") return "text";
    return nullptr;
}

std::string kind_of_plugin(const std::string& plugin) {
    if (plugin == "scalars") return "scalar";
    if (plugin == "histograms") return "histogram";
    if (plugin == "images") return "image";
    if (plugin == "audio") return "audio";
    if (plugin == "text") return "text";
    return "other";
}

void value_to_proto(const SummaryValue& v, proto::Summary::Value* out) {
    out->set_tag(v.tag);
    const char* known = plugin_of_kind(v.kind);
    auto* plugin = out->mutable_metadata()->mutable_plugin_data();
    plugin->set_plugin_name(known != nullptr ? known : v.plugin_name);
    proto::TensorProto* t = out->mutable_tensor();
    const auto n = static_cast<int64_t>(v.strings.size());
    if (v.kind == "scalar" && !v.tensor.defined()) {
        const auto f = static_cast<float>(v.scalar_value);
        t->set_dtype(proto::DT_FLOAT);
        set_shape(t, {});
        t->set_tensor_content(std::string(reinterpret_cast<const char*>(&f), sizeof f));
    } else if (v.kind == "audio") {
        // [k, 2]: (wav, label) pairs; TF2 writes empty labels.
        proto::AudioPluginData audio;
        audio.set_encoding(proto::AudioPluginData::WAV);
        plugin->set_content(audio.SerializeAsString());
        std::vector<std::string> pairs;
        for (const std::string& wav : v.strings) {
            pairs.push_back(wav);
            pairs.emplace_back();
        }
        strings_to_proto(pairs, {n, 2}, t);
    } else if (v.kind == "text" && n == 1) {
        strings_to_proto(v.strings, {}, t);
    } else if (v.tensor.defined()) {
        tensor_to_proto(v.tensor, t);
    } else {
        strings_to_proto(v.strings, {n}, t);
    }
}

// TF1's HistogramProto as TensorBoard converts it (data_compat): empty buckets at both ends are
// dropped; left edges are [min] + inner limits, right edges inner limits + [max]; float32 [k,3].
Tensor legacy_histogram_rows(const proto::HistogramProto& h) {
    const int n = h.bucket_size();
    int start = 0, end = n - 1;
    while (start < n && !(h.bucket(start) > 0))
        ++start;
    while (end >= 0 && !(h.bucket(end) > 0))
        --end;
    std::vector<float> rows;
    for (int i = start; i <= end; ++i) {
        const bool limit_ok = i < h.bucket_limit_size();
        rows.push_back(static_cast<float>(i == start          ? h.min()
                                          : limit_ok && i > 0 ? h.bucket_limit(i - 1)
                                                              : 0));
        rows.push_back(static_cast<float>(i == end ? h.max() : limit_ok ? h.bucket_limit(i) : 0));
        rows.push_back(static_cast<float>(h.bucket(i)));
    }
    return constant(rows, Shape{static_cast<int64_t>(rows.size() / 3), 3});
}

std::vector<std::string> string_vals(const proto::TensorProto& t) {
    return {t.string_val().begin(), t.string_val().end()};
}

SummaryValue value_from_proto(const proto::Summary::Value& v) {
    SummaryValue out;
    out.tag = v.tag().empty() ? v.node_name() : v.tag();
    out.plugin_name = v.metadata().plugin_data().plugin_name();
    switch (v.value_case()) {
        case proto::Summary::Value::kSimpleValue:  // legacy scalar
            out.plugin_name = "scalars";
            out.scalar_value = v.simple_value();
            out.tensor = constant(v.simple_value());
            break;
        case proto::Summary::Value::kImage:  // legacy image: the TF2 [W, H, png] form
            out.plugin_name = "images";
            out.strings = {std::to_string(v.image().width()),
                           std::to_string(v.image().height()),
                           v.image().encoded_image_string()};
            break;
        case proto::Summary::Value::kAudio:  // legacy audio
            out.plugin_name = "audio";
            out.strings = {v.audio().encoded_audio_string()};
            break;
        case proto::Summary::Value::kHisto:
            out.plugin_name = "histograms";
            out.tensor = legacy_histogram_rows(v.histo());
            break;
        case proto::Summary::Value::kTensor: {
            const proto::TensorProto& t = v.tensor();
            if (t.dtype() == proto::DT_STRING) {
                out.strings = string_vals(t);
                if (out.plugin_name == "audio" && t.tensor_shape().dim_size() == 2) {
                    std::vector<std::string> clips;  // keep column 0 (the WAVs), drop the labels
                    const int64_t cols = t.tensor_shape().dim(1).size();
                    for (std::size_t i = 0; cols > 0 && i < out.strings.size(); i += cols) {
                        clips.push_back(out.strings[i]);
                    }
                    out.strings = std::move(clips);
                }
            } else {
                out.tensor = tensor_from_proto(t);
                if (out.tensor.defined() && out.tensor.num_elements() == 1) {
                    out.scalar_value = out.tensor.cast(DType::float64).item<double>();
                }
            }
            break;
        }
        default:
            break;
    }
    out.kind = kind_of_plugin(out.plugin_name);
    return out;
}

}  // namespace

void tensor_to_proto(const Tensor& t, proto::TensorProto* proto) {
    proto->set_dtype(to_proto_dtype(t.dtype()));
    set_shape(proto, t.shape().dims());
    const Tensor host = t.cpu();
    proto->set_tensor_content(
        std::string(static_cast<const char*>(host.raw_data()), host.nbytes()));
}

Tensor tensor_from_proto(const proto::TensorProto& proto) {
    DType dtype;
    if (!from_proto_dtype(proto.dtype(), &dtype)) return Tensor();
    std::vector<int64_t> dims;
    int64_t count = 1;
    for (const auto& d : proto.tensor_shape().dim()) {
        if (d.size() < 0 || (d.size() > 0 && count > (int64_t{1} << 40) / d.size())) {
            throw errors::DataLossError(
                fmt::format("TensorProto has a bad dimension {}", d.size()));
        }
        dims.push_back(d.size());
        count *= d.size();
    }
    const Shape shape(dims);
    const auto n = static_cast<std::size_t>(count);
    if (!proto.tensor_content().empty()) {
        if (proto.tensor_content().size() != n * dtype_size(dtype)) {
            throw errors::DataLossError(
                fmt::format("TensorProto tensor_content has {} bytes; shape {} of {} needs {}",
                            proto.tensor_content().size(),
                            shape.debug_string(),
                            dtype_name(dtype),
                            n * dtype_size(dtype)));
        }
        return detail::make_constant(proto.tensor_content().data(), dtype, n, shape, std::nullopt);
    }
    // The typed field: exactly n values, or one value repeated to fill the shape.
    auto from_field = [&](const auto& field, DType src) {
        const auto size = static_cast<std::size_t>(field.size());
        if (size == 0 && n == 0) return Tensor::empty(shape, dtype);
        // One value fills the shape: bound it, so a damaged shape cannot demand terabytes.
        if (size == 1 && n > (std::size_t{1} << 26)) {
            throw errors::DataLossError(fmt::format(
                "TensorProto shape {} is too large to fill from one value", shape.debug_string()));
        }
        if (size != n && size != 1) {
            throw errors::DataLossError(fmt::format(
                "TensorProto holds {} values for shape {}", size, shape.debug_string()));
        }
        using T = std::decay_t<decltype(field.Get(0))>;
        std::vector<T> values(field.begin(), field.end());
        if constexpr (std::is_same_v<T, bool>) {
            std::vector<uint8_t> bytes(values.begin(), values.end());
            return detail::make_constant(bytes.data(), src, size, shape, dtype);
        } else {
            return detail::make_constant(values.data(), src, size, shape, dtype);
        }
    };
    switch (dtype) {
        case DType::float32:
            return from_field(proto.float_val(), DType::float32);
        case DType::float64:
            return from_field(proto.double_val(), DType::float64);
        case DType::int64:
            return from_field(proto.int64_val(), DType::int64);
        case DType::bool_:
            return from_field(proto.bool_val(), DType::bool_);
        case DType::float16:
        case DType::bfloat16: {
            // half_val holds the 16-bit patterns: reinterpret, no conversion.
            std::vector<uint16_t> bits(proto.half_val().begin(), proto.half_val().end());
            if (bits.size() == 1 && n != 1 && n <= (std::size_t{1} << 26)) bits.assign(n, bits[0]);
            if (bits.size() != n) {
                throw errors::DataLossError(fmt::format(
                    "TensorProto holds {} values for shape {}", bits.size(), shape.debug_string()));
            }
            Tensor out = Tensor::empty(shape, dtype);
            if (n > 0) std::memcpy(out.mutable_raw_data(), bits.data(), n * 2);
            return out;
        }
        default:
            return from_field(proto.int_val(), DType::int32);  // int32, uint8
    }
}

std::string serialize_event(const Event& event) {
    proto::Event proto;
    proto.set_wall_time(event.wall_time);
    proto.set_step(event.step);
    if (!event.file_version.empty()) {
        proto.set_file_version(event.file_version);
    } else if (!event.graph_def.empty()) {
        proto.set_graph_def(event.graph_def);
    } else if (!event.values.empty()) {
        for (const SummaryValue& v : event.values)
            value_to_proto(v, proto.mutable_summary()->add_value());
    } else if (event.session_log_status != 0) {
        proto.mutable_session_log()->set_status(
            static_cast<proto::SessionLog::SessionStatus>(event.session_log_status));
    }
    return proto.SerializeAsString();
}

Event parse_event(std::string_view bytes, const std::string& where) {
    proto::Event proto;
    google::protobuf::LogSilencer quiet;  // bad input is a DataLossError, not a log line
    if (!proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
        throw errors::DataLossError("record is not a valid Event protobuf at " + where);
    }
    Event out;
    out.wall_time = proto.wall_time();
    out.step = proto.step();
    out.file_version = proto.file_version();
    out.graph_def = proto.graph_def();
    if (proto.has_session_log())
        out.session_log_status = static_cast<int>(proto.session_log().status());
    try {
        for (const auto& v : proto.summary().value())
            out.values.push_back(value_from_proto(v));
    } catch (const errors::OpError& e) {  // a well-formed protobuf holding an impossible tensor
        throw errors::DataLossError(e.message() + " at " + where);
    }
    return out;
}

}  // namespace tapeflow::summary
