#include "hub/cluster/directstreamdoor.h"

#include "common/crypto/secrets.h"
#include "common/logging.h"
#include "common/tunnel/channelmultiplexer.h"
#include "common/tunnel/channelsplice.h"
#include "common/tunnel/tunnelconnection.h"
#include "common/util/duration.h"

#include <QTimer>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace cloop::hub {

using protocol::CloseCode;
using tunnel::Channel;
using tunnel::ChannelSplice;

namespace {

Error refusedTicket(const QString &why)
{
    return Error::make(u"stream_ticket_refused"_s, why);
}

} // namespace

DirectStreamDoor::DirectStreamDoor(std::chrono::milliseconds ticketLifetime, QObject *parent)
    : QObject(parent)
    , m_ticketLifetime(ticketLifetime)
    , m_refusalLog(lcHubCluster(), u"refused stream tickets"_s)
{ }

DirectStreamDoor::~DirectStreamDoor()
{
    while (!m_legs.empty())
        end(m_legs.begin()->first, CloseCode::ConnectionLost,
            u"the hub member holding the forwarder stopped"_s);
}

void DirectStreamDoor::expect(const PeerMember &from, qint64 forwarderId,
    const PeerDirectLeg &direct, Channel *peer, Channel *forwarder)
{
    const quint64 id = m_nextId++;
    Leg &leg = m_legs[id];
    leg.from = from;
    leg.forwarderId = forwarderId;
    leg.direct = direct;
    leg.ticketHash = secrets::sha256(direct.ticket.toLatin1());
    leg.peer = peer;
    leg.forwarder = forwarder;
    leg.expiry = std::make_unique<QTimer>();
    leg.expiry->setSingleShot(true);
    connect(leg.expiry.get(), &QTimer::timeout, this, [this, id] {
        end(id, CloseCode::Refused,
            u"executor %1 did not come for its direct leg within %2"_s.arg(
                QString::number(m_legs.at(id).direct.executorId),
                util::formatMilliseconds(m_ticketLifetime.count())));
    });
    leg.expiry->start(m_ticketLifetime);
    m_waiting.insert(leg.ticketHash, id);
    // The member that asked ended the stream, or the forwarder did.
    connect(peer, &Channel::closed, this, [this, id](CloseCode code, const QString &reason) {
        end(id, code, reason.isEmpty() ? u"the member that asked ended the stream"_s : reason);
    });
    connect(forwarder, &Channel::closed, this, [this, id](CloseCode code, const QString &reason) {
        end(id, code, reason.isEmpty() ? u"the forwarder ended the stream"_s : reason);
    });
    connect(forwarder, &Channel::opened, this, [this, id] { joinIfReady(id); });
    qCDebug(lcHubCluster).noquote()
        << "forwarder" << forwarderId << "waits for executor" << direct.executorId
        << "on a direct leg asked by" << describeMember(from);
}

Status DirectStreamDoor::admit(qint64 executorId, const QString &ticket,
    const std::function<tunnel::TunnelConnection *()> &open)
{
    const auto waiting = m_waiting.constFind(secrets::sha256(ticket.toLatin1()));
    if (waiting == m_waiting.constEnd()) {
        if (m_refusalLog.admit())
            qCInfo(lcHubCluster).noquote()
                << "refused executor" << executorId << "a stream: its ticket is not waiting";
        return refusedTicket(u"this stream ticket is unknown, used or expired"_s);
    }
    const quint64 id = *waiting;
    m_waiting.erase(waiting);
    Leg &leg = m_legs.at(id);
    leg.expiry->stop();
    if (leg.direct.executorId != executorId) {
        // Its secret is out: nobody gets this leg.
        const QString why = u"the ticket for executor %1's direct leg was shown by executor %2"_s
                                .arg(leg.direct.executorId)
                                .arg(executorId);
        qCWarning(lcHubCluster).noquote() << why;
        end(id, CloseCode::Refused, why);
        return refusedTicket(u"this stream ticket is not this executor's"_s);
    }
    tunnel::TunnelConnection *connection = open();
    leg.connection = connection;
    auto agent = connection->channels()->openChannel(leg.direct.agentOpen);
    if (!agent) {
        end(id, CloseCode::Refused, agent.error().message);
        return {};
    }
    leg.agent = *agent;
    connect(*agent, &Channel::opened, this, [this, id] { joinIfReady(id); });
    connect(*agent, &Channel::closed, this, [this, id](CloseCode code, const QString &reason) {
        end(id, code, reason.isEmpty() ? u"the agent ended the stream"_s : reason);
    });
    connect(connection, &tunnel::TunnelConnection::disconnected, this,
        [this, id](const QString &reason) {
            end(id, CloseCode::ConnectionLost,
                u"the agent's direct leg was lost: %1"_s.arg(reason));
        });
    return {};
}

