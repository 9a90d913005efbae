#include "common/net/heartbeat.h"

#include "common/net/messagesocket.h"

namespace cloop::net {

Heartbeat::Heartbeat(MessageSocket *socket, Pace idle, Pace watchful, Initiative initiative)
    : QObject(socket)
    , m_socket(socket)
    , m_idlePace(idle)
    , m_watchfulPace(watchful)
    , m_initiative(initiative)
{
    m_timer.setInterval(m_idlePace.interval);
    connect(&m_timer, &QTimer::timeout, this, &Heartbeat::onTick);
    // Every byte from the peer; messages and pongs too, for a socket that
    // cannot see its bytes.
    connect(socket, &MessageSocket::activity, this, &Heartbeat::noteActivity);
    connect(socket, &MessageSocket::pongReceived, this, &Heartbeat::noteActivity);
    connect(socket, &MessageSocket::textReceived, this, &Heartbeat::noteActivity);
    connect(socket, &MessageSocket::binaryReceived, this, &Heartbeat::noteActivity);
    m_sinceActivity.start();
    m_sinceTick.start();
}

void Heartbeat::start()
{
    m_sinceActivity.restart();
    m_sinceTick.restart();
    m_timer.start();
}

void Heartbeat::stop()
{
    m_timer.stop();
}

void Heartbeat::setWatchful(bool watchful)
{
    if (watchful == m_watchful)
        return;
    m_watchful = watchful;
    if (watchful)
        m_sinceWatchful.invalidate();
    else
        m_sinceWatchful.start();
    // A running timer restarts with the new interval, so a link turning
    // watchful is checked within the short one; a stopped one stays stopped.
    m_timer.setInterval(currentPace().interval);
}

bool Heartbeat::lingers() const
{
    return !m_watchful && m_sinceWatchful.isValid()
        && m_sinceWatchful.elapsed() < (m_watchfulPace.timeout + m_watchfulPace.interval).count();
}

void Heartbeat::noteActivity()
{
    m_sinceActivity.restart();
}

Heartbeat::Verdict Heartbeat::judge(
    qint64 silentMs, qint64 sinceTickMs, const Pace &pace, Initiative initiative)
{
    // A tick a whole interval late means this side's own loop was busy
    // (a slow machine, a long synchronous step): what the peer sent
    // meanwhile is still unread, so the silence is not the peer's. It is
    // judged at the next tick, once the loop has read what waited.
    if (sinceTickMs > 2 * pace.interval.count())
        return Verdict::Ping;
    if (silentMs >= pace.timeout.count())
        return Verdict::Dead;
    // A peer heard from lately is alive: a busy link carries no pings of
    // its own, and a follower's are only for a leader that fell quiet.
    const qint64 pingAfterMs = initiative == Initiative::Leads ? pace.interval.count() / 2
                                                               : pace.interval.count() * 3 / 2;
    return silentMs >= pingAfterMs ? Verdict::Ping : Verdict::Wait;
}

void Heartbeat::onTick()
{
    const qint64 silent = m_sinceActivity.elapsed();
    switch (judge(silent, m_sinceTick.restart(), currentPace(), m_initiative)) {
    case Verdict::Dead:
        m_timer.stop();
        Q_EMIT timedOut(silent);
        return;
    case Verdict::Ping:
        m_socket->ping();
        break;
    case Verdict::Wait:
        break;
    }
    // The watchful bound after the last stream has passed: the idle pace.
    if (m_timer.intervalAsDuration() != currentPace().interval)
        m_timer.setInterval(currentPace().interval);
}

} // namespace cloop::net
