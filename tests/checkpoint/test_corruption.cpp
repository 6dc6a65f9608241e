// A corrupted checkpoint never restores wrong values: bit flips anywhere, truncation at every
// length, bad JSON, lying offsets and huge header lengths raise DataLossError (or NotFound /
// InvalidArgument / Unimplemented where that is the truth) naming the file and the tensor, and a
// failed restore leaves every variable unchanged.
#include <catch2/catch.hpp>

#include "checkpoint/checkpoint_test_util.hpp"
#include "checkpoint/corrupt_files.hpp"
#include "train/checkpoint/checkpoint_file.hpp"

namespace tf = tapeflow;
namespace t = tapeflow::train;
namespace ck = tapeflow::train::ckpt;
using Catch::Contains;
using ckpt_test::bitwise_equal;

namespace {

struct Reference {
    std::string dir;
    std::string file;
    std::string bytes;
    std::map<std::string, tf::Tensor> values;
};

const Reference& reference() {
    static const Reference r = [] {
        Reference ref;
        ref.dir = ckpt_test::fresh_dir("corrupt");
        ref.values = {
            {"a/w", tf::reshape(tf::constant({1.5f, -2.f, 3.25f, 0.f, 8.f, -0.5f}), {2, 3})},
            {"b", tf::constant({int64_t{7}, int64_t{-9}})},
            {"flag", tf::constant({true, false, true})},
            {"h", tf::constant({1.f, 2.f}).cast(tf::float16)}};
        std::map<std::string, tf::Variable> named;
        for (const auto& [name, value] : ref.values)
            named.emplace(name, tf::Variable(value, {.name = "cr_" + name}));
        const std::string prefix =
            t::Saver(named, t::SaverOptions{.format = t::CheckpointFormat::safetensors})
                .save(ref.dir + "/ref", 5);
        ref.file = prefix + ".safetensors";
        ref.bytes = ckpt_test::read_bytes(ref.file);
        return ref;
    }();
    return r;
}

// Reads every tensor of `bytes`; returns them (an error propagates).
std::map<std::string, tf::Tensor> read_all(const std::string& bytes) {
    const auto reader = ck::CheckpointReader::from_bytes(bytes, "mutant.safetensors");
    std::map<std::string, tf::Tensor> out;
    for (const ck::TensorEntry& e : reader->header().tensors)
        out.emplace(e.name, reader->read(e));
    return out;
}

// Restores `bytes` (written to a file) into variables holding zeros: returns the error's type name
// and message, checking that no variable changed; "" when the restore succeeded.
std::pair<std::string, std::string> restore_error(const std::string& bytes) {
    const Reference& ref = reference();
    const std::string file = ref.dir + "/mutant.safetensors";
    ckpt_test::write_bytes(file, bytes);
    std::map<std::string, tf::Variable> vars;
    for (const auto& [name, value] : ref.values)
        vars.emplace(name, tf::Variable(tf::zeros_like(value)));
    try {
        t::Saver(vars).restore(file);
    } catch (const tf::errors::OpError& e) {
        for (const auto& [name, var] : vars)
            CHECK(bitwise_equal(var.value(), tf::zeros_like(ref.values.at(name))));
        const char* kind =
            dynamic_cast<const tf::errors::DataLossError*>(&e)          ? "DataLoss"
            : dynamic_cast<const tf::errors::NotFoundError*>(&e)        ? "NotFound"
            : dynamic_cast<const tf::errors::InvalidArgumentError*>(&e) ? "InvalidArgument"
            : dynamic_cast<const tf::errors::UnimplementedError*>(&e)   ? "Unimplemented"
                                                                        : "other";
        return {kind, e.what()};
    }
    return {"", ""};
}

std::string header_of(const std::string& bytes) {
    uint64_t n = 0;
    std::memcpy(&n, bytes.data(), 8);
    return bytes.substr(8, n);
}

}  // namespace

TEST_CASE("a single bit flip anywhere never yields wrong values", "[checkpoint][corruption]") {
    const Reference& ref = reference();
    const std::string header = header_of(ref.bytes);
    const std::size_t data_start = 8 + header.size();
    // The metadata that no CRC covers and that does not affect values: "format" and "global_step".
    const std::size_t free_begin = 8 + header.find("\"format\"");
    const std::size_t free_end = 8 + header.find("\"global_step\":\"5\"") + 17;
    int errors = 0, harmless = 0;
    for (std::size_t i = 0; i < ref.bytes.size(); ++i) {
        for (int bit = 0; bit < 8; ++bit) {
            std::string m = ref.bytes;
            m[i] = static_cast<char>(m[i] ^ (1 << bit));
            try {
                const auto got = read_all(m);
                // Only the uncovered metadata may change without an error, and values stay exact.
                INFO("flip of bit " << bit << " of byte " << i);
                CHECK((i >= free_begin && i < free_end));
                REQUIRE(got.size() == ref.values.size());
                for (const auto& [name, value] : ref.values)
                    REQUIRE(bitwise_equal(got.at(name), value));
                ++harmless;
            } catch (
                const tf::errors::OpError& e) {  // a typed error (a flipped format: Unimplemented)
                ++errors;
                if (i >= data_start) {
                    INFO(e.what());
                    CHECK(e.code() == tf::errors::Code::data_loss);
                    CHECK_THAT(std::string(e.what()),
                               Contains("fails its CRC check") || Contains("bool tensor"));
                }
            }
        }
    }
    CHECK(errors >
          8 * static_cast<int>(ref.bytes.size()) - 8 * static_cast<int>(free_end - free_begin));
    CHECK(harmless > 0);
}

