// Summary writer: golden bytes, the file layout, a round trip per kind through summary_iterator,
// payload decoding (PNG, WAV), histogram edge cases, default writer / record_if, threads, graphs.
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <thread>

#include <catch2/catch.hpp>
#include <unistd.h>

#include <tapeflow/tapeflow.hpp>

#include "io/record_file.hpp"
#include "summary/encoders.hpp"
#include "summary/event_proto.hpp"
#include "tapeflow_proto/event.pb.h"
#include "tapeflow_proto/graph.pb.h"

namespace tf = tapeflow;
namespace fs = std::filesystem;

namespace {

std::string temp_dir(const std::string& name) {
    const fs::path dir = fs::temp_directory_path() /
                         ("tapeflow_test_summary_" + std::to_string(::getpid()) + "_" + name);
    fs::remove_all(dir);
    return dir.string();
}

std::string hex(const std::string& bytes) {
    std::string out;
    for (unsigned char c : bytes)
        out += fmt::format("{:02x}", c);
    return out;
}

std::string unhex(const std::string& h) {
    std::string out;
    for (std::size_t i = 0; i + 1 < h.size(); i += 2) {
        out += static_cast<char>(std::stoi(h.substr(i, 2), nullptr, 16));
    }
    return out;
}

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The raw records of an event file, decoded as tensorflow.Event protobufs.
std::vector<tf::proto::Event> raw_events(const std::string& path) {
    tf::io::RecordFileReader reader(path, tf::io::Compression::none);
    std::vector<tf::proto::Event> out;
    while (auto rec = reader.next()) {
        out.emplace_back();
        REQUIRE(out.back().ParseFromString(*rec));
    }
    return out;
}

uint32_t be32(const std::string& s, std::size_t at) {
    return uint32_t(uint8_t(s[at])) << 24 | uint32_t(uint8_t(s[at + 1])) << 16 |
           uint32_t(uint8_t(s[at + 2])) << 8 | uint32_t(uint8_t(s[at + 3]));
}
uint32_t le32(const std::string& s, std::size_t at) {
    return uint32_t(uint8_t(s[at])) | uint32_t(uint8_t(s[at + 1])) << 8 |
           uint32_t(uint8_t(s[at + 2])) << 16 | uint32_t(uint8_t(s[at + 3])) << 24;
}
uint16_t le16(const std::string& s, std::size_t at) {
    return static_cast<uint16_t>(uint8_t(s[at]) | uint8_t(s[at + 1]) << 8);
}

}  // namespace

// Regression: with bare file names ("tensor.proto") protobuf aborted at load time in any process
// that also loads a library registering a file of that name (OpenCV's dnn, pulled in by LibTorch).
TEST_CASE("the schemas are registered under tapeflow_proto/ file names", "[summary][proto]") {
    for (const auto* d : {tf::proto::Event::descriptor(),
                          tf::proto::GraphDef::descriptor(),
                          tf::proto::Summary::descriptor(),
                          tf::proto::TensorProto::descriptor()}) {
        INFO(d->full_name());
        CHECK(d->file()->name().rfind("tapeflow_proto/", 0) == 0);
    }
}

TEST_CASE("golden records, byte for byte", "[summary][golden]") {
    tf::summary::Event first;
    first.wall_time = 1700000000.0;
    first.file_version = "brain.Event:2";
    const std::string payload = tf::summary::serialize_event(first);
    CHECK(hex(payload) == "0900000040fc54d9411a0d627261696e2e4576656e743a32");
    std::string framed;
    tf::io::append_framed_record(framed, payload);
    CHECK(hex(framed) == "1800000000000000a37f4b22" + hex(payload) + "eced8f9d");

    tf::summary::Event scalar;
    scalar.wall_time = 1700000000.5;
    scalar.step = 1;
    tf::summary::SummaryValue v;
    v.tag = "loss";
    v.kind = "scalar";
    v.scalar_value = 0.25;
    scalar.values.push_back(v);
    const std::string scalar_payload = tf::summary::serialize_event(scalar);
    CHECK(hex(scalar_payload) ==
          "0900002040fc54d94110012a210a1f0a046c6f7373420a0801120022040000803e4a0b0a090a077363616c61"
          "7273");
    framed.clear();
    tf::io::append_framed_record(framed, scalar_payload);
    CHECK(hex(framed) == "2e00000000000000c5cb57fa" + hex(scalar_payload) + "0f85dbf6");

    // The same bytes through the writer: add_event, and writer.scalar with a float32 tensor.
    const std::string dir = temp_dir("golden");
    auto writer = tf::summary::create_file_writer(dir);
    writer.add_event(scalar);
    writer.close();
    const std::string file = read_file(writer.path());
    CHECK(file.find(framed) != std::string::npos);

    tf::proto::AudioPluginData audio;
    audio.set_encoding(tf::proto::AudioPluginData::WAV);
    CHECK(hex(audio.SerializeAsString()) == "100b");
}

