#include "common/net/heartbeat.h"

#include <QWebSocket>

namespace cloop::net {

Heartbeat::Heartbeat(QWebSocket *socket, Pace idle, Pace watchful)
    : QObject(socket)
    , m_socket(socket)
    , m_idlePace(idle)
    , m_watchfulPace(watchful)
{
    m_timer.setInterval(m_idlePace.interval);
    connect(&m_timer, &QTimer::timeout, this, &Heartbeat::onTick);
    connect(socket, &QWebSocket::pong, this, &Heartbeat::noteActivity);
    connect(socket, &QWebSocket::textMessageReceived, this, &Heartbeat::noteActivity);
    connect(socket, &QWebSocket::binaryMessageReceived, this, &Heartbeat::noteActivity);
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

void Heartbeat::onTick()
{
    const qint64 silent = m_sinceActivity.elapsed();
    const Pace &pace = currentPace();
    // A tick a whole interval late means this side's own loop was busy
    // (a slow machine, a long synchronous step): what the peer sent
    // meanwhile is still unread, so the silence is not the peer's. It is
    // judged at the next tick, once the loop has read what waited.
    const bool late = m_sinceTick.restart() > 2 * pace.interval.count();
    if (late) {
        m_socket->ping();
        return;
    }
    if (silent >= pace.timeout.count()) {
        m_timer.stop();
        Q_EMIT timedOut(silent);
        return;
    }
    // A peer heard from within the interval is alive: a busy link carries
    // no pings of its own.
    if (silent >= pace.interval.count() / 2)
        m_socket->ping();
    // The watchful bound after the last stream has passed: the idle pace.
    if (m_timer.intervalAsDuration() != currentPace().interval)
        m_timer.setInterval(currentPace().interval);
}

} // namespace cloop::net