TEST_CASE("bit flips through Saver.restore: typed errors naming the file, variables unchanged",
          "[checkpoint][corruption]") {
    const Reference& ref = reference();
    const std::size_t data_start = 8 + header_of(ref.bytes).size();
    // In the data: the tensor's name is in the message.
    for (const auto& [name, value] : ref.values) {
        const auto reader = ck::CheckpointReader::from_bytes(ref.bytes, "x");
        const ck::TensorEntry* e = reader->find(name);
        std::string m = ref.bytes;
        m[data_start + e->begin] ^= 0x01;
        const auto [kind, what] = restore_error(m);
        CHECK(kind == "DataLoss");
        CHECK_THAT(what, Contains("'" + name + "'") && Contains("mutant.safetensors"));
    }
    // In the header: every byte, one bit each.
    for (std::size_t i = 0; i < data_start; i += 3) {
        std::string m = ref.bytes;
        m[i] ^= static_cast<char>(1 << (i % 8));
        const auto [kind, what] = restore_error(m);
        INFO("byte " << i << ": " << what);
        CHECK(
            (kind == "" || kind == "DataLoss" || kind == "NotFound" || kind == "InvalidArgument"));
        if (kind != "") CHECK_THAT(what, Contains("mutant"));
    }
}

TEST_CASE("truncation at every length raises DataLossError", "[checkpoint][corruption]") {
    const Reference& ref = reference();
    for (std::size_t n = 0; n < ref.bytes.size(); ++n) {
        INFO("truncated to " << n << " bytes");
        CHECK_THROWS_AS(read_all(ref.bytes.substr(0, n)), tf::errors::DataLossError);
    }
    // Through the file API too, with the file name in the message.
    for (const std::size_t n :
         {std::size_t{0}, std::size_t{5}, std::size_t{40}, ref.bytes.size() - 1}) {
        const auto [kind, what] = restore_error(ref.bytes.substr(0, n));
        CHECK(kind == "DataLoss");
        CHECK_THAT(what, Contains("mutant.safetensors"));
    }
    // Trailing garbage is corruption too.
    CHECK_THROWS_AS(read_all(ref.bytes + "xyz"), tf::errors::DataLossError);
}

TEST_CASE("huge or lying header lengths raise DataLossError without allocating them",
          "[checkpoint][corruption]") {
    const Reference& ref = reference();
    for (const uint64_t n :
         {uint64_t{1} << 63, ~uint64_t{0}, uint64_t{100'000'001}, uint64_t{ref.bytes.size()}}) {
        std::string m = ref.bytes;
        for (int i = 0; i < 8; ++i)
            m[static_cast<std::size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xff);
        INFO(n);
        CHECK_THROWS_AS(read_all(m), tf::errors::DataLossError);
        CHECK_THROWS_WITH(read_all(m), Contains("header length"));
    }
}

TEST_CASE("bad JSON and malformed entries raise DataLossError naming the tensor",
          "[checkpoint][corruption]") {
    using ckpt_test::safetensors_bytes;
    const std::string four(4, '\0');
    struct Bad {
        std::string json;
        std::string data;
        std::string mentions;
    };
    const std::vector<Bad> bad = {
        {"", "", "does not start with"},
        {"[1,2]", "", "does not start with"},
        {"{\"w\":", "", "not valid JSON"},
        {"{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}} x",
         four,
         "not valid JSON"},
        {"{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},\"w\":{\"dtype\":\"F32\","
         "\"shape\":[1],\"data_offsets\":[0,4]}}",
         four,
         "duplicate key 'w'"},
        {"{\"w\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"
         "]]]]]]]]]]]]]]]]]]]]]]]}",
         "",
         "nests deeper"},
        {"{\"w\":5}", "", "tensor 'w'"},
        {"{\"w\":{\"dtype\":\"Q7\",\"shape\":[1],\"data_offsets\":[0,4]}}",
         four,
         "unknown dtype 'Q7'"},
        {"{\"w\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", four, "tensor 'w'"},
        {"{\"w\":{\"dtype\":\"F32\",\"shape\":[1.5],\"data_offsets\":[0,4]}}", four, "tensor 'w'"},
        {"{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0]}}", four, "data_offsets"},
        {"{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4],\"extra\":1}}",
         four,
         "unknown field 'extra'"},
        {"{\"w\":{\"shape\":[1],\"data_offsets\":[0,4]}}", four, "dtype"},
        {"{\"__metadata__\":{\"format\":5}}", "", "__metadata__"},
        {"{\"__metadata__\":[]}", "", "__metadata__"},
        // lying offsets
        {"{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4]}}", four, "needs 8"},
        {"{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", four, "outside"},
        {"{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,0]}}", four, "tensor 'w'"},
        {"{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,18446744073709551615]}}",
         four,
         "outside"},
        {"{\"w\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,4]}}",
         four,
         "more than 2^64"},
        {"{\"v\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},\"w\":{\"dtype\":\"F32\","
         "\"shape\":[1],\"data_offsets\":[0,4]}}",
         std::string(8, '\0'),
         "overlaps"},
        {"{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}",
         std::string(8, '\0'),
         "unused"},
        {"{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}",
         std::string(8, '\0'),
         "data bytes"},
        // metadata
        {"{\"__metadata__\":{\"format\":\"tapeflow-checkpoint/"
         "1\"},\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}",
         four,
         "tensor 'w' has no crc32c"},
        {"{\"__metadata__\":{\"crc32c/"
         "v\":\"00000000\"},\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}",
         four,
         "tensor 'v'"},
        {"{\"__metadata__\":{\"crc32c/"
         "w\":\"0000000G\"},\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}",
         four,
         "tensor 'w'"},
        {"{\"__metadata__\":{\"global_step\":\"12x\"}}", "", "global_step"},
    };
    for (const Bad& b : bad) {
        INFO(b.json);
        const std::string bytes = safetensors_bytes(b.json, b.data);
        CHECK_THROWS_AS(read_all(bytes), tf::errors::DataLossError);
        CHECK_THROWS_WITH(read_all(bytes), Contains(b.mentions) && Contains("mutant.safetensors"));
    }
    // A very deep nesting is rejected early (no recursion, no big allocation).
    const std::string deep =
        "{\"w\":" + std::string(1'000'000, '[') + std::string(1'000'000, ']') + "}";
    CHECK_THROWS_WITH(read_all(safetensors_bytes(deep, "")), Contains("nests deeper"));
}

