#include "common/daemon/upgraderesponder.h"

#include "common/logging.h"

#include <QDateTime>

namespace cloop::daemon {

using namespace Qt::StringLiterals;
using protocol::UpgradeStatus;

UpgradeResponder::UpgradeResponder(Options options, QObject *parent)
    : QObject(parent)
    , m_options(std::move(options))
    , m_spool(m_options.spoolFolder)
{
    m_drainTimer.setInterval(kDrainPollMs);
    connect(&m_drainTimer, &QTimer::timeout, this, &UpgradeResponder::drainTick);
    connect(&m_watcher, &QFileSystemWatcher::directoryChanged, this, [this] {
        if (m_connected)
            tellOutcome();
    });
}

UpgradeStatus UpgradeResponder::refusal(const QString &target, const QString &message) const
{
    UpgradeStatus status;
    status.state = UpgradeStatus::State::Refused;
    status.target = target;
    status.from = m_options.installedVersion;
    status.message = message;
    return status;
}

void UpgradeResponder::onRequest(const protocol::UpgradeRequest &request)
{
    if (!request.ignoredFields.isEmpty())
        qCWarning(lcUpgrade).noquote()
            << "the hub's upgrade request carried" << request.ignoredFields.join(", "_L1)
            << "- ignored: the channel and any downgrade are this device's own configuration";
    if (!m_options.settings.remoteUpgrade) {
        Q_EMIT send(refusal(request.target,
            u"this device does not take upgrades from the hub; its operator allows them with "
            "`%1 install --upgrade --remote-upgrade`"_s.arg(m_options.program)));
        return;
    }
    auto target = release::UpgradeTarget::parse(request.target);
    if (!target) {
        Q_EMIT send(refusal(request.target, target.error().message));
        return;
    }
    auto installed = release::ReleaseVersion::parse(m_options.installedVersion);
    if (!installed) {
        Q_EMIT send(refusal(request.target,
            u"this build's version %1 is none a release or edge build has, so nothing can be "
            "installed over it"_s.arg(m_options.installedVersion)));
        return;
    }
    const release::DevicePolicy policy { m_options.settings.channel, *installed, false,
        m_options.program };
    if (Status admitted = policy.admits(*target); !admitted) {
        Q_EMIT send(refusal(request.target, admitted.error().message));
        return;
    }
    if (m_draining || m_spool.hasRequest()) {
        Q_EMIT send(refusal(request.target, u"an upgrade is under way on this device already"_s));
        return;
    }
    qCInfo(lcUpgrade).noquote() << "the hub asks for an upgrade to" << target->toString()
                                << (busy() > 0 ? u"- %1 run(s) finish first"_s.arg(busy())
                                               : u"- no run to wait for"_s);
    m_draining = *target;
    m_lastDraining = -1;
    drainTick();
    if (m_draining)
        m_drainTimer.start();
}

void UpgradeResponder::drainTick()
{
    if (!m_draining)
        return;
    const int left = busy();
    if (left > 0) {
        // Said when it changes, and again after a reconnection.
        if (left == std::exchange(m_lastDraining, left))
            return;
        UpgradeStatus status;
        status.state = UpgradeStatus::State::Draining;
        status.target = m_draining->toString();
        status.from = m_options.installedVersion;
        status.draining = left;
        Q_EMIT send(status);
        return;
    }
    m_drainTimer.stop();
    const release::UpgradeTarget target = *std::exchange(m_draining, std::nullopt);
    file(target);
}

void UpgradeResponder::file(const release::UpgradeTarget &target)
{
    UpgradeStatus status;
    status.target = target.toString();
    status.from = m_options.installedVersion;
    if (Status filed = m_spool.fileRequest(target); !filed) {
        status.state = UpgradeStatus::State::Failed;
        status.message = u"the request could not be filed: %1"_s.arg(filed.error().message);
    } else {
        status.state = UpgradeStatus::State::Requested;
        qCInfo(lcUpgrade).noquote()
            << "filed the upgrade request for" << status.target << "in" << m_spool.requestPath();
    }
    Q_EMIT send(status);
}

void UpgradeResponder::onConnected()
{
    if (Status marked
        = m_spool.markConnected(m_options.installedVersion, QDateTime::currentDateTimeUtc());
        !marked)
        qCWarning(lcUpgrade).noquote()
            << "cannot leave the connected mark for the upgrade helper:" << marked.error().message;
    m_connected = true;
    if (m_watcher.directories().isEmpty())
        m_watcher.addPath(m_spool.folder());
    tellOutcome();
    if (m_draining) {
        m_lastDraining = -1;
        m_drainTimer.start();
        drainTick();
    } else if (m_spool.hasRequest()) {
        UpgradeStatus status;
        status.state = UpgradeStatus::State::Requested;
        status.from = m_options.installedVersion;
        Q_EMIT send(status);
    }
}

void UpgradeResponder::onDisconnected()
{
    m_connected = false;
}

void UpgradeResponder::tellOutcome()
{
    auto outcome = m_spool.takeOutcome();
    if (!outcome)
        qCWarning(lcUpgrade).noquote() << outcome.error().message;
    else if (*outcome)
        Q_EMIT send(**outcome);
}

} // namespace cloop::daemon
