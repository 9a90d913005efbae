// Unit tests of the channel splice (common/tunnel/channelsplice.h): two
// tunnels, each a daemon-side and a hub-side multiplexer joined by queued
// pipes, and the hub relaying one channel of the first tunnel ("lab", the
// forwarder's) to one of the second ("exec", the executor agent's). Frames
// cross on a later turn of the event loop, as over a WebSocket, so the tests
// wait on conditions rather than time.

#include "common/tunnel/channelsplice.h"

#include <QJsonObject>
#include <QPointer>
#include <QRandomGenerator>
#include <QTest>
#include <QTimer>

#include <functional>
#include <memory>
#include <optional>
#include <utility>

using namespace cloop;
using namespace cloop::tunnel;
using protocol::CloseCode;

namespace {

// Generous: the bound only matters when something hangs.
constexpr int kWaitMs = 60'000;
constexpr qsizetype kMiB = 1024 * 1024;

// Like QTest::qWaitFor, but sleeps only while no event is pending:
// qWaitFor naps 10 ms after every pass, and a pass carries a frame only one
// hop, so a transfer of many round trips would crawl. Everything here
// happens in event handlers, so waiting for the next event loses nothing.
template <typename Predicate> bool waitUntil(Predicate predicate)
{
    QTimer deadline;
    deadline.setSingleShot(true);
    deadline.start(kWaitMs);
    while (!predicate()) {
        if (!deadline.isActive())
            return false;
        QCoreApplication::processEvents(QEventLoop::AllEvents | QEventLoop::WaitForMoreEvents);
        // Outside exec() deleteLater() is honoured only on request.
        QCoreApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);
    }
    return true;
}

// One direction of a tunnel. Frames are delivered on a later turn of the
// event loop, never inside the call that sent them; held frames wait for
// release(), which is how a tunnel that answers late is simulated.
class QueuedPipe final : public QObject
{
public:
    QueuedPipe(ChannelMultiplexer *from, ChannelMultiplexer *to)
        : m_to(to)
    {
        connect(from, &ChannelMultiplexer::frameReady, this, [this](const QByteArray &frame) {
            if (m_cut)
                return;
            ++m_inFlight;
            if (m_held)
                m_heldFrames.append(frame);
            else
                post(frame);
        });
    }

    qsizetype inFlight() const { return m_inFlight; }
    void hold() { m_held = true; }
    void release()
    {
        m_held = false;
        for (const QByteArray &frame : std::exchange(m_heldFrames, {}))
            post(frame);
    }
    // The transport is gone: nothing crosses any more.
    void cut()
    {
        m_cut = true;
        m_inFlight -= m_heldFrames.size();
        m_heldFrames.clear();
    }

    QStringList errors;
    // Runs after every frame delivered, to watch the receiving side.
    std::function<void()> afterDelivery;

private:
    void post(const QByteArray &frame)
    {
        QMetaObject::invokeMethod(
            this, [this, frame] { deliver(frame); }, Qt::QueuedConnection);
    }
    void deliver(const QByteArray &frame)
    {
        --m_inFlight;
        if (m_cut)
            return;
        const Status status = m_to->handleFrame(frame);
        if (!status.ok())
            errors.append(status.error().code + QStringLiteral(": ") + status.error().message);
        if (afterDelivery)
            afterDelivery();
    }

    ChannelMultiplexer *m_to;
    QList<QByteArray> m_heldFrames;
    qsizetype m_inFlight = 0;
    bool m_held = false;
    bool m_cut = false;
};

// What a daemon does with its end of the relayed channel: sends a buffer as
// fast as write() lets it (waiting for writable() after a refusal, as a
// stream writer must), reads when told to, and remembers how it closed.
class Endpoint final : public QObject
{
public:
    void attach(Channel *channel)
    {
        m_channel = channel;
        connect(channel, &Channel::readyRead, this, [this] {
            if (reading)
                drain();
        });
        connect(channel, &Channel::writable, this, &Endpoint::feed);
        connect(channel, &Channel::closed, this, [this](CloseCode code, const QString &reason) {
            // What arrived before the close is still there to read.
            drain();
            ++closeCount;
            closeCode = code;
            closeReason = reason;
            receivedAtClose = received.size();
        });
        if (reading)
            drain();
    }

