// The queue-era input API on tf::data: iterators that raise OutOfRangeError at the end, the
// Coordinator, CSV (decode_csv, CsvDataset), parse_single_example, and TF1's batch/shuffle_batch.
#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include <catch2/catch.hpp>
#include <unistd.h>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;
namespace fs = std::filesystem;
using Catch::Contains;

namespace {

std::string write_text(const std::string& name, const std::string& text) {
    const auto dir =
        fs::temp_directory_path() / ("tapeflow_tf1_input_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const auto path = (dir / name).string();
    std::ofstream(path) << text;
    return path;
}

}  // namespace

TEST_CASE("get_next raises OutOfRangeError at the end of input", "[data][tf1]") {
    auto it = tf::data::make_one_shot_iterator(tf::data::from_vector<int>({1, 2}));
    CHECK(it.get_next() == 1);
    CHECK(it.get_next() == 2);
    CHECK_THROWS_AS(it.get_next(), tf::errors::OutOfRangeError);
    CHECK_THROWS_WITH(it.get_next(), Contains("End of sequence"));  // and stays at the end
    // several threads share one iterator: every element once
    auto shared =
        tf::data::from_vector<int>(std::vector<int>(1000, 1)).prefetch(4).make_one_shot_iterator();
    std::atomic<int> sum{0};
    std::vector<std::thread> readers;
    for (int t = 0; t < 4; ++t) {
        readers.emplace_back([&] {
            try {
                while (true)
                    sum += shared.get_next();
            } catch (const tf::errors::OutOfRangeError&) {
            }
        });
    }
    for (auto& r : readers)
        r.join();
    CHECK(sum == 1000);
}

TEST_CASE("Coordinator: request_stop, should_stop, join re-raises the first error", "[data][tf1]") {
    tf::train::Coordinator coord;
    CHECK_FALSE(coord.should_stop());
    std::atomic<int> loops{0};
    for (int t = 0; t < 3; ++t) {
        coord.register_thread(std::thread([&] {
            while (!coord.should_stop()) {
                ++loops;
                std::this_thread::yield();
            }
        }));
    }
    std::thread failing([&] {
        coord.stop_on_exception([] { throw tf::errors::DataLossError("corrupt record"); });
    });
    CHECK(coord.wait_for_stop(std::chrono::seconds(10)));
    coord.request_stop(std::make_exception_ptr(tf::errors::InternalError("second")));  // not kept
    std::vector<std::thread> more;
    more.push_back(std::move(failing));
    CHECK_THROWS_AS(coord.join(std::move(more)), tf::errors::DataLossError);
    CHECK(coord.joined());
    CHECK(coord.should_stop());

    // the end of input is a clean stop: join returns normally
    coord.clear_stop();
    CHECK_FALSE(coord.should_stop());
    CHECK_FALSE(coord.wait_for_stop(std::chrono::milliseconds(1)));
    coord.request_stop(std::make_exception_ptr(tf::errors::OutOfRangeError("End of sequence")));
    CHECK_NOTHROW(coord.join());
    // the seed's loop: read until OutOfRangeError, then stop and join
    tf::train::Coordinator loop_coord;
    auto it = tf::data::from_vector<int>({1, 2, 3}).make_one_shot_iterator();
    int seen = 0;
    try {
        while (!loop_coord.should_stop())
            seen += it.get_next();
    } catch (const tf::errors::OutOfRangeError&) {
        loop_coord.request_stop();
    }
    loop_coord.join();
    CHECK(seen == 6);
}

TEST_CASE("decode_csv parses columns by their defaults' dtypes", "[data][csv]") {
    const std::vector<std::string> records{"1,2.5,\"a,b\"x", "3,,7"};
    // third column quoted with a delimiter inside: not numeric, so select the first two
    CHECK_THROWS_WITH(
        tf::io::decode_csv(records, {tf::constant(0), tf::constant(1.0f), tf::constant(0)}),
        Contains("Quote inside a field has to be escaped"));
    const auto cols =
        tf::io::decode_csv({"1,2.5,9", "3,,7", " 4 ,1e3,-2"},
                           {tf::constant(0), tf::constant(-1.0f), tf::constant(int64_t{0})});
    REQUIRE(cols.size() == 3);
    CHECK(cols[0].dtype() == tf::int32);
    CHECK(cols[0].to_vector<int>() == std::vector<int>{1, 3, 4});
    CHECK(cols[1].to_vector<float>() ==
          std::vector<float>{2.5f, -1.0f, 1000.0f});  // empty: default
    CHECK(cols[2].dtype() == tf::int64);
    CHECK(cols[2].to_vector<int64_t>() == std::vector<int64_t>{9, 7, -2});
    // quotes, "" escapes, other delimiters, na_value, select_cols
    const auto q =
        tf::io::decode_csv({"\"1\";NA;\"2\"\"\";5"},
                           {tf::constant(3.0), tf::constant(0.0)},
                           {.field_delim = ';', .na_value = "NA", .select_cols = {1, 3}});
    CHECK(q[0].to_vector<double>() == std::vector<double>{3.0});
    CHECK(q[1].to_vector<double>() == std::vector<double>{5.0});
    // TensorFlow's errors
    const tf::Tensor required = tf::constant(std::vector<float>{}, {0});
    CHECK_THROWS_WITH(tf::io::decode_csv({"1,2"}, {tf::constant(0)}),
                      Contains("Expect 1 fields but have 2 in record 0"));
    CHECK_THROWS_WITH(tf::io::decode_csv({"x"}, {tf::constant(0)}),
                      Contains("Field 0 in record 0 is not a valid int32: x"));
    CHECK_THROWS_WITH(tf::io::decode_csv({""}, {required}),
                      Contains("Field 0 is required but missing in record 0"));
    CHECK_THROWS_AS(tf::io::decode_csv({"1"}, {tf::constant(true)}),
                    tf::errors::InvalidArgumentError);
}

TEST_CASE("CsvDataset reads records file after file", "[data][csv]") {
    const auto a = write_text("a.csv", "x,y\n1,0.5\n2,1.5\n");
    const auto b = write_text("b.csv", "x,y\n3,2.5\n");
    auto ds = tf::data::CsvDataset({a, b}, {tf::constant(0), tf::constant(0.0f)}, true);
    const auto rows = ds.to_vector();
    REQUIRE(rows.size() == 3);
    CHECK(rows[2][0].item<int>() == 3);
    CHECK(rows[2][1].rank() == 0);
    CHECK(rows[1][1].item<float>() == 1.5f);
    CHECK_THROWS_AS(tf::data::CsvDataset({a}, {tf::constant(0), tf::constant(0.0f)}).to_vector(),
                    tf::errors::InvalidArgumentError);  // the header is not a number
}

TEST_CASE("shuffle_batch and batch take TF1's arguments", "[data][tf1]") {
    std::vector<float> values(10);
    for (int i = 0; i < 10; ++i)
        values[static_cast<std::size_t>(i)] = static_cast<float>(i);
    auto elements = tf::data::from_tensor_slices({tf::constant(values, {10})});
    auto batches = tf::train::shuffle_batch(
        elements,
        {.batch_size = 4, .capacity = 8, .min_after_dequeue = 2, .num_threads = 2, .seed = 1});
    auto it = batches.make_one_shot_iterator();
    std::vector<float> seen;
    for (int b = 0; b < 2; ++b) {
        const auto batch = it.get_next();
        CHECK(batch[0].shape() == tf::Shape{4});
        for (float v : batch[0].to_vector<float>())
            seen.push_back(v);
    }
    CHECK_THROWS_AS(it.get_next(), tf::errors::OutOfRangeError);  // the smaller last batch dropped
    std::sort(seen.begin(), seen.end());
    CHECK(std::adjacent_find(seen.begin(), seen.end()) == seen.end());
    const auto all =
        tf::train::batch(elements, {.batch_size = 4, .allow_smaller_final_batch = true})
            .to_vector();
    REQUIRE(all.size() == 3);
    CHECK(all[2][0].to_vector<float>() == std::vector<float>{8, 9});
    CHECK_THROWS_AS(tf::train::shuffle_batch(
                        elements, {.batch_size = 2, .capacity = 4, .min_after_dequeue = 4}),
                    tf::errors::InvalidArgumentError);
}

TEST_CASE("parse_single_example gives each feature its own shape", "[data][tf1]") {
    const std::string record =
        tf::io::Example().add_int64("label", {7}).add_float("x", {1, 2, 3}).serialize();
    const auto f = tf::io::parse_single_example(record, {{"label", {}, tf::int64}, {"x", {3}}});
    CHECK(f[0].shape() == tf::Shape{});
    CHECK(f[0].item<int64_t>() == 7);
    CHECK(f[1].to_vector<float>() == std::vector<float>{1, 2, 3});
}
