// Writes the TensorFlow checkpoint that tests/checkpoint/read_bundle.py (an independent Python
// reader) checks value by value: every dtype, strings, an empty tensor, a scalar, and enough
// entries in small blocks for several data blocks and restart intervals.
//   bundle_fixture PREFIX
// With --saver it instead trains w = [1, -2, 0.5] two steps with tf::train::AdamOptimizer(0.1) on
// loss sum(w²)/2 (global step 0 -> 2) and saves with the default Saver (TF format, max_to_keep 1)
// at steps 1 and 2 into DIR: read_bundle.py recomputes TF1's Adam and checks keys and values.
//   bundle_fixture --saver DIR
#include <cstdio>

#include <fmt/format.h>

#include <tapeflow/tapeflow.hpp>

#include "train/checkpoint/tensor_bundle.hpp"

namespace tf = tapeflow;
namespace bundle = tapeflow::train::ckpt::bundle;

namespace {

int write_saver_checkpoints(const std::string& dir) {
    namespace t = tapeflow::train;
    tf::Variable w(tf::constant({1.f, -2.f, 0.5f}), {.name = "w"});
    tf::Variable step = t::get_or_create_global_step();
    t::AdamOptimizer opt(0.1);
    t::Saver saver(t::SaverOptions{.max_to_keep = 1});
    for (int64_t s = 1; s <= 2; ++s) {
        opt.minimize([&] { return tf::reduce_sum(w.value() * w.value()) * 0.5f; }, {w}, step);
        saver.save(dir + "/model.ckpt", s);
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc == 3 && std::string(argv[1]) == "--saver") return write_saver_checkpoints(argv[2]);
    if (argc != 2) {
        std::fprintf(stderr, "usage: bundle_fixture PREFIX | bundle_fixture --saver DIR\n");
        return 2;
    }
    bundle::BundleWriter writer(argv[1], {.block_size = 1024, .block_restart_interval = 4});
    writer.add("f32", tf::reshape(tf::constant({0.f, 0.25f, 0.5f, 0.75f, 1.f, 1.25f}), {2, 3}));
    writer.add("f64", tf::constant({1e-300, -2.5, 3.0, 1e300}));
    writer.add("i32", tf::constant({-7, 0, 2147483647}, tf::int32));
    writer.add("i64", tf::constant({int64_t{-(int64_t{1} << 62)}, int64_t{1} << 40}));
    writer.add("u8", tf::constant({0, 1, 127, 128, 255}, tf::uint8));
    writer.add("bool", tf::constant({{true, false}, {false, true}}));
    writer.add("f16", tf::constant({0.5f, -2.f, 1024.f}).cast(tf::float16));
    writer.add("bf16", tf::constant({1.f, -0.5f}).cast(tf::bfloat16));
    writer.add("empty", tf::zeros({0, 3}));
    writer.add("scalar", tf::constant(3.f));
    writer.add_strings("strings", {3}, {"", "hello", std::string("\0\xff bytes", 8)});
    for (int i = 0; i < 300; ++i) {
        writer.add(fmt::format("many/var_{:04d}", i), tf::constant({int64_t{i} * 3}));
    }
    writer.finish();
    return 0;
}
