#pragma once

#include "common/protocol/controlmessage.h"
#include "common/release/upgradetarget.h"
#include "hub/server/api/apirouter.h"

#include <QDateTime>
#include <QHash>
#include <QObject>

#include <chrono>
#include <memory>

namespace cloop::hub {

class AuditLog;
class DaemonGateway;

// The hub's side of remote upgrades for one kind of daemon: it hands an
// administrator's request to the daemon's live session, answers the API
// with the device's own decision, remembers where each device's upgrade
// stands (so views show "upgrading"), and puts every step and the outcome
// in the audit log. The device decides what it installs; this only asks.
class DeviceUpgrades final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(DeviceUpgrades)

public:
    static constexpr std::chrono::milliseconds kDefaultAnswerTimeout { 10'000 };

    DeviceUpgrades(protocol::PeerRole role, DaemonGateway &gateway, AuditLog &audit,
        std::chrono::milliseconds answerTimeout = kDefaultAnswerTimeout, QObject *parent = nullptr);

    // Asks daemon `id` to upgrade to `target`; deferred until it answers.
    // Refused at once when it has no live session or speaks a protocol
    // without upgrades. `actor` is audited as the one who asked.
    ApiResponse request(
        qint64 id, const QString &name, const release::UpgradeTarget &target, const QString &actor);

    struct Progress
    {
        protocol::UpgradeStatus status;
        QDateTime since;
    };
    // The device's last word on an upgrade, if any since the hub started.
    std::optional<Progress> progressOf(qint64 id) const { return m_progress.value(id); }
    bool isUpgrading(qint64 id) const;
    // {"state", "target", "since", ...} of progressOf, or null.
    QJsonValue toJson(qint64 id) const;

Q_SIGNALS:
    void changed(qint64 id);

private:
    void onStatus(qint64 id, const protocol::UpgradeStatus &status);
    QString subjectOf(qint64 id) const;

    protocol::PeerRole m_role;
    DaemonGateway &m_gateway;
    AuditLog &m_audit;
    std::chrono::milliseconds m_answerTimeout;
    QHash<qint64, Progress> m_progress;
    // Requests whose API call waits for the device's first answer.
    QHash<qint64, std::shared_ptr<DeferredResponse>> m_waiting;
};

} // namespace cloop::hub
