#include "common/net/heartbeat.h"

#include <QWebSocket>

namespace cloop::net {

Heartbeat::Heartbeat(
    QWebSocket *socket, std::chrono::milliseconds interval, std::chrono::milliseconds timeout)
    : QObject(socket)
    , m_socket(socket)
    , m_timeout(timeout)
{
    m_timer.setInterval(interval);
    connect(&m_timer, &QTimer::timeout, this, &Heartbeat::onTick);
    connect(socket, &QWebSocket::pong, this, &Heartbeat::noteActivity);
    connect(socket, &QWebSocket::textMessageReceived, this, &Heartbeat::noteActivity);
    connect(socket, &QWebSocket::binaryMessageReceived, this, &Heartbeat::noteActivity);
    m_sinceActivity.start();
}

void Heartbeat::start()
{
    m_sinceActivity.restart();
    m_timer.start();
}

void Heartbeat::stop()
{
    m_timer.stop();
}

void Heartbeat::noteActivity()
{
    m_sinceActivity.restart();
}

void Heartbeat::onTick()
{
    const qint64 silent = m_sinceActivity.elapsed();
    if (silent >= m_timeout.count()) {
        m_timer.stop();
        Q_EMIT timedOut(silent);
        return;
    }
    m_socket->ping();
}

} // namespace cloop::net