    void send(const QByteArray &bytes, std::optional<QString> thenCloseWith = std::nullopt)
    {
        m_outgoing = bytes;
        m_offset = 0;
        m_closeWhenSent = std::move(thenCloseWith);
        feed();
    }
    void setReading(bool on)
    {
        reading = on;
        if (on)
            drain();
    }

    Channel *channel() const { return m_channel; }
    qsizetype sent() const { return m_offset; }
    bool blocked() const { return m_blocked; }

    QByteArray received;
    bool reading = true;
    int closeCount = 0;
    std::optional<CloseCode> closeCode;
    QString closeReason;
    qsizetype receivedAtClose = -1;

private:
    void drain()
    {
        if (m_channel)
            received += m_channel->readAll();
    }
    void feed()
    {
        if (!m_channel)
            return;
        while (m_offset < m_outgoing.size()) {
            const QByteArray chunk = m_outgoing.mid(m_offset, 64 * 1024);
            if (!m_channel->write(chunk)) {
                m_blocked = true;
                return;
            }
            m_offset += chunk.size();
        }
        m_blocked = false;
        if (m_closeWhenSent)
            m_channel->close(CloseCode::Normal, *std::exchange(m_closeWhenSent, std::nullopt));
    }

    QPointer<Channel> m_channel;
    QByteArray m_outgoing;
    qsizetype m_offset = 0;
    bool m_blocked = false;
    std::optional<QString> m_closeWhenSent;
};

// A daemon's multiplexer and the hub's multiplexer for it. The daemon side
// takes (or refuses) every channel the hub opens, handing it to its endpoint
// first so no readyRead() goes unseen.
struct Tunnel
{
    Tunnel(Endpoint *endpoint, ChannelMultiplexer::Limits hubLimits)
        : daemon(std::make_unique<ChannelMultiplexer>(ChannelMultiplexer::Side::Daemon))
        , hub(std::make_unique<ChannelMultiplexer>(ChannelMultiplexer::Side::Hub, hubLimits))
        , toHub(std::make_unique<QueuedPipe>(daemon.get(), hub.get()))
        , toDaemon(std::make_unique<QueuedPipe>(hub.get(), daemon.get()))
    {
        QObject::connect(daemon.get(), &ChannelMultiplexer::channelRequested, daemon.get(),
            [this, endpoint](Channel *channel) {
                requested.append(channel);
                if (refusal) {
                    channel->refuse(*refusal);
                    return;
                }
                endpoint->attach(channel);
                channel->accept();
            });
    }

    bool idle() const
    {
        return (!toHub || toHub->inFlight() == 0) && (!toDaemon || toDaemon->inFlight() == 0);
    }
    QString problems() const
    {
        QStringList all;
        for (const auto *pipe : { toHub.get(), toDaemon.get() }) {
            if (pipe)
                all += pipe->errors;
        }
        return all.join(QStringLiteral("; "));
    }
    // The hub loses the tunnel: nothing crosses, every hub-side channel
    // closes with ConnectionLost, and so does the daemon's side.
    void drop(const QString &reason)
    {
        toHub->cut();
        toDaemon->cut();
        hub->closeAll(reason);
        daemon->closeAll(reason);
    }
    // The hub's multiplexer is deleted outright, channels and all.
    void destroyHub()
    {
        toHub.reset();
        toDaemon.reset();
        hub.reset();
    }

    std::unique_ptr<ChannelMultiplexer> daemon;
    std::unique_ptr<ChannelMultiplexer> hub;
    std::unique_ptr<QueuedPipe> toHub;
    std::unique_ptr<QueuedPipe> toDaemon;
    QList<QPointer<Channel>> requested;
    std::optional<QString> refusal;
};

// The hub between a forwarder (lab) and an executor agent (exec).
struct Relay
{
    explicit Relay(ChannelMultiplexer::Limits hubLimits = {})
        : lab(&forwarder, hubLimits)
        , exec(&agent, hubLimits)
    { }

    bool idle() const { return lab.idle() && exec.idle(); }
    QString problems() const { return lab.problems() + exec.problems(); }

