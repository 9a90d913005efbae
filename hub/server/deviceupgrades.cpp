#include "hub/server/deviceupgrades.h"

#include "common/logging.h"
#include "common/protocol/protocolversion.h"
#include "hub/server/daemongateway.h"
#include "hub/storage/auditlog.h"
#include "hub/storage/database.h"

#include <QJsonDocument>
#include <QTimer>

namespace cloop::hub {

using namespace Qt::StringLiterals;
using protocol::UpgradeStatus;

DeviceUpgrades::DeviceUpgrades(protocol::PeerRole role, DaemonGateway &gateway, AuditLog &audit,
    std::chrono::milliseconds answerTimeout, QObject *parent)
    : QObject(parent)
    , m_role(role)
    , m_gateway(gateway)
    , m_audit(audit)
    , m_answerTimeout(answerTimeout)
{
    connect(&m_gateway, &DaemonGateway::controlReceived, this,
        [this](qint64 id, const protocol::ControlMessage &message) {
            if (const auto *status = std::get_if<UpgradeStatus>(&message))
                onStatus(id, *status);
        });
    // A device that went away while draining says again where it stands
    // when it is back; until then its upgrade is not known to go on.
    connect(&m_gateway, &DaemonGateway::daemonConnected, this, [this](qint64 id, const QString &) {
        if (isUpgrading(id)) {
            m_progress.remove(id);
            Q_EMIT changed(id);
        }
    });
    connect(&m_gateway, &DaemonGateway::daemonDisconnected, this,
        [this](qint64 id, const QString &reason) {
            if (auto waiting = m_waiting.take(id))
                waiting->finish(ApiResponse::error(409, u"daemon_offline"_s,
                    u"%1 went away before it answered: %2"_s.arg(subjectOf(id), reason)));
        });
}

QString DeviceUpgrades::subjectOf(qint64 id) const
{
    return u"%1:%2"_s.arg(protocol::roleName(m_role)).arg(id);
}

bool DeviceUpgrades::isUpgrading(qint64 id) const
{
    const auto progress = m_progress.constFind(id);
    return progress != m_progress.constEnd()
        && (progress->status.state == UpgradeStatus::State::Draining
            || progress->status.state == UpgradeStatus::State::Requested);
}

namespace {
// The status's fields as the daemon sent them, without the message type:
// what the API shows and the audit log keeps.
QJsonObject fieldsOf(const UpgradeStatus &status)
{
    QJsonObject fields
        = QJsonDocument::fromJson(protocol::serializeControlMessage(status)).object();
    fields.remove(u"type"_s);
    return fields;
}
} // namespace

QJsonValue DeviceUpgrades::toJson(qint64 id) const
{
    const auto progress = m_progress.constFind(id);
    if (progress == m_progress.constEnd())
        return QJsonValue::Null;
    QJsonObject object = fieldsOf(progress->status);
    object.insert(u"since"_s, toDbTime(progress->since));
    return object;
}

ApiResponse DeviceUpgrades::request(
    qint64 id, const QString &name, const release::UpgradeTarget &target, const QString &actor)
{
    const QString noun = protocol::roleName(m_role);
    tunnel::TunnelConnection *session = m_gateway.session(id);
    if (!session)
        return ApiResponse::error(409, u"daemon_offline"_s,
            u"%1 %2 (%3) is not connected; a device is asked to upgrade over its tunnel"_s.arg(noun)
                .arg(id)
                .arg(name));
    if (m_gateway.protocolOf(id) < protocol::kMinimumForUpgrade)
        return ApiResponse::error(409, u"upgrade_unsupported"_s,
            u"%1 %2 (%3) speaks protocol %4, from before remote upgrades; upgrade it on its "
            "machine (apt install ./PACKAGE.deb)"_s.arg(noun)
                .arg(id)
                .arg(name)
                .arg(m_gateway.protocolOf(id)));
    if (m_waiting.contains(id))
        return ApiResponse::error(409, u"upgrade_refused"_s,
            u"%1 %2 (%3) has not answered the last upgrade request yet"_s.arg(noun).arg(id).arg(
                name));
    if (Status audited = m_audit.append(actor,
            m_role == protocol::PeerRole::Executor ? auditaction::kExecutorUpgrade
                                                   : auditaction::kForwarderUpgrade,
            subjectOf(id), { { u"name"_s, name }, { u"target"_s, target.toString() } });
        !audited)
        return ApiResponse::fromError(audited.error());
    qCInfo(lcHub).noquote() << actor << "asks" << noun << id << name << "to upgrade to"
                            << target.toString();
    session->sendControl(protocol::UpgradeRequest { target.toString(), {} });

    auto deferred = std::make_shared<DeferredResponse>();
    m_waiting.insert(id, deferred);
    QTimer::singleShot(m_answerTimeout, this, [this, id, deferred, noun, name] {
        if (m_waiting.value(id) != deferred)
            return;
        m_waiting.remove(id);
        deferred->finish(ApiResponse::error(504, u"upgrade_unanswered"_s,
            u"%1 %2 (%3) did not answer the upgrade request in time"_s.arg(noun).arg(id).arg(
                name)));
    });
    return ApiResponse { 202, {}, deferred, {}, {} };
}

void DeviceUpgrades::onStatus(qint64 id, const UpgradeStatus &status)
{
    m_progress.insert(id, Progress { status, QDateTime::currentDateTimeUtc() });
    qCInfo(lcHub).noquote() << subjectOf(id)
                            << "upgrade:" << protocol::upgradeStateName(status.state)
                            << status.target << status.from << status.to << status.message;
    if (status.state == UpgradeStatus::State::Refused || status.isOutcome()) {
        const QJsonObject details = fieldsOf(status);
        if (Status audited = m_audit.append(subjectOf(id),
                m_role == protocol::PeerRole::Executor ? auditaction::kExecutorUpgradeOutcome
                                                       : auditaction::kForwarderUpgradeOutcome,
                subjectOf(id), details);
            !audited)
            qCWarning(lcHub).noquote() << "the upgrade of" << subjectOf(id)
                                       << "could not be audited:" << audited.error().message;
    }
    if (auto waiting = m_waiting.take(id)) {
        if (status.state == UpgradeStatus::State::Refused)
            waiting->finish(ApiResponse::error(409, u"upgrade_refused"_s, status.message));
        else
            waiting->finish(ApiResponse::ok(toJson(id), 202));
    }
    Q_EMIT changed(id);
}

} // namespace cloop::hub
