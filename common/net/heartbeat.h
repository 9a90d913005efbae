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
//
// A link that carries device streams is watched closely (a run waits on it,
// and the sooner it is known dead the sooner it is re-joined); an idle one
// costs one ping per interval, which matters with thousands of sessions.
class Heartbeat final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(Heartbeat)

public:
    static constexpr std::chrono::milliseconds kDefaultInterval { 10'000 };
    static constexpr std::chrono::milliseconds kDefaultTimeout { 30'000 };
    // Silence is noticed within timeout + interval: 9 s while watched.
    static constexpr std::chrono::milliseconds kWatchfulInterval { 2'000 };
    static constexpr std::chrono::milliseconds kWatchfulTimeout { 7'000 };
    static_assert(kWatchfulTimeout + kWatchfulInterval <= std::chrono::seconds(10),
        "a dead link carrying device streams is noticed within 10 s");

    struct Pace
    {
        std::chrono::milliseconds interval;
        std::chrono::milliseconds timeout;
    };

    Heartbeat(QWebSocket *socket, Pace idle, Pace watchful);

    void start();
    void stop();
    // Watchful while the link carries something a dead link would strand,
    // and for one watchful bound (timeout + interval) after: a stream that
    // ends may end because the link died (the peer judged it first, or its
    // end came on another connection), and the silence begun meanwhile is
    // judged at the pace it began under.
    void setWatchful(bool watchful);
    bool isWatchful() const { return m_watchful || lingers(); }
    const Pace &currentPace() const { return isWatchful() ? m_watchfulPace : m_idlePace; }
    // Anything heard from the peer proves it alive.
    void noteActivity();
    qint64 millisecondsSinceActivity() const { return m_sinceActivity.elapsed(); }

Q_SIGNALS:
    void timedOut(qint64 silentMs);

private:
    void onTick();
    bool lingers() const;

    QWebSocket *m_socket;
    Pace m_idlePace;
    Pace m_watchfulPace;
    bool m_watchful = false;
    // A child, so that it moves with the heartbeat to another thread.
    QTimer m_timer { this };
    QElapsedTimer m_sinceActivity;
    QElapsedTimer m_sinceTick;
    // Since the link stopped being watchful; invalid while it is.
    QElapsedTimer m_sinceWatchful;
};

} // namespace cloop::net