    // The hub opens a channel on each tunnel; the daemons take them.
    bool openBoth()
    {
        auto a = lab.hub->openChannel(
            QJsonObject { { QStringLiteral("role"), QStringLiteral("lab") } });
        auto b = exec.hub->openChannel(
            QJsonObject { { QStringLiteral("role"), QStringLiteral("exec") } });
        if (!a.ok() || !b.ok())
            return false;
        hubA = *a;
        hubB = *b;
        return waitUntil([this] { return !lab.requested.isEmpty() && !exec.requested.isEmpty(); });
    }
    bool openBothAndWaitAccepted()
    {
        return openBoth() && waitUntil([this] {
            const Channel *a = hubA.data();
            const Channel *b = hubB.data();
            return a && b && a->state() == Channel::State::Open
                && b->state() == Channel::State::Open;
        });
    }

    Endpoint forwarder; // daemon A
    Endpoint agent; // daemon B
    Tunnel lab;
    Tunnel exec;
    QPointer<Channel> hubA;
    QPointer<Channel> hubB;
};

#define WAIT_FOR(condition) QVERIFY2(waitUntil([&] { return (condition); }), #condition)
#define NO_PROBLEMS(relay) QVERIFY2((relay).problems().isEmpty(), qPrintable((relay).problems()))

QByteArray pattern(qsizetype size, quint32 seed)
{
    QList<quint32> words((size + 3) / 4);
    QRandomGenerator(seed).fillRange(words.data(), words.size());
    return QByteArray(reinterpret_cast<const char *>(words.constData()), size);
}

// Counts ended() and keeps what the last one said.
struct EndedLog
{
    explicit EndedLog(ChannelSplice *splice)
    {
        QObject::connect(
            splice, &ChannelSplice::ended, splice, [this](CloseCode c, const QString &r) {
                ++count;
                code = c;
                reason = r;
            });
    }
    int count = 0;
    std::optional<CloseCode> code;
    QString reason;
};

} // namespace

class TestChannelSplice final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void bytesFlowBothWaysAtOnce();
    void backpressureKeepsTheHubBounded();
    void normalCloseDeliversEverythingFirst();
    void normalCloseFromTheOtherSide();
    void abortiveCloseIsPassedOnWithCodeAndReason();
    void lostTunnelClosesTheOtherSide();
    void destroyedMultiplexerCountsAsLost();
    void deletingTheSpliceClosesBoth();
    void deletingFromEndedIsSafe();
    void endClosesBothWithTheCode();
    void bytesWaitingBeforeTheSpliceAreForwarded();
    void spliceBeforeAcceptance();
    void refusalIsPassedOn();
    void goneChannelAtSpliceTimeEndsIt();
    void aResumableSidesCloseReachesTheOtherAsLost_data();
    void aResumableSidesCloseReachesTheOtherAsLost();
    void aResumableSidesDeviceGoneIsPassedOnAsItCame();
};

void TestChannelSplice::bytesFlowBothWaysAtOnce()
{
    Relay relay;
    QVERIFY(relay.openBothAndWaitAccepted());
    ChannelSplice splice(relay.hubA, relay.hubB);
    EndedLog ended(&splice);

    // Given both daemons send 10 MiB at the same time,
    const QByteArray fromLab = pattern(10 * kMiB, 1);
    const QByteArray fromExec = pattern(10 * kMiB + 7, 2);
    relay.forwarder.send(fromLab);
    relay.agent.send(fromExec);

    // then each receives the other's bytes, complete and in order,
    WAIT_FOR(relay.agent.received.size() == fromLab.size()
        && relay.forwarder.received.size() == fromExec.size());
    NO_PROBLEMS(relay);
    QVERIFY2(relay.agent.received == fromLab, "lab bytes arrived altered");
    QVERIFY2(relay.forwarder.received == fromExec, "exec bytes arrived altered");
    // and the splice counted them and keeps nothing back.
    QCOMPARE(splice.bytesAToB(), quint64(fromLab.size()));
    QCOMPARE(splice.bytesBToA(), quint64(fromExec.size()));
    WAIT_FOR(relay.idle());
    QCOMPARE(splice.bufferedBytes(), qsizetype(0));
    QCOMPARE(relay.lab.hub->queuedBytes(), qsizetype(0));
    QCOMPARE(relay.exec.hub->queuedBytes(), qsizetype(0));
    QVERIFY(!splice.isEnded());
    QCOMPARE(ended.count, 0);
}

