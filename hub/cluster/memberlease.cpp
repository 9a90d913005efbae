#include "hub/cluster/memberlease.h"

#include "common/logging.h"
#include "common/util/clock.h"
#include "hub/storage/database.h"

#include <utility>

using namespace Qt::StringLiterals;

namespace cloop::hub {

MemberLease::MemberLease(MemberStore &store, const Clock &clock, Options options, QObject *parent)
    : QObject(parent)
    , m_store(store)
    , m_clock(clock)
    , m_options(options)
{
    m_renewal.setInterval(m_options.renewEvery);
    connect(&m_renewal, &QTimer::timeout, this, &MemberLease::renew);
}

MemberLease::~MemberLease()
{
    if (!m_member)
        return;
    if (Status left = m_store.leave(m_record.id, m_record.generation); !left)
        qCWarning(lcHubCluster).noquote()
            << "could not say this member left:" << left.error().message;
}

Status MemberLease::join(const MemberStore::Joining &member)
{
    auto joined = m_store.join(member, m_clock.now().addMSecs(m_options.lease.count()));
    if (!joined)
        return joined.error();
    m_record = *joined;
    m_member = true;
    m_reachableSince = m_clock.now();
    m_renewal.start();
    qCInfo(lcHubCluster).noquote()
        << u"member %1 (%2) of the hub cluster, start %3, lease %4 s"_s.arg(
               QString::number(m_record.id), m_record.name, QString::number(m_record.generation),
               QString::number(m_options.lease.count() / 1000.0));
    return {};
}

void MemberLease::renew()
{
    const QDateTime until = m_clock.now().addMSecs(m_options.lease.count());
    auto renewed = m_store.renew(m_record.id, m_record.generation, until);
    if (!renewed && renewed.error().code == kStorageFull) {
        // The records answer; they have no room. The health check says
        // so, and saying it again every tick would only fill the log.
        if (!std::exchange(m_refusedForSpace, true))
            qCWarning(lcHubCluster).noquote()
                << "could not renew this member's lease:" << renewed.error().message;
        return;
    }
    m_refusedForSpace = false;
    if (!renewed) {
        // Tried again at the next tick; the others judge by the lease.
        if (databaseReachable())
            m_unreachableSince = m_clock.now();
        qCWarning(lcHubCluster).noquote()
            << "could not renew this member's lease:" << renewed.error().message;
        return;
    }
    if (!databaseReachable()) {
        qCInfo(lcHubCluster).noquote() << "the records answer again; unreachable since"
                                       << m_unreachableSince.toString(Qt::ISODateWithMs);
        m_unreachableSince = {};
        m_reachableSince = m_clock.now();
    }
    if (!*renewed) {
        m_renewal.stop();
        m_member = false;
        const QString why = u"member %1 was started again elsewhere (a newer start of its data "
                            "folder holds the record)"_s.arg(m_record.name);
        qCWarning(lcHubCluster).noquote() << why;
        Q_EMIT superseded(why);
        return;
    }
    m_record.leaseUntil = until;
}

bool MemberLease::viewIsSettled() const
{
    return m_member && databaseReachable() && m_reachableSince.isValid()
        && m_reachableSince.msecsTo(m_clock.now()) >= m_options.lease.count();
}

} // namespace cloop::hub
