#include "hub/server/forwardergateway.h"

#include "common/logging.h"
#include "common/protocol/protocolversion.h"
#include "common/util/duration.h"
#include "hub/storage/forwarderstore.h"

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

ForwarderGateway::ForwarderGateway(ForwarderStore &store, Options options, QObject *parent)
    : QObject(parent), m_store(store), m_options(std::move(options))
{
}

ForwarderGateway::~ForwarderGateway()
{
    for (TunnelConnection *connection : std::as_const(m_sessions))
        connection->disconnect(this);
}

void ForwarderGateway::handleSocket(std::unique_ptr<QWebSocket> socket)
{
    // Unauthenticated sockets cost memory and a timer each; a flood of them
    // must not grow the hub without bound.
    if (m_pending.size() >= m_options.maxPendingConnections) {
        qCWarning(lcHubGateway).noquote() << "refusing a connection from" << socket->peerAddress().toString()
                                          << ":" << m_pending.size() << "connections are still authenticating";
        socket->abort();
        return;
    }
    auto *connection = new TunnelConnection(socket.release(), tunnel::ChannelMultiplexer::Side::Hub,
                                            m_options.limits, m_options.timing, this);
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
                if (!m_pending.contains(connection))
                    return; // authenticated sessions are served elsewhere
                authTimer->stop();
                onFirstMessage(connection, message);
            });
    connect(connection, &TunnelConnection::disconnected, this, [this, connection](const QString &reason) {
        m_pending.removeAll(connection);
        for (auto it = m_sessions.begin(); it != m_sessions.end(); ++it) {
            if (it.value() == connection) {
                const qint64 id = it.key();
                m_sessions.erase(it);
                qCInfo(lcHubGateway).noquote() << "forwarder" << id << "disconnected:" << reason;
                if (Status touched = m_store.touchLastSeen(id); !touched)
                    qCWarning(lcHubGateway).noquote() << touched.error().message;
                Q_EMIT forwarderDisconnected(id, reason);
                break;
            }
        }
        connection->deleteLater();
    });
}

void ForwarderGateway::onFirstMessage(TunnelConnection *connection, const ControlMessage &message)
{
    const auto checkPeer = [](PeerRole role, int version) -> Status {
        if (role != PeerRole::Forwarder)
            return Error::make(QStringLiteral("wrong_endpoint"),
                               QStringLiteral("this is the forwarder endpoint; executors connect to "
                                              "/api/executors/connect"),
                               true);
        if (version < kMinimumSupported)
            return Error::make(QStringLiteral("protocol_too_old"),
                               QStringLiteral("protocol %1 is older than this hub supports (%2); upgrade "
                                              "cloop-forward on this machine")
                                       .arg(version)
                                       .arg(kMinimumSupported),
                               true);
        return {};
    };

    if (const auto *hello = std::get_if<Hello>(&message)) {
        if (Status peer = checkPeer(hello->role, hello->protocol); !peer) {
            refuse(connection, peer.error());
            return;
        }
        auto record = m_store.authenticate(hello->credential);
        if (!record) {
            refuse(connection, record.error());
            return;
        }
        admit(connection, record->id);
        return;
    }
    if (const auto *redeem = std::get_if<Redeem>(&message)) {
        if (Status peer = checkPeer(redeem->role, redeem->protocol); !peer) {
            refuse(connection, peer.error());
            return;
        }
        auto redeemed = m_store.redeem(redeem->token);
        if (!redeemed) {
            refuse(connection, redeemed.error());
            return;
        }
        qCInfo(lcHubGateway).noquote() << "forwarder" << redeemed->forwarder.id << redeemed->forwarder.name
                                       << "enrolled from" << peerOf(connection);
        connection->sendControl(Enrolled{redeemed->forwarder.id, redeemed->forwarder.name,
                                         redeemed->credential});
        admit(connection, redeemed->forwarder.id);
        return;
    }
    refuse(connection, Error::make(QStringLiteral("protocol_error"),
                                   QStringLiteral("expected hello or redeem, got %1")
                                           .arg(controlMessageType(message))));
}

void ForwarderGateway::refuse(TunnelConnection *connection, const Error &error)
{
    qCWarning(lcHubGateway).noquote() << "refused forwarder connection from" << peerOf(connection) << ":"
                                      << error.code << error.message;
    m_pending.removeAll(connection);
    connection->closeWithError(ErrorMessage{error.code, error.message, error.permanent});
}

void ForwarderGateway::admit(TunnelConnection *connection, qint64 forwarderId)
{
    auto record = m_store.find(forwarderId);
    if (!record) {
        refuse(connection, record.error());
        return;
    }
    m_pending.removeAll(connection);
    // One session per forwarder: a second process with the same credential
    // (or a reconnect racing a half-dead link) replaces the older one.
    if (TunnelConnection *previous = m_sessions.take(forwarderId)) {
        retire(previous, ErrorMessage{QStringLiteral("replaced"),
                                      QStringLiteral("a newer connection of this forwarder took over"),
                                      false});
        Q_EMIT forwarderDisconnected(forwarderId, QStringLiteral("replaced by a newer connection"));
    }
    m_sessions.insert(forwarderId, connection);
    if (Status touched = m_store.touchLastSeen(forwarderId); !touched)
        qCWarning(lcHubGateway).noquote() << touched.error().message;

    Welcome welcome;
    welcome.protocol = kVersion;
    welcome.software = m_options.software;
    welcome.id = record->id;
    welcome.name = record->name;
    welcome.device = record->device;
    connection->sendControl(welcome);
    qCInfo(lcHubGateway).noquote() << "forwarder" << record->id << record->name << "connected from"
                                   << peerOf(connection);
    Q_EMIT forwarderConnected(record->id, record->name);
}

void ForwarderGateway::drop(qint64 forwarderId, const ErrorMessage &reason)
{
    TunnelConnection *connection = m_sessions.take(forwarderId);
    if (!connection)
        return;
    retire(connection, reason);
    if (Status touched = m_store.touchLastSeen(forwarderId); !touched)
        qCWarning(lcHubGateway).noquote() << touched.error().message;
    qCInfo(lcHubGateway).noquote() << "forwarder" << forwarderId << "dropped:" << reason.message;
    Q_EMIT forwarderDisconnected(forwarderId, reason.message);
}

void ForwarderGateway::retire(TunnelConnection *connection, const ErrorMessage &reason)
{
    // The session is over for the hub now; the socket finishes its close
    // handshake on its own and then goes away.
    connection->disconnect(this);
    connect(connection, &TunnelConnection::disconnected, connection, &QObject::deleteLater);
    connection->closeWithError(reason);
}
} // namespace cloop::hub
