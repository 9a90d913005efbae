#include "hub/server/daemongateway.h"

#include "common/logging.h"
#include "common/protocol/protocolversion.h"
#include "common/util/duration.h"
#include "hub/server/daemondirectory.h"

#include <QTimer>
#include <QWebSocket>

namespace cloop::hub {

using namespace protocol;
using tunnel::TunnelConnection;

namespace {
QString peerOf(const TunnelConnection *connection)
{
    return connection->socket()->peerAddress().toString();
}
} // namespace

DaemonGateway::DaemonGateway(DaemonDirectory &directory, Options options, QObject *parent)
    : QObject(parent), m_directory(directory), m_options(std::move(options)), m_noun(roleName(directory.role()))
{
}

DaemonGateway::~DaemonGateway()
{
    for (TunnelConnection *connection : std::as_const(m_sessions))
        connection->disconnect(this);
}

void DaemonGateway::handleSocket(std::unique_ptr<QWebSocket> socket)
{
    // Unauthenticated sockets cost memory and a timer each; a flood of them
    // must not grow the hub without bound.
    if (m_pending.size() >= m_options.maxPendingConnections) {
        qCWarning(lcHubGateway).noquote() << "refusing a" << m_noun << "connection from"
                                          << socket->peerAddress().toString() << ":" << m_pending.size()
                                          << "connections are still authenticating";
        socket->abort();
        return;
    }
    auto *connection = new TunnelConnection(socket.release(), tunnel::ChannelMultiplexer::Side::Hub, m_options.limits,
                                            m_options.timing, this);
    m_pending.append(connection);
    connection->startHeartbeat();

    // Nothing is accepted until the first message proves who is calling.
    auto *authTimer = new QTimer(connection);
    authTimer->setSingleShot(true);
    connect(authTimer, &QTimer::timeout, connection, [this, connection] {
        refuse(connection, Error::make(QStringLiteral("timeout"),
                                       QStringLiteral("no hello within %1")
                                               .arg(util::formatMilliseconds(m_options.authenticationTimeout.count()))));
    });
    authTimer->start(m_options.authenticationTimeout);

    connect(connection, &TunnelConnection::controlReceived, this,
            [this, connection, authTimer](const ControlMessage &message) {
                if (m_pending.contains(connection)) {
                    authTimer->stop();
                    onFirstMessage(connection, message);
                    return;
                }
                for (auto it = m_sessions.cbegin(); it != m_sessions.cend(); ++it) {
                    if (it.value() == connection) {
                        Q_EMIT controlReceived(it.key(), message);
                        return;
                    }
                }
            });
    connect(connection, &TunnelConnection::disconnected, this, [this, connection](const QString &reason) {
        m_pending.removeAll(connection);
        for (auto it = m_sessions.begin(); it != m_sessions.end(); ++it) {
            if (it.value() == connection) {
                const qint64 id = it.key();
                m_sessions.erase(it);
                qCInfo(lcHubGateway).noquote() << m_noun << id << "disconnected:" << reason;
                if (Status touched = m_directory.touchLastSeen(id); !touched)
                    qCWarning(lcHubGateway).noquote() << touched.error().message;
                Q_EMIT daemonDisconnected(id, reason);
                break;
            }
        }
        connection->deleteLater();
    });
}

Status DaemonGateway::checkPeer(PeerRole role, int version) const
{
    if (role != m_directory.role())
        return Error::make(QStringLiteral("wrong_endpoint"),
                           QStringLiteral("this is the %1 endpoint (%2); a %3 connects to %4")
                                   .arg(m_noun, m_directory.endpointPath(), roleName(role),
                                        role == PeerRole::Forwarder ? QStringLiteral("/api/forwarders/connect")
                                                                    : QStringLiteral("/api/executors/connect")),
                           true);
    if (version < kMinimumSupported)
        return Error::make(QStringLiteral("protocol_too_old"),
                           QStringLiteral("protocol %1 is older than this hub supports (%2); upgrade cloop on this machine")
                                   .arg(version)
                                   .arg(kMinimumSupported),
                           true);
    return {};
}

void DaemonGateway::onFirstMessage(TunnelConnection *connection, const ControlMessage &message)
{
    Result<AdmittedDaemon> admitted = Error::make(QStringLiteral("protocol_error"),
                                                  QStringLiteral("expected hello or redeem, got %1")
                                                          .arg(controlMessageType(message)));
    if (const auto *hello = std::get_if<Hello>(&message)) {
        if (Status peer = checkPeer(hello->role, hello->protocol); !peer)
            admitted = peer.error();
        else
            admitted = m_directory.authenticate(*hello);
    } else if (const auto *redeem = std::get_if<Redeem>(&message)) {
        if (Status peer = checkPeer(redeem->role, redeem->protocol); !peer)
            admitted = peer.error();
        else
            admitted = m_directory.redeem(*redeem);
    }
    if (!admitted) {
        refuse(connection, admitted.error());
        return;
    }
    if (admitted->enrolled) {
        qCInfo(lcHubGateway).noquote() << m_noun << admitted->id << admitted->name << "enrolled from" << peerOf(connection);
        connection->sendControl(*admitted->enrolled);
    }
    admit(connection, admitted->id, admitted->name, admitted->welcome);
}

void DaemonGateway::refuse(TunnelConnection *connection, const Error &error)
{
    qCWarning(lcHubGateway).noquote() << "refused" << m_noun << "connection from" << peerOf(connection) << ":"
                                      << error.code << error.message;
    m_pending.removeAll(connection);
    connection->closeWithError(ErrorMessage{error.code, error.message, error.permanent});
}

void DaemonGateway::admit(TunnelConnection *connection, qint64 id, const QString &name, const Welcome &welcome)
{
    m_pending.removeAll(connection);
    // One session per daemon: a second process with the same credential (or
    // a reconnect racing a half-dead link) replaces the older one.
    if (TunnelConnection *previous = m_sessions.take(id)) {
        retire(previous, ErrorMessage{QStringLiteral("replaced"),
                                      QStringLiteral("a newer connection of this %1 took over").arg(m_noun), false});
        Q_EMIT daemonDisconnected(id, QStringLiteral("replaced by a newer connection"));
    }
    m_sessions.insert(id, connection);
    if (Status touched = m_directory.touchLastSeen(id); !touched)
        qCWarning(lcHubGateway).noquote() << touched.error().message;
    connection->sendControl(welcome);
    qCInfo(lcHubGateway).noquote() << m_noun << id << name << "connected from" << peerOf(connection);
    Q_EMIT daemonConnected(id, name);
}

void DaemonGateway::drop(qint64 id, const ErrorMessage &reason)
{
    TunnelConnection *connection = m_sessions.take(id);
    if (!connection)
        return;
    retire(connection, reason);
    if (Status touched = m_directory.touchLastSeen(id); !touched)
        qCWarning(lcHubGateway).noquote() << touched.error().message;
    qCInfo(lcHubGateway).noquote() << m_noun << id << "dropped:" << reason.message;
    Q_EMIT daemonDisconnected(id, reason.message);
}

void DaemonGateway::retire(TunnelConnection *connection, const ErrorMessage &reason)
{
    // The session is over for the hub now; the socket finishes its close
    // handshake on its own and then goes away.
    connection->disconnect(this);
    connect(connection, &TunnelConnection::disconnected, connection, &QObject::deleteLater);
    connection->closeWithError(reason);
}

} // namespace cloop::hub