void TestChannelSplice::backpressureKeepsTheHubBounded()
{
    // Small hub limits, so a runaway buffer would stand out.
    ChannelMultiplexer::Limits hubLimits;
    hubLimits.receiveWindow = 64 * 1024;
    hubLimits.maxQueuedPerChannel = 128 * 1024;
    hubLimits.maxQueuedPerConnection = 1 * kMiB;
    Relay relay(hubLimits);
    QVERIFY(relay.openBothAndWaitAccepted());
    ChannelSplice splice(relay.hubA, relay.hubB);

    // What the hub holds of the lab's stream: received on A, not yet sent
    // on B, wherever it sits (A's receive buffer, the splice, B's queue).
    const auto held = [&] {
        const Channel *a = relay.hubA.data();
        const Channel *b = relay.hubB.data();
        return (a ? a->bytesAvailable() : 0) + splice.bufferedBytes() + (b ? b->queuedBytes() : 0);
    };
    const qsizetype bound = hubLimits.receiveWindow + hubLimits.maxQueuedPerChannel + 1;
    qsizetype maxHeld = 0;
    for (QueuedPipe *pipe : { relay.lab.toHub.get(), relay.exec.toHub.get() }) {
        pipe->afterDelivery = [&] {
            if (relay.hubA && relay.hubB)
                maxHeld = std::max(maxHeld, held());
        };
    }

    // Given the agent stops reading while the forwarder sends 10 MiB,
    const QByteArray bytes = pattern(10 * kMiB, 3);
    relay.agent.setReading(false);
    relay.forwarder.send(bytes);

    // then the forwarder's writes are refused in the end, and everything
    // comes to rest,
    WAIT_FOR(relay.idle() && relay.forwarder.blocked());
    NO_PROBLEMS(relay);
    QVERIFY(relay.forwarder.sent() < bytes.size());
    // with the hub holding no more than A's window plus B's queue cap (and
    // the one byte whose refused write asks B for writable()),
    QCOMPARE(held(), qsizetype(relay.hubA->bytesReceived() - relay.hubB->bytesWritten()));
    QVERIFY2(held() <= bound, qPrintable(QStringLiteral("hub holds %1 bytes").arg(held())));
    QVERIFY(splice.bufferedBytes() <= 1);
    QCOMPARE(relay.hubB->queuedBytes(), hubLimits.maxQueuedPerChannel);
    QVERIFY(relay.hubB->refusedWrites() > 0);
    QVERIFY(relay.hubA->bytesAvailable() <= qsizetype(hubLimits.receiveWindow));
    QVERIFY(relay.agent.channel()->bytesAvailable()
        <= qsizetype(relay.exec.daemon->limits().receiveWindow));

    // and when the agent reads again, every byte arrives intact,
    relay.agent.setReading(true);
    WAIT_FOR(relay.agent.received.size() == bytes.size());
    NO_PROBLEMS(relay);
    QVERIFY2(relay.agent.received == bytes, "bytes arrived altered");
    // the bound having held all along.
    QVERIFY2(maxHeld <= bound, qPrintable(QStringLiteral("hub held up to %1 bytes").arg(maxHeld)));
    QVERIFY(!splice.isEnded());
}

void TestChannelSplice::normalCloseDeliversEverythingFirst()
{
    Relay relay;
    QVERIFY(relay.openBothAndWaitAccepted());
    ChannelSplice splice(relay.hubA, relay.hubB);
    EndedLog ended(&splice);

    // Given the agent is not reading, and the forwarder sends more than fits
    // between the splice and the agent (its window plus B's queue cap), then
    // closes normally,
    const qsizetype size = relay.exec.daemon->limits().receiveWindow
        + relay.exec.hub->limits().maxQueuedPerChannel + relay.lab.hub->limits().receiveWindow / 2;
    const QByteArray bytes = pattern(size, 4);
    relay.agent.setReading(false);
    relay.forwarder.send(bytes, QStringLiteral("capture finished"));

    // then A is closed with the tail of the stream still unsent, which the
    // splice keeps and the agent's close waits for,
    WAIT_FOR(relay.idle());
    NO_PROBLEMS(relay);
    QCOMPARE(relay.lab.hub->channelCount(), 0);
    QVERIFY(splice.bufferedBytes() > 0);
    QVERIFY(!splice.isEnded());
    QCOMPARE(ended.count, 0);
    QCOMPARE(relay.agent.closeCount, 0);

    // and once the agent reads, it gets all bytes, then the normal close.
    relay.agent.setReading(true);
    WAIT_FOR(relay.agent.closeCount == 1);
    NO_PROBLEMS(relay);
    QCOMPARE(relay.agent.closeCode, CloseCode::Normal);
    QCOMPARE(relay.agent.closeReason, QStringLiteral("capture finished"));
    QCOMPARE(relay.agent.receivedAtClose, size);
    QVERIFY2(relay.agent.received == bytes, "bytes arrived altered");
    QCOMPARE(ended.count, 1);
    QCOMPARE(ended.code, CloseCode::Normal);
    QCOMPARE(ended.reason, QStringLiteral("capture finished"));
    QCOMPARE(splice.bytesAToB(), quint64(size));

    // Everything winds down, and ended() stays the only one.
    WAIT_FOR(relay.idle() && relay.forwarder.closeCount == 1);
    QCOMPARE(relay.forwarder.closeCode, CloseCode::Normal);
    QCOMPARE(relay.lab.daemon->channelCount(), 0);
    QCOMPARE(relay.exec.hub->channelCount(), 0);
    QCOMPARE(relay.exec.daemon->channelCount(), 0);
    QCOMPARE(ended.count, 1);
    QCOMPARE(splice.bufferedBytes(), qsizetype(0));
}

