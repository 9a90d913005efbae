#pragma once

#include <QString>

#include <stdexcept>

namespace cloop::bench {

// Thrown rather than exiting, so what a benchmark set up so far (processes,
// namespaces, sandboxes) is taken down by destructors on the way out.
struct BenchFailed : std::runtime_error
{
    using std::runtime_error::runtime_error;
};

[[noreturn]] inline void fail(const QString &what)
{
    throw BenchFailed(what.toStdString());
}

} // namespace cloop::bench
