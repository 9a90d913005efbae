#pragma once

#include "common/protocol/agentcapabilities.h"
#include "common/protocol/controlmessage.h"
#include "daemon-agent/workroot/workroot.h"

#include <QHash>
#include <QObject>

namespace cloop::agent {

class SandboxDriver;

// The runs the hub gave this agent: each workload confined to its run
// directory and started in a sandbox; what happens to it is reported back
// as control messages (started, finished with the exit code or the engine's
// own error). Everything from the hub is checked again here.
class RunSupervisor final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(RunSupervisor)

public:
    RunSupervisor(WorkRoot workRoot, protocol::AgentCapabilities::Mode mode, QObject *parent = nullptr);
    ~RunSupervisor() override;

    void start(const protocol::RunStart &run);
    void cancel(const protocol::RunCancel &cancel);
    int activeCount() const { return static_cast<int>(m_active.size()); }

Q_SIGNALS:
    void report(const cloop::protocol::ControlMessage &message);

private:
    struct Active
    {
        SandboxDriver *sandbox = nullptr;
        qint64 outputBytes = 0;
    };

    void refuse(qint64 runId, const QString &error);

    WorkRoot m_workRoot;
    protocol::AgentCapabilities::Mode m_mode;
    QHash<qint64, Active> m_active;
    bool m_imageReady = false;
};

} // namespace cloop::agent
