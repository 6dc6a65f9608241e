// TensorFlow checkpoints (tensor_bundle V2): files TensorFlow wrote read exactly (plain and Snappy
// index blocks, TF1 and TF2 object-graph keys), BundleWriter's output byte-identical to TF's,
// round trips of every dtype and layout, and bad input rejected with typed errors.
#include <cstdlib>
#include <filesystem>

#include <catch2/catch.hpp>

#include "checkpoint/checkpoint_test_util.hpp"
#include "io/crc32c.hpp"
#include "io/table.hpp"
#include "train/checkpoint/tensor_bundle.hpp"

namespace tf = tapeflow;
namespace t = tapeflow::train;
namespace bundle = tapeflow::train::ckpt::bundle;
namespace fs = std::filesystem;
using Catch::Contains;
using ckpt_test::bitwise_equal;
using ckpt_test::read_bytes;
using ckpt_test::write_bytes;

namespace {

const auto golden = &ckpt_test::golden_tf_checkpoint;

uint32_t bits_of(float f) {
    uint32_t u = 0;
    std::memcpy(&u, &f, 4);
    return u;
}

// The compression byte of a table's first data block (through the footer and index block).
int first_block_compression(const std::string& index_bytes) {
    const std::string_view footer =
        std::string_view(index_bytes).substr(index_bytes.size() - tf::io::table::kFooterSize);
    std::size_t pos = 0;
    uint64_t v = 0;
    uint64_t index_offset = 0;
    tf::io::table::get_varint64(footer, pos, v);
    tf::io::table::get_varint64(footer, pos, v);
    tf::io::table::get_varint64(footer, pos, index_offset);
    // The index block's first entry: shared 0, key length, value length, key, handle.
    const std::string_view block = std::string_view(index_bytes).substr(index_offset);
    pos = 0;
    uint64_t shared = 0, key_len = 0, value_len = 0, offset = 0, size = 0;
    tf::io::table::get_varint64(block, pos, shared);
    tf::io::table::get_varint64(block, pos, key_len);
    tf::io::table::get_varint64(block, pos, value_len);
    pos += key_len;
    tf::io::table::get_varint64(block, pos, offset);
    tf::io::table::get_varint64(block, pos, size);
    return static_cast<uint8_t>(index_bytes.at(offset + size));
}

tf::Tensor f32(float v) {
    return tf::constant(v);
}

}  // namespace

TEST_CASE("bundle: a TF1 checkpoint with Snappy index blocks (half_plus_two_cpu)", "[bundle]") {
    const std::string prefix = golden("saved_model_half_plus_two_cpu");
    REQUIRE(first_block_compression(read_bytes(prefix + ".index")) == 1);  // Snappy
    const auto reader = t::load_checkpoint(prefix);
    const std::map<std::string, tf::Shape> shapes = {
        {"a", {}}, {"a2", {}}, {"b", {}}, {"c", {}}, {"c2", {}}};
    CHECK(reader.get_variable_to_shape_map() == shapes);
    for (const auto& [key, dtype] : reader.get_variable_to_dtype_map())
        CHECK(dtype == tf::float32);
    CHECK(reader.get_variable_to_dtype_map().size() == 5);
    CHECK(reader.get_tensor("a").item<float>() == 0.5f);
    CHECK(reader.get_tensor("a2").item<float>() == 0.5f);
    CHECK(reader.get_tensor("b").item<float>() == 2.f);
    CHECK(reader.get_tensor("c").item<float>() == 3.f);
    CHECK(reader.get_tensor("c2").item<float>() == 3.f);
    CHECK(reader.get_tensor("a").shape() == tf::Shape{});
    CHECK(reader.dtype_name("b") == "float32");
}

