// Shape: construction, access, printing, broadcasting and its errors.
#include <catch2/catch.hpp>

#include <sstream>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;

TEST_CASE("shape basics", "[shape]") {
    tf::Shape scalar;
    CHECK(scalar.rank() == 0);
    CHECK(scalar.num_elements() == 1);
    tf::Shape s{2, 3, 4};
    CHECK(s.rank() == 3);
    CHECK(s.num_elements() == 24);
    CHECK(s[0] == 2);
    CHECK(s[-1] == 4);
    CHECK(s[-3] == 2);
    CHECK(s.dims() == std::vector<int64_t>{2, 3, 4});
    CHECK(s == tf::Shape(std::vector<int64_t>{2, 3, 4}));
    CHECK_FALSE(s == tf::Shape{2, 3});
    CHECK(tf::Shape{0, 5}.num_elements() == 0);
}

TEST_CASE("shape printing", "[shape]") {
    CHECK(fmt::format("{}", tf::Shape{2, 3}) == "(2, 3)");
    CHECK(fmt::format("{}", tf::Shape{3}) == "(3,)");
    CHECK(fmt::format("{}", tf::Shape{}) == "()");
    CHECK(tf::Shape{2, 3}.debug_string() == "[2,3]");
    std::ostringstream os;
    os << tf::Shape{4, 1};
    CHECK(os.str() == "(4, 1)");
}

TEST_CASE("bad shapes and axes raise InvalidArgumentError", "[shape][errors]") {
    CHECK_THROWS_AS((tf::Shape{2, -1}), tf::errors::InvalidArgumentError);
    CHECK_THROWS_WITH((tf::Shape{2, -3}), Catch::Contains("Dimension 1") && Catch::Contains("-3"));
    CHECK_THROWS_AS((tf::Shape{INT64_MAX, 4}), tf::errors::InvalidArgumentError);
    tf::Shape s{2, 3};
    CHECK_THROWS_AS(s[2], tf::errors::InvalidArgumentError);
    CHECK_THROWS_AS(s[-3], tf::errors::InvalidArgumentError);
    CHECK_THROWS_WITH(s[5], Catch::Contains("axis 5 is out of bounds"));
}

TEST_CASE("broadcasting follows NumPy", "[shape]") {
    CHECK(tf::broadcast_shapes({2, 3}, {3}) == tf::Shape{2, 3});
    CHECK(tf::broadcast_shapes({4, 1}, {1, 5}) == tf::Shape{4, 5});
    CHECK(tf::broadcast_shapes({}, {2, 2}) == tf::Shape{2, 2});
    CHECK(tf::broadcast_shapes({2, 1, 3}, {5, 1}) == tf::Shape{2, 5, 3});
    CHECK(tf::broadcast_shapes({0, 3}, {1, 3}) == tf::Shape{0, 3});
    try {
        tf::broadcast_shapes({2, 3}, {4}, "AddV2");
        FAIL("expected an error");
    } catch (const tf::errors::InvalidArgumentError& e) {
        CHECK(std::string(e.what()) == "Incompatible shapes: [2,3] vs. [4] [Op:AddV2]");
        CHECK(e.op_name() == "AddV2");
        CHECK(e.code() == tf::errors::Code::invalid_argument);
    }
}