TEST_CASE("the event file is named as TensorFlow 2 names it and starts with brain.Event:2",
          "[summary][file]") {
    const std::string dir = temp_dir("naming") + "/nested/run";
    auto writer = tf::summary::create_file_writer(dir);  // creates missing directories
    const std::string name = fs::path(writer.path()).filename().string();
    CHECK(std::regex_match(name,
                           std::regex(R"(events\.out\.tfevents\.\d{10}\.[^.]+.*\.\d+\.\d+\.v2)")));
    writer.close();
    const auto events = raw_events(writer.path());
    REQUIRE(events.size() == 1);
    CHECK(events[0].file_version() == "brain.Event:2");
    CHECK(events[0].step() == 0);
    CHECK(events[0].wall_time() == std::stod(name.substr(20, 10)));
    // Two writers never share a file, and a suffix replaces ".v2".
    auto a = tf::summary::create_file_writer(dir);
    auto b = tf::summary::create_file_writer(dir, {.filename_suffix = ".custom"});
    CHECK(a.path() != b.path());
    CHECK(b.path().ends_with(".custom"));
}

TEST_CASE("every summary kind round-trips through summary_iterator", "[summary][roundtrip]") {
    const std::string dir = temp_dir("roundtrip");
    auto w = tf::summary::create_file_writer(dir);
    CHECK(w.scalar("loss", 0.5, 1));
    CHECK(w.scalar("acc", tf::constant(0.1), 2));          // float64: cast to float32, as TF2
    CHECK(w.scalar("lr", tf::constant(3, tf::int32), 3));  // other dtypes become float32
    CHECK(w.histogram("w", tf::constant({1.f, 2.f, 3.f, 4.f}), 4, 2));
    CHECK(w.image("img", tf::fill({2, 3, 5, 3}, 0.5), 5, 1));
    CHECK(w.audio("wave", tf::zeros({2, 8, 1}), 16000, 6));
    CHECK(w.text("notes", "**hello** ünïcode", 7));
    w.close();

    const auto events = tf::summary::summary_iterator(w.path());
    REQUIRE(events.size() == 8);
    CHECK(events[0].file_version == "brain.Event:2");
    auto value = [&](std::size_t i) -> const tf::summary::SummaryValue& {
        REQUIRE(events[i].values.size() == 1);
        return events[i].values[0];
    };
    CHECK(value(1).tag == "loss");
    CHECK(value(1).kind == "scalar");
    CHECK(value(1).plugin_name == "scalars");
    CHECK(value(1).scalar_value == 0.5);
    CHECK(value(1).tensor.dtype() == tf::float32);
    CHECK(value(1).tensor.rank() == 0);
    CHECK(events[1].step == 1);
    CHECK(events[1].wall_time > 1.6e9);
    CHECK(value(2).tensor.dtype() == tf::float32);  // TensorBoard's data server reads only DT_FLOAT
    CHECK(value(2).tensor.rank() == 0);
    CHECK(value(2).scalar_value == static_cast<double>(0.1f));
    CHECK(value(3).tensor.dtype() == tf::float32);
    CHECK(value(3).scalar_value == 3.0);

    CHECK(value(4).kind == "histogram");
    CHECK(value(4).tensor.shape() == tf::Shape{2, 3});
    CHECK(value(4).tensor.to_vector<double>() == std::vector<double>{1, 2.5, 2, 2.5, 4, 2});

    CHECK(value(5).kind == "image");
    REQUIRE(value(5).strings.size() == 3);  // W, H, one PNG (max_outputs = 1)
    CHECK(value(5).strings[0] == "5");
    CHECK(value(5).strings[1] == "3");

    CHECK(value(6).kind == "audio");
    CHECK(value(6).strings.size() == 2);  // labels dropped
    CHECK(value(7).kind == "text");
    CHECK(value(7).strings == std::vector<std::string>{"**hello** ünïcode"});
}