void TestChannelSplice::normalCloseFromTheOtherSide()
{
    Relay relay;
    QVERIFY(relay.openBothAndWaitAccepted());
    ChannelSplice splice(relay.hubA, relay.hubB);
    EndedLog ended(&splice);

    const QByteArray bytes = pattern(3 * kMiB + 5, 5);
    relay.agent.send(bytes, QStringLiteral("run done"));

    WAIT_FOR(relay.forwarder.closeCount == 1 && relay.agent.closeCount == 1 && relay.idle());
    NO_PROBLEMS(relay);
    QCOMPARE(relay.forwarder.closeCode, CloseCode::Normal);
    QCOMPARE(relay.forwarder.closeReason, QStringLiteral("run done"));
    QCOMPARE(relay.forwarder.receivedAtClose, bytes.size());
    QVERIFY2(relay.forwarder.received == bytes, "bytes arrived altered");
    QCOMPARE(relay.agent.closeCode, CloseCode::Normal);
    QCOMPARE(ended.count, 1);
    QCOMPARE(ended.code, CloseCode::Normal);
    QCOMPARE(splice.bytesBToA(), quint64(bytes.size()));
}

void TestChannelSplice::abortiveCloseIsPassedOnWithCodeAndReason()
{
    Relay relay;
    QVERIFY(relay.openBothAndWaitAccepted());
    ChannelSplice splice(relay.hubA, relay.hubB);
    EndedLog ended(&splice);

    // Given traffic is under way both ways,
    relay.forwarder.send(pattern(4 * kMiB, 6));
    relay.agent.send(pattern(4 * kMiB, 7));
    WAIT_FOR(relay.forwarder.received.size() > 0 && relay.agent.received.size() > 0);

    // when the agent's device goes away,
    const QString reason = QStringLiteral("tap device tap-lab7 vanished");
    relay.agent.channel()->close(CloseCode::DeviceGone, reason);

    // then the forwarder sees the same code and reason, once.
    WAIT_FOR(relay.forwarder.closeCount == 1);
    NO_PROBLEMS(relay);
    QCOMPARE(relay.forwarder.closeCode, CloseCode::DeviceGone);
    QCOMPARE(relay.forwarder.closeReason, reason);
    QCOMPARE(ended.count, 1);
    QCOMPARE(ended.code, CloseCode::DeviceGone);
    QCOMPARE(ended.reason, reason);
    QVERIFY(splice.isEnded());
    WAIT_FOR(relay.idle());
    QCOMPARE(relay.lab.hub->channelCount(), 0);
    QCOMPARE(relay.exec.hub->channelCount(), 0);
    QCOMPARE(relay.lab.hub->queuedBytes(), qsizetype(0));
    QCOMPARE(relay.forwarder.closeCount, 1);
    QCOMPARE(ended.count, 1);
}