TEST_CASE("CRC mismatches name the tensor; newer formats are unimplemented; foreign files load",
          "[checkpoint][corruption]") {
    using ckpt_test::crc_hex;
    using ckpt_test::safetensors_bytes;
    const std::string data("\x00\x00\x80\x3f", 4);  // 1.0f
    const std::string entry = "\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}";
    const std::string good = safetensors_bytes(
        "{\"__metadata__\":{\"format\":\"tapeflow-checkpoint/1\",\"crc32c/w\":\"" + crc_hex(data) +
            "\"}," + entry + "}",
        data);
    CHECK(read_all(good).at("w").to_vector<float>() == std::vector<float>{1.f});
    const std::string bad_crc = safetensors_bytes(
        "{\"__metadata__\":{\"format\":\"tapeflow-checkpoint/1\",\"crc32c/w\":\"00000000\"}," +
            entry + "}",
        data);
    CHECK_THROWS_AS(read_all(bad_crc), tf::errors::DataLossError);
    CHECK_THROWS_WITH(read_all(bad_crc), Contains("tensor 'w' fails its CRC check"));
    const std::string newer = safetensors_bytes(
        "{\"__metadata__\":{\"format\":\"tapeflow-checkpoint/2\"}," + entry + "}", data);
    CHECK_THROWS_AS(read_all(newer), tf::errors::UnimplementedError);
    // A plain safetensors file from another tool (no CRCs, its own metadata): readable.
    const std::string foreign =
        safetensors_bytes("{\"__metadata__\":{\"format\":\"pt\"}," + entry + "}   ", data);
    CHECK(read_all(foreign).at("w").to_vector<float>() == std::vector<float>{1.f});
    // A dtype tapeflow lacks: listed as an error naming it; other tensors still load.
    const std::string i16 = safetensors_bytes(
        "{" + entry + ",\"x\":{\"dtype\":\"I16\",\"shape\":[2],\"data_offsets\":[4,8]}}",
        data + std::string(4, '\0'));
    const std::string file = reference().dir + "/i16.safetensors";
    ckpt_test::write_bytes(file, i16);
    CHECK_THROWS_AS(t::list_variables(file), tf::errors::UnimplementedError);
    CHECK_THROWS_WITH(t::load_variable(file, "x"), Contains("'x'") && Contains("I16"));
    CHECK(t::load_variable(file, "w").to_vector<float>() == std::vector<float>{1.f});
    // Bools other than 0/1.
    const std::string b2 = safetensors_bytes(
        "{\"b\":{\"dtype\":\"BOOL\",\"shape\":[1],\"data_offsets\":[0,1]}}", "\x02");
    CHECK_THROWS_WITH(read_all(b2), Contains("bool tensor 'b'"));
}

TEST_CASE("a failed restore changes no variable, even when an early tensor was fine",
          "[checkpoint][corruption]") {
    const Reference& ref = reference();
    const auto reader = ck::CheckpointReader::from_bytes(ref.bytes, "x");
    std::string m = ref.bytes;
    m[8 + header_of(ref.bytes).size() + reader->find("h")->begin] ^=
        0x10;                                    // the last tensor by name
    const auto [kind, what] = restore_error(m);  // checks that a/w, b and flag stayed zero
    CHECK(kind == "DataLoss");
    CHECK_THAT(what, Contains("'h'"));
}
