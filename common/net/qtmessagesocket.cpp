#include "common/net/qtmessagesocket.h"

#include "common/logging.h"

#include <QAbstractSocket>

namespace cloop::net {

QtMessageSocket::QtMessageSocket(QWebSocket *socket, QObject *parent)
    : MessageSocket(parent)
    , m_socket(socket)
{
    m_socket->setParent(this);
    connect(m_socket, &QWebSocket::textMessageReceived, this, &MessageSocket::textReceived);
    connect(m_socket, &QWebSocket::binaryMessageReceived, this, &MessageSocket::binaryReceived);
    connect(m_socket, &QWebSocket::pong, this, &MessageSocket::pongReceived);
    connect(m_socket, &QWebSocket::connected, this, &QtMessageSocket::onConnected);
    // QWebSocket reports the error after disconnected() and the state
    // change: say it a turn later, so the reason names it.
    connect(
        m_socket, &QWebSocket::disconnected, this, &QtMessageSocket::onGone, Qt::QueuedConnection);
    // A dial that never connects (refused, TLS failure) emits no
    // disconnected(), only a return to UnconnectedState.
    connect(m_socket, &QWebSocket::stateChanged, this, [this](QAbstractSocket::SocketState state) {
        if (state == QAbstractSocket::UnconnectedState)
            QMetaObject::invokeMethod(this, &QtMessageSocket::onGone, Qt::QueuedConnection);
    });
    connect(m_socket, qOverload<QAbstractSocket::SocketError>(&QWebSocket::error), this,
        [this](QAbstractSocket::SocketError) {
            if (m_error.isEmpty())
                m_error = m_socket->errorString();
        });
    if (m_socket->state() == QAbstractSocket::ConnectedState)
        onConnected();
}

QtMessageSocket::~QtMessageSocket() = default;

void QtMessageSocket::onConnected()
{
    const auto transports = m_socket->findChildren<QAbstractSocket *>();
    for (QAbstractSocket *transport : transports) {
        transport->setSocketOption(QAbstractSocket::LowDelayOption, 1);
        connect(
            transport, &QIODevice::readyRead, this, &MessageSocket::activity, Qt::UniqueConnection);
    }
    if (transports.isEmpty())
        qCWarning(lcNet) << "no TCP socket under the WebSocket: Nagle's algorithm stays on and "
                            "only messages count as signs of life";
}

void QtMessageSocket::onGone()
{
    if (m_goneSaid)
        return;
    m_goneSaid = true;
    Q_EMIT disconnected();
}

void QtMessageSocket::sendText(const QString &text)
{
    m_socket->sendTextMessage(text);
}

void QtMessageSocket::sendBinary(const QByteArray &bytes)
{
    m_socket->sendBinaryMessage(bytes);
}

void QtMessageSocket::ping()
{
    m_socket->ping();
}

void QtMessageSocket::close(quint16 code, const QString &reason)
{
    m_socket->close(static_cast<QWebSocketProtocol::CloseCode>(code), reason.left(120));
}

void QtMessageSocket::abort()
{
    m_socket->abort();
}

bool QtMessageSocket::isOpen() const
{
    return m_socket->state() == QAbstractSocket::ConnectedState;
}

QHostAddress QtMessageSocket::peerAddress() const
{
    return m_socket->peerAddress();
}

quint16 QtMessageSocket::peerPort() const
{
    return m_socket->peerPort();
}

qint64 QtMessageSocket::bytesToWrite() const
{
    return m_socket->bytesToWrite();
}

void QtMessageSocket::setMaxIncomingMessageBytes(qint64 bytes)
{
    m_socket->setMaxAllowedIncomingMessageSize(static_cast<quint64>(bytes));
    m_socket->setMaxAllowedIncomingFrameSize(static_cast<quint64>(bytes));
}

QString QtMessageSocket::closeReason() const
{
    return m_socket->closeReason();
}

QString QtMessageSocket::errorString() const
{
    if (!m_error.isEmpty())
        return m_error;
    const QString text = m_socket->errorString();
    return text == QLatin1String("Unknown error") ? QString() : text;
}

} // namespace cloop::net
