#pragma once

// What every benchmark here shares: the median of repeated measurements,
// the two arguments (MiB, repetitions), and a fatal check.

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace cloop::bench {

inline double median(std::vector<double> values)
{
    std::sort(values.begin(), values.end());
    const size_t n = values.size();
    return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

[[noreturn]] inline void die(const char *program, const char *what)
{
    std::fprintf(stderr, "%s: %s\n", program, what);
    std::exit(1);
}

// argv[index] as a positive whole number, or `fallback` when absent; exits
// with a usage line when it is not one.
inline int argument(int argc, char **argv, int index, int fallback, const char *usage)
{
    if (argc <= index)
        return fallback;
    char *end = nullptr;
    const long value = std::strtol(argv[index], &end, 10);
    if (*end != '\0' || value < 1 || value > 1 << 20) {
        std::fprintf(stderr, "usage: %s\n", usage);
        std::exit(2);
    }
    return static_cast<int>(value);
}

// What a codec benchmark measures.
enum class Work
{
    Encode,
    Decode,
    RoundTrip
};

inline const char *workName(Work work)
{
    switch (work) {
    case Work::Encode:
        return "encode";
    case Work::Decode:
        return "decode";
    case Work::RoundTrip:
        return "encode+decode";
    }
    return "?";
}

} // namespace cloop::bench
