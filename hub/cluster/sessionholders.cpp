#include "hub/cluster/sessionholders.h"

#include "common/logging.h"
#include "common/util/clock.h"
#include "hub/cluster/memberlease.h"
#include "hub/server/daemongateway.h"

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

void SessionHolders::watch(DaemonGateway &gateway, protocol::PeerRole role)
{
    connect(&gateway, &DaemonGateway::daemonConnected, this,
        [this, role](qint64 id, const QString &) { claim(role, id); });
    connect(&gateway, &DaemonGateway::daemonDisconnected, this,
        [this, role](qint64 id, const QString &) { release(role, id); });
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

std::optional<QString> SessionHolders::otherHolderOf(protocol::PeerRole role, qint64 daemonId) const
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
    const auto found = m_others.constFind(entryKey(protocol::roleName(role), daemonId));
    if (found == m_others.constEnd())
        return std::nullopt;
    return *found;
}

} // namespace cloop::hub
