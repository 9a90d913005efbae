#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QTimer>

#include <chrono>

class QWebSocket;

namespace cloop::net {

// Notices a dead link: pings the peer every interval and declares the link
// dead when nothing at all (pong or message) arrived for `timeout`. A TCP
// connection through a vanished NAT or a suspended laptop may never error on
// its own.
class Heartbeat final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(Heartbeat)

public:
    static constexpr std::chrono::milliseconds kDefaultInterval { 10'000 };
    static constexpr std::chrono::milliseconds kDefaultTimeout { 30'000 };

    explicit Heartbeat(QWebSocket *socket, std::chrono::milliseconds interval = kDefaultInterval,
        std::chrono::milliseconds timeout = kDefaultTimeout);

    void start();
    void stop();
    // Anything heard from the peer proves it alive.
    void noteActivity();
    qint64 millisecondsSinceActivity() const { return m_sinceActivity.elapsed(); }

Q_SIGNALS:
    void timedOut(qint64 silentMs);

private:
    void onTick();

    QWebSocket *m_socket;
    std::chrono::milliseconds m_timeout;
    QTimer m_timer;
    QElapsedTimer m_sinceActivity;
};

} // namespace cloop::net