TEST_CASE("the wire form of each kind is what TensorBoard expects", "[summary][wire]") {
    const std::string dir = temp_dir("wire");
    auto w = tf::summary::create_file_writer(dir);
    w.histogram("h", tf::constant({1.0, 2.0}), 0);
    w.image("i", tf::zeros({4, 2, 2, 1}, tf::uint8), 0);  // 3 images by default
    w.audio("a", tf::zeros({1, 4, 2}), 8000, 0);
    w.text("t", "x", 0);
    w.close();
    const auto events = raw_events(w.path());
    REQUIRE(events.size() == 5);
    for (std::size_t i = 1; i < events.size(); ++i) {
        REQUIRE(events[i].summary().value_size() == 1);  // one value per event, as TF2
        const auto& m = events[i].summary().value(0).metadata();
        CHECK(m.data_class() == 0);  // left for TensorBoard to fill in
    }
    const auto& h = events[1].summary().value(0);
    CHECK(h.metadata().plugin_data().plugin_name() == "histograms");
    CHECK(h.metadata().plugin_data().content().empty());
    CHECK(h.tensor().dtype() == tf::proto::DT_DOUBLE);
    CHECK(h.tensor().tensor_shape().dim(0).size() == 30);
    CHECK(h.tensor().tensor_shape().dim(1).size() == 3);
    CHECK(h.tensor().tensor_content().size() == 30 * 3 * 8);

    const auto& img = events[2].summary().value(0);
    CHECK(img.metadata().plugin_data().plugin_name() == "images");
    CHECK(img.tensor().dtype() == tf::proto::DT_STRING);
    CHECK(img.tensor().tensor_shape().dim(0).size() == 5);  // W, H + 3 images
    CHECK(img.tensor().string_val_size() == 5);

    const auto& a = events[3].summary().value(0);
    CHECK(a.metadata().plugin_data().plugin_name() == "audio");
    CHECK(hex(a.metadata().plugin_data().content()) == "100b");
    CHECK(a.tensor().tensor_shape().dim_size() == 2);
    CHECK(a.tensor().tensor_shape().dim(0).size() == 1);
    CHECK(a.tensor().tensor_shape().dim(1).size() == 2);
    CHECK(a.tensor().string_val(1).empty());

    const auto& t = events[4].summary().value(0);
    CHECK(t.metadata().plugin_data().plugin_name() == "text");
    CHECK(t.tensor().tensor_shape().dim_size() == 0);
    CHECK(t.tensor().string_val(0) == "x");
}

TEST_CASE("image payloads are PNG files of the right size", "[summary][image]") {
    const std::string dir = temp_dir("png");
    auto w = tf::summary::create_file_writer(dir);
    for (int64_t c : {1, 2, 3, 4}) {
        w.image(fmt::format("c{}", c), tf::random::uniform({1, 7, 11, c}, 0, 1, tf::float32, 1), c);
    }
    w.image("u8", tf::fill({1, 4, 6, 3}, 200, tf::uint8), 9);
    w.close();
    const auto events = tf::summary::summary_iterator(w.path());
    REQUIRE(events.size() == 6);
    const int color_types[] = {0, 4, 2, 6};
    for (std::size_t i = 1; i < events.size(); ++i) {
        const auto& s = events[i].values.at(0).strings;
        REQUIRE(s.size() == 3);
        const std::string& png = s[2];
        CHECK(png.substr(0, 8) == "\x89PNG\r\n\x1a\n");
        CHECK(png.substr(12, 4) == "IHDR");
        CHECK(be32(png, 16) == std::stoul(s[0]));  // width
        CHECK(be32(png, 20) == std::stoul(s[1]));  // height
        CHECK(uint8_t(png[24]) == 8);              // bit depth
        if (i <= 4) CHECK(uint8_t(png[25]) == color_types[i - 1]);
        CHECK(png.substr(png.size() - 8, 4) == "IEND");
    }
}

