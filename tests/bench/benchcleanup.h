#pragma once

// What a benchmark leaves on the machine (network namespaces, links,
// sandboxes, images, temporary folders) is undone however it ends: by the
// guards' destructors when it ends or fails, and by a watcher thread when
// SIGINT, SIGTERM or SIGHUP stops it in the middle of a measurement, where
// no destructor would run.

#include <QString>

#include <cstdint>
#include <memory>

namespace cloop::bench {

// A shell script run once: when the guard goes out of scope, or at a
// stopping signal, whichever comes first. Scripts of live guards run at a
// signal in the reverse order of their making, like destructors.
class UndoOnExit
{
public:
    explicit UndoOnExit(QString script);
    ~UndoOnExit();
    UndoOnExit(const UndoOnExit &) = delete;
    UndoOnExit &operator=(const UndoOnExit &) = delete;

    // Runs the script now, if it has not run yet.
    void runNow();

private:
    std::uint64_t m_id;
};

// Points TMPDIR at a private folder made for this run, so every temporary
// folder of the benchmark and of the programs it starts is inside it; at
// the end (or a stopping signal) the sandboxes that mount anything from it
// are removed, then the folder. Make one at the start of main, before
// anything else.
class PrivateScratch
{
public:
    PrivateScratch();
    PrivateScratch(const PrivateScratch &) = delete;
    PrivateScratch &operator=(const PrivateScratch &) = delete;

    QString path() const { return m_path; }

private:
    QString m_path;
    std::unique_ptr<UndoOnExit> m_undo;
};

// Single-quoted for sh.
QString shellQuoted(const QString &text);

} // namespace cloop::bench
