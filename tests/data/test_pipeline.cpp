// tf::data pipelines end to end: TFRecord (plain, GZIP, ZLIB, parallel reads) and text files,
// errors reaching the consumer at their element with their type, and threads: stopping early,
// destroying iterators midway, and no thread left behind.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <thread>

#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;
namespace fs = std::filesystem;
using tf::data::Dataset;

namespace {

fs::path temp_dir() {
    auto dir = fs::temp_directory_path() / ("tapeflow_data_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    return dir;
}

std::string write_records(const std::string& name, int n, std::string_view compression = "") {
    auto path = (temp_dir() / name).string();
    tf::io::TFRecordWriter w(path, compression);
    for (int i = 0; i < n; ++i)
        w.write(fmt::format("{}-{}", name.substr(0, 1), i));
    w.close();
    return path;
}

// Threads of this process, from /proc (Linux).
int os_threads() {
    std::ifstream in("/proc/self/status");
    std::string key;
    while (in >> key)
        if (key == "Threads:") {
            int n = 0;
            in >> n;
            return n;
        }
    return -1;
}

Dataset<int64_t> range(int64_t n) {
    std::vector<int64_t> v(static_cast<std::size_t>(n));
    std::iota(v.begin(), v.end(), 0);
    return tf::data::from_vector(std::move(v));
}

struct CustomError {
    int64_t at;
};

}  // namespace

TEST_CASE("TFRecordDataset reads files in order, compressed or not, or interleaved", "[data]") {
    auto a = write_records("a.tfrecord", 3);
    auto b = write_records("b.tfrecord", 2);
    using V = std::vector<std::string>;
    CHECK(tf::data::TFRecordDataset({a, b}).to_vector() == V{"a-0", "a-1", "a-2", "b-0", "b-1"});
    CHECK(tf::data::TFRecordDataset({a, b}, "", 2).to_vector() ==
          V{"a-0", "b-0", "a-1", "b-1", "a-2"});
    auto gz = write_records("g.tfrecord.gz", 4, "GZIP");
    auto zl = write_records("z.tfrecord.zz", 2, "ZLIB");
    CHECK(tf::data::TFRecordDataset({gz}, "GZIP").to_vector() == V{"g-0", "g-1", "g-2", "g-3"});
    CHECK(tf::data::TFRecordDataset({zl}, "ZLIB").to_vector() == V{"z-0", "z-1"});
    CHECK_THROWS_AS(tf::data::TFRecordDataset({a}, "LZMA"), tf::errors::InvalidArgumentError);
    // A missing file fails when the iteration reaches it, not before.
    auto missing = tf::data::TFRecordDataset({a, (temp_dir() / "nope").string()});
    auto it = missing.begin();
    for (int i = 0; i < 2; ++i)
        ++it;
    CHECK(*it == "a-2");
    CHECK_THROWS_AS(++it, tf::errors::NotFoundError);
}

TEST_CASE("TextLineDataset strips line ends", "[data]") {
    auto path = (temp_dir() / "lines.txt").string();
    std::ofstream(path, std::ios::binary) << "x,y\n1,2\r\n\n3,4";
    CHECK(tf::data::TextLineDataset({path, path}).to_vector() ==
          std::vector<std::string>{"x,y", "1,2", "", "3,4", "x,y", "1,2", "", "3,4"});
    CHECK_THROWS_AS(tf::data::TextLineDataset({(temp_dir() / "none.txt").string()}).to_vector(),
                    tf::errors::NotFoundError);
}

TEST_CASE("a corrupted record raises DataLossError at its element", "[data]") {
    auto path = write_records("c.tfrecord", 6);  // records "c-0".."c-5": 3 + 16 bytes each
    {
        std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(3 * 19 + 12);  // first data byte of record 3
        f.put('X');
    }
    auto count_until_error = [](const Dataset<std::string>& ds) {
        int64_t n = 0;
        try {
            for (const auto& record : ds) {
                CHECK(record == fmt::format("c-{}", n));
                ++n;
            }
        } catch (const tf::errors::DataLossError& e) {
            CHECK(std::string(e.what()).find("c.tfrecord") != std::string::npos);
            return n;
        }
        return int64_t(-1);
    };
    auto ds = tf::data::TFRecordDataset({path});
    CHECK(count_until_error(ds) == 3);
    // Read-ahead stages hold the error until the consumer reaches that element.
    auto identity = [](const std::string& s) {
        return s;
    };
    CHECK(count_until_error(ds.prefetch(8)) == 3);
    CHECK(count_until_error(ds.map(identity, 3).prefetch(4)) == 3);
    CHECK(count_until_error(tf::data::TFRecordDataset({path}, "", 2)) == 3);
}

TEST_CASE("exceptions from map reach the consumer with their type, and iteration goes on",
          "[data]") {
    auto failing = [](int64_t x) {
        if (x == 3) throw CustomError{x};
        if (x == 5) throw tf::errors::OutOfRangeError("five");
        return x;
    };
    for (int workers : {1, 3}) {
        auto ds = range(8).map(failing, workers).prefetch(2);
        auto it = ds.begin();
        std::vector<int64_t> got;
        int custom = 0, out_of_range = 0;
        while (true) {
            try {
                if (it == ds.end()) break;
                got.push_back(*it);
                ++it;
            } catch (const CustomError& e) {
                CHECK(e.at == 3);
                ++custom;
                ++it;
            } catch (const tf::errors::OutOfRangeError& e) {
                CHECK(std::string(e.what()) == "five");
                ++out_of_range;
                ++it;
            }
        }
        CHECK(custom == 1);
        CHECK(out_of_range == 1);
        CHECK(got == std::vector<int64_t>{0, 1, 2, 4, 6, 7});
    }
}

TEST_CASE("stopping early: no deadlock, and no thread is left", "[data]") {
    const int threads_before = os_threads();
    auto slow = [](int64_t x) {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        return std::to_string(x);
    };
    auto endless = range(1000).repeat().map(slow, 4).prefetch(16);
    auto nested = tf::data::from_vector(std::vector<int64_t>{0, 1, 2, 3})
                      .interleave([endless](int64_t) { return endless; }, 3, 3)
                      .prefetch(4);
    for (int round = 0; round < 5; ++round) {
        int n = 0;
        for (const std::string& s : nested) {
            CHECK(!s.empty());
            if (++n == 10 * round + 1) break;  // leaves with every stage busy or blocked
        }
        CHECK(tf::data::detail::live_threads() == 0);
    }
    {
        auto it = nested.begin();
        ++it;
        CHECK(tf::data::detail::live_threads() > 0);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));  // let the queues fill up
    }  // destroyed with the producers blocked on full queues
    CHECK(tf::data::detail::live_threads() == 0);
    CHECK(os_threads() == threads_before);
    // An iterator that ran to the end released its threads already.
    auto it = range(50).map(slow, 2).prefetch(3).begin();
    while (it != Dataset<std::string>::Sentinel{})
        ++it;
    CHECK(tf::data::detail::live_threads() == 0);
}