void TestChannelSplice::lostTunnelClosesTheOtherSide()
{
    Relay relay;
    QVERIFY(relay.openBothAndWaitAccepted());
    ChannelSplice splice(relay.hubA, relay.hubB);
    EndedLog ended(&splice);
    relay.forwarder.send(pattern(2 * kMiB, 8));

    // When the executor's tunnel dies,
    relay.exec.drop(QStringLiteral("executor tunnel dropped"));

    // then the forwarder's channel closes with ConnectionLost, and the
    // reason tells it the lost tunnel was the other one.
    WAIT_FOR(relay.forwarder.closeCount == 1);
    NO_PROBLEMS(relay);
    QCOMPARE(relay.forwarder.closeCode, CloseCode::ConnectionLost);
    QVERIFY2(relay.forwarder.closeReason.contains(QStringLiteral("executor tunnel dropped"))
            && relay.forwarder.closeReason.contains(QStringLiteral("other end")),
        qPrintable(relay.forwarder.closeReason));
    QCOMPARE(ended.count, 1);
    QCOMPARE(ended.code, CloseCode::ConnectionLost);
    QCOMPARE(ended.reason, QStringLiteral("executor tunnel dropped"));
    WAIT_FOR(relay.idle());
    QCOMPARE(relay.lab.hub->channelCount(), 0);
    QCOMPARE(relay.lab.daemon->channelCount(), 0);
}

void TestChannelSplice::aResumableSidesCloseReachesTheOtherAsLost_data()
{
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("reason");
    QTest::newRow("a normal close (the forwarder stopping)")
        << int(CloseCode::Normal) << QStringLiteral("the device's port was removed");
    QTest::newRow("a refusal") << int(CloseCode::Refused) << QStringLiteral("not now");
    QTest::newRow("no reason") << int(CloseCode::Normal) << QString();
}

void TestChannelSplice::aResumableSidesCloseReachesTheOtherAsLost()
{
    QFETCH(int, code);
    QFETCH(QString, reason);
    Relay relay;
    QVERIFY(relay.openBothAndWaitAccepted());
    ChannelSplice splice(relay.hubA, relay.hubB);
    splice.setAResumable(true);
    EndedLog ended(&splice);
    relay.forwarder.send(pattern(64 * 1024, 11));
    WAIT_FOR(relay.agent.received.size() > 0);

    // When the forwarder's end closes, however it does,
    relay.forwarder.channel()->close(static_cast<CloseCode>(code), reason);

    // the agent hears that a link went, not that the stream is over, and
    // is told the device's end may come back.
    WAIT_FOR(relay.agent.closeCount == 1);
    NO_PROBLEMS(relay);
    QCOMPARE(relay.agent.closeCode, CloseCode::ConnectionLost);
    QVERIFY2(relay.agent.closeReason.contains(QLatin1String("may come back"))
            && relay.agent.closeReason.contains(reason),
        qPrintable(relay.agent.closeReason));
    QCOMPARE(ended.count, 1);
    QCOMPARE(ended.code, CloseCode::ConnectionLost);
    WAIT_FOR(relay.idle());
    QCOMPARE(relay.exec.hub->channelCount(), 0);
    QCOMPARE(relay.agent.closeCount, 1);
}

void TestChannelSplice::aResumableSidesDeviceGoneIsPassedOnAsItCame()
{
    Relay relay;
    QVERIFY(relay.openBothAndWaitAccepted());
    ChannelSplice splice(relay.hubA, relay.hubB);
    splice.setAResumable(true);
    EndedLog ended(&splice);
    relay.forwarder.channel()->close(CloseCode::DeviceGone, QStringLiteral("unplugged"));
    WAIT_FOR(relay.agent.closeCount == 1);
    QCOMPARE(relay.agent.closeCode, CloseCode::DeviceGone);
    QCOMPARE(relay.agent.closeReason, QStringLiteral("unplugged"));
    // Only A resumes: the agent's end closing normally is passed on as it is.
    Relay other;
    QVERIFY(other.openBothAndWaitAccepted());
    ChannelSplice second(other.hubA, other.hubB);
    second.setAResumable(true);
    other.agent.send(pattern(1024, 12), QStringLiteral("run done"));
    WAIT_FOR(other.forwarder.closeCount == 1);
    QCOMPARE(other.forwarder.closeCode, CloseCode::Normal);
    QCOMPARE(other.forwarder.closeReason, QStringLiteral("run done"));
    QCOMPARE(other.forwarder.received.size(), 1024);
}

