#include "daemon-agent/agentdaemon.h"

#include "common/daemon/legclient.h"
#include "common/logging.h"
#include "common/protocol/channelopen.h"
#include "common/protocol/protocolversion.h"
#include "common/tunnel/channelmultiplexer.h"
#include "common/tunnel/tunnelclient.h"
#include "daemon-agent/agentlogging.h"
#include "daemon-agent/capabilities/capabilityprobe.h"
#include "daemon-agent/devices/deviceattacher.h"
#include "daemon-agent/harness/harnesspath.h"
#include "daemon-agent/runs/runsupervisor.h"
#include "daemon-agent/workroot/workroot.h"

#include <unistd.h>

namespace cloop::agent {

namespace {
constexpr QLatin1StringView kWorkRootKey { "work_root" };

daemon::DaemonConnectorOptions connectorOptions(const AgentDaemonOptions &options)
{
    daemon::DaemonConnectorOptions connector;
    connector.role = protocol::PeerRole::Executor;
    connector.endpointPath = QStringLiteral("/api/executors/connect");
    connector.connection = options.connection;
    connector.defaultCredentialFile = QStringLiteral("agent.json");
    connector.extra = { { kWorkRootKey,
        options.workRoot.isEmpty() ? WorkRoot::defaultPath() : options.workRoot } };
    connector.capabilities = options.capabilities.toJson();
    connector.channel = release::channelName(options.upgrade.settings.channel);
    return connector;
}
} // namespace

AgentDaemon::AgentDaemon(const AgentDaemonOptions &options, QObject *parent)
    : QObject(parent)
    , m_options(options)
    , m_connector(connectorOptions(options))
{
    connect(&m_connector, &daemon::DaemonConnector::finished, this, &AgentDaemon::finished);
}

Status AgentDaemon::prepare()
{
    // Before the credential is read, so a file others could read is
    // narrowed before anything else happens with it.
    if (Status private_ = identity::CredentialFile(m_connector.credentialPath()).keepPrivate();
        !private_)
        return private_;
    if (Status prepared = m_connector.prepare(); !prepared)
        return prepared;
    if (WorkRoot(workRoot()).contains(m_connector.credentialPath()))
        return Error::make(QStringLiteral("credential_in_work_root"),
            QStringLiteral(
                "the credential file %1 is inside the work root %2, where the hub names "
                "workspaces that workloads own; keep it elsewhere (--credential-file) or "
                "choose another --work-root")
                .arg(m_connector.credentialPath(), workRoot()),
            true);
    return {};
}

QString AgentDaemon::workRoot() const
{
    if (!m_options.workRoot.isEmpty())
        return m_options.workRoot;
    const QString saved = m_connector.credential().extra.value(kWorkRootKey).toString();
    return saved.isEmpty() ? WorkRoot::defaultPath() : saved;
}

constexpr qsizetype kMaxUnsentReports = 1024;

void AgentDaemon::send(const protocol::ControlMessage &message)
{
    tunnel::TunnelConnection *connection
        = m_connector.client() ? m_connector.client()->connection() : nullptr;
    if (connection && m_connector.client()->state() == tunnel::TunnelClient::State::Ready) {
        connection->sendControl(message);
        return;
    }
    if (m_unsent.size() >= kMaxUnsentReports) {
        qCWarning(lcAgent) << "too many reports while the hub is away; dropping the oldest";
        m_unsent.removeFirst();
    }
    m_unsent.append(message);
}

void AgentDaemon::refreshHarnesses()
{
    const QStringList folders = existingHarnessDirectories(m_options.harnesses.home);
    qputenv("PATH", prependToPath(qEnvironmentVariable("PATH"), folders).toLocal8Bit());
    const QMap<QString, QString> found
        = CapabilityProbe(m_options.kernel).findHarnesses(m_options.harnesses.table.names());
    if (found == m_options.capabilities.harnesses)
        return;
    m_options.capabilities.harnesses = found;
    const QJsonObject capabilities = m_options.capabilities.toJson();
    m_connector.setCapabilities(capabilities);
    qCInfo(lcAgent).noquote() << "harnesses now:"
                              << QStringList(found.keys()).join(QLatin1Char(' '));
    // A hub away or older hears of them in the next hello.
    if (m_hubProtocol >= protocol::kMinimumForHarnessInstall)
        send(protocol::CapabilitiesReport { capabilities });
}

void AgentDaemon::start()
{
    if (m_options.capabilities.mode == AgentCapabilities::Mode::Host && ::geteuid() != 0)
        qCWarning(lcAgent).noquote()
            << "host mode as uid" << ::geteuid()
            << "(not root): host-process runs are refused, since they could only run as this "
               "user, who can read the agent's credential";
    m_supervisor = new RunSupervisor(WorkRoot(workRoot()), m_options.capabilities.mode, this);
    m_supervisor->setRetainBytes(m_options.retainBytes);
    m_supervisor->setHarnessInstalls(m_options.harnesses);
    connect(
        m_supervisor, &RunSupervisor::harnessInstallEnded, this, &AgentDaemon::refreshHarnesses);
    if (m_options.capabilities.mode == AgentCapabilities::Mode::Container) {
        m_devices = new DeviceAttacher(workRoot(), m_options.kernel, this);
        m_devices->recoverLeftovers();
        m_devices->setDirectLegDialer(
            daemon::sessionLegDialer(m_connector, protocol::kDirectLegPath));
        m_supervisor->setDeviceAttacher(m_devices);
    }
    connect(m_supervisor, &RunSupervisor::report, this, &AgentDaemon::send);
    m_supervisor->recoverLeftovers();
    // An upgrade waits for the runs under way; the hub sends no new ones.
    daemon::UpgradeResponder::Options upgrade = m_options.upgrade;
    upgrade.busy = [supervisor = m_supervisor] { return supervisor->activeCount(); };
    m_upgrade = new daemon::UpgradeResponder(std::move(upgrade), this);
    connect(m_upgrade, &daemon::UpgradeResponder::send, this, &AgentDaemon::send);
    connect(&m_connector, &daemon::DaemonConnector::ready, this,
        [this](const protocol::Welcome &welcome) {
            qCInfo(lcAgent).noquote()
                << "connected to the hub as executor" << welcome.id << welcome.name << "-"
                << m_options.capabilities.summary() << "- work root" << workRoot();
            m_hubProtocol = welcome.protocol;
            const QList<protocol::ControlMessage> unsent = std::exchange(m_unsent, {});
            for (const protocol::ControlMessage &message : unsent)
                send(message);
            // After the kept reports, so a run that ended while the hub was away
            // is already finished there when the hub reads this list.
            // Kept from one connection to the next: a segment paused by the
            // drop of this tunnel resumes on the new one.
            const bool resumes = welcome.protocol >= protocol::kMinimumForResumableStreams;
            if (m_devices)
                m_devices->setStreamsResume(resumes);
            if (welcome.protocol >= protocol::kMinimumForRunsHeld) {
                protocol::RunsHeld held { m_supervisor->heldRunIds(), {} };
                if (resumes && m_devices)
                    held.keptDevices = m_devices->pausedKeys();
                send(held);
            }
            if (welcome.protocol >= protocol::kMinimumForUpgrade)
                m_upgrade->onConnected();
            tunnel::ChannelMultiplexer *channels = m_connector.client()->connection()->channels();
            m_supervisor->setChannels(channels);
            // The hub opens a channel per forwarded device, just before a start.
            connect(channels, &tunnel::ChannelMultiplexer::channelRequested, this,
                [this](tunnel::Channel *channel) {
                    const auto open = protocol::AgentDeviceOpen::fromMetadata(channel->metadata());
                    if (open && m_devices)
                        m_devices->acceptChannel(channel, *open);
                    else
                        channel->refuse(
                            QStringLiteral("this agent does not open such channels%1")
                                .arg(open ? QString()
                                          : QStringLiteral(": ") + open.error().message));
                });
        });
    m_connector.start();
    connect(m_connector.client(), &tunnel::TunnelClient::disconnected, this,
        [this](const QString &, qint64) {
            m_hubProtocol = 0;
            m_supervisor->setChannels(nullptr);
            m_upgrade->onDisconnected();
        });
    connect(m_connector.client(), &tunnel::TunnelClient::controlReceived, this,
        [this](const protocol::ControlMessage &message) {
            if (const auto *start = std::get_if<protocol::RunStart>(&message))
                m_supervisor->start(*start);
            else if (const auto *cancel = std::get_if<protocol::RunCancel>(&message))
                m_supervisor->cancel(*cancel);
            else if (const auto *ack = std::get_if<protocol::RunAck>(&message))
                m_supervisor->acknowledge(*ack);
            else if (const auto *request = std::get_if<protocol::UpgradeRequest>(&message))
                m_upgrade->onRequest(*request);
            else if (const auto *released = std::get_if<protocol::DeviceReleased>(&message);
                     released && m_devices)
                m_devices->release(released->runId, released->bindingId, released->reason);
        });
}

} // namespace cloop::agent
