#include "hub/relay/relayedstream.h"

#include "common/logging.h"
#include "common/tunnel/channelsplice.h"
#include "common/tunnel/tunnelconnection.h"
#include "common/util/duration.h"

using namespace Qt::StringLiterals;

namespace cloop::hub {

using protocol::CloseCode;
using tunnel::TunnelConnection;

RelayedStream::RelayedStream(
    RelayThreads &threads, Plan plan, std::chrono::milliseconds ticketLifetime, QObject *parent)
    : QObject(parent)
    , m_threads(threads)
    , m_plan(std::move(plan))
    , m_ticketLifetime(ticketLifetime)
    , m_counters(std::make_shared<tunnel::SpliceCounters>())
{
    m_expiry.setSingleShot(true);
    connect(&m_expiry, &QTimer::timeout, this, [this] {
        const QString late = !m_forwarderLeg && !m_agentLeg ? u"neither daemon"_s
            : !m_forwarderLeg ? u"forwarder %1"_s.arg(m_plan.forwarderId)
                              : u"executor %1"_s.arg(m_plan.executorId);
        finish(CloseCode::Refused,
            u"%1 did not come for its leg of the stream within %2"_s.arg(
                late, util::formatMilliseconds(m_ticketLifetime.count())),
            false);
    });
    m_expiry.start(m_ticketLifetime);
}

RelayedStream::~RelayedStream()
{
    finish(CloseCode::ConnectionLost, u"the hub is stopping"_s, true);
}

void RelayedStream::take(Side side, TunnelConnection *connection)
{
    std::unique_ptr<TunnelConnection> leg(connection);
    // The gateway's, until now: the stream decides when it goes.
    leg->setParent(nullptr);
    QObject::disconnect(
        leg.get(), &TunnelConnection::disconnected, leg.get(), &QObject::deleteLater);
    if (m_over || slotOf(side)) {
        leg->close(u"this stream's leg is taken"_s);
        leg.release()->deleteLater();
        return;
    }
    const QString whose = side == Side::Forwarder ? u"forwarder"_s : u"agent"_s;
    connect(leg.get(), &TunnelConnection::disconnected, this, [this, whose](const QString &reason) {
        finish(CloseCode::ConnectionLost, u"the %1's leg was lost: %2"_s.arg(whose, reason), false);
    });
    slotOf(side) = std::move(leg);
    handOverIfReady();
}

void RelayedStream::handOverIfReady()
{
    if (m_over || m_handOverQueued || !m_forwarderLeg || !m_agentLeg)
        return;
    // A leg arrives deep in its own socket's read: the TLS layer still
    // writes to it when the stack unwinds, so it moves on the next turn.
    m_handOverQueued = true;
    QMetaObject::invokeMethod(this, &RelayedStream::handOver, Qt::QueuedConnection);
}

void RelayedStream::handOver()
{
    if (m_over || !m_forwarderLeg || !m_agentLeg)
        return;
    m_expiry.stop();
    m_forwarderLeg->disconnect(this);
    m_agentLeg->disconnect(this);
    auto *join
        = new LegJoin(m_forwarderLeg.release(), m_agentLeg.release(), m_plan.openings, m_counters);
    connect(join, &LegJoin::joined, this, [this] {
        if (m_over)
            return;
        m_joined = true;
        Q_EMIT joined();
    });
    connect(join, &LegJoin::ended, this,
        [this](CloseCode code, const QString &reason) { finish(code, reason, false); });
    m_join = m_threads.run(join);
}

void RelayedStream::end(CloseCode code, const QString &reason)
{
    finish(code, reason, true);
}

void RelayedStream::abort(CloseCode code, const QString &reason)
{
    finish(code, reason, false);
}

void RelayedStream::finish(CloseCode code, const QString &reason, bool quietly)
{
    if (m_over)
        return;
    m_over = true;
    m_expiry.stop();
    m_join.post([code, reason](LegJoin &join) { join.end(code, reason); });
    for (std::unique_ptr<TunnelConnection> *leg : { &m_forwarderLeg, &m_agentLeg }) {
        if (*leg) {
            (*leg)->disconnect(this);
            connect(leg->get(), &TunnelConnection::disconnected, leg->get(), &QObject::deleteLater);
            (*leg)->close(reason);
            leg->release();
        }
    }
    if (quietly)
        return;
    if (m_joined)
        Q_EMIT ended(code, reason);
    else
        Q_EMIT legsFailed(reason);
}

quint64 RelayedStream::bytesToAgent() const
{
    return m_counters->aToB.load(std::memory_order_relaxed);
}

quint64 RelayedStream::bytesToForwarder() const
{
    return m_counters->bToA.load(std::memory_order_relaxed);
}

} // namespace cloop::hub
