#include "hub/cluster/sessionholders.h"

#include "common/logging.h"
#include "common/util/clock.h"
#include "hub/cluster/memberlease.h"

using namespace Qt::StringLiterals;

namespace cloop::hub {

namespace {

QString entryKey(const QString &kind, qint64 daemonId)
{
    return kind + u'/' + QString::number(daemonId);
}

} // namespace

SessionHolders::SessionHolders(
    SessionHolderStore &store, const MemberLease &lease, const Clock &clock, QObject *parent)
    : QObject(parent)
    , m_store(store)
    , m_lease(lease)
    , m_clock(clock)
{ }

Status SessionHolders::forgetEarlierStarts()
{
    return m_store.forgetEarlierStarts(m_lease.record().id, m_lease.record().generation);
}

void SessionHolders::claim(protocol::PeerRole role, qint64 daemonId)
{
    if (!m_lease.isMember())
        return;
    const QString kind = protocol::roleName(role);
    auto claimed = m_store.claim(
        kind, daemonId, m_lease.record().id, m_lease.record().generation, m_clock.now());
    if (!claimed)
        qCWarning(lcHubCluster).noquote()
            << u"cannot record that this member holds %1 %2: %3"_s.arg(
                   kind, QString::number(daemonId), claimed.error().message);
    else if (!*claimed)
        qCWarning(lcHubCluster).noquote()
            << u"%1 %2 is held by a later connection to another member, or this member's "
               "lease lapsed: not recorded as held here"_s.arg(kind, QString::number(daemonId));
}

void SessionHolders::release(protocol::PeerRole role, qint64 daemonId)
{
    const QString kind = protocol::roleName(role);
    if (Status released
        = m_store.release(kind, daemonId, m_lease.record().id, m_lease.record().generation);
        !released)
        qCWarning(lcHubCluster).noquote() << u"cannot record that %1 %2 left this member: %3"_s.arg(
            kind, QString::number(daemonId), released.error().message);
}

void SessionHolders::refreshView() const
{
    if (!m_othersRead.isValid() || m_othersRead.elapsed() > kViewFreshnessMs) {
        auto live = m_store.live(m_clock.now());
        if (!live) {
            // The last view stands until the records answer again.
            qCWarning(lcHubCluster).noquote()
                << "cannot read which members hold which daemons:" << live.error().message;
        } else {
            m_others.clear();
            for (const SessionHolderStore::Holder &holder : *live)
                if (holder.memberId != m_lease.record().id)
                    m_others.insert(entryKey(holder.kind, holder.daemonId), holder.memberName);
            m_othersRead.start();
        }
    }
}

QList<qint64> SessionHolders::heldElsewhere(protocol::PeerRole role) const
{
    refreshView();
    const QString prefix = protocol::roleName(role) + u'/';
    QList<qint64> ids;
    for (auto it = m_others.cbegin(); it != m_others.cend(); ++it) {
        if (it.key().startsWith(prefix))
            ids.append(it.key().mid(prefix.size()).toLongLong());
    }
    return ids;
}

std::optional<QString> SessionHolders::otherHolderOf(protocol::PeerRole role, qint64 daemonId) const
{
    refreshView();
    const auto found = m_others.constFind(entryKey(protocol::roleName(role), daemonId));
    if (found == m_others.constEnd())
        return std::nullopt;
    return *found;
}

std::optional<SessionHolderStore::Holder> SessionHolders::otherHolderNow(
    protocol::PeerRole role, qint64 daemonId) const
{
    auto holder = m_store.holderOf(protocol::roleName(role), daemonId, m_clock.now());
    if (!holder) {
        qCWarning(lcHubCluster).noquote()
            << "cannot read which member holds" << protocol::roleName(role) << daemonId << ":"
            << holder.error().message;
        return std::nullopt;
    }
    if (!*holder || (*holder)->memberId == m_lease.record().id)
        return std::nullopt;
    return **holder;
}

std::optional<QString> SessionHolders::currentHolderOf(
    protocol::PeerRole role, qint64 daemonId) const
{
    auto holder = m_store.holderOf(protocol::roleName(role), daemonId, m_clock.now());
    if (!holder || !*holder)
        return std::nullopt;
    return (*holder)->memberName;
}

QString SessionHolders::memberName() const
{
    return m_lease.record().name;
}

void SessionHolders::recordDeviceState(qint64 forwarderId, const QJsonObject &state)
{
    if (!m_lease.isMember())
        return;
    const QString kind = protocol::roleName(protocol::PeerRole::Forwarder);
    if (Status recorded = m_store.recordDeviceState(
            kind, forwarderId, m_lease.record().id, m_lease.record().generation, state);
        !recorded)
        qCWarning(lcHubCluster).noquote()
            << u"cannot record what forwarder %1 said of its device: %2"_s.arg(
                   QString::number(forwarderId), recorded.error().message);
}

} // namespace cloop::hub