TEST_CASE("bundle: a TF2 object-graph checkpoint (half_plus_two_tf2_cpu)", "[bundle]") {
    const std::string prefix = golden("saved_model_half_plus_two_tf2_cpu");
    REQUIRE(first_block_compression(read_bytes(prefix + ".index")) == 1);
    // ".index" is accepted after the prefix, as is the directory with a state file.
    const auto reader = t::load_checkpoint(prefix + ".index");
    CHECK(reader.get_variable_to_shape_map().size() == 4);
    CHECK(reader.get_tensor("a/.ATTRIBUTES/VARIABLE_VALUE").item<float>() == 0.5f);
    CHECK(reader.get_tensor("b/.ATTRIBUTES/VARIABLE_VALUE").item<float>() == 2.f);
    CHECK(reader.get_tensor("c/.ATTRIBUTES/VARIABLE_VALUE").item<float>() == 3.f);
    CHECK(reader.has_tensor("_CHECKPOINTABLE_OBJECT_GRAPH"));
    CHECK(reader.dtype_name("_CHECKPOINTABLE_OBJECT_GRAPH") == "string");
    CHECK(!reader.get_variable_to_dtype_map().contains("_CHECKPOINTABLE_OBJECT_GRAPH"));
    const std::vector<std::string> graph = reader.get_tensor_bytes("_CHECKPOINTABLE_OBJECT_GRAPH");
    REQUIRE(graph.size() == 1);
    CHECK(graph[0].size() == 613);
    CHECK(
        graph[0].starts_with(std::string("\n\x98\x01\n\x05\x12\x01"
                                         "a",
                                         8)));
    CHECK(tf::io::crc32c(graph[0]) == 0xee34226eu);  // as read_bundle.py computes it
    CHECK_THROWS_TYPED(reader.get_tensor("_CHECKPOINTABLE_OBJECT_GRAPH"),
                       tf::errors::UnimplementedError,
                       Contains("get_tensor_bytes"));
    CHECK_THROWS_AS(reader.get_tensor_bytes("a/.ATTRIBUTES/VARIABLE_VALUE"),
                    tf::errors::InvalidArgumentError);

    const std::string dir = ckpt_test::fresh_dir("bundle_state");
    for (const char* f : {".index", ".data-00000-of-00001"})
        fs::copy_file(prefix + f, dir + "/variables" + f);
    write_bytes(dir + "/checkpoint", "model_checkpoint_path: \"variables\"\n");
    CHECK(t::load_checkpoint(dir).get_tensor("c/.ATTRIBUTES/VARIABLE_VALUE").item<float>() == 3.f);
}

TEST_CASE("bundle: plain index blocks (counter, mkl)", "[bundle]") {
    const std::string counter = golden("saved_model_counter");
    REQUIRE(first_block_compression(read_bytes(counter + ".index")) == 0);
    CHECK(t::load_checkpoint(counter).get_tensor("counter").item<float>() == 0.f);

    const auto mkl = t::load_checkpoint(golden("saved_model_half_plus_two_mkl"));
    CHECK(mkl.get_variable_to_shape_map().size() == 9);
    CHECK(mkl.get_tensor("a").item<float>() == 0.5f);
    CHECK(mkl.get_tensor("c").item<float>() == 3.f);
    CHECK(mkl.get_variable_to_shape_map().at("conv2d/kernel") == tf::Shape{1, 1, 1, 1});
    CHECK(mkl.get_tensor("conv2d_1/bias").shape() == tf::Shape{1});
    CHECK(mkl.get_tensor("conv2d_1/bias").to_vector<float>() == std::vector<float>{0.f});
    CHECK(bits_of(mkl.get_tensor("conv2d/kernel").to_vector<float>()[0]) == 0xbf05bbbeu);
    CHECK(bits_of(mkl.get_tensor("conv2d_1/kernel").to_vector<float>()[0]) == 0xbf85c63bu);
    CHECK(bits_of(mkl.get_tensor("conv2d_2/kernel").to_vector<float>()[0]) == 0x3fc9fa0bu);
}

