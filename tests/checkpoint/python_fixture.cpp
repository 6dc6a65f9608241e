// Writes a checkpoint with a tensor of every dtype into <dir> plus <dir>/expected.json (each
// tensor's safetensors dtype, shape and values as float64), for check_safetensors.py to compare
// with what a plain safetensors parser reads. Usage: ckpt_python_fixture <dir>
#include <cstdio>
#include <fstream>

#include <nlohmann/json.hpp>

#include <tapeflow/tapeflow.hpp>

#include "checkpoint/checkpoint_test_util.hpp"

namespace tf = tapeflow;

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s <dir>\n", argv[0]);
        return 2;
    }
    const std::string dir = argv[1];
    std::map<std::string, tf::Variable> named;
    nlohmann::json expected = nlohmann::json::object();
    for (const auto& [name, value] : ckpt_test::tensors_of_every_dtype()) {
        named.emplace(name, tf::Variable(value, {.name = "py_" + name}));
        expected[name] = {{"dtype", std::string(tf::dtype_name(value.dtype()))},
                          {"shape", value.shape().dims()},
                          {"values", value.cast(tf::float64).to_vector<double>()}};
    }
    const std::string prefix =
        tf::train::Saver(named, {.format = tf::train::CheckpointFormat::safetensors})
            .save(dir + "/model.ckpt", 1234);
    std::ofstream(dir + "/expected.json") << nlohmann::json{
        {"file", prefix + ".safetensors"},
        {"global_step", 1234},
        {"tensors", expected}}.dump(1);
    std::printf("%s\n", prefix.c_str());
    return 0;
}