TEST_CASE("float pixels follow convert_image_dtype (x * 255.5, saturated)", "[summary][image]") {
    const auto v = tf::summary::encode_png(std::vector<uint8_t>{0, 127, 255}.data(), 1, 3, 1);
    CHECK(v.substr(1, 3) == "PNG");
    // Indirectly: a float image of 1.0 and one of uint8 255 give the same PNG.
    const std::string dir = temp_dir("convert");
    auto w = tf::summary::create_file_writer(dir);
    w.image("f", tf::constant(std::vector<float>{1.f, 0.f, 2.f, -1.f}, {1, 2, 2, 1}), 0);
    w.image("u", tf::constant(std::vector<uint8_t>{255, 0, 255, 0}, {1, 2, 2, 1}), 0);
    w.close();
    const auto ev = tf::summary::summary_iterator(w.path());
    CHECK(ev[1].values[0].strings[2] == ev[2].values[0].strings[2]);
}

TEST_CASE("audio payloads are 16-bit PCM WAV files", "[summary][audio]") {
    const std::vector<float> samples = {
        0.f, 0.5f, -1.f, 1.f, 2.f, -0.25f};  // 3 frames x 2 channels
    const std::string wav = tf::summary::encode_wav(samples.data(), 3, 2, 44100);
    REQUIRE(wav.size() == 44 + 12);
    CHECK(wav.substr(0, 4) == "RIFF");
    CHECK(le32(wav, 4) == wav.size() - 8);
    CHECK(wav.substr(8, 8) == "WAVEfmt ");
    CHECK(le32(wav, 16) == 16);
    CHECK(le16(wav, 20) == 1);      // PCM
    CHECK(le16(wav, 22) == 2);      // channels
    CHECK(le32(wav, 24) == 44100);  // sample rate
    CHECK(le32(wav, 28) == 44100 * 4);
    CHECK(le16(wav, 32) == 4);   // block align
    CHECK(le16(wav, 34) == 16);  // bits
    CHECK(wav.substr(36, 4) == "data");
    CHECK(le32(wav, 40) == 12);
    const int16_t expected[] = {0, 16384, -32768, 32767, 32767, -8192};
    for (int i = 0; i < 6; ++i)
        CHECK(static_cast<int16_t>(le16(wav, 44 + 2 * i)) == expected[i]);

    const std::string dir = temp_dir("wav");
    auto w = tf::summary::create_file_writer(dir);
    w.audio("a", tf::constant(samples, {1, 3, 2}), 44100, 0);
    w.close();
    CHECK(tf::summary::summary_iterator(w.path())[1].values[0].strings[0] == wav);
}

TEST_CASE("histogram buckets follow TensorBoard's rule on the edge cases", "[summary][histogram]") {
    using tf::summary::histogram_buckets;
    CHECK(histogram_buckets({1, 2, 3}, 0).empty());                  // k = 0: [0, 3]
    CHECK(histogram_buckets({}, 2) == std::vector<double>(6, 0.0));  // no data
    CHECK(histogram_buckets({5}, 3) == std::vector<double>{5, 5, 0, 5, 5, 0, 5, 5, 1});  // single
    CHECK(histogram_buckets({2, 2, 2, 2}, 2) ==
          std::vector<double>{2, 2, 0, 2, 2, 4});  // all equal
    // General: half-open buckets, the last closed; edges linspace(min, max, k+1), last = max.
    const auto rows = histogram_buckets({0, 1, 2, 3, 4, 4}, 4);
    CHECK(rows == std::vector<double>{0, 1, 1, 1, 2, 1, 2, 3, 1, 3, 4, 3});
    const auto odd = histogram_buckets({0.1, 0.2, 0.7}, 3);
    CHECK(odd[3 * 2 + 1] == 0.7);  // the last edge is exactly max
    double total = 0;
    for (int i = 0; i < 3; ++i)
        total += odd[3 * i + 2];
    CHECK(total == 3);

    const std::string dir = temp_dir("hist");
    auto w = tf::summary::create_file_writer(dir);
    CHECK(w.histogram("empty", tf::zeros({0}), 0));
    CHECK(w.histogram("zero_buckets", tf::ones({3}), 0, 0));
    CHECK_THROWS_AS(w.histogram("nan", tf::constant({1.f, NAN}), 0),
                    tf::errors::InvalidArgumentError);
    CHECK_THROWS_WITH(w.histogram("neg", tf::ones({3}), 0, -1), Catch::Contains("buckets"));
    w.close();
    const auto ev = tf::summary::summary_iterator(w.path());
    CHECK(ev[1].values[0].tensor.shape() == tf::Shape{30, 3});
    CHECK(ev[2].values[0].tensor.shape() == tf::Shape{0, 3});
}

