// CRC-32C, TFRecord framing and files (plain, GZIP, ZLIB), corruption handling, tf.train.Example.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include <catch2/catch.hpp>
#include <unistd.h>

#include <tapeflow/tapeflow.hpp>

#include "io/crc32c.hpp"
#include "io/file_util.hpp"
#include "io/record_file.hpp"

namespace tf = tapeflow;
namespace fs = std::filesystem;

namespace {

std::string temp_dir(const std::string& name) {
    const fs::path dir =
        fs::temp_directory_path() / ("tapeflow_test_io_" + std::to_string(::getpid()) + "_" + name);
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir.string();
}

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_file(const std::string& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string hex(const std::string& bytes) {
    std::string out;
    for (unsigned char c : bytes)
        out += fmt::format("{:02x}", c);
    return out;
}

// Reads every record; returns the count, or -1 when a DataLossError was raised.
int read_all(const std::string& path, const char* compression = "") {
    try {
        tf::io::TFRecordReader reader(path, compression);
        int n = 0;
        while (reader.next())
            ++n;
        return n;
    } catch (const tf::errors::DataLossError&) {
        return -1;
    }
}

}  // namespace

TEST_CASE("crc32c check values and the TFRecord mask", "[io][crc]") {
    CHECK(tf::io::crc32c("123456789") == 0xE3069283u);
    CHECK(tf::io::crc32c("") == 0u);
    CHECK(tf::io::masked_crc32c("") == 0xA282EAD8u);
    CHECK(tf::io::masked_crc32c(std::string(8, '\0')) == 0x07980329u);
    CHECK(tf::io::unmask_crc(tf::io::mask_crc(0x12345678u)) == 0x12345678u);
    // Extending in pieces equals one pass.
    const std::string s = "The quick brown fox jumps over the lazy dog";
    uint32_t c = tf::io::crc32c_extend(0, s.data(), 10);
    c = tf::io::crc32c_extend(c, s.data() + 10, s.size() - 10);
    CHECK(c == tf::io::crc32c(s));
}

TEST_CASE("crc32c hardware and portable paths agree on every length and alignment", "[io][crc]") {
    std::mt19937 rng(7);
    std::string buf(1000, '\0');
    for (char& ch : buf)
        ch = static_cast<char>(rng());
    INFO("hardware path: " << tf::io::crc32c_uses_hardware());
    for (std::size_t off = 0; off < 9; ++off) {
        for (std::size_t n : {0u, 1u, 7u, 8u, 9u, 15u, 16u, 63u, 64u, 65u, 500u, 991u}) {
            CHECK(tf::io::crc32c_extend(0, buf.data() + off, n) ==
                  tf::io::crc32c_extend_portable(0, buf.data() + off, n));
        }
    }
    CHECK(tf::io::crc32c_extend_portable(0, "123456789", 9) == 0xE3069283u);
}

TEST_CASE("a framed record has the documented layout", "[io][tfrecord]") {
    std::string out;
    tf::io::append_framed_record(out, "");
    CHECK(hex(out) ==
          "0000000000000000"
          "29039807"
          "d8ea82a2");  // empty record, CRCs LE
    out.clear();
    tf::io::append_framed_record(out, "abc");
    REQUIRE(out.size() == 12 + 3 + 4);
    CHECK(out.substr(0, 8) == std::string("\x03\0\0\0\0\0\0\0", 8));
    CHECK(out.substr(12, 3) == "abc");
}

TEST_CASE("TFRecordWriter and TFRecordReader round-trip records", "[io][tfrecord]") {
    const std::string dir = temp_dir("roundtrip");
    for (const char* compression : {"", "GZIP", "ZLIB"}) {
        INFO("compression " << compression);
        const std::string path = dir + "/data" + compression + ".tfrecord";
        std::vector<std::string> records = {
            "", "a", std::string(100000, 'x'), std::string("\0\1\2", 3)};
        {
            tf::io::TFRecordWriter w(path, compression);
            for (const auto& r : records)
                w.write(r);
            w.flush();
            w.close();
            w.close();  // idempotent
            CHECK_THROWS_AS(w.write("late"), tf::errors::FailedPreconditionError);
        }
        CHECK(tf::io::read_tfrecords(path, compression) == records);
        tf::io::TFRecordReader r(path, compression);
        CHECK(r.next() == records[0]);
    }
    // GZIP output is a real gzip stream; plain output is exactly the framed records.
    CHECK(read_file(dir + "/dataGZIP.tfrecord").substr(0, 2) == "\x1f\x8b");
    std::string framed;
    for (const std::string& r : {std::string(), std::string("a")})
        tf::io::append_framed_record(framed, r);
    CHECK(read_file(dir + "/data.tfrecord").substr(0, framed.size()) == framed);
}

TEST_CASE("a missing file and a bad compression name raise typed errors", "[io][tfrecord]") {
    CHECK_THROWS_AS(tf::io::TFRecordReader("/nonexistent/x.tfrecord"), tf::errors::NotFoundError);
    // a directory is not a record file (fopen would open it and read nothing)
    CHECK_THROWS_AS(tf::io::TFRecordReader("/tmp"), tf::errors::InvalidArgumentError);
    CHECK_THROWS_WITH(tf::summary::summary_iterator("/tmp"), Catch::Contains("is a directory"));
    CHECK_THROWS_WITH(tf::io::TFRecordWriter("/tmp/x.tfrecord", "LZ4"), Catch::Contains("LZ4"));
    CHECK_THROWS_AS(tf::io::TFRecordWriter("/tmp/x.tfrecord", "LZ4"),
                    tf::errors::InvalidArgumentError);
}

TEST_CASE("corrupted records raise DataLossError naming the file and offset",
          "[io][tfrecord][corrupt]") {
    const std::string dir = temp_dir("corrupt");
    const std::string path = dir + "/c.tfrecord";
    {
        tf::io::TFRecordWriter w(path);
        w.write("first record");
        w.write("second record");
    }
    const std::string good = read_file(path);
    const std::size_t second = 12 + 12 + 4;  // offset of the second record

    std::string bad = good;
    bad[second + 12 + 2] ^= 0x01;  // a data byte of the second record
    write_file(path, bad);
    tf::io::TFRecordReader r(path);
    CHECK(r.next() == "first record");
    try {
        r.next();
        FAIL("no DataLossError");
    } catch (const tf::errors::DataLossError& e) {
        CHECK_THAT(e.what(),
                   Catch::Contains(path) && Catch::Contains("offset 28") &&
                       Catch::Contains("data CRC mismatch"));
    }

    bad = good;
    bad[second] ^= 0x40;  // the length of the second record
    write_file(path, bad);
    CHECK_THROWS_WITH(tf::io::read_tfrecords(path), Catch::Contains("length CRC mismatch"));

    write_file(path, good.substr(0, good.size() - 3));
    CHECK_THROWS_AS(tf::io::read_tfrecords(path), tf::errors::DataLossError);
    CHECK_THROWS_WITH(tf::io::read_tfrecords(path), Catch::Contains("truncated"));
}

TEST_CASE("every truncation and every bit flip is detected, never a crash",
          "[io][tfrecord][corrupt]") {
    const std::string dir = temp_dir("fuzz");
    for (const char* compression : {"", "GZIP"}) {
        INFO("compression " << compression);
        const std::string path = dir + "/f.tfrecord";
        {
            tf::io::TFRecordWriter w(path, compression);
            w.write("alpha");
            w.write(std::string(40, 'b'));
            w.write("gamma");
        }
        const std::string good = read_file(path);
        REQUIRE(read_all(path, compression) == 3);
        for (std::size_t len = 0; len < good.size(); ++len) {
            write_file(path, good.substr(0, len));
            const int n = read_all(path, compression);
            INFO("truncated to " << len);
            CHECK(n < 3);  // fewer records (a clean cut between records) or DataLossError
        }
        int flipped_ok = 0;
        for (std::size_t bit = 0; bit < good.size() * 8; ++bit) {
            std::string bad = good;
            bad[bit / 8] ^= static_cast<char>(1 << (bit % 8));
            write_file(path, bad);
            if (read_all(path, compression) == 3) ++flipped_ok;
        }
        // Plain files: every flip is caught by a CRC. GZIP: a flip may land in the gzip trailer's
        // own CRC/size, which zlib checks too, or in header fields it ignores (mtime, OS).
        if (std::string(compression).empty()) {
            CHECK(flipped_ok == 0);
        } else {
            CHECK(flipped_ok < 64);
        }
    }
    // Random bytes: DataLossError or a clean end, nothing else.
    std::mt19937 rng(11);
    for (int trial = 0; trial < 200; ++trial) {
        std::string junk(rng() % 200, '\0');
        for (char& c : junk)
            c = static_cast<char>(rng());
        if (trial % 4 == 0 && junk.size() >= 12) {  // a plausible header with a valid CRC
            std::string framed;
            tf::io::append_framed_record(framed, junk.substr(12));
            junk = framed.substr(0, 12) + junk.substr(12, junk.size() / 2);
        }
        const std::string path = dir + "/junk.tfrecord";
        write_file(path, junk);
        CHECK(read_all(path) <= 1);
        CHECK(read_all(path, "GZIP") <= 0);
        CHECK_NOTHROW([&] {
            try {
                tf::summary::summary_iterator(path);
            } catch (const tf::errors::DataLossError&) {
            }
        }());
    }
}

// Bytes after the end of a compressed stream are never dropped silently: another stream there is
// read on (concatenated files, as gzip tools read them), anything else is DataLossError.
TEST_CASE("bytes after a compressed stream: a second stream reads on, garbage fails",
          "[io][tfrecord]") {
    const std::string dir = temp_dir("concat");
    for (const std::string compression : {"GZIP", "ZLIB"}) {
        INFO(compression);
        const std::string a = dir + "/a" + compression, b = dir + "/b" + compression;
        {
            tf::io::TFRecordWriter wa(a, compression), wb(b, compression);
            wa.write("first");
            wb.write("second");
            wb.write("third");
        }
        const std::string both = dir + "/both" + compression;
        write_file(both, read_file(a) + read_file(b));
        CHECK(tf::io::read_tfrecords(both, compression) ==
              std::vector<std::string>{"first", "second", "third"});
        write_file(both, read_file(a) + "trailing garbage");
        CHECK_THROWS_AS(tf::io::read_tfrecords(both, compression), tf::errors::DataLossError);
    }
}

TEST_CASE("a huge length that passes its CRC does not allocate before failing",
          "[io][tfrecord][corrupt]") {
    const std::string path = temp_dir("huge") + "/h.tfrecord";
    std::string framed;
    tf::io::append_framed_record(framed, "x");
    std::string header(framed.substr(0, 12));
    const uint64_t huge = uint64_t{1} << 60;
    for (int i = 0; i < 8; ++i)
        header[i] = static_cast<char>((huge >> (8 * i)) & 0xFF);
    const uint32_t crc = tf::io::mask_crc(tf::io::crc32c(header.substr(0, 8)));
    for (int i = 0; i < 4; ++i)
        header[8 + i] = static_cast<char>((crc >> (8 * i)) & 0xFF);
    write_file(path, header + "x");
    CHECK_THROWS_WITH(tf::io::read_tfrecords(path), Catch::Contains("runs past the end"));
}

TEST_CASE("Example builds, serializes and parses every feature kind", "[io][example]") {
    tf::io::Example ex;
    ex.add_int64("label", {3, -1})
        .add_float("x", {0.5f, 1.5f})
        .add_bytes("name", {"a", std::string("\0b", 2)});
    const std::string bytes = ex.serialize();
    CHECK(bytes == ex.serialize());  // deterministic
    const auto back = tf::io::Example::parse(bytes);
    CHECK(back.get_int64("label") == std::vector<int64_t>{3, -1});
    CHECK(back.get_float("x") == std::vector<float>{0.5f, 1.5f});
    CHECK(back.get_bytes("name") == std::vector<std::string>{"a", std::string("\0b", 2)});
    CHECK(back.names() == std::vector<std::string>{"label", "name", "x"});
    CHECK_THROWS_AS(back.get_int64("missing"), tf::errors::NotFoundError);
    CHECK_THROWS_WITH(back.get_float("label"),
                      Catch::Contains("label") && Catch::Contains("int64 list"));
    CHECK_THROWS_AS(back.get_float("label"), tf::errors::InvalidArgumentError);
    CHECK_THROWS_AS(tf::io::Example::parse("\xff\xff\xff"), tf::errors::DataLossError);
}

TEST_CASE("Example wire bytes follow tf.train.Example", "[io][example]") {
    // {label: int64 [3]}: 0A (features) 0C; 0A (entry) 0A; 0A 05 "label"; 12 04 (Feature) 1A 02
    // (int64_list) 0A 01 03 (packed values).
    const std::string bytes = tf::io::Example().add_int64("label", {3}).serialize();
    CHECK(hex(bytes) == "0a100a0e0a056c6162656c12051a030a0103");
    // {x: float [0.5]}: float_list (field 2) packed fixed32.
    CHECK(hex(tf::io::Example().add_float("x", {0.5f}).serialize()) ==
          "0a0f0a0d0a017812081206"
          "0a040000003f");
    // Empty lists keep their kind, as tf.train.Feature(bytes_list=tf.train.BytesList()) serializes:
    // Feature {bytes_list {}} = 12 02 0a 00 (Python then sees WhichOneof('kind') == 'bytes_list').
    CHECK(hex(tf::io::Example().add_bytes("b", {}).serialize()) == "0a090a070a016212020a00");
    CHECK(hex(tf::io::Example().add_int64("i", {}).serialize()) == "0a090a070a016912021a00");
    CHECK(tf::io::Example::parse(tf::io::Example().add_bytes("b", {}).serialize())
              .get_bytes("b")
              .empty());
}

TEST_CASE("Examples in a TFRecord file, as a tf.data pipeline would read them", "[io][example]") {
    const std::string path = temp_dir("examples") + "/train.tfrecord";
    {
        tf::io::TFRecordWriter w(path);
        for (int64_t i = 0; i < 5; ++i)
            w.write(tf::io::Example().add_int64("i", {i}).serialize());
    }
    int64_t expected = 0;
    tf::io::TFRecordReader r(path);
    while (auto rec = r.next())
        CHECK(tf::io::Example::parse(*rec).get_int64("i")[0] == expected++);
    CHECK(expected == 5);
}

TEST_CASE("write_file_atomically replaces the file whole and leaves no temp file", "[io][file]") {
    const std::string dir = temp_dir("atomic");
    tf::io::write_file_atomically(dir + "/g.pbtxt", "old");
    tf::io::write_file_atomically(dir + "/g.pbtxt", "new contents");
    CHECK(read_file(dir + "/g.pbtxt") == "new contents");
    CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 1);
    CHECK_THROWS_AS(tf::io::write_file_atomically("/nonexistent-dir/x", "y"),
                    tf::errors::NotFoundError);
}
