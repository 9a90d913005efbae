#pragma once

#include "common/util/fd.h"

#include <QByteArray>
#include <QObject>
#include <QPointer>
#include <QSocketNotifier>

#include <functional>
#include <memory>

namespace cloop::tunnel {

class Channel;

// Copies a byte stream both ways between a channel and a stream socket
// whose other end a kernel driver holds (usbip-host's usbip_sockfd,
// vhci_hcd's attach). The programs move bytes only; the kernels at both
// ends speak USB/IP. Flow control is end to end: a full channel stops the
// socket being read (so the kernel waits in its send), and a socket that
// cannot take more stops the channel being read (so its credit runs out).
//
// The pump ends once, with ended(): the kernel closed its end (or the
// socket failed), the channel closed, or stop() was called. On its way
// out it shuts the socket down and closes it, which is what the kernel
// takes as the end of the connection (it frees the device or port).
class ChannelSocketPump final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(ChannelSocketPump)

public:
    // The socket is made non-blocking; `channel` is open (accepted).
    ChannelSocketPump(util::Fd socket, Channel *channel, QObject *parent = nullptr);
    ~ChannelSocketPump() override;

    // Ends both sides: the channel with a normal close and this reason.
    void stop(const QString &reason);
    bool hasEnded() const { return m_ended; }

    // Shown every byte as it is read, each way, before it moves on: for
    // counting what passes (a USB/IP stream's URBs), never for changing it.
    struct Taps
    {
        std::function<void(QByteArrayView)> towardsChannel;
        std::function<void(QByteArrayView)> towardsSocket;
    };
    void setTaps(Taps taps) { m_taps = std::move(taps); }

    quint64 bytesToChannel() const { return m_toChannel; }
    quint64 bytesToSocket() const { return m_toSocket; }

Q_SIGNALS:
    // Why it ended: "the device's side closed", the channel's close, …
    void ended(const QString &reason);

private:
    void onSocketReadable();
    void onSocketWritable();
    void onChannelReadable();
    bool drainToSocket();
    void finish(const QString &reason, bool closeChannel);

    util::Fd m_socket;
    QPointer<Channel> m_channel;
    std::unique_ptr<QSocketNotifier> m_readable;
    std::unique_ptr<QSocketNotifier> m_writable;
    QByteArray m_pendingToChannel; // read from the socket, refused by the channel
    QByteArray m_pendingToSocket; // read from the channel, not yet taken by the socket
    Taps m_taps;
    quint64 m_toChannel = 0;
    quint64 m_toSocket = 0;
    bool m_ended = false;
};

} // namespace cloop::tunnel
