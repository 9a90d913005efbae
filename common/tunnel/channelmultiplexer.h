#pragma once

#include "common/protocol/channelframe.h"
#include "common/protocol/channelopen.h"
#include "common/result.h"
#include "common/tunnel/chunkqueue.h"

#include <QByteArray>
#include <QHash>
#include <QJsonObject>
#include <QObject>
#include <QPointer>

namespace cloop::tunnel {

class ChannelMultiplexer;

// One numbered, flow-controlled byte stream inside a tunnel. Created and owned
// by its ChannelMultiplexer; deleted (later) after it closes, so holders keep
// a QPointer.
class Channel final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(Channel)

public:
    // Closing: a normal close waits for the queued bytes to go out.
    // HalfClosed: this side's close went out; the peer's has not come yet,
    // and what the peer still sends is received.
    enum class State
    {
        Opening,
        Open,
        Closing,
        HalfClosed,
        Closed
    };

    quint32 id() const { return m_id; }
    State state() const { return m_state; }
    const QJsonObject &metadata() const { return m_metadata; }

    // For a channel the peer opened: take it, or say no.
    void accept();
    void refuse(const QString &reason);

    // All or nothing: false (and counted) when the bytes would take the
    // channel or the connection over its send-queue cap. Message-shaped
    // traffic such as Ethernet frames drops there; stream-shaped traffic
    // waits for writable().
    bool write(const QByteArray &bytes);
    qsizetype writableBytes() const;
    qsizetype queuedBytes() const { return m_sendQueue.size(); }
    quint32 sendCredit() const { return m_sendCredit; }

    qsizetype bytesAvailable() const { return m_receiveBuffer.size(); }
    // At most maxBytes, possibly fewer while more is waiting: payloads are
    // handed on as they arrived (see ChunkQueue::take).
    QByteArray read(qsizetype maxBytes);
    QByteArray readAll() { return read(m_receiveBuffer.size()); }

    // Normal: queued bytes are sent first, then the close; the channel ends
    // when both sides have closed (a peer's normal close makes this side
    // flush and close too). Any other code ends it at once, dropping what is
    // queued on both sides.
    void close(protocol::CloseCode code = protocol::CloseCode::Normal, const QString &reason = {});

    quint64 bytesWritten() const { return m_bytesSent; }
    quint64 bytesReceived() const { return m_bytesReceived; }
    quint64 refusedWrites() const { return m_refusedWrites; }

Q_SIGNALS:
    void opened();
    void readyRead();
    void writable();
    void closed(cloop::protocol::CloseCode code, const QString &reason);

private:
    friend class ChannelMultiplexer;
    Channel(ChannelMultiplexer *mux, quint32 id, QJsonObject metadata, State state,
        quint32 receiveWindow);

    void flush();
    void sendOwnClose();
    void onPeerClose(protocol::CloseCode code, const QString &reason);
    void finish(protocol::CloseCode code, const QString &reason, bool notifyPeer);

    ChannelMultiplexer *m_mux;
    quint32 m_id;
    QJsonObject m_metadata;
    State m_state;
    QString m_pendingCloseReason;
    bool m_peerClosed = false;

    ChunkQueue m_sendQueue;
    quint32 m_sendCredit = 0;

    ChunkQueue m_receiveBuffer;
    quint32 m_receiveWindow;
    // How many more bytes the peer may send before it hears from us again.
    quint32 m_peerAllowance;
    quint32 m_consumedSinceGrant = 0;

    quint64 m_bytesSent = 0;
    quint64 m_bytesReceived = 0;
    quint64 m_refusedWrites = 0;
    bool m_wasWritableBlocked = false;
};

// How a channel's end reads in a log: "the stream was closed: REASON" for a
// normal close, "the stream ended: REASON" for any other.
QString describeClose(protocol::CloseCode code, const QString &reason);

// Carries many channels over one ordered message transport (the tunnel's
// WebSocket). Transport-agnostic: frames leave through frameReady() and
// arrive through handleFrame(), so tests can wire two of them back to back.
class ChannelMultiplexer final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(ChannelMultiplexer)

public:
    enum class Side
    {
        Hub,
        Daemon
    };

    struct Limits
    {
        // What this side lets the peer have in flight on each channel.
        quint32 receiveWindow = 256 * 1024;
        // Bytes a local writer may queue on one channel beyond the peer's credit.
        qsizetype maxQueuedPerChannel = 1024 * 1024;
        // The same for all channels of the connection together.
        qsizetype maxQueuedPerConnection = 8 * 1024 * 1024;
        int maxChannels = 64;

        // An agent's tunnel carries each run's output and each device a run
        // holds: 64 capped an agent at 32 runs with a device, whatever its
        // --max-concurrent. What it may queue stays bounded by
        // maxQueuedPerConnection, however many channels it has.
        static constexpr int kExecutorMaxChannels = 1024;
    };

    explicit ChannelMultiplexer(Side side, QObject *parent = nullptr);
    ChannelMultiplexer(Side side, Limits limits, QObject *parent = nullptr);
    ~ChannelMultiplexer() override;

    const Limits &limits() const { return m_limits; }

    // Null with an error when the connection already has maxChannels open.
    Result<Channel *> openChannel(const QJsonObject &metadata);
    // The same for an opening the protocol names (common/protocol/channelopen.h).
    Result<Channel *> openChannel(const protocol::ChannelOpen &open);

    // A frame from the transport. An error is a protocol violation by the
    // peer: the transport should drop the whole connection.
    Status handleFrame(QByteArrayView encoded);

    // The transport is gone: every channel closes with ConnectionLost.
    void closeAll(const QString &reason);

    int channelCount() const { return static_cast<int>(m_channels.size()); }
    qsizetype queuedBytes() const { return m_totalQueued; }
    Channel *channel(quint32 id) const { return m_channels.value(id); }

Q_SIGNALS:
    void frameReady(const QByteArray &encoded);
    // The peer opened a channel; a handler calls accept() or refuse() on it
    // before returning. Channels still undecided when control returns to the
    // event loop are refused.
    void channelRequested(cloop::tunnel::Channel *channel);
    // A channel was added or forgotten; the tunnel watches a link more
    // closely while it carries any.
    void channelCountChanged(int count);

private:
    friend class Channel;
    void send(const protocol::ChannelFrame &frame);
    void forget(Channel *channel);
    void adjustQueued(qsizetype delta) { m_totalQueued += delta; }
    void wakeBlockedWriters();
    bool isOwnId(quint32 id) const;

    Side m_side;
    Limits m_limits;
    quint32 m_nextId;
    QHash<quint32, Channel *> m_channels;
    qsizetype m_totalQueued = 0;
    bool m_waking = false;
};

} // namespace cloop::tunnel
