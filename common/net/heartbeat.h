#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QTimer>

#include <chrono>

namespace cloop::net {

class MessageSocket;

// Notices a dead link: pings the peer every interval and declares the link
// dead when nothing at all (pong or message) arrived for `timeout`. A TCP
// connection through a vanished NAT or a suspended laptop may never error on
// its own.
//
// A link that carries device streams is watched closely (a run waits on it,
// and the sooner it is known dead the sooner it is re-joined); an idle one
// costs one ping per interval, which matters with thousands of sessions.
//
// One end leads: it pings whenever it has heard nothing for half an
// interval. The other follows: the leader's pings are its sign of life (it
// hears every byte under the WebSocket, pings and pongs included, which
// are answered without a signal), and it pings only when they stop
// coming for an interval and a half. A hub holding thousands of daemons
// then answers one ping per session and interval instead of also sending
// one and reading its answer; a silent link is still noticed within
// timeout + interval at either end.
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
    // A follower pings at the first tick after an interval and a half of
    // silence, at most two and a half intervals in: still a tick before
    // the timeout, so its answer has a whole interval to arrive.
    static_assert(kDefaultInterval * 5 / 2 <= kDefaultTimeout);
    static_assert(kWatchfulInterval * 5 / 2 <= kWatchfulTimeout);

    struct Pace
    {
        std::chrono::milliseconds interval;
        std::chrono::milliseconds timeout;
    };

    enum class Initiative
    {
        Leads,
        Follows,
    };

    Heartbeat(
        MessageSocket *socket, Pace idle, Pace watchful, Initiative initiative = Initiative::Leads);

    enum class Verdict
    {
        Wait,
        Ping,
        Dead,
    };
    // What a tick decides, `silentMs` after the peer was last heard and
    // `sinceTickMs` after the tick before.
    static Verdict judge(
        qint64 silentMs, qint64 sinceTickMs, const Pace &pace, Initiative initiative);

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

    MessageSocket *m_socket;
    Pace m_idlePace;
    Pace m_watchfulPace;
    Initiative m_initiative;
    bool m_watchful = false;
    // A child, so that it moves with the heartbeat to another thread.
    QTimer m_timer { this };
    QElapsedTimer m_sinceActivity;
    QElapsedTimer m_sinceTick;
    // Since the link stopped being watchful; invalid while it is.
    QElapsedTimer m_sinceWatchful;
};

} // namespace cloop::net