TEST_CASE("bad summary arguments raise InvalidArgumentError naming tag and shape",
          "[summary][errors]") {
    const std::string dir = temp_dir("errors");
    auto w = tf::summary::create_file_writer(dir);
    CHECK_THROWS_WITH(w.scalar("s", tf::ones({2}), 0),
                      Catch::Contains("'s'") && Catch::Contains("[2]"));
    CHECK_THROWS_WITH(w.image("im", tf::ones({2, 2, 3}), 0),
                      Catch::Contains("[N,H,W,C]") && Catch::Contains("[2,2,3]"));
    CHECK_THROWS_AS(w.image("im", tf::ones({1, 2, 2, 5}), 0), tf::errors::InvalidArgumentError);
    CHECK_THROWS_AS(w.image("im", tf::ones({1, 2, 2, 3}, tf::int32), 0),
                    tf::errors::InvalidArgumentError);
    CHECK_THROWS_AS(w.image("im", tf::ones({1, 0, 2, 3}), 0), tf::errors::InvalidArgumentError);
    CHECK_THROWS_AS(w.audio("a", tf::ones({2, 3}), 100, 0), tf::errors::InvalidArgumentError);
    CHECK_THROWS_WITH(w.audio("a", tf::ones({1, 3, 1}), 0, 0), Catch::Contains("sample_rate"));
    CHECK_THROWS_WITH(w.text("t", "\xff\xfe", 0), Catch::Contains("UTF-8"));
    CHECK_THROWS_AS(w.scalar("u", tf::Tensor(), 0), tf::errors::InvalidArgumentError);
    CHECK_THROWS_WITH(w.scalar("", 1.0, 0), Catch::Contains("tag must not be empty"));
    w.close();
    CHECK_THROWS_AS(w.scalar("late", 1.0, 0), tf::errors::FailedPreconditionError);
    CHECK_THROWS_AS(tf::summary::SummaryWriter().scalar("x", 1.0, 0),
                    tf::errors::FailedPreconditionError);
    CHECK(tf::summary::summary_iterator(w.path()).size() == 1);  // nothing bad was written
}

namespace {
std::vector<std::string> warnings;
void keep_warning(tf::logging::Level level, std::string_view message) {
    if (level == tf::logging::WARN) warnings.emplace_back(message);
}
}  // namespace

// A writer killed mid-append leaves a partial last record: every complete event still reads back,
// the torn tail is logged (or raised on request), and a corrupt record inside stays an error.
TEST_CASE("a torn last record: the complete events read back", "[summary][torn]") {
    auto w = tf::summary::create_file_writer(temp_dir("torn"));
    for (int i = 0; i < 50; ++i)
        w.scalar("loss", i, i);
    w.close();
    const auto whole = tf::summary::summary_iterator(w.path());
    REQUIRE(whole.size() == 51);
    const auto size = fs::file_size(w.path());
    const std::string bytes = [&] {
        std::ifstream in(w.path(), std::ios::binary);
        return std::string(std::istreambuf_iterator<char>(in), {});
    }();
    // Cut inside the last record's footer, its data and its header (a scalar event's record is
    // about 30 bytes).
    for (const std::size_t cut :
         {std::size_t{1}, std::size_t{3}, std::size_t{10}, std::size_t{20}}) {
        fs::resize_file(w.path(), size - cut);
        warnings.clear();
        tf::logging::set_sink(keep_warning);
        const auto events = tf::summary::summary_iterator(w.path());
        tf::logging::set_sink(nullptr);
        CHECK(events.size() == 50);
        CHECK(events.back().step == 48);
        REQUIRE(warnings.size() == 1);
        CHECK_THAT(warnings[0],
                   Catch::Contains(w.path()) && Catch::Contains("truncated") &&
                       Catch::Contains("50 complete events"));
        CHECK_THROWS_AS(tf::summary::summary_iterator(w.path(), tf::summary::TornTail::raise),
                        tf::errors::DataLossError);
        std::ofstream(w.path(), std::ios::binary | std::ios::trunc) << bytes;
    }
    // A flipped byte in a complete record is corruption, not a torn tail.
    std::string corrupt = bytes;
    corrupt[bytes.size() / 2] ^= 0x20;
    std::ofstream(w.path(), std::ios::binary | std::ios::trunc) << corrupt;
    CHECK_THROWS_AS(tf::summary::summary_iterator(w.path()), tf::errors::DataLossError);
}

