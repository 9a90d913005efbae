#pragma once

#include <cstdio>
#include <cstdlib>

namespace cloop::fuzz {

// A broken invariant: say which, then abort() so libFuzzer (or the replay
// driver under ctest) records the input as a crash. Kept free of Q_ASSERT so
// it fires in release builds too.
[[noreturn]] inline void fail(const char *invariant)
{
    std::fprintf(stderr, "fuzz invariant broken: %s\n", invariant);
    std::fflush(stderr);
    std::abort();
}

inline void check(bool holds, const char *invariant)
{
    if (!holds)
        fail(invariant);
}

} // namespace cloop::fuzz
