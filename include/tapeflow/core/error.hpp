// The error hierarchy: every error tapeflow raises is a tf::errors::OpError carrying TensorFlow's
// status code and, when an op raised it, the op's TensorFlow type name ("AddV2", "MatMul", ...).
#pragma once

#include <stdexcept>
#include <string>

#include <tapeflow/core/export.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow::errors {

/// TensorFlow's canonical status codes (same numbers as
/// tensorflow/core/protobuf/error_codes.proto).
enum class Code {
    ok = 0,
    cancelled = 1,
    unknown = 2,
    invalid_argument = 3,
    deadline_exceeded = 4,
    not_found = 5,
    already_exists = 6,
    permission_denied = 7,
    resource_exhausted = 8,
    failed_precondition = 9,
    aborted = 10,
    out_of_range = 11,
    unimplemented = 12,
    internal = 13,
    unavailable = 14,
    data_loss = 15,
    unauthenticated = 16,
};

/// "INVALID_ARGUMENT", "NOT_FOUND", ... (TensorFlow's spelling of each code).
const char* code_name(Code code);

/// Base of every tapeflow error. what() is the message followed by " [Op:<op name>]" when an op
/// raised it, as TensorFlow eager prints: "Incompatible shapes: [2,3] vs. [4] [Op:AddV2]".
class OpError : public std::runtime_error {
public:
    OpError(Code code, const std::string& message, const std::string& op_name = "");
    Code code() const { return code_; }
    /// TensorFlow type name of the op that failed; empty when no op was involved.
    const std::string& op_name() const { return op_name_; }
    /// The message without the " [Op:...]" suffix.
    const std::string& message() const { return message_; }

private:
    Code code_;
    std::string op_name_;
    std::string message_;
};

#define TAPEFLOW_DEFINE_ERROR(Name, code_value)                                    \
    class Name : public OpError {                                                  \
    public:                                                                        \
        explicit Name(const std::string& message, const std::string& op_name = "") \
            : OpError(code_value, message, op_name) {}                             \
    }

/// Bad shapes, dtypes, axes or values.
TAPEFLOW_DEFINE_ERROR(InvalidArgumentError, Code::invalid_argument);
TAPEFLOW_DEFINE_ERROR(NotFoundError, Code::not_found);
TAPEFLOW_DEFINE_ERROR(AlreadyExistsError, Code::already_exists);
TAPEFLOW_DEFINE_ERROR(OutOfRangeError, Code::out_of_range);
/// The object is not in a state that allows the call (e.g. data<T>() of a GPU tensor).
TAPEFLOW_DEFINE_ERROR(FailedPreconditionError, Code::failed_precondition);
/// An allocation failed (host or device memory).
TAPEFLOW_DEFINE_ERROR(ResourceExhaustedError, Code::resource_exhausted);
/// No kernel for this (op, device, dtype), or a feature not built in (e.g. CUDA).
TAPEFLOW_DEFINE_ERROR(UnimplementedError, Code::unimplemented);
/// Corrupt or truncated files.
TAPEFLOW_DEFINE_ERROR(DataLossError, Code::data_loss);
/// A broken invariant inside tapeflow (a bug: please report it), or logging::fatal.
TAPEFLOW_DEFINE_ERROR(InternalError, Code::internal);
TAPEFLOW_DEFINE_ERROR(UnavailableError, Code::unavailable);
TAPEFLOW_DEFINE_ERROR(CancelledError, Code::cancelled);
TAPEFLOW_DEFINE_ERROR(UnknownError, Code::unknown);
TAPEFLOW_DEFINE_ERROR(AbortedError, Code::aborted);
TAPEFLOW_DEFINE_ERROR(DeadlineExceededError, Code::deadline_exceeded);
TAPEFLOW_DEFINE_ERROR(PermissionDeniedError, Code::permission_denied);
TAPEFLOW_DEFINE_ERROR(UnauthenticatedError, Code::unauthenticated);
/// No gradient is defined for an op (Python's LookupError in TensorFlow).
TAPEFLOW_DEFINE_ERROR(LookupError, Code::not_found);
/// API misuse, e.g. a second gradient() on a non-persistent tape (Python's RuntimeError in TF).
TAPEFLOW_DEFINE_ERROR(RuntimeError, Code::failed_precondition);

#undef TAPEFLOW_DEFINE_ERROR

}  // namespace tapeflow::errors

TAPEFLOW_API_END
