// Shape: construction, access, printing, broadcasting and its errors.
#include <sstream>

#include <catch2/catch.hpp>

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
    CHECK_THROWS_WITH((tf::Shape{2, -2}), Catch::Contains("Dimension 1") && Catch::Contains("-2"));
    CHECK_THROWS_WITH((tf::Shape{2, -3}), Catch::Contains("Dimension 1") && Catch::Contains("-3"));
    CHECK_THROWS_AS((tf::Shape{INT64_MAX, 4}), tf::errors::InvalidArgumentError);
    tf::Shape s{2, 3};
    CHECK_THROWS_AS(s[2], tf::errors::InvalidArgumentError);
    CHECK_THROWS_AS(s[-3], tf::errors::InvalidArgumentError);
    CHECK_THROWS_WITH(s[5], Catch::Contains("axis 5 is out of bounds"));
}

TEST_CASE("a -1 dimension is unknown: reshape infers it, no tensor has it", "[shape][errors]") {
    const tf::Shape s{3, -1};
    CHECK(s.num_elements() == -1);
    CHECK(s.rank() == 2);
    CHECK(s[1] == -1);
    CHECK(tf::Shape{-1}.num_elements() == -1);
    CHECK(tf::Shape{0, -1}.num_elements() == -1);
    const auto unknown = Catch::Contains("Shape [3,-1] has an unknown dimension (-1)");
    CHECK_THROWS_AS(tf::zeros(s), tf::errors::InvalidArgumentError);
    CHECK_THROWS_WITH(tf::zeros(s), unknown);
    CHECK_THROWS_WITH(tf::fill(s, 1.0), unknown);
    CHECK_THROWS_WITH(tf::random::normal(s), unknown);
    CHECK_THROWS_WITH(tf::constant(std::vector<float>{1, 2, 3}, s), unknown);
    CHECK_THROWS_WITH(tf::Tensor::empty(s, tf::float32), unknown);
    CHECK_THROWS_AS(tf::broadcast_to(tf::zeros({3, 1}), s), tf::errors::InvalidArgumentError);
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
