#pragma once

#include "common/result.h"
#include "daemon-agent/sandbox/runspec.h"

#include <QByteArray>
#include <QObject>
#include <QString>

namespace cloop::agent {

// Runs ONE workload in a sandbox of some engine and reports what happens,
// so the agent's supervision and log streaming do not know which engine
// it is. An object is used for one run: start() once, then signals.
//
// Order of signals: started (at most once, only with a real pid), any
// number of output, then exactly one finished — for every start() that
// returned success, including after cancel().
class SandboxDriver : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(SandboxDriver)

public:
    enum class Stream
    {
        Stdout,
        Stderr
    };
    Q_ENUM(Stream)

    using QObject::QObject;
    ~SandboxDriver() override = default;

    // Refuses an invalid spec or a second start at once (no signals
    // follow); everything the engine says afterwards arrives as finished().
    virtual Status start(const RunSpec &spec) = 0;

    // Asks the workload to stop (TERM, then KILL after a grace period).
    // finished() follows; nothing happens before start or after finished.
    virtual void cancel() = 0;

    // Host pid of the sandbox's init process once started() was emitted,
    // 0 before and after: its network namespace is where a forwarded TAP
    // is moved.
    virtual qint64 pid() const = 0;

Q_SIGNALS:
    void started(qint64 pid);
    // Bytes as the workload produced them, not split at lines.
    void output(cloop::agent::SandboxDriver::Stream stream, const QByteArray &bytes);
    // `error` is empty when the workload ran and `exitCode` is its own
    // (128+N after signal N). It is non-empty when the engine failed — no
    // such image, engine missing, runtime failure — and then carries the
    // engine's own message; `exitCode` is the engine's code, or -1 when the
    // engine could not be started at all.
    void finished(int exitCode, const QString &error);
};

} // namespace cloop::agent
