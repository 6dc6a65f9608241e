// Helpers of the checkpoint tests: fresh temporary directories, whole-file bytes, bitwise tensor
// comparison and a variable of every dtype.
#pragma once

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

#include <tapeflow/tapeflow.hpp>

/// Checks the error's type and its message (Catch's CHECK_THROWS_AS and CHECK_THROWS_WITH).
#define CHECK_THROWS_TYPED(expr, type, matcher) \
    do {                                        \
        CHECK_THROWS_AS(expr, type);            \
        CHECK_THROWS_WITH(expr, matcher);       \
    } while (false)

namespace ckpt_test {

/// The prefix of a TensorFlow-written checkpoint in tests/golden/tf_checkpoints (the test's
/// TAPEFLOW_GOLDEN_DIR): "<golden>/tf_checkpoints/<name>/variables".
inline std::string golden_tf_checkpoint(const std::string& name) {
    const char* env = std::getenv("TAPEFLOW_GOLDEN_DIR");
    if (env == nullptr) throw std::runtime_error("TAPEFLOW_GOLDEN_DIR is not set");
    return std::string(env) + "/tf_checkpoints/" + name + "/variables";
}

namespace tf = tapeflow;

/// Removes the directories of fresh_dir when the test program exits.
struct TempDirs {
    std::vector<std::filesystem::path> dirs;
    ~TempDirs() {
        std::error_code ec;
        if (std::getenv("TAPEFLOW_KEEP_TEST_FILES") == nullptr) {
            for (const auto& d : dirs)
                std::filesystem::remove_all(d, ec);
        }
    }
};

/// A new empty directory under the system temp dir (removed first if it exists, and at exit
/// unless TAPEFLOW_KEEP_TEST_FILES is set).
inline std::string fresh_dir(const std::string& name) {
    static TempDirs created;
    const auto dir = std::filesystem::temp_directory_path() /
                     ("tapeflow_ckpt_" + std::to_string(::getpid()) + "_" + name);
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    created.dirs.push_back(dir);
    return dir.string();
}

inline std::string read_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

inline void write_bytes(const std::string& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

/// Same dtype, shape and bytes.
inline bool bitwise_equal(const tf::Tensor& a, const tf::Tensor& b) {
    if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
    const tf::Tensor ha = a.cpu(), hb = b.cpu();
    return a.nbytes() == 0 || std::memcmp(ha.raw_data(), hb.raw_data(), a.nbytes()) == 0;
}

/// One tensor of each dtype, with distinctive values (names "t_<dtype>").
inline std::map<std::string, tf::Tensor> tensors_of_every_dtype() {
    std::map<std::string, tf::Tensor> out;
    const tf::Tensor base = tf::constant({-2.5f, 0.f, 1.f, 3.75f, 100.f, -0.125f}, tf::float32);
    const tf::Shape shape{2, 3};
    for (const tf::DType d : {tf::float32,
                              tf::float64,
                              tf::int32,
                              tf::int64,
                              tf::uint8,
                              tf::bool_,
                              tf::float16,
                              tf::bfloat16}) {
        tf::Tensor t = tf::reshape(base, shape);
        if (d == tf::uint8 || d == tf::bool_) t = tf::abs(t);
        out.emplace("t_" + std::string(tf::dtype_name(d)), t.cast(d));
    }
    out.emplace("scalar_f64", tf::constant(3.141592653589793));
    out.emplace("empty_f32", tf::zeros({0, 4}));
    return out;
}

}  // namespace ckpt_test
