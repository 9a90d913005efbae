#include "hub/edge/firstmessagewait.h"

#include "common/net/messagesocket.h"
#include "common/net/websocketframes.h"

namespace cloop::hub::edge {

namespace {
// A peer that never completes the close handshake is cut off after this.
constexpr int kCloseGraceMs = 2000;
} // namespace

FirstMessageWait::FirstMessageWait(std::unique_ptr<net::MessageSocket> socket,
    PreAuthPool::Place place, std::chrono::milliseconds timeout, qint64 maxMessageBytes,
    QObject *parent)
    : QObject(parent)
    , m_socket(socket.release())
    , m_place(std::move(place))
{
    m_socket->setParent(this);
    m_socket->setMaxIncomingMessageBytes(maxMessageBytes);
    connect(m_socket, &net::MessageSocket::textReceived, this,
        [this](const QString &text) { onMessage(false, text.toUtf8()); });
    connect(m_socket, &net::MessageSocket::binaryReceived, this,
        [this](const QByteArray &bytes) { onMessage(true, bytes); });
    connect(m_socket, &net::MessageSocket::disconnected, this, &FirstMessageWait::dispose);
    m_deadline.setSingleShot(true);
    connect(&m_deadline, &QTimer::timeout, this, [this] {
        if (m_answered)
            return;
        m_answered = true;
        m_socket->disconnect(this);
        connect(m_socket, &net::MessageSocket::disconnected, this, &FirstMessageWait::dispose);
        Q_EMIT expired();
    });
    m_deadline.start(timeout);
}

FirstMessageWait::~FirstMessageWait() = default;

void FirstMessageWait::onMessage(bool binary, const QByteArray &payload)
{
    if (m_answered)
        return;
    m_answered = true;
    m_deadline.stop();
    // Whatever comes next is not ours to read: the listener takes the
    // socket or refuses it.
    m_socket->disconnect(this);
    connect(m_socket, &net::MessageSocket::disconnected, this, &FirstMessageWait::dispose);
    Q_EMIT arrived(FirstMessage { binary, payload });
}

std::unique_ptr<net::MessageSocket> FirstMessageWait::take()
{
    if (!m_socket)
        return nullptr;
    m_socket->disconnect(this);
    m_socket->setParent(nullptr);
    std::unique_ptr<net::MessageSocket> socket(std::exchange(m_socket, nullptr));
    m_place.release();
    deleteLater();
    return socket;
}

void FirstMessageWait::refuse(const QString &reply, const QString &closeReason)
{
    if (!m_socket)
        return;
    m_deadline.stop();
    m_socket->sendText(reply);
    m_socket->close(net::websocket::CloseCode::PolicyViolated, closeReason);
    QTimer::singleShot(kCloseGraceMs, this, [this] {
        if (m_socket)
            m_socket->abort();
        dispose();
    });
}

void FirstMessageWait::dispose()
{
    m_place.release();
    if (m_socket) {
        m_socket->disconnect(this);
        m_socket->deleteLater();
        m_socket = nullptr;
    }
    deleteLater();
}

} // namespace cloop::hub::edge
