#pragma once

#include "daemon-agent/sandbox/sandboxdriver.h"

#include <QProcess>
#include <QTimer>

#include <memory>

namespace cloop::agent {

// A host-process run: the workload as a plain process of the agent's host
// in its run directory, without a sandbox. Only agents started in host mode
// take such runs, and they can never receive a device.
class HostProcessDriver final : public SandboxDriver
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(HostProcessDriver)

public:
    explicit HostProcessDriver(QObject *parent = nullptr);
    ~HostProcessDriver() override;

    Status start(const RunSpec &spec) override;
    void cancel() override;
    qint64 pid() const override { return m_pid; }

private:
    std::unique_ptr<QProcess> m_process;
    QTimer m_killTimer;
    qint64 m_pid = 0;
    bool m_finished = false;
};

} // namespace cloop::agent
