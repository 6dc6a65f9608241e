// The code blocks of docs/errors.md, compiled and run as a test (tests/docs checks that the
// page's blocks occur here). Exits 1 if the error is not what the page says.
// Laid out as in the page, not by clang-format (tests/docs/check_code_blocks.py compares them).
// clang-format off
#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;

int main() {
    bool ok = false;
    try {
        auto r = tf::range(0, 5, 0);
    } catch (const tf::errors::OpError& e) {
        fmt::print("{}\n", static_cast<int>(e.code()));   // 3: tf::errors::Code::invalid_argument
        fmt::print("{}\n", e.op_name());    // "Range": TensorFlow's op type, empty when no op was involved
        fmt::print("{}\n", e.message());    // "Requires delta != 0: 0"
        fmt::print("{}\n", e.what());       // "Requires delta != 0: 0 [Op:Range]"
        fmt::print("{}\n", tf::errors::code_name(e.code()));   // "INVALID_ARGUMENT"
        ok = e.code() == tf::errors::Code::invalid_argument && e.op_name() == "Range" &&
             e.message() == "Requires delta != 0: 0" &&
             std::string(e.what()) == "Requires delta != 0: 0 [Op:Range]" &&
             std::string_view(tf::errors::code_name(e.code())) == "INVALID_ARGUMENT";
    }
    return ok ? 0 : 1;
}
