#pragma once

#include "common/protocol/channelframe.h"
#include "common/tunnel/channelmultiplexer.h"

#include <QByteArray>
#include <QObject>
#include <QPointer>
#include <QString>

#include <atomic>
#include <memory>
#include <optional>

namespace cloop::tunnel {

// What a splice carried, each way, readable from another thread while the
// splice runs on its own (the hub's relay threads).
struct SpliceCounters
{
    std::atomic<quint64> aToB { 0 };
    std::atomic<quint64> bToA { 0 };
};

// Joins two channels (normally of two different multiplexers, i.e. two
// daemons' tunnels) so bytes flow both ways with each side's flow control
// intact. Bytes are read from one side only as fast as the other side's
// write() accepts them: what is refused stays in the source channel's receive
// buffer, which stops credit going back to the source peer, which stops it
// sending. So the hub holds at most a receive window plus a send-queue cap per
// direction, however fast one daemon is and however slow the other.
//
// Channels may be Open or still Opening. Bytes for an Opening channel queue in
// it (within its caps) until the peer accepts; one the peer opened must still
// be accept()ed by the caller before control returns to the event loop, or
// the multiplexer refuses it and the refusal is passed on.
//
// Closing:
//  - A normal close arriving on one side is passed on as a normal close after
//    the bytes that side had already received went out to the other. The
//    multiplexer has no half-open streams on the receiving end (a channel
//    whose peer closed refuses writes), so a normal close ends both
//    directions: what the other daemon sends after it is dropped.
//  - Any other close (a refusal included) is passed on at once with the same
//    code and reason; queued bytes are dropped, as the multiplexer does.
//    ConnectionLost says in its reason that it was the other end's tunnel, so
//    the surviving daemon does not mistake it for its own.
//  - A channel destroyed without closing (its multiplexer went away) counts
//    as ConnectionLost.
//
// ended() comes once, when the splice has nothing more to do (a channel it
// closed normally may still be flushing its own queue), never from the
// constructor; the splice does not delete itself. A slot connected to
// ended() may delete it; a slot connected to one of its channels' signals
// should use deleteLater(), as the splice's own handler may be further up
// the stack.
class ChannelSplice final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(ChannelSplice)

public:
    ChannelSplice(Channel *a, Channel *b, QObject *parent = nullptr);
    // Without end() first: both channels get a normal close, and no ended().
    ~ChannelSplice() override;

    // Closes both sides with this code and reason, then emits ended().
    void end(protocol::CloseCode code, const QString &reason);

    // A's end may come back while B's stays (a forwarder that restarts while
    // its run keeps the device): a close arriving on A, other than
    // DeviceGone, reaches B as ConnectionLost, at once, which tells B's peer
    // to keep what it holds for the stream that follows.
    void setAResumable(bool resumable) { m_aResumable = resumable; }

    // From now on every byte carried is also counted there.
    void countInto(std::shared_ptr<SpliceCounters> counters) { m_counters = std::move(counters); }

    quint64 bytesAToB() const { return m_a.forwarded; }
    quint64 bytesBToA() const { return m_b.forwarded; }
    // Bytes taken out of a source but not yet accepted by the destination:
    // at most one byte per direction while both are open, or what a normally
    // closed channel still held (at most its receive window).
    qsizetype bufferedBytes() const { return m_a.carry.size() + m_b.carry.size(); }
    bool isEnded() const { return m_ended; }

Q_SIGNALS:
    void ended(cloop::protocol::CloseCode code, const QString &reason);

private:
    struct CloseNotice
    {
        protocol::CloseCode code;
        QString reason;
    };

    // One side, and the direction away from it.
    struct Leg
    {
        QPointer<Channel> channel;
        QByteArray carry;
        quint64 forwarded = 0;
        // Recorded by the signal handlers and acted on by the pump, so a close
        // that fires in the middle of a read or write is never half-handled.
        std::optional<CloseNotice> closeNotice;
        bool closeHandled = false;
    };

    void attach(Leg &leg);
    void detach(Leg &leg);
    void noteClosed(Leg &leg, protocol::CloseCode code, const QString &reason);
    void pump();
    void step();
    void move(Leg &from, Leg &to);
    void terminate(protocol::CloseCode code, const QString &reason, const QString &passedOnReason);
    void emitEndedIfDue();

    Leg m_a;
    Leg m_b;
    std::shared_ptr<SpliceCounters> m_counters;
    // Set once the first normal close arrived: the surviving side is closed
    // with this reason as soon as what is carried toward it went out.
    std::optional<QString> m_handOverReason;
    bool m_aResumable = false;
    bool m_pumping = false;
    bool m_pumpAgain = false;
    bool m_ended = false;
    bool m_endedDue = false;
    protocol::CloseCode m_endCode = protocol::CloseCode::Normal;
    QString m_endReason;
};

} // namespace cloop::tunnel
