#include "hub/server/daemongateway.h"

#include "common/logging.h"
#include "common/net/huburls.h"
#include "common/protocol/channelopen.h"
#include "common/protocol/protocolversion.h"
#include "common/util/duration.h"
#include "common/util/logthrottle.h"
#include "hub/edge/firstmessagewait.h"
#include "hub/edge/greeting.h"
#include "hub/server/daemondirectory.h"

#include "common/net/messagesocket.h"

#include <algorithm>

namespace cloop::hub {

using namespace protocol;
using tunnel::TunnelConnection;

namespace {

// Where this endpoint's daemons dial their legs.
QLatin1StringView legPathOf(PeerRole role)
{
    return role == PeerRole::Forwarder ? kForwarderLegPath : kDirectLegPath;
}

} // namespace

DaemonGateway::DaemonGateway(DaemonDirectory &directory, Options options, QObject *parent)
    : QObject(parent)
    , m_directory(directory)
    , m_options(std::move(options))
    , m_noun(roleName(directory.role()))
    , m_refusalLog(std::make_unique<util::LogThrottle>(
          lcHubGateway(), QStringLiteral("refused %1 connections").arg(m_noun)))
{ }

DaemonGateway::~DaemonGateway()
{
    for (TunnelConnection *connection : std::as_const(m_sessions))
        connection->disconnect(this);
}

void DaemonGateway::handleSocket(
    std::unique_ptr<net::MessageSocket> socket, edge::PreAuthPool::Place place, Purpose purpose)
{
    // Nothing is accepted until the first message proves who is calling.
    auto *wait = new edge::FirstMessageWait(std::move(socket), std::move(place),
        m_options.authenticationTimeout, kMaxControlMessageSize, this);
    ++m_pending;
    connect(wait, &QObject::destroyed, this, [this] { --m_pending; });
    connect(wait, &edge::FirstMessageWait::arrived, this,
        [this, wait, purpose](
            const edge::FirstMessage &message) { onFirstMessage(wait, message, purpose); });
    connect(wait, &edge::FirstMessageWait::expired, this, [this, wait] {
        refuse(wait,
            Error::make(QStringLiteral("timeout"),
                QStringLiteral("no hello within %1")
                    .arg(util::formatMilliseconds(m_options.authenticationTimeout.count()))));
    });
}

void DaemonGateway::onFirstMessage(
    edge::FirstMessageWait *wait, const edge::FirstMessage &message, Purpose purpose)
{
    auto greeting = edge::parseDaemonGreeting(message, m_directory.role());
    if (!greeting) {
        refuse(wait, greeting.error());
        return;
    }
    // A session never rides a stream ticket, and a direct leg is nothing else.
    const auto *hello = std::get_if<Hello>(&*greeting);
    const bool ticket = hello && !hello->streamTicket.isEmpty();
    if (purpose == Purpose::DirectLeg || ticket) {
        if (purpose == Purpose::DirectLeg && ticket)
            admitStream(wait, *hello);
        else
            refuse(wait,
                Error::make(QStringLiteral("protocol_error"),
                    purpose == Purpose::DirectLeg
                        ? QStringLiteral("%1 takes a hello with a stream ticket, nothing else")
                              .arg(legPathOf(m_directory.role()))
                        : QStringLiteral("a stream ticket goes to %1")
                              .arg(legPathOf(m_directory.role())),
                    true));
        return;
    }
    Result<AdmittedDaemon> admitted = std::holds_alternative<Hello>(*greeting)
        ? m_directory.authenticate(std::get<Hello>(*greeting))
        : m_directory.redeem(std::get<Redeem>(*greeting));
    if (!admitted) {
        refuse(wait, admitted.error());
        return;
    }
    const QString peer = wait->socket()->peerAddress().toString();
    auto *connection = new TunnelConnection(wait->take().release(),
        tunnel::ChannelMultiplexer::Side::Hub, m_options.limits, m_options.timing, this);
    connection->startHeartbeat();
    if (admitted->enrolled) {
        qCInfo(lcHubGateway).noquote()
            << m_noun << admitted->id << admitted->name << "enrolled from" << peer;
        connection->sendControl(*admitted->enrolled);
    }
    const int peerProtocol = std::holds_alternative<Hello>(*greeting)
        ? std::get<Hello>(*greeting).protocol
        : std::get<Redeem>(*greeting).protocol;
    admit(connection, admitted->id, admitted->name, admitted->welcome, peerProtocol);
}

void DaemonGateway::admitStream(edge::FirstMessageWait *wait, const Hello &hello)
{
    const StreamDoor &door = m_relayDoor && (!m_streamDoor || m_relayKnows(hello.streamTicket))
        ? m_relayDoor
        : m_streamDoor;
    if (!door) {
        refuse(wait,
            Error::make(QStringLiteral("protocol_error"),
                QStringLiteral("this hub is not a cluster member: it takes no stream tickets"),
                true));
        return;
    }
    auto who = m_directory.identify(hello);
    if (!who) {
        refuse(wait, who.error());
        return;
    }
    const auto open = [this, wait, &who]() {
        auto *connection
            = new TunnelConnection(wait->take().release(), tunnel::ChannelMultiplexer::Side::Hub,
                m_options.limits, m_options.timing.forLegs(), this);
        connect(connection, &TunnelConnection::disconnected, connection, &QObject::deleteLater);
        connection->startHeartbeat();
        connection->sendControl(who->welcome);
        return connection;
    };
    if (Status admitted = door(who->id, hello.streamTicket, open); !admitted)
        refuse(wait, admitted.error());
}

void DaemonGateway::refuse(edge::FirstMessageWait *wait, const Error &error)
{
    // Anyone can cause this line: throttled, and one per connection.
    if (m_refusalLog->admit())
        qCWarning(lcHubGateway).noquote()
            << "refused" << m_noun << "connection from" << wait->socket()->peerAddress().toString()
            << ":" << error.code << error.message.left(200);
    wait->refuse(QString::fromUtf8(serializeControlMessage(
                     ErrorMessage { error.code, error.message, error.permanent })),
        error.message);
}

void DaemonGateway::admit(
    TunnelConnection *connection, qint64 id, const QString &name, Welcome welcome, int peerProtocol)
{
    // One session per daemon: a second process with the same credential (or
    // a reconnect racing a half-dead link) replaces the older one.
    if (TunnelConnection *previous = m_sessions.take(id)) {
        retire(previous,
            ErrorMessage { QStringLiteral("replaced"),
                QStringLiteral("a newer connection of this %1 took over").arg(m_noun), false });
        Q_EMIT daemonDisconnected(id, QStringLiteral("replaced by a newer connection"));
    }
    m_sessions.insert(id, connection);
    m_protocols.insert(id, peerProtocol);
    welcome.pins = pinsFor(peerProtocol);
    // A daemon before protocol 29 reads past a key it does not know.
    welcome.hubs = m_hubs;
    connect(connection, &TunnelConnection::controlReceived, this,
        [this, id](const ControlMessage &message) { Q_EMIT controlReceived(id, message); });
    connect(connection, &TunnelConnection::disconnected, this,
        [this, id, connection](const QString &reason) {
            if (m_sessions.value(id) == connection) {
                m_sessions.remove(id);
                m_protocols.remove(id);
                qCInfo(lcHubGateway).noquote() << m_noun << id << "disconnected:" << reason;
                if (Status touched = m_directory.touchLastSeen(id); !touched)
                    qCWarning(lcHubGateway).noquote() << touched.error().message;
                Q_EMIT daemonDisconnected(id, reason);
            }
            connection->deleteLater();
        });
    if (Status touched = m_directory.touchLastSeen(id); !touched)
        qCWarning(lcHubGateway).noquote() << touched.error().message;
    connection->sendControl(welcome);
    qCInfo(lcHubGateway).noquote() << m_noun << id << name << "connected from"
                                   << connection->socket()->peerAddress().toString();
    Q_EMIT daemonConnected(id, name);
}

QStringList DaemonGateway::pinsFor(int peerProtocol) const
{
    // A daemon before protocol 29 refuses a welcome or hub.pins with more
    // pins than it reads: it keeps the pins it has instead.
    if (peerProtocol < kMinimumForHubMembers && m_pins.size() > kMaxHubPinsBeforeHubMembers)
        return {};
    return m_pins;
}

void DaemonGateway::announcePins(const QStringList &pins)
{
    m_pins = pins;
    int told = 0;
    for (auto session = m_sessions.cbegin(); session != m_sessions.cend(); ++session) {
        // A daemon before protocol 26 would take the message for garbage.
        const int peerProtocol = m_protocols.value(session.key());
        const QStringList readable = pinsFor(peerProtocol);
        if (peerProtocol >= kMinimumForHubPins && !readable.isEmpty()) {
            session.value()->sendControl(HubPins { readable });
            ++told;
        }
    }
    qCInfo(lcHubGateway).noquote()
        << "told" << told << m_noun << "session(s) the hub's pins:" << pins.join(QLatin1Char(','));
}

void DaemonGateway::announceHubs(const QList<QUrl> &hubs)
{
    // One URL a daemon refuses would make it refuse the whole welcome.
    QList<QUrl> accepted;
    for (const QUrl &hub : hubs) {
        auto url = net::parseHubUrl(hub.toString(), net::PlaintextHubUrls::LoopbackOnly);
        const bool twice = url
            && std::any_of(accepted.cbegin(), accepted.cend(),
                [&url](const QUrl &earlier) { return net::sameHub(earlier, *url); });
        if (!url || twice || accepted.size() >= kMaxHubMembers) {
            qCWarning(lcHubGateway).noquote()
                << "not telling" << m_noun << "daemons the hub URL"
                << hub.toString() + QLatin1Char(':')
                << (!url           ? url.error().message
                           : twice ? QStringLiteral("named twice")
                                   : QStringLiteral("more than %1 URLs").arg(kMaxHubMembers));
            continue;
        }
        accepted.append(*url);
    }
    if (accepted == m_hubs)
        return;
    m_hubs = accepted;
    if (m_hubs.isEmpty())
        return;
    int told = 0;
    for (auto session = m_sessions.cbegin(); session != m_sessions.cend(); ++session) {
        // A daemon before protocol 29 would take the message for garbage.
        if (m_protocols.value(session.key()) >= kMinimumForHubMembers) {
            session.value()->sendControl(HubMembers { m_hubs });
            ++told;
        }
    }
    qCInfo(lcHubGateway).noquote()
        << "told" << told << m_noun
        << "session(s) the hub's members:" << net::describeHubUrls(m_hubs);
}

void DaemonGateway::drop(qint64 id, const ErrorMessage &reason)
{
    TunnelConnection *connection = m_sessions.take(id);
    m_protocols.remove(id);
    if (!connection)
        return;
    retire(connection, reason);
    if (Status touched = m_directory.touchLastSeen(id); !touched)
        qCWarning(lcHubGateway).noquote() << touched.error().message;
    qCInfo(lcHubGateway).noquote() << m_noun << id << "dropped:" << reason.message;
    Q_EMIT daemonDisconnected(id, reason.message);
}

std::chrono::milliseconds returnSpreadFor(qsizetype sessions)
{
    const qint64 ms = qint64(std::max<qsizetype>(0, sessions)) * 1000 / kReturnsPerSecond;
    return std::chrono::milliseconds(std::min(ms, protocol::kMaxRetryWithinMs));
}

void DaemonGateway::closeEverySession(const QString &reason, std::chrono::milliseconds returnWithin)
{
    for (auto it = m_sessions.cbegin(); it != m_sessions.cend(); ++it) {
        TunnelConnection *connection = it.value();
        connection->disconnect(this);
        if (returnWithin.count() > 0
            && m_protocols.value(it.key()) >= protocol::kMinimumForReturnSpread)
            connection->closeWithError(protocol::ErrorMessage {
                QStringLiteral("hub_stopping"), reason, false, returnWithin.count() });
        else
            connection->close(reason);
    }
    if (!m_sessions.isEmpty())
        qCInfo(lcHubGateway).noquote()
            << "closed" << m_sessions.size() << m_noun << "session(s):" << reason
            << QStringLiteral("(their return spread over %1)")
                   .arg(util::formatMilliseconds(returnWithin.count()));
    m_sessions.clear();
    m_protocols.clear();
}

void DaemonGateway::retire(TunnelConnection *connection, const ErrorMessage &reason)
{
    // The session is over for the hub now; the socket finishes its close
    // handshake on its own and then goes away.
    connection->disconnect(this);
    connect(connection, &TunnelConnection::disconnected, connection, &QObject::deleteLater);
    // Its channels end now, not when the close handshake is over: a newer
    // connection taking over is announced right after this, and a device
    // stream still open on the old one would not be joined to it.
    connection->channels()->closeAll(reason.message);
    connection->closeWithError(reason);
}

} // namespace cloop::hub
