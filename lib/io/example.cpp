// tf::io::Example: the public feature map <-> tensorflow.Example protobuf (example.proto).
#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/io.hpp>

#include "tapeflow_proto/example.pb.h"

namespace tapeflow::io {
namespace {

const char* kind_name(const Example::Feature& f) {
    static constexpr const char* kNames[] = {"int64 list", "float list", "bytes list"};
    return kNames[f.index()];
}

template <class T>
const std::vector<T>& get_list(const std::map<std::string, Example::Feature, std::less<>>& features,
                               std::string_view name,
                               const char* want) {
    auto it = features.find(name);
    if (it == features.end()) {
        throw errors::NotFoundError(fmt::format("Example has no feature '{}'", name));
    }
    if (!std::holds_alternative<std::vector<T>>(it->second)) {
        throw errors::InvalidArgumentError(
            fmt::format("feature '{}' holds a {}, not a {}", name, kind_name(it->second), want));
    }
    return std::get<std::vector<T>>(it->second);
}

}  // namespace

Example& Example::add_int64(std::string_view name, std::vector<int64_t> values) {
    features_.insert_or_assign(std::string(name), Feature(std::move(values)));
    return *this;
}
Example& Example::add_float(std::string_view name, std::vector<float> values) {
    features_.insert_or_assign(std::string(name), Feature(std::move(values)));
    return *this;
}
Example& Example::add_bytes(std::string_view name, std::vector<std::string> values) {
    features_.insert_or_assign(std::string(name), Feature(std::move(values)));
    return *this;
}

std::vector<int64_t> Example::get_int64(std::string_view name) const {
    return get_list<int64_t>(features_, name, "int64 list");
}
std::vector<float> Example::get_float(std::string_view name) const {
    return get_list<float>(features_, name, "float list");
}
std::vector<std::string> Example::get_bytes(std::string_view name) const {
    return get_list<std::string>(features_, name, "bytes list");
}

std::vector<std::string> Example::names() const {
    std::vector<std::string> out;
    for (const auto& [name, _] : features_)
        out.push_back(name);
    return out;
}

std::string Example::serialize() const {
    proto::Example proto;
    auto& map = *proto.mutable_features()->mutable_feature();
    for (const auto& [name, feature] : features_) {
        proto::Feature& f = map[name];
        if (const auto* v = std::get_if<std::vector<int64_t>>(&feature)) {
            f.mutable_int64_list()->mutable_value()->Add(v->begin(), v->end());
        } else if (const auto* v = std::get_if<std::vector<float>>(&feature)) {
            f.mutable_float_list()->mutable_value()->Add(v->begin(), v->end());
        } else {
            // set the kind even for an empty list: TensorFlow writes 12 02 0a 00, not 12 00
            auto* list = f.mutable_bytes_list();
            for (const std::string& s : std::get<std::vector<std::string>>(feature))
                list->add_value(s);
        }
    }
    // Deterministic: map entries sorted by key, so equal Examples give equal bytes.
    std::string out;
    {
        google::protobuf::io::StringOutputStream stream(&out);
        google::protobuf::io::CodedOutputStream coded(&stream);
        coded.SetSerializationDeterministic(true);
        proto.SerializeToCodedStream(&coded);
    }
    return out;
}

Example Example::parse(std::string_view bytes) {
    proto::Example proto;
    google::protobuf::LogSilencer quiet;  // bad input is a DataLossError, not a log line
    if (!proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
        throw errors::DataLossError(
            fmt::format("cannot parse a tf.train.Example from {} bytes", bytes.size()));
    }
    Example out;
    for (const auto& [name, f] : proto.features().feature()) {
        switch (f.kind_case()) {
            case proto::Feature::kInt64List:
                out.add_int64(name, {f.int64_list().value().begin(), f.int64_list().value().end()});
                break;
            case proto::Feature::kFloatList:
                out.add_float(name, {f.float_list().value().begin(), f.float_list().value().end()});
                break;
            case proto::Feature::kBytesList:
                out.add_bytes(name, {f.bytes_list().value().begin(), f.bytes_list().value().end()});
                break;
            default:  // a feature with no kind set: TensorFlow treats it as an empty list
                out.add_bytes(name, {});
                break;
        }
    }
    return out;
}

}  // namespace tapeflow::io
