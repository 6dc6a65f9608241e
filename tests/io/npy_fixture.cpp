// The C++ side of check_numpy.py: writes .npy/.npz files for NumPy to read, and prints what it
// reads from NumPy's files, as JSON ({"name": {"dtype", "shape", "values" (as float64)}}).
//   npy_fixture write DIR     writes DIR/<dtype>.npy, DIR/all.npz, DIR/all_compressed.npz
//   npy_fixture read FILE     a .npy file (its array is named "") or an .npz archive
#include <cstdio>
#include <map>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;

namespace {

std::string json_of(const std::map<std::string, tf::Tensor>& arrays) {
    std::string out = "{";
    for (const auto& [name, t] : arrays) {
        if (out.size() > 1) out += ", ";
        out += fmt::format("\"{}\": {{\"dtype\": \"{}\", \"shape\": [{}], \"values\": [{}]}}",
                           name,
                           tf::dtype_name(t.dtype()),
                           fmt::join(t.shape().dims(), ", "),
                           fmt::join(t.cast(tf::float64).to_vector<double>(), ", "));
    }
    return out + "}";
}

std::map<std::string, tf::Tensor> fixtures() {
    auto m = tf::constant({{1.5f, -2.f, 0.25f}, {4.f, 65504.f, -0.f}});
    return {
        {"float32", m},
        {"float64", m.cast(tf::float64) / 3.0},
        {"float16", m.cast(tf::float16)},
        {"int32", tf::constant({{-1, 2147483647}, {-2147483647 - 1, 0}})},
        {"int64", tf::constant({int64_t{-1}, int64_t{1} << 40})},
        {"uint8", tf::constant({0.f, 7.f, 255.f}).cast(tf::uint8)},
        {"bool", tf::constant({{true, false}, {false, true}})},
        {"scalar", tf::constant(2.5)},
        {"empty", tf::zeros({3, 0, 2}, tf::int32)},
        {"cube", tf::reshape(tf::range(0.f, 60.f, 1.f), {3, 4, 5})},
    };
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: npy_fixture write DIR | read FILE\n");
        return 2;
    }
    const std::string mode = argv[1], arg = argv[2];
    if (mode == "write") {
        const auto arrays = fixtures();
        for (const auto& [name, t] : arrays)
            tf::io::save_npy(arg + "/" + name + ".npy", t);
        tf::io::save_npz(arg + "/all.npz", arrays);
        tf::io::save_npz(arg + "/all_compressed.npz", arrays, true);
        fmt::print("{}\n", json_of(arrays));
    } else if (arg.ends_with(".npz")) {
        fmt::print("{}\n", json_of(tf::io::load_npz(arg)));
    } else {
        fmt::print("{}\n", json_of({{"", tf::io::load_npy(arg)}}));
    }
    return 0;
}
