// fmt support for tapeflow's value types with only <fmt/core.h> (half the parse time of
// <fmt/format.h>, which keeps <tapeflow/tapeflow.hpp> fast to include): each type formats as its
// str(). Format specs are not supported ("{}" only).
#pragma once

#include <algorithm>
#include <string_view>

#include <fmt/core.h>

#include <tapeflow/core/export.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow::detail {

struct StrFormatter {
    constexpr auto parse(fmt::format_parse_context& ctx) { return ctx.begin(); }
    /// Copies `text` to the output. Not fmt::format_to(ctx.out(), ...): that instantiates
    /// fmt::detail::vformat_to<char>, which libfmt.so exports under g++'s mangling only, so
    /// programs built with clang (and clang-repl sessions) could not link it (docs/repl.md).
    template <class Ctx>
    static auto write(std::string_view text, Ctx& ctx) {
        return std::copy(text.begin(), text.end(), ctx.out());
    }
};

}  // namespace tapeflow::detail

TAPEFLOW_API_END
