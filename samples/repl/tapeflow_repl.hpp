// The REPL prelude: what a clang-repl or cling session starts with (docs/repl.md). clang-repl
// force-includes it (samples/repl/clang-repl.sh); cling and xeus-cling include it from
// samples/repl/setup.cling. Keep it to the public header: anything more slows every session's
// start.
#pragma once

#include <cstdio>
#include <iostream>

#include <fmt/ranges.h>  // fmt::print of std::vector (to_vector's result)

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;

// stdout unbuffered (std::cout writes through it too). A session can end without flushing it: an
// uncaught exception calls std::terminate, and clang-repl 19 crashes on some input (docs/repl.md).
// With output to a pipe or a file, stdout is fully buffered and all earlier output would be lost.
// stderr is unbuffered already.
namespace tapeflow_repl {
inline const bool stdout_unbuffered = std::setvbuf(stdout, nullptr, _IONBF, 0) == 0;
}  // namespace tapeflow_repl
