#include "hub/relay/relaylegdoor.h"

#include "common/crypto/secrets.h"
#include "common/logging.h"

using namespace Qt::StringLiterals;

namespace cloop::hub {

using protocol::CloseCode;

namespace {

Error refusedTicket(const QString &why)
{
    return Error::make(u"stream_ticket_refused"_s, why);
}

QString nameOf(RelayedStream::Side side, qint64 id)
{
    return (side == RelayedStream::Side::Forwarder ? u"forwarder %1"_s : u"executor %1"_s).arg(id);
}

} // namespace

RelayLegDoor::RelayLegDoor(
    RelayThreads &threads, std::chrono::milliseconds ticketLifetime, QObject *parent)
    : QObject(parent)
    , m_threads(threads)
    , m_ticketLifetime(ticketLifetime)
    , m_refusalLog(lcHubGateway(), u"refused stream legs"_s)
{ }

RelayLegDoor::~RelayLegDoor() = default;

RelayLegDoor::Expected RelayLegDoor::expect(RelayedStream::Plan plan)
{
    Expected expected;
    expected.stream = new RelayedStream(m_threads, std::move(plan), m_ticketLifetime);
    expected.forwarderLeg.ticket = secrets::generateTicket();
    expected.agentLeg.ticket = secrets::generateTicket();
    const QByteArray forwarder = secrets::sha256(expected.forwarderLeg.ticket.toLatin1());
    const QByteArray agent = secrets::sha256(expected.agentLeg.ticket.toLatin1());
    m_waiting.insert(forwarder, { expected.stream, RelayedStream::Side::Forwarder });
    m_waiting.insert(agent, { expected.stream, RelayedStream::Side::Agent });
    // A stream over (or gone) takes its tickets with it.
    const auto forget = [this, forwarder, agent] {
        m_waiting.remove(forwarder);
        m_waiting.remove(agent);
    };
    connect(expected.stream, &RelayedStream::ended, this, forget);
    connect(expected.stream, &RelayedStream::legsFailed, this, forget);
    connect(expected.stream, &QObject::destroyed, this, forget);
    return expected;
}

bool RelayLegDoor::knows(const QString &ticket) const
{
    return m_waiting.contains(secrets::sha256(ticket.toLatin1()));
}

Status RelayLegDoor::admit(RelayedStream::Side side, qint64 daemonId, const QString &ticket,
    const std::function<tunnel::TunnelConnection *()> &open)
{
    const auto waiting = m_waiting.constFind(secrets::sha256(ticket.toLatin1()));
    RelayedStream *stream
        = waiting == m_waiting.constEnd() ? nullptr : waiting.value().stream.data();
    if (!stream || stream->isOver()) {
        if (m_refusalLog.admit())
            qCInfo(lcHubGateway).noquote()
                << "refused" << nameOf(side, daemonId) << "a stream leg: its ticket is not waiting";
        return refusedTicket(u"this stream ticket is unknown, used or expired"_s);
    }
    const RelayedStream::Side expectedSide = waiting.value().side;
    m_waiting.erase(waiting);
    if (expectedSide != side || stream->daemonOf(side) != daemonId) {
        // Its secret is out: nobody gets this stream.
        const QString why = u"the ticket for %1's leg was shown by %2"_s.arg(
            nameOf(expectedSide, stream->daemonOf(expectedSide)), nameOf(side, daemonId));
        qCWarning(lcHubGateway).noquote() << why;
        stream->abort(CloseCode::Refused, why);
        return refusedTicket(u"this stream ticket is not this daemon's"_s);
    }
    stream->take(side, open());
    return {};
}

} // namespace cloop::hub