TEST_CASE("bundle: BundleWriter writes the very bytes TensorFlow wrote", "[bundle]") {
    const std::string dir = ckpt_test::fresh_dir("bundle_same_bytes");
    {
        bundle::BundleWriter w(dir + "/counter");
        w.add("counter", f32(0.f));
        w.finish();
        const std::string tf_prefix = golden("saved_model_counter");
        CHECK(read_bytes(dir + "/counter.index") == read_bytes(tf_prefix + ".index"));
        CHECK(read_bytes(dir + "/counter.data-00000-of-00001") ==
              read_bytes(tf_prefix + ".data-00000-of-00001"));
    }
    {
        // The same keys and values, added in the order TF's saver did (sorted).
        const std::string tf_prefix = golden("saved_model_half_plus_two_mkl");
        const auto tf_reader = t::load_checkpoint(tf_prefix);
        bundle::BundleWriter w(dir + "/mkl");
        for (const auto& [key, shape] : tf_reader.get_variable_to_shape_map())
            w.add(key, tf_reader.get_tensor(key));
        w.finish();
        CHECK(read_bytes(dir + "/mkl.index") == read_bytes(tf_prefix + ".index"));
        CHECK(read_bytes(dir + "/mkl.data-00000-of-00001") ==
              read_bytes(tf_prefix + ".data-00000-of-00001"));
    }
    {
        // A string tensor is encoded as TF encodes it: the TF2 file's object graph, rewritten.
        const std::string tf_prefix = golden("saved_model_half_plus_two_tf2_cpu");
        const auto tf_reader = t::load_checkpoint(tf_prefix);
        bundle::BundleWriter w(dir + "/tf2");
        for (const char* k : {"a", "b", "c"}) {
            const std::string key = std::string(k) + "/.ATTRIBUTES/VARIABLE_VALUE";
            w.add(key, tf_reader.get_tensor(key));
        }
        w.add_strings("_CHECKPOINTABLE_OBJECT_GRAPH",
                      {},
                      tf_reader.get_tensor_bytes("_CHECKPOINTABLE_OBJECT_GRAPH"));
        w.finish();
        CHECK(read_bytes(dir + "/tf2.data-00000-of-00001") ==
              read_bytes(tf_prefix + ".data-00000-of-00001"));
        const auto back = t::load_checkpoint(dir + "/tf2");
        CHECK(back.get_tensor_bytes("_CHECKPOINTABLE_OBJECT_GRAPH") ==
              tf_reader.get_tensor_bytes("_CHECKPOINTABLE_OBJECT_GRAPH"));
    }
}

TEST_CASE("bundle: round trip of every dtype, strings, empty tensors and scalars", "[bundle]") {
    const std::string dir = ckpt_test::fresh_dir("bundle_roundtrip");
    const auto tensors = ckpt_test::tensors_of_every_dtype();
    for (const auto compression :
         {tf::io::table::Compression::none, tf::io::table::Compression::snappy}) {
        const std::string prefix = dir + "/rt" + std::to_string(static_cast<int>(compression));
        bundle::BundleWriter w(prefix, {.data_alignment = 8, .index_compression = compression});
        for (const auto& [name, value] : tensors)
            w.add(name, value);
        w.add("empty", tf::zeros({0, 3}));
        w.add("empty_i64", tf::zeros({4, 0}, tf::int64));
        w.add("scalar", tf::constant(int64_t{-5}));
        w.add_strings("str", {2, 2}, {"", "a", std::string(1000, 'z'), std::string("\0\n", 2)});
        w.add_strings("str_scalar", {}, {"x"});
        w.add_strings("str_empty", {0}, {});
        w.add_bytes("i8", bundle::DT_INT8, {3}, std::string("\x80\x00\x7f", 3));
        w.add_bytes("i16", bundle::DT_INT16, {2}, std::string("\x00\x80\xff\x7f", 4));
        w.add_bytes("u16", bundle::DT_UINT16, {1}, std::string("\x01\x02", 2));
        CHECK_THROWS_AS(w.add("scalar", f32(1.f)), tf::errors::InvalidArgumentError);
        CHECK_THROWS_AS(w.add("", f32(1.f)), tf::errors::InvalidArgumentError);
        w.finish();
        // data_alignment pads every tensor's end to 8 bytes, as TF's option does.
        CHECK(fs::file_size(prefix + ".data-00000-of-00001") % 8 == 0);

        const auto r = t::load_checkpoint(prefix);
        for (const auto& [name, value] : tensors) {
            INFO(name);
            CHECK(bitwise_equal(r.get_tensor(name), value));
            CHECK(r.get_variable_to_dtype_map().at(name) == value.dtype());
        }
        CHECK(r.get_tensor("empty").shape() == tf::Shape{0, 3});
        CHECK(r.get_tensor("empty_i64").dtype() == tf::int64);
        CHECK(r.get_tensor("empty_i64").shape() == tf::Shape{4, 0});
        CHECK(r.get_tensor("scalar").item<int64_t>() == -5);
        CHECK(r.get_tensor_bytes("str") ==
              std::vector<std::string>{"", "a", std::string(1000, 'z'), std::string("\0\n", 2)});
        CHECK(r.get_variable_to_shape_map().at("str") == tf::Shape{2, 2});
        CHECK(r.get_tensor_bytes("str_scalar") == std::vector<std::string>{"x"});
        CHECK(r.get_tensor_bytes("str_empty").empty());
        CHECK(r.get_tensor("i8").to_vector<int32_t>() == std::vector<int32_t>{-128, 0, 127});
        CHECK(r.get_tensor("i16").to_vector<int32_t>() == std::vector<int32_t>{-32768, 32767});
        CHECK(r.dtype_name("i8") == "int8");
        CHECK(r.get_variable_to_dtype_map().at("i16") == tf::int32);
        CHECK(r.dtype_name("u16") == "uint16");
        CHECK_THROWS_AS(r.get_tensor("u16"), tf::errors::UnimplementedError);
    }
}