TEST_CASE("a pipeline under load: many threads, many elements, exact results", "[data][stress]") {
    // Run by the ThreadSanitizer build (docs/data.md) as well.
    auto ds = range(20000)
                  .shuffle(64, 1)
                  .map([](int64_t x) { return x * 2; }, 4)
                  .filter([](int64_t x) { return x % 3 != 0; })
                  .prefetch(8)
                  .batch(10)
                  .prefetch(2);
    for (int pass = 0; pass < 2; ++pass) {
        int64_t sum = 0, count = 0;
        for (const auto& batch : ds)
            for (int64_t x : batch) {
                sum += x;
                ++count;
            }
        int64_t expect_sum = 0, expect_count = 0;
        for (int64_t x = 0; x < 20000; ++x)
            if ((2 * x) % 3 != 0) {
                expect_sum += 2 * x;
                ++expect_count;
            }
        CHECK(sum == expect_sum);
        CHECK(count == expect_count);
    }
}

TEST_CASE("parse_example decodes batches of Examples like Example::parse", "[data]") {
    std::vector<std::string> records;
    for (int i = 0; i < 5; ++i)
        records.push_back(tf::io::Example()
                              .add_float("x", {1.5f * i, -2.f, 1e-3f})
                              .add_int64("label", {i - 2})
                              .add_bytes("name", {"row"})
                              .serialize());
    const std::vector<tf::io::FixedLenFeature> spec{{"label", {}, tf::int64}, {"x", {3}}};
    auto out = tf::io::parse_example(records, spec);
    REQUIRE(out.size() == 2);
    CHECK(out[0].shape() == tf::Shape{5});
    CHECK(out[0].dtype() == tf::int64);
    CHECK(out[0].to_vector<int64_t>() == std::vector<int64_t>{-2, -1, 0, 1, 2});
    CHECK(out[1].shape() == tf::Shape{5, 3});
    auto x = out[1].to_vector<float>();
    for (int i = 0; i < 5; ++i) {
        auto expect = tf::io::Example::parse(records[i]).get_float("x");
        CHECK(std::vector<float>(x.begin() + 3 * i, x.begin() + 3 * i + 3) == expect);
    }
    // The pipeline form: batch the records, then parse each batch.
    auto path = (temp_dir() / "ex.tfrecord").string();
    {
        tf::io::TFRecordWriter w(path);
        for (const auto& r : records)
            w.write(r);
    }
    auto batches =
        tf::data::TFRecordDataset({path})
            .batch(2)
            .map([&](const std::vector<std::string>& b) { return tf::io::parse_example(b, spec); })
            .to_vector();
    REQUIRE(batches.size() == 3);
    CHECK(batches[2][1].shape() == tf::Shape{1, 3});
    // Missing features, defaults, wrong counts, wrong kinds and garbage.
    CHECK_THROWS_WITH(tf::io::parse_example(records, {{"y", {1}}}),
                      Catch::Contains("Feature: y (data type: float32) is required"));
    auto with_default = tf::io::parse_example(records, {{"y", {2}, tf::float32, {{7.0}}}});
    CHECK(with_default[0].to_vector<float>() == std::vector<float>(10, 7.f));
    CHECK_THROWS_WITH(tf::io::parse_example(records, {{"x", {4}}}),
                      Catch::Contains("Values size: 3 but output shape: [4]"));
    CHECK_THROWS_WITH(tf::io::parse_example(records, {{"label", {}, tf::float32}}),
                      Catch::Contains("Key: label, Index: 0. Data types don't match"));
    CHECK_THROWS_WITH(tf::io::parse_example({"\x0a\x05\x0a"}, spec),
                      Catch::Contains("Could not parse example input"));
    CHECK_THROWS_AS(tf::io::parse_example(records, {{"name", {1}, tf::int32}}),
                    tf::errors::InvalidArgumentError);
    CHECK(tf::io::parse_example({}, spec)[1].shape() == tf::Shape{0, 3});
}
