#include "hub/executor/ownexecutor.h"

#include "common/logging.h"
#include "daemon-agent/agentdaemon.h"
#include "daemon-agent/capabilities/capabilityprobe.h"
#include "hub/executor/ownexecutorcredential.h"

#include <QDir>

#include <sys/stat.h>

namespace cloop::hub {

OwnExecutor::OwnExecutor(HubCore &core, QString dataDir, Options options, QObject *parent)
    : QObject(parent)
    , m_core(core)
    , m_dataDir(std::move(dataDir))
    , m_options(std::move(options))
{
    m_thread.setObjectName(QStringLiteral("hub-executor"));
}

OwnExecutor::~OwnExecutor()
{
    // The agent and its supervisor are deleted on their own thread as it
    // ends (deleteLater on QThread::finished), sandboxes included.
    m_thread.quit();
    m_thread.wait();
}

QString OwnExecutor::credentialPath() const
{
    return m_dataDir + QLatin1String("/executor/agent.json");
}

QString OwnExecutor::workRoot() const
{
    return m_options.workRoot.isEmpty() ? m_dataDir + QLatin1String("/executor/work")
                                        : m_options.workRoot;
}

Status OwnExecutor::start(const QUrl &hub, const QString &pin)
{
    Q_ASSERT(!m_thread.isRunning());
    const QString folder = m_dataDir + QLatin1String("/executor");
    if (!QDir().mkpath(folder))
        return Error::make(
            QStringLiteral("io_error"), QStringLiteral("cannot create %1").arg(folder), true);
    ::chmod(QFile::encodeName(folder).constData(), 0700);
    auto bundle = OwnExecutorCredential(m_core, credentialPath()).prepare(hub, pin);
    if (!bundle)
        return bundle.error();

    agent::AgentDaemonOptions options;
    options.connection.credentialPath = credentialPath();
    options.connection.bundle = *bundle;
    options.workRoot = workRoot();
    options.retainBytes = m_options.retainBytes;
    agent::CapabilityProbe::Options choices;
    choices.maxConcurrent = m_options.maxConcurrent;
    choices.mode = agent::AgentCapabilities::Mode::Container;

    auto *home = new QObject; // the agent's parent, deleted on the agent's thread
    home->moveToThread(&m_thread);
    connect(&m_thread, &QThread::finished, home, &QObject::deleteLater);
    m_thread.start();
    QMetaObject::invokeMethod(home, [this, home, options, choices]() mutable {
        // Probing runs a few podman commands: here, not on the hub's thread.
        options.capabilities = agent::CapabilityProbe(options.kernel).probe(choices);
        auto *agent = new agent::AgentDaemon(options, home);
        connect(agent, &agent::AgentDaemon::finished, this, &OwnExecutor::stopped);
        if (Status prepared = agent->prepare(); !prepared) {
            qCCritical(lcHub).noquote()
                << "the hub's own executor cannot start:" << prepared.error().message;
            Q_EMIT stopped(daemon::kExitFailure);
            return;
        }
        agent->start();
    });
    qCInfo(lcHub).noquote() << "the hub's own executor runs workloads under" << workRoot();
    return {};
}

} // namespace cloop::hub
