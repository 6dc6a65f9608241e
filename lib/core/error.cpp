// Error codes' names and the OpError message format.
#include <tapeflow/core/error.hpp>

namespace tapeflow::errors {

const char* code_name(Code code) {
    switch (code) {
        case Code::ok:
            return "OK";
        case Code::cancelled:
            return "CANCELLED";
        case Code::unknown:
            return "UNKNOWN";
        case Code::invalid_argument:
            return "INVALID_ARGUMENT";
        case Code::deadline_exceeded:
            return "DEADLINE_EXCEEDED";
        case Code::not_found:
            return "NOT_FOUND";
        case Code::already_exists:
            return "ALREADY_EXISTS";
        case Code::permission_denied:
            return "PERMISSION_DENIED";
        case Code::resource_exhausted:
            return "RESOURCE_EXHAUSTED";
        case Code::failed_precondition:
            return "FAILED_PRECONDITION";
        case Code::aborted:
            return "ABORTED";
        case Code::out_of_range:
            return "OUT_OF_RANGE";
        case Code::unimplemented:
            return "UNIMPLEMENTED";
        case Code::internal:
            return "INTERNAL";
        case Code::unavailable:
            return "UNAVAILABLE";
        case Code::data_loss:
            return "DATA_LOSS";
        case Code::unauthenticated:
            return "UNAUTHENTICATED";
    }
    return "UNKNOWN";
}

namespace {
std::string full_message(const std::string& message, const std::string& op_name) {
    return op_name.empty() ? message : message + " [Op:" + op_name + "]";
}
}  // namespace

OpError::OpError(Code code, const std::string& message, const std::string& op_name)
    : std::runtime_error(full_message(message, op_name)),
      code_(code),
      op_name_(op_name),
      message_(message) {}

}  // namespace tapeflow::errors