TEST_CASE("bundle: many entries over several blocks and restart intervals", "[bundle]") {
    const std::string dir = ckpt_test::fresh_dir("bundle_many");
    for (const auto compression :
         {tf::io::table::Compression::none, tf::io::table::Compression::snappy}) {
        const std::string prefix = dir + "/many" + std::to_string(static_cast<int>(compression));
        bundle::BundleWriter w(
            prefix,
            {.index_compression = compression, .block_size = 300, .block_restart_interval = 3});
        for (int i = 0; i < 700; ++i) {
            // Keys sharing long prefixes (prefix compression) and out of order (sorted on write).
            const std::string key = fmt::format("model/layer_{:03d}/kernel/{}", (i * 37) % 700, i);
            w.add(key, tf::constant({static_cast<float>(i), -1.f}));
        }
        w.finish();
        const std::string index = read_bytes(prefix + ".index");
        CHECK(index.size() > 10 * 300 / (compression == tf::io::table::Compression::none ? 1 : 4));
        const auto r = t::load_checkpoint(prefix);
        const auto shapes = r.get_variable_to_shape_map();
        REQUIRE(shapes.size() == 700);
        for (int i = 0; i < 700; i += 7) {
            const std::string key = fmt::format("model/layer_{:03d}/kernel/{}", (i * 37) % 700, i);
            CHECK(r.get_tensor(key).to_vector<float>() ==
                  std::vector<float>{static_cast<float>(i), -1.f});
        }
    }
}

TEST_CASE("bundle: several data shards", "[bundle]") {
    const std::string dir = ckpt_test::fresh_dir("bundle_shards");
    const std::string prefix = dir + "/sharded";
    bundle::BundleWriter w(prefix, {.num_shards = 2});
    w.add("a", tf::constant({1.f, 2.f}), 0);
    w.add("b", tf::constant({3, 4, 5}, tf::int32), 1);
    w.add_strings("s", {1}, {"shard one"}, 1);
    w.add("c", f32(9.f), 0);
    CHECK_THROWS_AS(w.add("d", f32(1.f), 2), tf::errors::InvalidArgumentError);
    w.finish();
    REQUIRE(fs::exists(prefix + ".data-00000-of-00002"));
    REQUIRE(fs::exists(prefix + ".data-00001-of-00002"));
    {
        const auto r = t::load_checkpoint(prefix);
        CHECK(r.get_tensor("a").to_vector<float>() == std::vector<float>{1.f, 2.f});
        CHECK(r.get_tensor("b").to_vector<int32_t>() == std::vector<int32_t>{3, 4, 5});
        CHECK(r.get_tensor("c").item<float>() == 9.f);
        CHECK(r.get_tensor_bytes("s") == std::vector<std::string>{"shard one"});
    }
    fs::remove(prefix + ".data-00001-of-00002");
    CHECK_THROWS_TYPED(
        t::load_checkpoint(prefix), tf::errors::NotFoundError, Contains("data-00001-of-00002"));
}

