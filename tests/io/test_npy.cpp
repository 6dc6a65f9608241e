// NumPy's .npy and .npz files: round trips of every dtype, C and Fortran order, big-endian, files
// written by NumPy itself (tests/golden/npy), and bad inputs (each a typed error, never a crash).
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>
#include <unistd.h>

#include <tapeflow/tapeflow.hpp>

#include "io/file_util.hpp"
#include "io/zip.hpp"

namespace tf = tapeflow;
namespace fs = std::filesystem;

namespace {

std::string scratch(const std::string& name) {
    static const fs::path dir = [] {
        fs::path d =
            fs::temp_directory_path() / ("tapeflow_test_npy_" + std::to_string(::getpid()));
        fs::remove_all(d);
        fs::create_directories(d);
        return d;
    }();
    return (dir / name).string();
}

void write_bytes(const std::string& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

std::string golden(const std::string& name) {
    const char* dir = std::getenv("TAPEFLOW_GOLDEN_DIR");
    return (fs::path(dir ? dir : "tests/golden") / "npy" / name).string();
}

// A .npy file with header dict `dict` (padded as NumPy pads it) and raw data bytes.
std::string npy_file(const std::string& dict, const std::string& data, int major = 1) {
    std::string header = dict;
    const std::size_t prefix = major == 1 ? 10 : 12;
    while ((prefix + header.size() + 1) % 64 != 0)
        header += ' ';
    header += '\n';
    std::string out = "\x93NUMPY";
    out += static_cast<char>(major);
    out += '\0';
    for (std::size_t i = 0; i < (major == 1 ? 2u : 4u); ++i)
        out += static_cast<char>((header.size() >> (8 * i)) & 0xFF);
    return out + header + data;
}

template <class T>
std::string raw(std::initializer_list<T> values) {
    std::string out;
    for (T v : values)
        out.append(reinterpret_cast<const char*>(&v), sizeof v);
    return out;
}

void check_same(const tf::Tensor& a, const tf::Tensor& b) {
    REQUIRE(a.dtype() == b.dtype());
    REQUIRE(a.shape() == b.shape());
    const tf::Tensor ha = a.cpu(), hb = b.cpu();
    REQUIRE(std::string(static_cast<const char*>(ha.raw_data()), ha.nbytes()) ==
            std::string(static_cast<const char*>(hb.raw_data()), hb.nbytes()));
}

std::vector<tf::Tensor> every_dtype() {
    auto x = tf::constant({{1.5f, -2.f, 0.25f}, {4.f, 1e30f, -0.f}});
    std::vector<tf::Tensor> out;
    for (tf::DType d : {tf::float32, tf::float64, tf::float16, tf::int32, tf::int64, tf::uint8})
        out.push_back(tf::abs(x).cast(tf::float32).cast(d == tf::uint8 ? tf::float32 : d));
    out.back() = tf::constant({{1.f, 2.f, 255.f}, {0.f, 7.f, 9.f}}).cast(tf::uint8);
    out.push_back(tf::constant({true, false, true}));
    out.push_back(tf::constant(3.5));                            // 0-d
    out.push_back(tf::zeros({0, 4}, tf::int32));                 // empty
    out.push_back(tf::reshape(tf::range(0, 24, 1), {2, 3, 4}));  // 3-d
    return out;
}

}  // namespace

TEST_CASE("npy: every dtype round-trips, 0-d and empty included", "[npy]") {
    for (const tf::Tensor& t : every_dtype()) {
        CAPTURE(t.dtype(), t.shape().dims());
        const std::string path = scratch("round.npy");
        tf::io::save_npy(path, t);
        REQUIRE(fs::file_size(path) % 64 == t.nbytes() % 64);  // the header is a multiple of 64
        check_same(tf::io::load_npy(path), t);
    }
}

TEST_CASE("npy: the header is NumPy's own format 1.0 text", "[npy]") {
    const std::string path = scratch("header.npy");
    tf::io::save_npy(path, tf::constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}}));
    const std::string bytes = tf::io::read_whole_file(path);
    REQUIRE(bytes.substr(0, 8) == std::string("\x93NUMPY\x01\x00", 8));
    REQUIRE(bytes.substr(10, 60) == "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } ");
    REQUIRE(bytes[127] == '\n');
    tf::io::save_npy(path, tf::constant(7));
    REQUIRE(tf::io::read_whole_file(path).find("'shape': (), ") != std::string::npos);
    tf::io::save_npy(path, tf::constant({true}));
    REQUIRE(tf::io::read_whole_file(path).find("'|b1'") != std::string::npos);
}