void DirectStreamDoor::joinIfReady(quint64 id)
{
    const auto found = m_legs.find(id);
    if (found == m_legs.end())
        return;
    Leg &leg = found->second;
    Channel *agent = leg.agent.data();
    Channel *forwarder = leg.forwarder.data();
    if (leg.splice || !agent || !forwarder || agent->state() != Channel::State::Open
        || forwarder->state() != Channel::State::Open)
        return;
    // Their closes are the splice's from now on.
    agent->disconnect(this);
    forwarder->disconnect(this);
    // The forwarder's channel is side A: A to B is toward the agent.
    auto *splice = new ChannelSplice(forwarder, agent, this);
    leg.splice = splice;
    connect(splice, &ChannelSplice::ended, this,
        [this, id](CloseCode code, const QString &reason) { end(id, code, reason); });
    qCInfo(lcHubCluster).noquote()
        << "forwarder" << leg.forwarderId << "streams straight to executor" << leg.direct.executorId
        << "for run" << leg.direct.agentOpen.runId << "of" << describeMember(leg.from);
    Q_EMIT streamStarted(leg.forwarderId, leg.direct.executorId);
}

void DirectStreamDoor::end(quint64 id, CloseCode code, const QString &reason)
{
    const auto found = m_legs.find(id);
    if (found == m_legs.end())
        return;
    Leg leg = std::move(found->second);
    m_legs.erase(found);
    m_waiting.remove(leg.ticketHash);
    if (ChannelSplice *splice = leg.splice.data()) {
        splice->disconnect(this);
        Carried &carried = m_endedByBinding[leg.direct.agentOpen.bindingId];
        carried.forwarderId = leg.forwarderId;
        carried.toAgent += splice->bytesAToB();
        carried.toForwarder += splice->bytesBToA();
        splice->end(code, reason);
        splice->deleteLater();
    }
    for (Channel *side : { leg.forwarder.data(), leg.agent.data(), leg.peer.data() }) {
        if (!side || side->state() == Channel::State::Closed)
            continue;
        side->disconnect(this);
        side->close(code, reason);
    }
    if (tunnel::TunnelConnection *connection = leg.connection.data()) {
        connection->disconnect(this);
        if (connection->isOpen())
            connection->close(reason);
    }
    qCDebug(lcHubCluster).noquote()
        << "direct leg of forwarder" << leg.forwarderId << "to executor" << leg.direct.executorId
        << "ended:" << tunnel::describeClose(code, reason);
    Q_EMIT legEnded(leg.forwarderId, leg.direct.executorId, code, reason);
}

int DirectStreamDoor::streamCount() const
{
    return static_cast<int>(std::count_if(m_legs.cbegin(), m_legs.cend(),
        [](const auto &entry) { return !entry.second.splice.isNull(); }));
}

std::map<qint64, DirectStreamDoor::Carried> DirectStreamDoor::carriedByBinding() const
{
    std::map<qint64, Carried> totals = m_endedByBinding;
    for (const auto &[id, leg] : m_legs) {
        if (const ChannelSplice *splice = leg.splice.data()) {
            Carried &carried = totals[leg.direct.agentOpen.bindingId];
            carried.forwarderId = leg.forwarderId;
            carried.toAgent += splice->bytesAToB();
            carried.toForwarder += splice->bytesBToA();
        }
    }
    return totals;
}

quint64 DirectStreamDoor::bytesToAgents() const
{
    quint64 total = 0;
    for (const auto &[binding, carried] : carriedByBinding())
        total += carried.toAgent;
    return total;
}

quint64 DirectStreamDoor::bytesToForwarders() const
{
    quint64 total = 0;
    for (const auto &[binding, carried] : carriedByBinding())
        total += carried.toForwarder;
    return total;
}

} // namespace cloop::hub
