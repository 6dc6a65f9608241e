// What the layer configs share (layer_configs.cpp: the original layers; layer_configs_more.cpp:
// the recurrent, reshaping, merging, preprocessing and newer conv / norm layers): Keras' nested
// object form, the default initializer, and reading the common options back.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <tapeflow/keras/saving.hpp>
#include <tapeflow/ops/nn.hpp>

namespace tapeflow::keras::saving_detail {

inline Config keras_object(const std::string& module,
                           const std::string& class_name,
                           Config config) {
    Config out;
    out.set("module", module);
    out.set("class_name", class_name);
    out.set("config", std::move(config));
    out.set("registered_name", Config());
    return out;
}

inline Config initializer(const std::string& class_name, Config config = Config::object()) {
    return keras_object("keras.initializers", class_name, std::move(config));
}

inline Config glorot_uniform() {
    return initializer("GlorotUniform", Config(Config::Object{{"seed", Config()}}));
}

inline Config lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) {
        return static_cast<char>(std::tolower(c));
    });
    return Config(s);
}

inline std::string activation_name(const std::string& a) {
    return a.empty() ? "linear" : a;
}

inline std::vector<int64_t> pair(const Ints& v) {
    const auto& x = v.values();
    return x.size() == 1 ? std::vector<int64_t>{x[0], x[0]} : x;
}

inline std::string dtype_option(const Config& config) {
    const Config& d = config.get("dtype", Config());
    std::string name;
    if (d.is_string()) name = d.as_string();
    if (d.is_object() && d.contains("config")) name = d["config"]["name"].as_string();
    return name == "float32" ? "" : name;
}

inline std::string name_option(const Config& config) {
    return config.get("name", Config("")).as_string();
}

inline std::optional<uint64_t> seed_option(const Config& c) {
    const Config& v = c.get("seed", Config());
    if (v.is_null()) return std::nullopt;
    return static_cast<uint64_t>(v.as_int());
}

}  // namespace tapeflow::keras::saving_detail