TEST_CASE("bundle: missing checkpoints and keys are NotFoundErrors", "[bundle]") {
    const std::string dir = ckpt_test::fresh_dir("bundle_missing");
    CHECK_THROWS_TYPED(t::load_checkpoint(dir + "/nothing"),
                       tf::errors::NotFoundError,
                       Contains(dir + "/nothing"));
    CHECK_THROWS_AS(t::load_checkpoint(dir), tf::errors::NotFoundError);  // no state file
    const auto r = t::load_checkpoint(golden("saved_model_counter"));
    CHECK(!r.has_tensor("nope"));
    CHECK_THROWS_TYPED(r.get_tensor("nope"),
                       tf::errors::NotFoundError,
                       Contains("nope") && Contains("variables.index"));
    CHECK_THROWS_AS(r.get_tensor_bytes("nope"), tf::errors::NotFoundError);
    CHECK_THROWS_AS(r.dtype_name("nope"), tf::errors::NotFoundError);
}

TEST_CASE("bundle: corrupt index files are DataLossErrors", "[bundle]") {
    const std::string dir = ckpt_test::fresh_dir("bundle_corrupt_index");
    const std::string prefix = dir + "/c";
    bundle::BundleWriter w(prefix, {.block_size = 64});
    for (int i = 0; i < 12; ++i)
        w.add(fmt::format("v{:02d}", i), f32(static_cast<float>(i)));
    w.add_strings("s", {2}, {"ab", "c"});
    w.finish();
    const std::string good = read_bytes(prefix + ".index");
    const auto rewrite = [&](const std::string& bytes) {
        write_bytes(prefix + ".index", bytes);
    };

    SECTION("truncated at every length") {
        for (std::size_t n = 0; n < good.size(); ++n) {
            INFO(n);
            rewrite(good.substr(0, n));
            CHECK_THROWS_AS(t::load_checkpoint(prefix), tf::errors::DataLossError);
        }
    }
    SECTION("wrong magic number") {
        std::string bad = good;
        bad[bad.size() - 1] ^= 0x01;
        rewrite(bad);
        CHECK_THROWS_TYPED(t::load_checkpoint(prefix),
                           tf::errors::DataLossError,
                           Contains("magic") && Contains("c.index"));
    }
    SECTION("a bad block CRC") {
        std::string bad = good;
        bad[3] ^= 0x20;  // inside the first data block
        rewrite(bad);
        CHECK_THROWS_TYPED(t::load_checkpoint(prefix),
                           tf::errors::DataLossError,
                           Contains("checksum") && Contains("c.index"));
    }
    SECTION("every single bit flip: rejected with a typed error or read unchanged") {
        for (std::size_t i = 0; i < good.size(); ++i) {
            std::string bad = good;
            bad[i] ^= static_cast<char>(1 << (i % 8));
            rewrite(bad);
            INFO(i);
            try {
                const auto r = t::load_checkpoint(prefix);
                // Only the footer's padding is not covered by a CRC.
                CHECK(i >= good.size() - tf::io::table::kFooterSize);
                CHECK(r.get_tensor("v05").item<float>() == 5.f);
            } catch (const tf::errors::DataLossError&) {
            }
        }
    }
}

