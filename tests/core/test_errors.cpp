// The error hierarchy: codes, op names, messages, catchability as the base types.
#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;
namespace errors = tf::errors;

TEMPLATE_TEST_CASE_SIG("each error type carries its TensorFlow code",
                       "[errors]",
                       ((typename E, errors::Code C), E, C),
                       (errors::InvalidArgumentError, errors::Code::invalid_argument),
                       (errors::NotFoundError, errors::Code::not_found),
                       (errors::AlreadyExistsError, errors::Code::already_exists),
                       (errors::OutOfRangeError, errors::Code::out_of_range),
                       (errors::FailedPreconditionError, errors::Code::failed_precondition),
                       (errors::ResourceExhaustedError, errors::Code::resource_exhausted),
                       (errors::UnimplementedError, errors::Code::unimplemented),
                       (errors::DataLossError, errors::Code::data_loss),
                       (errors::InternalError, errors::Code::internal),
                       (errors::UnavailableError, errors::Code::unavailable)) {
    try {
        throw E("something broke", "MatMul");
    } catch (const errors::OpError& e) {
        CHECK(e.code() == C);
        CHECK(e.op_name() == "MatMul");
        CHECK(e.message() == "something broke");
        CHECK(std::string(e.what()) == "something broke [Op:MatMul]");
    }
    try {
        throw E("no op here");
    } catch (const std::runtime_error& e) {
        CHECK(std::string(e.what()) == "no op here");
    }
}

TEST_CASE("LookupError and RuntimeError derive from OpError", "[errors]") {
    CHECK_THROWS_AS(throw errors::LookupError("No gradient defined for operation 'X'"),
                    errors::OpError);
    CHECK_THROWS_AS(
        throw errors::RuntimeError("A non-persistent GradientTape can only be used once"),
        errors::OpError);
}

TEST_CASE("TensorFlow's numbering of status codes", "[errors]") {
    CHECK(static_cast<int>(errors::Code::invalid_argument) == 3);
    CHECK(static_cast<int>(errors::Code::resource_exhausted) == 8);
    CHECK(static_cast<int>(errors::Code::unimplemented) == 12);
    CHECK(static_cast<int>(errors::Code::data_loss) == 15);
    CHECK(static_cast<int>(errors::Code::unauthenticated) == 16);
    CHECK(std::string(errors::code_name(errors::Code::data_loss)) == "DATA_LOSS");
}
