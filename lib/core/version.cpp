// The library's version string (the headers carry TAPEFLOW_VERSION_STRING).
#include <tapeflow/version.hpp>

namespace tapeflow {

const char* version() {
    return TAPEFLOW_VERSION_STRING;
}

}  // namespace tapeflow