void TestChannelSplice::destroyedMultiplexerCountsAsLost()
{
    Relay relay;
    QVERIFY(relay.openBothAndWaitAccepted());
    ChannelSplice splice(relay.hubA, relay.hubB);
    EndedLog ended(&splice);

    // When the hub's multiplexer for the lab goes away without closing
    // anything (the channel is deleted with it),
    relay.lab.destroyHub();
    QVERIFY(!relay.hubA);

    // then the agent's channel closes with ConnectionLost.
    WAIT_FOR(relay.agent.closeCount == 1);
    QCOMPARE(relay.agent.closeCode, CloseCode::ConnectionLost);
    QVERIFY(relay.agent.closeReason.contains(QStringLiteral("other end")));
    QCOMPARE(ended.count, 1);
    QCOMPARE(ended.code, CloseCode::ConnectionLost);
    WAIT_FOR(relay.exec.idle());
    QCOMPARE(relay.exec.hub->channelCount(), 0);
}

void TestChannelSplice::deletingTheSpliceClosesBoth()
{
    Relay relay;
    QVERIFY(relay.openBothAndWaitAccepted());
    auto splice = std::make_unique<ChannelSplice>(relay.hubA, relay.hubB);
    bool endedEmitted = false;
    QObject::connect(splice.get(), &ChannelSplice::ended, [&] { endedEmitted = true; });
    relay.forwarder.send(QByteArrayLiteral("hello agent"));
    WAIT_FOR(relay.agent.received == QByteArrayLiteral("hello agent"));

    splice.reset();

    WAIT_FOR(relay.forwarder.closeCount == 1 && relay.agent.closeCount == 1 && relay.idle());
    NO_PROBLEMS(relay);
    QCOMPARE(relay.forwarder.closeCode, CloseCode::Normal);
    QCOMPARE(relay.agent.closeCode, CloseCode::Normal);
    QCOMPARE(relay.lab.hub->channelCount(), 0);
    QCOMPARE(relay.exec.hub->channelCount(), 0);
    QVERIFY(!endedEmitted);
}

void TestChannelSplice::deletingFromEndedIsSafe()
{
    Relay relay;
    QVERIFY(relay.openBothAndWaitAccepted());
    // ended() comes from deep inside a channel's closed() here; the owner
    // deleting the splice right there must not pull it from under itself.
    QPointer<ChannelSplice> splice = new ChannelSplice(relay.hubA, relay.hubB);
    int endedCount = 0;
    QObject::connect(splice.data(), &ChannelSplice::ended, splice.data(), [&] {
        ++endedCount;
        delete splice.data();
    });
    relay.forwarder.send(pattern(kMiB, 10));
    relay.agent.send(pattern(kMiB, 11));
    WAIT_FOR(relay.forwarder.received.size() > 0);

    relay.agent.channel()->close(CloseCode::Overflow, QStringLiteral("agent fell behind"));

    WAIT_FOR(relay.forwarder.closeCount == 1 && relay.idle());
    NO_PROBLEMS(relay);
    QVERIFY(!splice);
    QCOMPARE(endedCount, 1);
    QCOMPARE(relay.forwarder.closeCode, CloseCode::Overflow);
    QCOMPARE(relay.forwarder.closeReason, QStringLiteral("agent fell behind"));
}

void TestChannelSplice::endClosesBothWithTheCode()
{
    Relay relay;
    QVERIFY(relay.openBothAndWaitAccepted());
    ChannelSplice splice(relay.hubA, relay.hubB);
    EndedLog ended(&splice);

    const QString reason = QStringLiteral("lab reclaimed by its owner");
    splice.end(CloseCode::DeviceGone, reason);
    QCOMPARE(ended.count, 1);
    QCOMPARE(ended.code, CloseCode::DeviceGone);
    QVERIFY(splice.isEnded());
    splice.end(CloseCode::Normal, QStringLiteral("again"));

    WAIT_FOR(relay.forwarder.closeCount == 1 && relay.agent.closeCount == 1 && relay.idle());
    for (const Endpoint *daemon : { &relay.forwarder, &relay.agent }) {
        QCOMPARE(daemon->closeCode, CloseCode::DeviceGone);
        QCOMPARE(daemon->closeReason, reason);
    }
    QCOMPARE(ended.count, 1);
}