TEST_CASE("npy: bfloat16 has no NumPy dtype", "[npy]") {
    const auto t = tf::constant({1.f, 2.f}).cast(tf::bfloat16);
    REQUIRE_THROWS_AS(tf::io::save_npy(scratch("bf16.npy"), t), tf::errors::InvalidArgumentError);
    REQUIRE_THROWS_WITH(tf::io::save_npy(scratch("bf16.npy"), t), Catch::Contains("bfloat16"));
    REQUIRE_FALSE(fs::exists(scratch("bf16.npy")));
}

TEST_CASE("npy: big-endian, Fortran order, widened dtypes, versions 2.0 and 3.0", "[npy]") {
    const std::string path = scratch("hand.npy");
    // >i4 [[1, 2, 3], [4, 5, 6]] stored column-major: 1 4 2 5 3 6.
    std::string be;
    for (int v : {1, 4, 2, 5, 3, 6})
        be += std::string{0, 0, 0, static_cast<char>(v)};
    write_bytes(path, npy_file("{'descr': '>i4', 'fortran_order': True, 'shape': (2, 3), }", be));
    auto t = tf::io::load_npy(path);
    REQUIRE(t.dtype() == tf::int32);
    REQUIRE(t.to_vector<int32_t>() == std::vector<int32_t>{1, 2, 3, 4, 5, 6});

    // Spacing, key order and quotes are free; format 2.0's 4-byte length; i1 widens to int32.
    write_bytes(path,
                npy_file("{ \"shape\":(4 ,) ,'fortran_order' :False,'descr':'|i1'}",
                         std::string("\x01\xff\x80\x7f", 4),
                         2));
    t = tf::io::load_npy(path);
    REQUIRE(t.to_vector<int32_t>() == std::vector<int32_t>{1, -1, -128, 127});

    write_bytes(path,
                npy_file("{'descr': '<u2', 'fortran_order': False, 'shape': (2,)}",
                         raw<uint16_t>({65535, 3}),
                         3));
    REQUIRE(tf::io::load_npy(path).to_vector<int32_t>() == std::vector<int32_t>{65535, 3});
    write_bytes(path,
                npy_file("{'descr': '<u4', 'fortran_order': False, 'shape': (1,)}",
                         raw<uint32_t>({4000000000u})));
    t = tf::io::load_npy(path);
    REQUIRE(t.dtype() == tf::int64);
    REQUIRE(t.item<int64_t>() == 4000000000);
    write_bytes(path,
                npy_file("{'descr': '>f2', 'fortran_order': False, 'shape': ()}",
                         std::string("\x3c\x00", 2)));
    REQUIRE(tf::io::load_npy(path).item<float>() == 1.f);
}

