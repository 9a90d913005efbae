#pragma once

#include "daemon-agent/sandbox/sandboxdriver.h"

#include <QProcess>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>
#include <QTimer>

#include <chrono>
#include <memory>

namespace cloop::agent {

struct PodmanSandboxOptions
{
    QString podman = QStringLiteral("podman"); // program name or path
    // Between TERM and KILL when cancelled.
    std::chrono::milliseconds gracePeriod { 10'000 };
    // How long to keep asking podman for the container's pid: its devices
    // are attached only then. Creating a container took 18 s in a guest
    // under emulation, and podman's first run on a machine sets up storage.
    std::chrono::milliseconds pidTimeout { 120'000 };
};

// The container driver: one rootful `podman run --rm` per workload, with
// its own network namespace (no interface but lo), a minimal private /dev,
// no capabilities, a read-only image, and the run's workspace at /work.
// podman is started directly (no shell) and its stdout and stderr pipes
// are forwarded as they arrive.
//
// podman's exit code is the workload's, except where podman says the
// failure is its own: 125 with a final "Error: ..." line (no such image,
// bad option), 126/127 with the OCI runtime's marker in that line (runtime
// failed, command missing or not executable), and the sandbox init's
// "failed to exec pid1" (reported as 127/126). A workload that itself
// exits 125-127 keeps its code.
//
// RAII: destroying the object never leaves a container behind; a run
// still going is removed by name (blocking, bounded).
class PodmanSandbox final : public SandboxDriver
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(PodmanSandbox)

public:
    explicit PodmanSandbox(QObject *parent = nullptr);
    explicit PodmanSandbox(PodmanSandboxOptions options, QObject *parent = nullptr);
    ~PodmanSandbox() override;

    Status start(const RunSpec &spec) override;
    void cancel() override;
    qint64 pid() const override { return m_pid; }

    const QString &containerName() const { return m_name; }

    // The container every run gets: "cloop-run-<runId>".
    static QString containerNameFor(const QString &runId);
    // The arguments after the program name, for a valid spec. The
    // environment goes through `envFile` (see envFileContents()), so its
    // values never appear in a process list.
    static QStringList runArguments(const RunSpec &spec, const QString &envFile);
    static QByteArray envFileContents(const RunSpec &spec);

    // Imports `image` from a static busybox (package busybox-static) when
    // `podman image exists` says it is missing: a rootfs of busybox and a
    // symlink per applet, built in a temporary folder. Idempotent and
    // blocking (about 0.2 s when it imports); meant for the agent's start.
    static Status ensureDefaultImage(const QString &image = RunSpec::defaultImage(),
        const QString &busybox = QStringLiteral("/bin/busybox"),
        const QString &podman = QStringLiteral("podman"));

private:
    void onReadyReadStdout();
    void onReadyReadStderr();
    void onProcessFinished(int exitCode, QProcess::ExitStatus status);
    void onProcessError(QProcess::ProcessError error);
    void pollPid();
    void onGraceExpired();
    void onKillExpired();
    void sendSignal(const QString &signal);
    void finish(int exitCode, const QString &error);
    // Non-empty when podman (or the sandbox's init) failed rather than the
    // workload; may rewrite `exitCode` to podman's code for the failure.
    QString engineError(int &exitCode) const;
    void removeContainerBlocking();

    PodmanSandboxOptions m_options;
    QString m_name;
    QString m_command; // argv[0], for messages
    std::unique_ptr<QProcess> m_process; // `podman run`, attached
    std::unique_ptr<QProcess> m_inspect; // `podman inspect` while polling the pid
    std::unique_ptr<QProcess> m_cleanup; // `podman rm -f` after a forced end
    std::unique_ptr<QTemporaryDir> m_private; // 0700, holds the env file
    QTimer m_pidPoll;
    QTimer m_graceTimer;
    QTimer m_killTimer;
    std::chrono::steady_clock::time_point m_pidDeadline;
    QByteArray m_stderrTail; // where podman's own "Error: ..." line lands
    qint64 m_pid = 0;
    bool m_startedEmitted = false;
    bool m_cancelRequested = false;
    bool m_forced = false; // podman itself was killed: its --rm may not have run
    bool m_finished = false;
};

} // namespace cloop::agent