void TestChannelSplice::bytesWaitingBeforeTheSpliceAreForwarded()
{
    Relay relay;
    QVERIFY(relay.openBothAndWaitAccepted());
    // Given both daemons wrote before the hub joined their channels,
    relay.forwarder.send(QByteArrayLiteral("early from lab"));
    relay.agent.send(QByteArrayLiteral("early from exec"));
    WAIT_FOR(relay.idle());
    QCOMPARE(relay.hubA->bytesAvailable(), qsizetype(14));

    // then the splice forwards them without waiting for more.
    ChannelSplice splice(relay.hubA, relay.hubB);
    WAIT_FOR(relay.agent.received == QByteArrayLiteral("early from lab")
        && relay.forwarder.received == QByteArrayLiteral("early from exec"));
}

void TestChannelSplice::spliceBeforeAcceptance()
{
    Relay relay;
    // Given the executor's tunnel is slow to deliver the hub's open,
    relay.exec.toDaemon->hold();
    auto b = relay.exec.hub->openChannel(QJsonObject {});
    QVERIFY(b.ok());
    relay.hubB = *b;
    auto a = relay.lab.hub->openChannel(QJsonObject {});
    QVERIFY(a.ok());
    relay.hubA = *a;
    const auto openOnTheHub = [&] {
        const Channel *hubA = relay.hubA.data();
        return !relay.lab.requested.isEmpty() && hubA && hubA->state() == Channel::State::Open;
    };
    WAIT_FOR(openOnTheHub());

    // when the hub splices at once and the forwarder sends, then closes,
    ChannelSplice splice(relay.hubA, relay.hubB);
    EndedLog ended(&splice);
    const QByteArray bytes = pattern(300 * 1024, 9);
    relay.forwarder.send(bytes, QStringLiteral("short capture"));

    // then the bytes wait in B, and so does the close, not dropping them,
    WAIT_FOR(relay.lab.idle() && relay.lab.hub->channelCount() == 0);
    QCOMPARE(relay.hubB->state(), Channel::State::Opening);
    QVERIFY(relay.hubB->queuedBytes() > 0);
    QCOMPARE(ended.count, 0);

    // and once the agent takes the channel, all of it arrives, then the close.
    relay.exec.toDaemon->release();
    WAIT_FOR(relay.agent.closeCount == 1);
    NO_PROBLEMS(relay);
    QCOMPARE(relay.agent.closeCode, CloseCode::Normal);
    QCOMPARE(relay.agent.closeReason, QStringLiteral("short capture"));
    QVERIFY2(relay.agent.received == bytes, "bytes arrived altered");
    QCOMPARE(ended.count, 1);
}

void TestChannelSplice::refusalIsPassedOn()
{
    Relay relay;
    relay.exec.refusal = QStringLiteral("no TAP for this run");
    auto a = relay.lab.hub->openChannel(QJsonObject {});
    auto b = relay.exec.hub->openChannel(QJsonObject {});
    QVERIFY(a.ok() && b.ok());
    relay.hubA = *a;
    relay.hubB = *b;
    WAIT_FOR(!relay.lab.requested.isEmpty());

    ChannelSplice splice(relay.hubA, relay.hubB);
    EndedLog ended(&splice);

    WAIT_FOR(relay.forwarder.closeCount == 1);
    QCOMPARE(relay.forwarder.closeCode, CloseCode::Refused);
    QCOMPARE(relay.forwarder.closeReason, QStringLiteral("no TAP for this run"));
    QCOMPARE(ended.count, 1);
    QCOMPARE(ended.code, CloseCode::Refused);
}

void TestChannelSplice::goneChannelAtSpliceTimeEndsIt()
{
    Relay relay;
    QVERIFY(relay.openBothAndWaitAccepted());
    relay.hubA->close(CloseCode::DeviceGone, QStringLiteral("gone before the splice"));

    // Given one channel closed before the splice was made (so its closed()
    // was missed), then the other side is closed, on a later turn, not
    // from inside the constructor.
    ChannelSplice splice(relay.hubA, relay.hubB);
    EndedLog ended(&splice);
    QCOMPARE(ended.count, 0);
    WAIT_FOR(relay.agent.closeCount == 1);
    QCOMPARE(relay.agent.closeCode, CloseCode::ConnectionLost);
    QCOMPARE(ended.count, 1);
    QCOMPARE(ended.code, CloseCode::ConnectionLost);
}

QTEST_GUILESS_MAIN(TestChannelSplice)
#include "tst_channelsplice.moc"