TEST_CASE("default writer, record_if and name scopes", "[summary][default]") {
    CHECK_FALSE(tf::summary::scalar("nowhere", 1.0, 0));  // no default writer
    const std::string dir = temp_dir("default");
    auto w = tf::summary::create_file_writer(dir);
    {
        auto scope = w.as_default();
        CHECK(tf::summary::scalar("a", 1.0, 0));
        {
            auto off = tf::summary::record_if(false);
            CHECK_FALSE(tf::summary::should_record_summaries());
            CHECK_FALSE(tf::summary::scalar("skipped", 1.0, 1));
            CHECK_FALSE(w.histogram("skipped", tf::ones({2}), 1));
            auto on = tf::summary::record_if(true);
            CHECK(tf::summary::text("on_again", "x", 1));
        }
        CHECK(tf::summary::should_record_summaries());
        auto ns = tf::name_scope("layer1");
        CHECK(tf::summary::histogram("weights", tf::ones({3}), 2));
        CHECK(tf::summary::image("img", tf::zeros({1, 1, 1, 1}), 2));
        CHECK(tf::summary::audio("snd", tf::zeros({1, 2, 1}), 100, 2));
        CHECK(tf::summary::scalar("t", tf::constant(1.f), 2));
        tf::summary::flush();
    }
    CHECK_FALSE(tf::summary::scalar("after", 1.0, 0));
    std::vector<std::string> tags;
    for (const auto& e : tf::summary::summary_iterator(w.path())) {
        for (const auto& v : e.values)
            tags.push_back(v.tag);
    }
    CHECK(tags == std::vector<std::string>{
                      "a", "on_again", "layer1/weights", "layer1/img", "layer1/snd", "layer1/t"});
}

TEST_CASE("flush() puts queued events on disk; the thread writes when max_queue is reached",
          "[summary][flush]") {
    const std::string dir = temp_dir("flush");
    auto w = tf::summary::create_file_writer(dir, {.max_queue = 1000, .flush_millis = 3600000});
    for (int i = 0; i < 5; ++i)
        w.scalar("x", i, i);
    CHECK(tf::summary::summary_iterator(w.path()).size() == 1);  // still queued
    w.flush();
    CHECK(tf::summary::summary_iterator(w.path()).size() == 6);

    auto q = tf::summary::create_file_writer(dir, {.max_queue = 3, .flush_millis = 3600000});
    for (int i = 0; i < 3; ++i)
        q.scalar("y", i, i);
    std::size_t n = 0;
    for (int tries = 0; tries < 2000 && n < 4; ++tries) {  // the writer thread wakes at 3 queued
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        n = tf::summary::summary_iterator(q.path()).size();
    }
    CHECK(n == 4);

    auto timed = tf::summary::create_file_writer(dir, {.max_queue = 1000, .flush_millis = 20});
    timed.scalar("z", 1.0, 0);
    n = 0;
    for (int tries = 0; tries < 2000 && n < 2; ++tries) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        n = tf::summary::summary_iterator(timed.path()).size();
    }
    CHECK(n == 2);
}

TEST_CASE("several threads write to one writer safely", "[summary][threads]") {
    const std::string dir = temp_dir("threads");
    auto w = tf::summary::create_file_writer(dir, {.max_queue = 7});
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            auto scope = w.as_default();
            for (int i = 0; i < 250; ++i)
                tf::summary::scalar(fmt::format("t{}", t), i, i);
            if (t == 0) w.flush();
        });
    }
    for (auto& th : threads)
        th.join();
    w.close();
    const auto events = tf::summary::summary_iterator(w.path());
    CHECK(events.size() == 1 + 4 * 250);
    std::map<std::string, int64_t> last;
    for (std::size_t i = 1; i < events.size(); ++i) {
        const auto& tag = events[i].values.at(0).tag;
        if (last.count(tag)) CHECK(events[i].step == last[tag] + 1);  // per-thread order kept
        last[tag] = events[i].step;
    }
}

