// The REPL prelude: what a clang-repl or cling session starts with (docs/repl.md). clang-repl
// force-includes it (samples/repl/clang-repl.sh); cling and xeus-cling include it from
// samples/repl/setup.cling. Keep it to the public header: anything more slows every session's
// start.
#pragma once

#include <iostream>

#include <fmt/ranges.h>  // fmt::print of std::vector (to_vector's result)

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;