TEST_CASE("npy: files written by NumPy (golden)", "[npy][golden]") {
    auto f4 = tf::io::load_npy(golden("f4_c.npy"));
    REQUIRE(f4.shape() == tf::Shape{2, 3});
    REQUIRE(f4.to_vector<float>() == std::vector<float>{0, .25f, .5f, .75f, 1, 1.25f});
    auto f8 = tf::io::load_npy(golden("f8_fortran_be.npy"));
    REQUIRE(f8.dtype() == tf::float64);
    REQUIRE(f8.shape() == tf::Shape{2, 3, 4});
    const auto v = f8.to_vector<double>();
    for (std::size_t i = 0; i < v.size(); ++i)
        REQUIRE(v[i] == static_cast<double>(i) - 5);
    REQUIRE(tf::io::load_npy(golden("i2_be.npy")).to_vector<int32_t>() ==
            std::vector<int32_t>{-3, 7, 32767, -32768});
    auto b = tf::io::load_npy(golden("b1_0d.npy"));
    REQUIRE((b.rank() == 0 && b.dtype() == tf::bool_ && b.item<bool>()));
    auto e = tf::io::load_npy(golden("u1_empty.npy"));
    REQUIRE((e.shape() == tf::Shape{0, 3} && e.dtype() == tf::uint8));

    for (const char* name : {"two.npz", "two_compressed.npz"}) {
        CAPTURE(name);
        auto m = tf::io::load_npz(golden(name));
        REQUIRE(m.size() == 2);
        REQUIRE(m.at("a").to_vector<int64_t>() == std::vector<int64_t>{1, 2, 3});
        REQUIRE(m.at("b").dtype() == tf::float16);
        REQUIRE(m.at("b").shape() == tf::Shape{1, 2});
        REQUIRE(m.at("b").to_vector<float>() == std::vector<float>{0.5f, -1.f});
    }
    auto d = tf::io::load_npz(golden("descriptor.npz"));
    REQUIRE(d.at("x").to_vector<int32_t>() == std::vector<int32_t>{0, 1, 2, 3, 4});
    REQUIRE(d.at("y").to_vector<double>() == std::vector<double>{1, 0, 0, 1});
}

TEST_CASE("npz: stored and deflated archives round-trip", "[npz]") {
    std::map<std::string, tf::Tensor> in;
    int i = 0;
    for (const tf::Tensor& t : every_dtype())
        in[fmt::format("t{}", i++)] = t;
    in["big"] = tf::reshape(tf::range(0.f, 100000.f, 1.f), {100, 1000});
    for (bool compressed : {false, true}) {
        CAPTURE(compressed);
        const std::string path = scratch(compressed ? "c.npz" : "s.npz");
        tf::io::save_npz(path, in, compressed);
        if (compressed) REQUIRE(fs::file_size(path) < 400000 / 2);
        const auto out = tf::io::load_npz(path);
        REQUIRE(out.size() == in.size());
        for (const auto& [name, t] : in)
            check_same(out.at(name), t);
    }
    tf::io::save_npz(scratch("empty.npz"), {});
    REQUIRE(tf::io::load_npz(scratch("empty.npz")).empty());
}

TEST_CASE("npy/npz: bad inputs are typed errors naming the file", "[npy][bad]") {
    const std::string path = scratch("bad.npy");
    const std::string good =
        npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", raw<float>({1, 2}));
    auto fails = [&](const std::string& bytes, auto error, const std::string& words) {
        write_bytes(path, bytes);
        CAPTURE(words);
        REQUIRE_THROWS_AS(tf::io::load_npy(path), decltype(error));
        REQUIRE_THROWS_WITH(
            tf::io::load_npy(path),
            Catch::Contains(path) && Catch::Contains(words, Catch::CaseSensitive::No));
    };
    const tf::errors::DataLossError loss("");
    const tf::errors::InvalidArgumentError arg("");
    fails(good.substr(0, good.size() - 1), loss, "truncated");
    fails(good.substr(0, 20), loss, "header");
    fails(good + "xx", loss, "2 bytes after");
    fails("\x93NUMPZ" + good.substr(6), loss, "magic");
    fails("", loss, "magic");
    fails(std::string("\x80\x04\x95", 3) + "pickle", loss, "pickle");
    fails(npy_file("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", "12345678"),
          arg,
          "object");
    fails(npy_file("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", "1234"),
          arg,
          "structured");
    fails(npy_file("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", "12345678"),
          arg,
          "c8");
    fails(npy_file("{'descr': '<u8', 'fortran_order': False, 'shape': (1,), }", "12345678"),
          arg,
          "uint64");
    fails(npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", "12345678"),
          loss,
          "unexpected header key");
    fails(npy_file("{'descr': '<f4', 'shape': (2,), }", "12345678"), loss, "fortran_order");
    fails(npy_file("{'descr': '<f4', 'fortran_order': 0, 'shape': (2,), }", "12345678"),
          loss,
          "fortran_order");
    fails(npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", "12345678"),
          loss,
          "shape");
    fails(npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': [2], }", "12345678"),
          loss,
          "tuple");
    fails(npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }  junk", "12345678"),
          loss,
          "after the header");
    fails(npy_file("__import__('os').system('true')", ""), loss, "expected '{'");
    fails(npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999, 99999999999, "
                   "99999999999, 99999999999), }",
                   "1234"),
          loss,
          "truncated");
    fails(
        npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}", ""),
        loss,
        "out of range");
    fails(npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", "12345678", 4),
          loss,
          "version");
    REQUIRE_THROWS_AS(tf::io::load_npy(golden("object.npy")), tf::errors::InvalidArgumentError);
    REQUIRE_THROWS_AS(tf::io::load_npy(scratch("missing.npy")), tf::errors::NotFoundError);
}