TEST_CASE("graph events hold a GraphDef with scoped node names", "[summary][graph]") {
    tf::Variable w(tf::constant({{1.f, 2.f}}), {.name = "summary_graph_w"});
    auto x = tf::constant({{3.f}, {4.f}});
    tf::GradientTape tape;
    tape.watch(x);
    {
        auto scope = tf::name_scope("dense");
        tf::sigmoid(tf::matmul(x, w));
    }
    const tf::Graph g = tape.graph();
    const std::string dir = temp_dir("graph");
    auto writer = tf::summary::create_file_writer(dir);
    writer.graph(g);
    writer.close();
    const auto events = tf::summary::summary_iterator(writer.path());
    REQUIRE(events.size() == 2);
    CHECK(events[1].step == 0);
    tf::proto::GraphDef def;
    REQUIRE(def.ParseFromString(events[1].graph_def));
    REQUIRE(static_cast<std::size_t>(def.node_size()) == g.num_nodes());
    std::vector<std::string> names;
    for (const auto& n : def.node())
        names.push_back(n.name());
    CHECK(std::find(names.begin(), names.end(), "dense/MatMul") != names.end());
    CHECK(std::find(names.begin(), names.end(), "dense/Sigmoid") != names.end());
    const auto& mm = *std::find_if(
        def.node().begin(), def.node().end(), [](const auto& n) { return n.op() == "MatMul"; });
    CHECK(mm.attr().at("T").type() == tf::proto::DT_FLOAT);
    CHECK(mm.attr().at("_output_shapes").list().shape(0).dim(0).size() == 2);
    CHECK(mm.input_size() == 2);
    CHECK(def.versions().producer() == 1394);  // TensorFlow 2.12's GraphDef version

    // write_graph: text (protobuf TextFormat of the same GraphDef) and binary, atomically.
    tf::train::write_graph(g, dir + "/export", "graph.pbtxt");
    tf::train::write_graph(g, dir + "/export", "graph.pb", false);
    const std::string text = read_file(dir + "/export/graph.pbtxt");
    CHECK(text == g.to_text());
    CHECK_THAT(text,
               Catch::Contains("name: \"dense/MatMul\"") && Catch::Contains("type: DT_FLOAT"));
    CHECK(read_file(dir + "/export/graph.pb") == events[1].graph_def);
    CHECK_THROWS_AS(tf::train::write_graph(g, dir, ""), tf::errors::InvalidArgumentError);
}

TEST_CASE("summary_iterator reports corruption as DataLossError", "[summary][corrupt]") {
    const std::string dir = temp_dir("corrupt");
    auto w = tf::summary::create_file_writer(dir);
    w.scalar("x", 1.0, 1);
    w.close();
    const std::string good = read_file(w.path());
    for (std::size_t len = 0; len < good.size(); ++len) {
        std::ofstream(w.path(), std::ios::binary | std::ios::trunc) << good.substr(0, len);
        std::size_t n = 0;
        std::string error;
        try {
            n = tf::summary::summary_iterator(w.path()).size();
        } catch (const tf::errors::DataLossError& e) {
            error = e.what();
        }
        INFO("truncated to " << len);
        if (error.empty()) {
            CHECK(n <= 1);  // a clean cut between records
        } else {
            CHECK_THAT(error, Catch::Contains(w.path()) && Catch::Contains("offset"));
        }
    }
    // A record whose framing is valid but whose payload is not an Event.
    std::string framed;
    tf::io::append_framed_record(framed, unhex("ffffffff"));
    std::ofstream(w.path(), std::ios::binary | std::ios::trunc) << framed;
    CHECK_THROWS_AS(tf::summary::summary_iterator(w.path()), tf::errors::DataLossError);
    CHECK_THROWS_AS(tf::summary::summary_iterator(dir + "/missing"), tf::errors::NotFoundError);
}

