// tf::logging: levels, the sink, fmt formatting, fatal throwing instead of aborting.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;
namespace logging = tf::logging;

namespace {
std::vector<std::pair<int, std::string>> captured;
void capture(logging::Level level, std::string_view message) {
    captured.emplace_back(level, message);
}
}  // namespace

TEST_CASE("messages below the verbosity are dropped", "[logging]") {
    captured.clear();
    logging::set_sink(capture);
    const int saved = logging::get_verbosity();
    logging::set_verbosity(logging::WARN);
    logging::debug("d {}", 1);
    logging::info("i {}", 2);
    logging::warn("w {}", 3);
    logging::error("e {:.2f}", 4.0);
    logging::set_verbosity(logging::DEBUG);
    logging::debug("now visible");
    logging::set_verbosity(saved);
    logging::set_sink(nullptr);
    REQUIRE(captured.size() == 3);
    CHECK(captured[0] == std::pair<int, std::string>{logging::WARN, "w 3"});
    CHECK(captured[1] == std::pair<int, std::string>{logging::ERROR, "e 4.00"});
    CHECK(captured[2] == std::pair<int, std::string>{logging::DEBUG, "now visible"});
}

TEST_CASE("fatal logs and throws InternalError instead of aborting", "[logging]") {
    captured.clear();
    logging::set_sink(capture);
    CHECK_THROWS_AS(logging::fatal("disk {} is gone", "/dev/sda"), tf::errors::InternalError);
    CHECK_THROWS_WITH(logging::fatal("x"), "x");
    logging::set_sink(nullptr);
    REQUIRE(!captured.empty());
    CHECK(captured[0].first == logging::FATAL);
    CHECK(captured[0].second == "disk /dev/sda is gone");
}

TEST_CASE("level numbers match the API", "[logging]") {
    CHECK(logging::DEBUG == 10);
    CHECK(logging::INFO == 20);
    CHECK(logging::WARN == 30);
    CHECK(logging::ERROR == 40);
    CHECK(logging::FATAL == 50);
}

// Run by the meson tests "core-log-env" with TAPEFLOW_MIN_LOG_LEVEL=2 and "core-tf-log-env" with
// only TensorFlow's TF_CPP_MIN_LOG_LEVEL=3 (hidden otherwise).
TEST_CASE("TAPEFLOW_MIN_LOG_LEVEL or TF_CPP_MIN_LOG_LEVEL sets the initial level", "[.][logenv]") {
    const char* env = std::getenv("TAPEFLOW_MIN_LOG_LEVEL");
    if (env == nullptr) env = std::getenv("TF_CPP_MIN_LOG_LEVEL");
    REQUIRE(env != nullptr);
    const int expected[] = {logging::INFO, logging::WARN, logging::ERROR, logging::FATAL};
    CHECK(logging::get_verbosity() == expected[std::atoi(env)]);
}
