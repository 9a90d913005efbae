#pragma once

#include "hub/edge/preauthpool.h"

#include <QByteArray>
#include <QObject>
#include <QTimer>

#include <chrono>
#include <memory>

namespace cloop::net {
class MessageSocket;
}

namespace cloop::hub::edge {

// The first message of a WebSocket, whatever it is.
struct FirstMessage
{
    bool binary = false;
    QByteArray payload;
};

// Holds a new WebSocket, and its place in the pre-authentication pool,
// until its first message of any kind (text, binary, garbage) or its
// deadline. Whoever listens then either takes the socket or refuses it:
// one error reply, a close, and nothing the peer sends afterwards is read.
class FirstMessageWait final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(FirstMessageWait)

public:
    FirstMessageWait(std::unique_ptr<net::MessageSocket> socket, PreAuthPool::Place place,
        std::chrono::milliseconds timeout, qint64 maxMessageBytes, QObject *parent = nullptr);
    ~FirstMessageWait() override;

    net::MessageSocket *socket() const { return m_socket; }
    // After arrived(): the socket is the caller's, and the place is given
    // back; this object goes away on its own.
    std::unique_ptr<net::MessageSocket> take();
    // Sends `reply` (a text frame) once, closes, and goes away once closed.
    void refuse(const QString &reply, const QString &closeReason);

Q_SIGNALS:
    void arrived(const cloop::hub::edge::FirstMessage &message);
    void expired();

private:
    void onMessage(bool binary, const QByteArray &payload);
    void dispose();

    net::MessageSocket *m_socket;
    PreAuthPool::Place m_place;
    QTimer m_deadline;
    bool m_answered = false;
};

} // namespace cloop::hub::edge