TEST_CASE("npz: corrupt archives are DataLossError", "[npz][bad]") {
    const std::string path = scratch("bad.npz");
    const std::string stored = tf::io::read_whole_file(golden("two.npz"));
    const std::string deflated = tf::io::read_whole_file(golden("two_compressed.npz"));
    auto fails = [&](std::string bytes, const std::string& words) {
        write_bytes(path, bytes);
        CAPTURE(words);
        REQUIRE_THROWS_AS(tf::io::load_npz(path), tf::errors::DataLossError);
        REQUIRE_THROWS_WITH(tf::io::load_npz(path),
                            Catch::Contains(path) && Catch::Contains(words));
    };
    std::string bad_crc = stored;
    bad_crc[stored.find("NUMPY") + 40] ^= 1;  // a byte of the first member's header text
    fails(bad_crc, "CRC");
    std::string bad_stream = deflated;
    for (std::size_t i = 60; i < 80; ++i)
        bad_stream[i] = '\xff';
    fails(bad_stream, "deflate");
    fails(stored.substr(0, stored.size() - 30), "end of central directory");
    fails(stored.substr(0, 100) + stored.substr(stored.size() - 200), "");
    fails("PK\x05\x06", "too short");
    fails("", "too short");
    REQUIRE_THROWS_AS(tf::io::load_npz(scratch("missing.npz")), tf::errors::NotFoundError);
}

TEST_CASE("zip: ZIP64 fields (forced on small members) are written and read", "[npz][zip64]") {
    const std::string path = scratch("zip64.npz");
    const std::string a(1000, 'a');
    const std::string b = "tapeflow";
    for (bool compressed : {false, true}) {
        CAPTURE(compressed);
        tf::io::zip::write_archive(path,
                                   {{"a.bin", {a}}, {"b.bin", {b.substr(0, 4), b.substr(4)}}},
                                   compressed,
                                   /*zip64_from=*/0);
        const std::string bytes = tf::io::read_whole_file(path);
        REQUIRE(bytes.find("PK\x06\x06") != std::string::npos);  // the ZIP64 end record
        const auto members = tf::io::zip::read_archive(bytes, path);
        REQUIRE(members.size() == 2);
        REQUIRE((members[0].name == "a.bin" && members[0].bytes == a));
        REQUIRE((members[1].name == "b.bin" && members[1].bytes == b));
    }
}

TEST_CASE("npz: a member that is not a .npy array is refused", "[npz][bad]") {
    const std::string path = scratch("text.npz");
    tf::io::zip::write_archive(path, {{"notes.txt", {"hello"}}}, false);
    REQUIRE_THROWS_AS(tf::io::load_npz(path), tf::errors::InvalidArgumentError);
    REQUIRE_THROWS_WITH(tf::io::load_npz(path), Catch::Contains("notes.txt"));
    // A member's bad .npy header names the archive and the member.
    tf::io::zip::write_archive(path, {{"x.npy", {"\x93NUMPY\x01\x00garbage"}}}, true);
    REQUIRE_THROWS_AS(tf::io::load_npz(path), tf::errors::DataLossError);
    REQUIRE_THROWS_WITH(tf::io::load_npz(path), Catch::Contains(path + ": member 'x.npy'"));
    // A key twice in a header dict.
    write_bytes(scratch("twice.npy"),
                npy_file("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': ()}",
                         raw<float>({1})));
    REQUIRE_THROWS_WITH(tf::io::load_npy(scratch("twice.npy")), Catch::Contains("twice"));
}