TEST_CASE("damaged Event payloads with valid framing never crash the reader",
          "[summary][corrupt]") {
    // Valid CRCs around mutated payloads: the protobuf parser and the tensor decoding see garbage.
    const std::string dir = temp_dir("fuzz");
    auto w = tf::summary::create_file_writer(dir);
    w.scalar("s", 1.0, 1);
    w.histogram("h", tf::constant({1.0, 2.0, 3.0}), 2, 4);
    w.image("i", tf::zeros({1, 2, 2, 3}), 3);
    w.audio("a", tf::zeros({1, 4, 1}), 100, 4);
    w.text("t", "hi", 5);
    w.scalar("half", tf::constant(std::vector<float>{1.f}, {}), 6);
    w.close();
    std::vector<std::string> payloads;
    {
        tf::io::RecordFileReader reader(w.path(), tf::io::Compression::none);
        while (auto rec = reader.next())
            payloads.push_back(*rec);
    }
    std::mt19937 rng(5);
    int parsed = 0, lost = 0;
    const std::string path = dir + "/mutated";
    for (int trial = 0; trial < 3000; ++trial) {
        std::string p = payloads[rng() % payloads.size()];
        const int flips = 1 + static_cast<int>(rng() % 4);
        for (int f = 0; f < flips && !p.empty(); ++f)
            p[rng() % p.size()] ^= static_cast<char>(1 << (rng() % 8));
        if (rng() % 5 == 0 && !p.empty()) p.resize(rng() % p.size());
        std::string framed;
        tf::io::append_framed_record(framed, p);
        std::ofstream(path, std::ios::binary | std::ios::trunc) << framed;
        try {
            tf::summary::summary_iterator(path);
            ++parsed;
        } catch (const tf::errors::DataLossError&) {
            ++lost;
        }
    }
    CHECK(parsed + lost == 3000);
    CHECK(lost > 0);
}

TEST_CASE("legacy TF1 values decode as TensorBoard converts them", "[summary][legacy]") {
    tf::proto::Event e;
    e.set_step(3);
    auto* scalar = e.mutable_summary()->add_value();
    scalar->set_tag("old_loss");
    scalar->set_simple_value(0.5f);
    auto* h = e.mutable_summary()->add_value();
    h->set_tag("old_hist");
    auto* histo = h->mutable_histo();
    histo->set_min(-1);
    histo->set_max(2);
    for (double limit : {-2.0, 0.0, 1.0, 3.0, 5.0})
        histo->add_bucket_limit(limit);
    for (double count : {0.0, 4.0, 0.0, 6.0, 0.0})
        histo->add_bucket(count);
    const auto ev = tf::summary::parse_event(e.SerializeAsString(), "test");
    REQUIRE(ev.values.size() == 2);
    CHECK(ev.values[0].kind == "scalar");
    CHECK(ev.values[0].scalar_value == 0.5);
    CHECK(ev.values[1].kind == "histogram");
    // Buckets 1..3 kept: lefts [min, 0, 1], rights [0, 1, max].
    CHECK(ev.values[1].tensor.to_vector<float>() == std::vector<float>{-1, 0, 4, 0, 1, 0, 1, 2, 6});
}

TEST_CASE("add_event writes values of any plugin as given", "[summary][add_event]") {
    const std::string dir = temp_dir("add_event");
    auto w = tf::summary::create_file_writer(dir);
    tf::summary::Event e;
    e.step = 9;  // wall_time 0: filled in with the current time
    tf::summary::SummaryValue pr;
    pr.tag = "pr_curve";
    pr.kind = "other";
    pr.plugin_name = "pr_curves";
    pr.tensor = tf::constant(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
    tf::summary::SummaryValue labels;
    labels.tag = "labels";
    labels.kind = "other";
    labels.plugin_name = "custom";
    labels.strings = {"a", "b"};
    e.values = {pr, labels};
    w.add_event(e);
    w.close();
    const auto events = tf::summary::summary_iterator(w.path());
    REQUIRE(events.size() == 2);
    CHECK(events[1].step == 9);
    CHECK(events[1].wall_time > 1.6e9);
    REQUIRE(events[1].values.size() == 2);
    CHECK(events[1].values[0].kind == "other");
    CHECK(events[1].values[0].plugin_name == "pr_curves");
    CHECK(events[1].values[0].tensor.shape() == tf::Shape{2, 3});
    CHECK(events[1].values[0].tensor.to_vector<float>() == std::vector<float>{1, 2, 3, 4, 5, 6});
    CHECK(events[1].values[1].strings == std::vector<std::string>{"a", "b"});
}
