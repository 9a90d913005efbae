#include "common/tunnel/channelsocketpump.h"

#include "common/tunnel/channelmultiplexer.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace cloop::tunnel {

namespace {
// One read per wake-up at most this big: a full DATA frame's worth.
constexpr qsizetype kReadChunk = 64 * 1024;

QString errnoText(int error)
{
    return QString::fromLocal8Bit(std::strerror(error));
}
} // namespace

ChannelSocketPump::ChannelSocketPump(util::Fd socket, Channel *channel, QObject *parent)
    : QObject(parent)
    , m_socket(std::move(socket))
    , m_channel(channel)
{
    const int flags = ::fcntl(m_socket.get(), F_GETFL);
    ::fcntl(m_socket.get(), F_SETFL, flags | O_NONBLOCK);
    m_readable = std::make_unique<QSocketNotifier>(m_socket.get(), QSocketNotifier::Read);
    m_writable = std::make_unique<QSocketNotifier>(m_socket.get(), QSocketNotifier::Write);
    m_writable->setEnabled(false);
    connect(
        m_readable.get(), &QSocketNotifier::activated, this, &ChannelSocketPump::onSocketReadable);
    connect(
        m_writable.get(), &QSocketNotifier::activated, this, &ChannelSocketPump::onSocketWritable);
    connect(channel, &Channel::readyRead, this, &ChannelSocketPump::onChannelReadable);
    connect(channel, &Channel::writable, this, [this] {
        if (m_ended || !m_channel)
            return;
        if (!m_pendingToChannel.isEmpty()) {
            if (!m_channel->write(m_pendingToChannel))
                return;
            m_toChannel += quint64(m_pendingToChannel.size());
            m_pendingToChannel.clear();
        }
        m_readable->setEnabled(true);
    });
    connect(
        channel, &Channel::closed, this, [this](protocol::CloseCode code, const QString &reason) {
            finish(describeClose(code, reason), false);
        });
    // Bytes that came with the channel's opening are not lost.
    if (channel->bytesAvailable() > 0)
        QMetaObject::invokeMethod(
            this, &ChannelSocketPump::onChannelReadable, Qt::QueuedConnection);
}

ChannelSocketPump::~ChannelSocketPump()
{
    if (!m_ended)
        finish(QStringLiteral("the forwarding process is stopping"), true);
}

void ChannelSocketPump::stop(const QString &reason)
{
    finish(reason, true);
}

void ChannelSocketPump::onSocketReadable()
{
    if (m_ended || !m_channel)
        return;
    QByteArray chunk(kReadChunk, Qt::Uninitialized);
    ssize_t got = 0;
    do {
        got = ::read(m_socket.get(), chunk.data(), size_t(chunk.size()));
    } while (got < 0 && errno == EINTR);
    if (got < 0) {
        // EWOULDBLOCK is EAGAIN on Linux.
        if (errno == EAGAIN)
            return;
        finish(QStringLiteral("the device's connection failed: %1").arg(errnoText(errno)), true);
        return;
    }
    if (got == 0) {
        finish(QStringLiteral("the device's side closed the connection"), true);
        return;
    }
    chunk.truncate(got);
    if (m_taps.towardsChannel)
        m_taps.towardsChannel(chunk);
    // The channel queues this array as it is: a 112-byte answer must not
    // keep 64 KiB of capacity alive while it waits for credit.
    if (got < kReadChunk / 2)
        chunk.squeeze();
    if (!m_channel->write(chunk)) {
        // The channel will say when it has room; until then the kernel's
        // send waits on a full socket buffer.
        m_pendingToChannel = chunk;
        m_readable->setEnabled(false);
        return;
    }
    m_toChannel += quint64(got);
}

void ChannelSocketPump::onChannelReadable()
{
    Channel *channel = m_channel.data();
    if (m_ended || !channel || !m_pendingToSocket.isEmpty())
        return;
    m_pendingToSocket = channel->read(kReadChunk);
    if (m_pendingToSocket.isEmpty())
        return;
    if (m_taps.towardsSocket)
        m_taps.towardsSocket(m_pendingToSocket);
    // Draining may end the pump, and the channel with it.
    if (drainToSocket() && (channel = m_channel.data()) && channel->bytesAvailable() > 0)
        QMetaObject::invokeMethod(
            this, &ChannelSocketPump::onChannelReadable, Qt::QueuedConnection);
}

void ChannelSocketPump::onSocketWritable()
{
    if (m_ended)
        return;
    if (drainToSocket())
        onChannelReadable();
}

bool ChannelSocketPump::drainToSocket()
{
    while (!m_pendingToSocket.isEmpty()) {
        const ssize_t sent = ::send(m_socket.get(), m_pendingToSocket.constData(),
            size_t(m_pendingToSocket.size()), MSG_NOSIGNAL);
        if (sent < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN) {
                m_writable->setEnabled(true);
                return false;
            }
            finish(
                QStringLiteral("the device's connection failed: %1").arg(errnoText(errno)), true);
            return false;
        }
        m_toSocket += quint64(sent);
        m_pendingToSocket.remove(0, sent);
    }
    m_writable->setEnabled(false);
    return true;
}

void ChannelSocketPump::finish(const QString &reason, bool closeChannel)
{
    if (m_ended)
        return;
    m_ended = true;
    m_readable->setEnabled(false);
    m_writable->setEnabled(false);
    if (Channel *channel = m_channel.data()) {
        channel->disconnect(this);
        if (closeChannel && channel->state() != Channel::State::Closed)
            channel->close(protocol::CloseCode::Normal, reason);
    }
    ::shutdown(m_socket.get(), SHUT_RDWR);
    m_socket.reset();
    Q_EMIT ended(reason);
}

} // namespace cloop::tunnel