TEST_CASE("bundle: corrupt data files are DataLossErrors naming the key", "[bundle]") {
    const std::string dir = ckpt_test::fresh_dir("bundle_corrupt_data");
    const std::string prefix = dir + "/d";
    bundle::BundleWriter w(prefix);
    w.add("x", tf::constant({1.f, 2.f, 3.f}));
    w.add_strings("s", {2}, {"hello", "world"});
    w.finish();
    const std::string data_file = prefix + ".data-00000-of-00001";
    const std::string good = read_bytes(data_file);
    REQUIRE(good.size() == 12 + 2 + 4 + 10);

    SECTION("a flipped tensor byte") {
        std::string bad = good;
        bad[5] ^= 0x10;
        write_bytes(data_file, bad);
        CHECK_THROWS_TYPED(t::load_checkpoint(prefix).get_tensor("x"),
                           tf::errors::DataLossError,
                           Contains("'x'") && Contains("checksum"));
        CHECK(t::load_checkpoint(prefix).get_tensor_bytes("s").size() == 2);
    }
    SECTION("every flipped byte of the string tensor") {
        for (std::size_t i = 12; i < good.size(); ++i) {
            std::string bad = good;
            bad[i] ^= 0x04;
            write_bytes(data_file, bad);
            INFO(i);
            CHECK_THROWS_TYPED(t::load_checkpoint(prefix).get_tensor_bytes("s"),
                               tf::errors::DataLossError,
                               Contains("'s'"));
        }
    }
    SECTION("a truncated data file") {
        write_bytes(data_file, good.substr(0, 20));
        const auto r = t::load_checkpoint(prefix);
        CHECK(r.get_tensor("x").to_vector<float>() == std::vector<float>{1.f, 2.f, 3.f});
        CHECK_THROWS_TYPED(r.get_tensor_bytes("s"),
                           tf::errors::DataLossError,
                           Contains("'s'") && Contains("data-00000-of-00001"));
    }
}

TEST_CASE("bundle: entries that lie are DataLossErrors", "[bundle]") {
    const std::string dir = ckpt_test::fresh_dir("bundle_lies");
    const std::string prefix = dir + "/l";
    {
        bundle::BundleWriter w(prefix);
        w.add("x", tf::constant({1.f, 2.f}));
        w.finish();
    }
    const std::string data = read_bytes(prefix + ".data-00000-of-00001");
    // An index claiming 3 floats, with a CRC matching the 8 bytes there are: a size mismatch.
    tf::io::table::TableBuilder b;
    b.add("", std::string("\x08\x01\x1a\x02\x08\x01", 6));
    std::string entry = std::string("\x08\x01\x12\x04\x12\x02\x08\x03\x28\x08\x35", 11);
    tf::io::table::put_fixed32(entry, tf::io::masked_crc32c(data));
    b.add("x", entry);
    write_bytes(prefix + ".index", b.finish());
    CHECK_THROWS_TYPED(t::load_checkpoint(prefix).get_tensor("x"),
                       tf::errors::DataLossError,
                       Contains("'x'") && Contains("size"));
    // A header with a newer min_consumer, or written big-endian.
    tf::io::table::TableBuilder newer;
    newer.add("", std::string("\x08\x01\x1a\x04\x08\x02\x10\x02", 8));
    write_bytes(prefix + ".index", newer.finish());
    CHECK_THROWS_AS(t::load_checkpoint(prefix), tf::errors::UnimplementedError);
    tf::io::table::TableBuilder big;
    big.add("", std::string("\x08\x01\x10\x01\x1a\x02\x08\x01", 8));
    write_bytes(prefix + ".index", big.finish());
    CHECK_THROWS_AS(t::load_checkpoint(prefix), tf::errors::UnimplementedError);
    // No header entry; a shard id past num_shards.
    tf::io::table::TableBuilder headless;
    headless.add("x", entry);
    write_bytes(prefix + ".index", headless.finish());
    CHECK_THROWS_TYPED(t::load_checkpoint(prefix), tf::errors::DataLossError, Contains("header"));
    tf::io::table::TableBuilder bad_shard;
    bad_shard.add("", std::string("\x08\x01\x1a\x02\x08\x01", 6));
    bad_shard.add("x", std::string("\x08\x01\x12\x00\x18\x01", 6));
    write_bytes(prefix + ".index", bad_shard.finish());
    CHECK_THROWS_TYPED(t::load_checkpoint(prefix),
                       tf::errors::DataLossError,
                       Contains("'x'") && Contains("shard"));
}
