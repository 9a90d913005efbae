#include "common/tunnel/channelsplice.h"

#include "common/logging.h"

#include <algorithm>
#include <utility>

namespace cloop::tunnel {

using protocol::CloseCode;

namespace {

// One DATA frame's worth: larger writes would only be cut up again.
constexpr qsizetype kPiece = protocol::kMaxDataPayload;

bool acceptsWrites(const Channel *channel)
{
    return channel->state() == Channel::State::Open || channel->state() == Channel::State::Opening;
}

QString passedOnReason(CloseCode code, const QString &reason)
{
    if (code != CloseCode::ConnectionLost)
        return reason;
    const QString lost = QStringLiteral("the tunnel at the other end of the relay was lost");
    return reason.isEmpty() ? lost : QStringLiteral("%1: %2").arg(lost, reason);
}

} // namespace

ChannelSplice::ChannelSplice(Channel *a, Channel *b, QObject *parent)
    : QObject(parent)
{
    Q_ASSERT(!a || a != b);
    m_a.channel = a;
    m_b.channel = b;
    for (Leg *leg : { &m_a, &m_b }) {
        Channel *channel = leg->channel;
        // Its closed() has been and gone, so how it ended is unknown; the
        // other side must not wait for bytes that will never come.
        if (!channel || channel->state() == Channel::State::Closed) {
            leg->channel = nullptr;
            leg->closeNotice = CloseNotice { CloseCode::ConnectionLost,
                QStringLiteral("channel was already closed when spliced") };
            continue;
        }
        attach(*leg);
    }
    // Bytes may already wait in either channel. Moving them a turn later
    // gives the caller the chance to connect to ended() first.
    QMetaObject::invokeMethod(this, &ChannelSplice::pump, Qt::QueuedConnection);
}

ChannelSplice::~ChannelSplice()
{
    if (m_ended)
        return;
    m_ended = true;
    const QPointer<Channel> a = m_a.channel;
    const QPointer<Channel> b = m_b.channel;
    detach(m_a);
    detach(m_b);
    // Closing one may run code that deletes the other: hence the QPointers.
    for (const QPointer<Channel> &channel : { a, b }) {
        if (channel)
            channel->close(CloseCode::Normal, QStringLiteral("relay removed"));
    }
}

void ChannelSplice::end(CloseCode code, const QString &reason)
{
    if (m_ended)
        return;
    terminate(code, reason, reason);
    // Inside a pump the signal waits for it to unwind, so a slot that
    // deletes this splice never pulls the object from under it.
    if (!m_pumping)
        emitEndedIfDue();
}

void ChannelSplice::attach(Leg &leg)
{
    Channel *channel = leg.channel;
    Leg *const which = &leg;
    connect(channel, &Channel::readyRead, this, &ChannelSplice::pump);
    connect(channel, &Channel::writable, this, &ChannelSplice::pump);
    // A normal close handed to a channel still opening waits for this.
    connect(channel, &Channel::opened, this, &ChannelSplice::pump);
    connect(channel, &Channel::closed, this,
        [this, which](CloseCode code, const QString &reason) { noteClosed(*which, code, reason); });
    // Without closed() first only when its multiplexer itself was deleted.
    connect(channel, &QObject::destroyed, this, [this, which] {
        noteClosed(*which, CloseCode::ConnectionLost, QStringLiteral("its tunnel was torn down"));
    });
}

void ChannelSplice::detach(Leg &leg)
{
    if (leg.channel)
        disconnect(leg.channel, nullptr, this, nullptr);
    leg.channel = nullptr;
}

void ChannelSplice::noteClosed(Leg &leg, CloseCode code, const QString &reason)
{
    if (m_ended || leg.closeNotice)
        return;
    leg.closeNotice = CloseNotice { code, reason };
    pump();
}

void ChannelSplice::pump()
{
    // Writing to one channel can emit signals that land here again (its
    // writable(), another channel's close); the outer call goes round once
    // more instead of two calls interleaving reads and writes.
    if (m_pumping) {
        m_pumpAgain = true;
        return;
    }
    const QPointer<ChannelSplice> self(this);
    m_pumping = true;
    do {
        m_pumpAgain = false;
        step();
        if (!self)
            return;
    } while (m_pumpAgain && !m_ended);
    m_pumping = false;
    emitEndedIfDue();
}

void ChannelSplice::step()
{
    if (m_ended)
        return;
    for (auto [leg, other] : { std::pair { &m_a, &m_b }, std::pair { &m_b, &m_a } }) {
        if (!leg->closeNotice || leg->closeHandled)
            continue;
        leg->closeHandled = true;
        const CloseNotice notice = *leg->closeNotice;
        if (leg == &m_a && m_aResumable && notice.code != CloseCode::DeviceGone) {
            const QString paused
                = QStringLiteral("the device's end of the stream went, and may come back");
            terminate(CloseCode::ConnectionLost, notice.reason,
                notice.reason.isEmpty() ? paused
                                        : QStringLiteral("%1: %2").arg(paused, notice.reason));
            return;
        }
        if (notice.code != CloseCode::Normal) {
            terminate(notice.code, notice.reason, passedOnReason(notice.code, notice.reason));
            return;
        }
        // A closed channel is deleted only later: what it received before
        // the close is still in it, and is the end of its stream. Bounded by
        // its receive window, since the peer never had more credit.
        if (Channel *channel = leg->channel)
            leg->carry.append(channel->readAll());
        detach(*leg);
        other->carry.clear();
        if (!m_handOverReason)
            m_handOverReason = notice.reason;
    }

    move(m_a, m_b);
    move(m_b, m_a);
    if (m_ended || !m_handOverReason)
        return;

    const QString reason = *m_handOverReason;
    Leg *survivor = m_a.channel ? &m_a : (m_b.channel ? &m_b : nullptr);
    if (!survivor) {
        terminate(CloseCode::Normal, reason, reason);
        return;
    }
    const Leg &gone = survivor == &m_a ? m_b : m_a;
    Channel *channel = survivor->channel;
    if (!channel) {
        terminate(CloseCode::Normal, reason, reason);
        return;
    }
    // A normal close of a channel still opening would drop what is queued
    // in it; opened() brings the pump back.
    if (channel->state() == Channel::State::Opening)
        return;
    // Still delivering; writable() brings the pump back. A channel that
    // stopped taking writes is closing on its own, so nothing more will fit.
    if (!gone.carry.isEmpty() && acceptsWrites(channel))
        return;
    terminate(CloseCode::Normal, reason, reason);
}

void ChannelSplice::move(Leg &from, Leg &to)
{
    for (;;) {
        if (m_ended)
            return;
        Channel *destination = to.channel;
        if (!destination || !acceptsWrites(destination))
            return;
        if (from.carry.isEmpty()) {
            Channel *source = from.channel;
            if (!source || source->bytesAvailable() == 0)
                return;
            // Read no more than the destination takes now: the rest stays in
            // the source, which withholds the peer's credit. With no room one
            // byte is taken anyway, because the multiplexer emits writable()
            // only to writers it refused, and that byte's refused write is
            // what brings the pump back.
            const qsizetype room = destination->writableBytes();
            const qsizetype take
                = std::max<qsizetype>(1, std::min({ room, source->bytesAvailable(), kPiece }));
            from.carry = source->read(take);
            continue;
        }
        const qsizetype room = destination->writableBytes();
        // A rescued tail may be larger than the room; write what fits so the
        // refusal that follows comes with the destination full.
        const qsizetype size
            = std::min({ from.carry.size(), kPiece, std::max<qsizetype>(room, 1) });
        // The whole carry is shared with the destination, not copied.
        const QByteArray piece = size == from.carry.size() ? from.carry : from.carry.first(size);
        if (!destination->write(piece))
            return;
        if (m_ended)
            return;
        if (size == from.carry.size())
            from.carry.clear();
        else
            from.carry.remove(0, size);
        from.forwarded += static_cast<quint64>(size);
        if (m_counters) {
            // One writer: a plain store, no locked add on the relay's path.
            std::atomic<quint64> &counted = &from == &m_a ? m_counters->aToB : m_counters->bToA;
            counted.store(from.forwarded, std::memory_order_relaxed);
        }
    }
}

void ChannelSplice::terminate(CloseCode code, const QString &reason, const QString &passedOn)
{
    if (m_ended)
        return;
    m_ended = true;
    m_endedDue = true;
    m_endCode = code;
    m_endReason = reason;
    qCDebug(lcTunnel).nospace() << "splice ended (" << protocol::closeCodeName(code) << ": "
                                << reason << ") after " << m_a.forwarded << " bytes a->b, "
                                << m_b.forwarded << " bytes b->a";
    const QPointer<Channel> a = m_a.channel;
    const QPointer<Channel> b = m_b.channel;
    detach(m_a);
    detach(m_b);
    m_a.carry.clear();
    m_b.carry.clear();
    // A channel that already closed ignores this.
    for (const QPointer<Channel> &channel : { a, b }) {
        if (channel)
            channel->close(code, passedOn);
    }
}

void ChannelSplice::emitEndedIfDue()
{
    if (!m_endedDue)
        return;
    m_endedDue = false;
    // Copies: a slot may delete this splice while later slots still run.
    const CloseCode code = m_endCode;
    const QString reason = m_endReason;
    Q_EMIT ended(code, reason);
}

} // namespace cloop::tunnel
