// fmt support for tapeflow's value types with only <fmt/core.h> (half the parse time of
// <fmt/format.h>, which keeps <tapeflow/tapeflow.hpp> fast to include): each type formats as its
// str(). Format specs are not supported ("{}" only).
#pragma once

#include <fmt/core.h>

namespace tapeflow::detail {

struct StrFormatter {
    constexpr auto parse(fmt::format_parse_context& ctx) { return ctx.begin(); }
};

}  // namespace tapeflow::detail
