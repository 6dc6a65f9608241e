// Symbol visibility of the public API. libtapeflow is compiled with -fvisibility=hidden: only what
// a public header declares between TAPEFLOW_API_BEGIN and TAPEFLOW_API_END is exported. Every
// header under include/tapeflow opens the region after its last #include and closes it at its end
// (the install suite checks this). A pragma region, not a namespace attribute: clang ignores a
// namespace's visibility for free functions defined in another block of the namespace, and nested
// namespace definitions (`namespace tapeflow::train {`) cannot carry attributes.
#pragma once

#if __cplusplus < 202002L
#error "tapeflow needs C++20: compile with -std=c++20 (clang-repl-19: --Xcc=-std=c++20)"
#endif

#if defined(__GNUC__) || defined(__clang__)
#define TAPEFLOW_API_BEGIN _Pragma("GCC visibility push(default)")
#define TAPEFLOW_API_END _Pragma("GCC visibility pop")
#else
#define TAPEFLOW_API_BEGIN
#define TAPEFLOW_API_END
#endif
