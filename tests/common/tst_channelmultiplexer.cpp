// Unit tests of the channel multiplexer (common/tunnel/channelmultiplexer.h):
// a daemon side and a hub side wired back to back through in-test pipes that
// carry frames only when the test pumps them, the way the tunnel's WebSocket
// would, but without recursion and without timing.

#include "common/tunnel/channelmultiplexer.h"

#include <QJsonObject>
#include <QPointer>
#include <QQueue>
#include <QRandomGenerator>
#include <QSignalSpy>
#include <QTest>

#include <functional>
#include <optional>
#include <vector>

using namespace cloop;
using namespace cloop::tunnel;
using protocol::ChannelFrame;
using protocol::CloseCode;
using protocol::FrameKind;

namespace {

// One direction of the transport. Frames queue up when emitted and reach the
// other multiplexer when the test pumps; every frame is also decoded and
// counted so tests can check what crossed the wire.
class Pipe final : public QObject
{
    Q_OBJECT

public:
    Pipe(ChannelMultiplexer *from, ChannelMultiplexer *to)
        : m_to(to)
    {
        connect(from, &ChannelMultiplexer::frameReady, this, &Pipe::enqueue);
    }

    bool isEmpty() const { return m_queue.isEmpty(); }
    qsizetype pending() const { return m_queue.size(); }

    // Delivers the frames queued now; returns how many.
    int deliverQueued()
    {
        int delivered = 0;
        for (qsizetype n = m_queue.size(); n > 0; --n) {
            const QByteArray frame = m_queue.dequeue();
            const Status status = m_to->handleFrame(frame);
            if (!status.ok())
                errors.append(status.error());
            ++delivered;
        }
        return delivered;
    }

    // Records, at every DATA frame that enters the pipe, how many payload
    // bytes of that channel are between the writer and the reader's read().
    void watchInFlight(quint32 channel, std::function<qint64()> readSoFar)
    {
        m_readers.insert(channel, std::move(readSoFar));
    }
    qint64 maxInFlight(quint32 channel) const { return m_maxInFlight.value(channel); }
    qint64 dataBytes(quint32 channel) const { return m_dataBytes.value(channel); }
    int count(FrameKind kind, quint32 channel) const
    {
        int n = 0;
        for (const ChannelFrame &f : frames)
            n += (f.kind == kind && f.channel == channel) ? 1 : 0;
        return n;
    }

    QList<ChannelFrame> frames; // everything that entered, decoded
    QList<Error> errors; // what the receiving multiplexer refused

private:
    void enqueue(const QByteArray &encoded)
    {
        m_queue.enqueue(encoded);
        const auto frame = protocol::decodeFrame(encoded);
        if (!frame.ok()) {
            errors.append(Error::make(QStringLiteral("test_pipe"),
                QStringLiteral("multiplexer emitted a malformed frame: ") + frame.error().message));
            return;
        }
        frames.append(*frame);
        if (frame->kind == FrameKind::Data) {
            const qint64 total = (m_dataBytes[frame->channel] += frame->payload.size());
            if (const auto reader = m_readers.value(frame->channel)) {
                qint64 &max = m_maxInFlight[frame->channel];
                max = std::max(max, total - reader());
            }
        }
    }

    ChannelMultiplexer *m_to;
    QQueue<QByteArray> m_queue;
    QHash<quint32, qint64> m_dataBytes;
    QHash<quint32, qint64> m_maxInFlight;
    QHash<quint32, std::function<qint64()>> m_readers;
};

// A daemon-side and a hub-side multiplexer joined by two pipes.
struct Link
{
    explicit Link(
        ChannelMultiplexer::Limits daemonLimits = {}, ChannelMultiplexer::Limits hubLimits = {})
        : daemon(ChannelMultiplexer::Side::Daemon, daemonLimits)
        , hub(ChannelMultiplexer::Side::Hub, hubLimits)
        , toHub(&daemon, &hub)
        , toDaemon(&hub, &daemon)
    { }

    // Carries frames both ways until nothing is left in flight. Returns a
    // description of what went wrong, or an empty string.
    QString pump(int maxFrames = 1'000'000)
    {
        int delivered = 0;
        while (!toHub.isEmpty() || !toDaemon.isEmpty()) {
            delivered += toHub.deliverQueued();
            delivered += toDaemon.deliverQueued();
            if (delivered > maxFrames)
                return QStringLiteral("frames still flowing after %1 deliveries").arg(delivered);
        }
        for (const Pipe *pipe : { &toHub, &toDaemon }) {
            if (!pipe->errors.isEmpty())
                return QStringLiteral("%1: %2").arg(
                    pipe->errors.first().code, pipe->errors.first().message);
        }
        return {};
    }

    ChannelMultiplexer daemon;
    ChannelMultiplexer hub;
    Pipe toHub;
    Pipe toDaemon;
};

#define PUMP(link)                                                                                 \
    do {                                                                                           \
        const QString pumpProblem = (link).pump();                                                 \
        QVERIFY2(pumpProblem.isEmpty(), qPrintable(pumpProblem));                                  \
    } while (false)

// Accepts every channel the peer opens and remembers them in order.
struct Acceptor
{
    explicit Acceptor(ChannelMultiplexer &mux, bool accept = true)
    {
        QObject::connect(
            &mux, &ChannelMultiplexer::channelRequested, &mux, [this, accept](Channel *channel) {
                requested.append(channel);
                if (accept)
                    channel->accept();
            });
    }
    QList<QPointer<Channel>> requested;
};

// What a channel's closed() said, and how much had been read by then.
struct CloseLog
{
    void watch(Channel *channel, QByteArray *received = nullptr)
    {
        QObject::connect(channel, &Channel::closed, channel,
            [this, channel, received](CloseCode c, const QString &r) {
                ++count;
                code = c;
                reason = r;
                if (received)
                    *received += channel->readAll();
                receivedAtClose = received ? received->size() : -1;
            });
    }
    int count = 0;
    std::optional<CloseCode> code;
    QString reason;
    qsizetype receivedAtClose = -1;
};

QByteArray randomBytes(qsizetype size, quint32 seed)
{
    QRandomGenerator rng(seed);
    QByteArray bytes(size, Qt::Uninitialized);
    for (qsizetype i = 0; i < size; ++i)
        bytes[i] = static_cast<char>(rng.bounded(256));
    return bytes;
}

QByteArray frame(const ChannelFrame &f)
{
    return protocol::encodeFrame(f);
}

QJsonObject meta(const QString &what)
{
    return QJsonObject { { QStringLiteral("open"), what } };
}

} // namespace

class TestChannelMultiplexer final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void openAcceptAndDataBothWays();
    void bytesWrittenBeforeAcceptFollowIt();
    void channelIdParity();
    void bulkTransferIsByteExact_data();
    void bulkTransferIsByteExact();
    void refusalReachesOpener();
    void noReceiverRefusesPeerOpens();
    void unhandledRequestIsRefusedOnReturnToEventLoop();
    void normalCloseFlushesQueuedBytesFirst();
    void abortiveCloseDropsQueuedBytes();
    void peerCloseIsNotEchoed();
    void readerThatNeverReadsBoundsWhatIsInFlight();
    void perConnectionCapAcrossTwoChannels();
    void connectionCapReleaseWakesOtherChannel();
    void simultaneousNormalCloseWithBacklog();
    void peerExceedingWindowIsError();
    void dataBeforeAcceptIsError();
    void openWithOwnParityIsError();
    void unexpectedAcceptAndCreditOverflowAreErrors();
    void framesForClosedChannelsAreDropped();
    void normalCloseStillReceivesInFlightData();
    void maxChannelsEnforced();
    void oversizeMetadataRefusedLocally();
    void closeAllClosesEveryChannel();
};

void TestChannelMultiplexer::openAcceptAndDataBothWays()
{
    Link link;
    Acceptor hubSide(link.hub);
    Acceptor daemonSide(link.daemon);

    // Given the daemon opens a channel with metadata,
    const QJsonObject metadata { { QStringLiteral("kind"), QStringLiteral("usbip") },
        { QStringLiteral("busid"), QStringLiteral("1-1.4") } };
    auto opened = link.daemon.openChannel(metadata);
    QVERIFY(opened.ok());
    QPointer<Channel> d = *opened;
    QCOMPARE(d->state(), Channel::State::Opening);
    QSignalSpy dOpened(d.data(), &Channel::opened);
    PUMP(link);

    // then the hub sees it with the same number and metadata and accepts it,
    QCOMPARE(hubSide.requested.size(), 1);
    QPointer<Channel> h = hubSide.requested.first();
    QVERIFY(h);
    QCOMPARE(h->id(), d->id());
    QCOMPARE(h->metadata(), metadata);
    QCOMPARE(h->state(), Channel::State::Open);
    QCOMPARE(d->state(), Channel::State::Open);
    QCOMPARE(dOpened.count(), 1);
    QCOMPARE(link.toHub.count(FrameKind::Open, d->id()), 1);
    QCOMPARE(link.toDaemon.count(FrameKind::Accept, d->id()), 1);

    // and bytes flow both ways.
    QSignalSpy hReady(h.data(), &Channel::readyRead);
    QSignalSpy dReady(d.data(), &Channel::readyRead);
    QVERIFY(d->write(QByteArrayLiteral("ping from daemon")));
    QVERIFY(h->write(QByteArrayLiteral("pong from hub")));
    PUMP(link);
    QVERIFY(hReady.count() >= 1);
    QVERIFY(dReady.count() >= 1);
    QCOMPARE(h->bytesAvailable(), qsizetype(16));
    QCOMPARE(h->read(4), QByteArrayLiteral("ping"));
    QCOMPARE(h->readAll(), QByteArrayLiteral(" from daemon"));
    QCOMPARE(d->readAll(), QByteArrayLiteral("pong from hub"));
    QCOMPARE(d->bytesWritten(), quint64(16));
    QCOMPARE(h->bytesReceived(), quint64(16));
    QCOMPARE(h->bytesWritten(), quint64(13));
    QCOMPARE(d->bytesReceived(), quint64(13));

    // And the hub may open towards the daemon just the same.
    auto reverse = link.hub.openChannel(meta(QStringLiteral("reverse")));
    QVERIFY(reverse.ok());
    QPointer<Channel> hr = *reverse;
    PUMP(link);
    QCOMPARE(daemonSide.requested.size(), 1);
    QPointer<Channel> dr = daemonSide.requested.first();
    QCOMPARE(dr->metadata(), meta(QStringLiteral("reverse")));
    QCOMPARE(hr->state(), Channel::State::Open);
    QVERIFY(hr->write(QByteArrayLiteral("hub-opened")));
    QVERIFY(dr->write(QByteArrayLiteral("daemon-answer")));
    PUMP(link);
    QCOMPARE(dr->readAll(), QByteArrayLiteral("hub-opened"));
    QCOMPARE(hr->readAll(), QByteArrayLiteral("daemon-answer"));
    QCOMPARE(link.daemon.channelCount(), 2);
    QCOMPARE(link.hub.channelCount(), 2);
    QCOMPARE(link.daemon.channel(hr->id()), dr.data());
}

void TestChannelMultiplexer::bytesWrittenBeforeAcceptFollowIt()
{
    Link link;
    Acceptor hubSide(link.hub, false); // accept later, by hand

    auto opened = link.daemon.openChannel(meta(QStringLiteral("early")));
    QVERIFY(opened.ok());
    QPointer<Channel> d = *opened;
    // Given bytes written while the channel is still opening,
    QVERIFY(d->write(QByteArrayLiteral("early bytes")));
    QCOMPARE(d->queuedBytes(), qsizetype(11));
    PUMP(link);
    // then nothing but the OPEN crossed,
    QCOMPARE(link.toHub.count(FrameKind::Data, d->id()), 0);
    QCOMPARE(hubSide.requested.size(), 1);
    QPointer<Channel> h = hubSide.requested.first();
    QCOMPARE(h->state(), Channel::State::Opening);

    // and once accepted, they arrive.
    h->accept();
    PUMP(link);
    QCOMPARE(d->queuedBytes(), qsizetype(0));
    QCOMPARE(link.daemon.queuedBytes(), qsizetype(0));
    QCOMPARE(h->readAll(), QByteArrayLiteral("early bytes"));
    QCOMPARE(link.toHub.count(FrameKind::Data, d->id()), 1);
}

void TestChannelMultiplexer::channelIdParity()
{
    Link link;
    Acceptor hubSide(link.hub);
    Acceptor daemonSide(link.daemon);

    // Given both sides open channels at the same moment, before any frame crossed,
    QList<quint32> daemonIds, hubIds;
    for (int i = 0; i < 3; ++i) {
        auto d = link.daemon.openChannel(meta(QStringLiteral("d%1").arg(i)));
        auto h = link.hub.openChannel(meta(QStringLiteral("h%1").arg(i)));
        QVERIFY(d.ok() && h.ok());
        daemonIds.append((*d)->id());
        hubIds.append((*h)->id());
    }
    // then daemon numbers are odd, hub numbers even, and nothing collides.
    QCOMPARE(daemonIds, (QList<quint32> { 1, 3, 5 }));
    QCOMPARE(hubIds, (QList<quint32> { 2, 4, 6 }));
    PUMP(link);
    QCOMPARE(link.daemon.channelCount(), 6);
    QCOMPARE(link.hub.channelCount(), 6);
    for (quint32 id = 1; id <= 6; ++id) {
        QVERIFY(link.daemon.channel(id));
        QVERIFY(link.hub.channel(id));
        QCOMPARE(link.daemon.channel(id)->state(), Channel::State::Open);
        QCOMPARE(link.hub.channel(id)->state(), Channel::State::Open);
        QCOMPARE(link.daemon.channel(id)->metadata(), link.hub.channel(id)->metadata());
    }
}

void TestChannelMultiplexer::bulkTransferIsByteExact_data()
{
    QTest::addColumn<qsizetype>("toHubSize");
    QTest::addColumn<qsizetype>("toDaemonSize");
    QTest::addColumn<quint32>("seed");

    QTest::newRow("daemon to hub, 4 MiB") << qsizetype(4 << 20) << qsizetype(0) << 1u;
    QTest::newRow("hub to daemon, 4 MiB") << qsizetype(0) << qsizetype(4 << 20) << 2u;
    QTest::newRow("both ways at once, 3 MiB + 5 MB")
        << qsizetype(3 << 20) << qsizetype(5'000'001) << 3u;
}

void TestChannelMultiplexer::bulkTransferIsByteExact()
{
    QFETCH(qsizetype, toHubSize);
    QFETCH(qsizetype, toDaemonSize);
    QFETCH(quint32, seed);

    Link link;
    Acceptor hubSide(link.hub);
    auto opened = link.daemon.openChannel(meta(QStringLiteral("bulk")));
    QVERIFY(opened.ok());
    QPointer<Channel> d = *opened;
    PUMP(link);
    QPointer<Channel> h = hubSide.requested.value(0);
    QVERIFY(h);

    struct Direction
    {
        QPointer<Channel> writer;
        QPointer<Channel> reader;
        QByteArray source;
        qsizetype written = 0;
        QByteArray received;
    };
    Direction down { d, h, randomBytes(toHubSize, seed), 0, {} };
    Direction up { h, d, randomBytes(toDaemonSize, seed + 100), 0, {} };
    link.toHub.watchInFlight(d->id(), [&] { return qint64(down.received.size()); });
    link.toDaemon.watchInFlight(h->id(), [&] { return qint64(up.received.size()); });

    // When both sides write random-sized pieces as fast as they are let and
    // read random-sized pieces,
    QRandomGenerator rng(seed);
    int rounds = 0;
    while (down.received.size() < down.source.size() || up.received.size() < up.source.size()) {
        QVERIFY2(++rounds < 100'000, "transfer does not make progress");
        for (Direction *dir : { &down, &up }) {
            for (int i = 0; i < 4 && dir->written < dir->source.size(); ++i) {
                const qsizetype n = std::min<qsizetype>(
                    rng.bounded(1, 150'000), dir->source.size() - dir->written);
                if (!dir->writer->write(dir->source.mid(dir->written, n)))
                    break; // all or nothing: try again after the next pump
                dir->written += n;
            }
            QVERIFY(dir->writer->queuedBytes() <= link.daemon.limits().maxQueuedPerChannel);
        }
        PUMP(link);
        for (Direction *dir : { &down, &up })
            dir->received += dir->reader->read(rng.bounded(1, 300'000));
    }

    // then every byte arrives once, in order,
    for (const Direction *dir : { &down, &up }) {
        QCOMPARE(dir->received.size(), dir->source.size());
        QVERIFY2(dir->received == dir->source, "received bytes differ from the sent ones");
        QCOMPARE(dir->reader->bytesReceived(), quint64(dir->source.size()));
        QCOMPARE(dir->writer->bytesWritten(), quint64(dir->source.size()));
    }
    // no DATA frame was larger than the protocol allows, and no side ever had
    // more than the window unread in flight.
    for (const Pipe *pipe : { &link.toHub, &link.toDaemon }) {
        for (const ChannelFrame &f : pipe->frames)
            QVERIFY(f.payload.size() <= protocol::kMaxDataPayload);
    }
    QVERIFY(link.toHub.maxInFlight(d->id()) <= link.hub.limits().receiveWindow);
    QVERIFY(link.toDaemon.maxInFlight(h->id()) <= link.daemon.limits().receiveWindow);
    QCOMPARE(link.daemon.queuedBytes(), qsizetype(0));
    QCOMPARE(link.hub.queuedBytes(), qsizetype(0));
}

void TestChannelMultiplexer::refusalReachesOpener()
{
    Link link;
    QObject::connect(&link.hub, &ChannelMultiplexer::channelRequested, &link.hub,
        [](Channel *channel) { channel->refuse(QStringLiteral("no such device")); });

    auto opened = link.daemon.openChannel(meta(QStringLiteral("x")));
    QVERIFY(opened.ok());
    QPointer<Channel> d = *opened;
    CloseLog log;
    log.watch(d);
    QSignalSpy dOpened(d.data(), &Channel::opened);
    PUMP(link);

    // Then the opener hears Refused with the reason, and both sides forget it.
    QCOMPARE(log.count, 1);
    QCOMPARE(log.code, CloseCode::Refused);
    QCOMPARE(log.reason, QStringLiteral("no such device"));
    QCOMPARE(dOpened.count(), 0);
    QCOMPARE(d->state(), Channel::State::Closed);
    QCOMPARE(link.daemon.channelCount(), 0);
    QCOMPARE(link.hub.channelCount(), 0);
    QVERIFY(!d->write(QByteArrayLiteral("late")));
}

void TestChannelMultiplexer::noReceiverRefusesPeerOpens()
{
    Link link; // nothing connected to the hub's channelRequested

    auto opened = link.daemon.openChannel(meta(QStringLiteral("x")));
    QVERIFY(opened.ok());
    CloseLog log;
    log.watch(*opened);
    PUMP(link);
    QCOMPARE(log.count, 1);
    QCOMPARE(log.code, CloseCode::Refused);
    QVERIFY(!log.reason.isEmpty());
    QCOMPARE(link.hub.channelCount(), 0);
    QCOMPARE(link.daemon.channelCount(), 0);
}

void TestChannelMultiplexer::unhandledRequestIsRefusedOnReturnToEventLoop()
{
    // The header promises: "Unhandled channels are refused when control
    // returns to the event loop."
    Link link;
    Acceptor hubSide(link.hub, false); // listens, but neither accepts nor refuses

    auto opened = link.daemon.openChannel(meta(QStringLiteral("x")));
    QVERIFY(opened.ok());
    CloseLog log;
    log.watch(*opened);
    PUMP(link);
    QCOMPARE(hubSide.requested.size(), 1);

    // When control returns to the event loop (and frames keep moving),
    QTRY_VERIFY_WITH_TIMEOUT((link.pump(), log.code.has_value()), 5000);
    // then the opener hears Refused.
    QCOMPARE(log.code, CloseCode::Refused);
}

void TestChannelMultiplexer::normalCloseFlushesQueuedBytesFirst()
{
    ChannelMultiplexer::Limits small;
    small.receiveWindow = 4096;
    Link link({}, small);
    Acceptor hubSide(link.hub);

    auto opened = link.daemon.openChannel(meta(QStringLiteral("x")));
    QVERIFY(opened.ok());
    QPointer<Channel> d = *opened;
    PUMP(link);
    QPointer<Channel> h = hubSide.requested.value(0);
    QVERIFY(h);

    QByteArray received;
    QObject::connect(h, &Channel::readyRead, h, [&] { received += h->readAll(); });
    CloseLog hubLog, daemonLog;
    hubLog.watch(h, &received);
    daemonLog.watch(d);

    // Given many windows' worth of bytes queued, and a normal close right after,
    const QByteArray payload = randomBytes(50'000, 7);
    QVERIFY(d->write(payload));
    QVERIFY(d->queuedBytes() > 0);
    d->close(CloseCode::Normal, QStringLiteral("done"));
    QCOMPARE(d->state(), Channel::State::Closing);
    QCOMPARE(daemonLog.count, 0);
    // (a closing channel takes no more bytes)
    QVERIFY(!d->write(QByteArrayLiteral("more")));

    PUMP(link);

    // then every byte arrives before the close does,
    QCOMPARE(hubLog.count, 1);
    QCOMPARE(hubLog.code, CloseCode::Normal);
    QCOMPARE(hubLog.reason, QStringLiteral("done"));
    QCOMPARE(hubLog.receivedAtClose, payload.size());
    QVERIFY(received == payload);
    // the CLOSE is the last frame of that channel on the wire,
    QCOMPARE(link.toHub.frames.last().kind, FrameKind::Close);
    QCOMPARE(link.toHub.dataBytes(d->id()), qint64(payload.size()));
    // and the closer hears its own close once everything went out.
    QCOMPARE(daemonLog.count, 1);
    QCOMPARE(daemonLog.code, CloseCode::Normal);
    QCOMPARE(link.daemon.channelCount(), 0);
    QCOMPARE(link.hub.channelCount(), 0);
    QCOMPARE(link.daemon.queuedBytes(), qsizetype(0));
}

void TestChannelMultiplexer::abortiveCloseDropsQueuedBytes()
{
    ChannelMultiplexer::Limits small;
    small.receiveWindow = 4096;
    Link link({}, small);
    Acceptor hubSide(link.hub);

    auto opened = link.daemon.openChannel(meta(QStringLiteral("x")));
    QPointer<Channel> d = *opened;
    PUMP(link);
    QPointer<Channel> h = hubSide.requested.value(0);
    QByteArray received;
    CloseLog hubLog;
    hubLog.watch(h, &received);

    QVERIFY(d->write(randomBytes(50'000, 8)));
    QCOMPARE(link.daemon.queuedBytes(), qsizetype(50'000 - 4096));
    // When closed with a code other than Normal, the queue is dropped at once.
    d->close(CloseCode::DeviceGone, QStringLiteral("unplugged"));
    QCOMPARE(d->state(), Channel::State::Closed);
    QCOMPARE(link.daemon.queuedBytes(), qsizetype(0));
    PUMP(link);
    QCOMPARE(hubLog.code, CloseCode::DeviceGone);
    QCOMPARE(hubLog.reason, QStringLiteral("unplugged"));
    QCOMPARE(received.size(), qsizetype(4096)); // only what the window had let out
}

void TestChannelMultiplexer::peerCloseIsNotEchoed()
{
    Link link;
    Acceptor hubSide(link.hub);
    auto opened = link.daemon.openChannel(meta(QStringLiteral("x")));
    QPointer<Channel> d = *opened;
    PUMP(link);
    QPointer<Channel> h = hubSide.requested.value(0);
    CloseLog daemonLog;
    daemonLog.watch(d);

    h->close(CloseCode::Overflow, QStringLiteral("too fast"));
    PUMP(link);
    QCOMPARE(daemonLog.code, CloseCode::Overflow);
    QCOMPARE(daemonLog.reason, QStringLiteral("too fast"));
    // The receiver of a CLOSE does not answer with one.
    QCOMPARE(link.toHub.count(FrameKind::Close, d->id()), 0);
    QCOMPARE(link.toDaemon.count(FrameKind::Close, d->id()), 1);
}

void TestChannelMultiplexer::readerThatNeverReadsBoundsWhatIsInFlight()
{
    Link link; // default limits: the ones production uses
    const auto &limits = link.hub.limits();
    const qint64 window = limits.receiveWindow;
    const qsizetype cap = link.daemon.limits().maxQueuedPerChannel;
    Acceptor hubSide(link.hub);

    auto opened = link.daemon.openChannel(meta(QStringLiteral("x")));
    QPointer<Channel> d = *opened;
    PUMP(link);
    QPointer<Channel> h = hubSide.requested.value(0);
    QVERIFY(h);
    qint64 readByHub = 0;
    link.toHub.watchInFlight(d->id(), [&] { return readByHub; });

    // Given a reader that never reads and a writer that writes until refused,
    const qsizetype chunk = 3000; // not a divisor of the window or the cap
    const QByteArray source = randomBytes(window + cap + 10 * chunk, 11);
    qsizetype accepted = 0;
    for (;;) {
        if (!d->write(source.mid(accepted, chunk)))
            break;
        accepted += chunk;
        QVERIFY(d->queuedBytes() <= cap);
        PUMP(link);
        QVERIFY(accepted < source.size());
    }

    // then no more than one window of DATA ever crossed,
    QCOMPARE(link.toHub.maxInFlight(d->id()), window);
    QCOMPARE(qint64(h->bytesAvailable()), window);
    // the writer was refused only once its queue would pass the cap,
    QCOMPARE(d->refusedWrites(), quint64(1));
    QVERIFY(d->queuedBytes() <= cap);
    QVERIFY(d->queuedBytes() + chunk > cap);
    QCOMPARE(d->writableBytes(), cap - d->queuedBytes());
    QCOMPARE(qint64(accepted), window + d->queuedBytes());
    QCOMPARE(d->sendCredit(), 0u);
    // and each further refusal is counted and changes nothing.
    const qsizetype queued = d->queuedBytes();
    for (int i = 0; i < 3; ++i)
        QVERIFY(!d->write(source.mid(accepted, chunk)));
    QCOMPARE(d->refusedWrites(), quint64(4));
    QCOMPARE(d->queuedBytes(), queued);
    PUMP(link);
    QCOMPARE(link.toHub.dataBytes(d->id()), window);
    QCOMPARE(link.toDaemon.count(FrameKind::Credit, d->id()), 0);
    // All or nothing: what still fits is taken, one byte more is not.
    const qsizetype room = d->writableBytes();
    QVERIFY(room < chunk);
    QVERIFY(!d->write(source.mid(accepted, room + 1)));
    QCOMPARE(d->queuedBytes(), queued);
    QVERIFY(d->write(source.mid(accepted, room)));
    accepted += room;
    QCOMPARE(d->queuedBytes(), cap);
    QCOMPARE(d->writableBytes(), qsizetype(0));

    // When the reader starts reading,
    QSignalSpy writable(d.data(), &Channel::writable);
    QByteArray received;
    int rounds = 0;
    while (received.size() < accepted) {
        QVERIFY2(++rounds < 10'000, "the rest never arrives");
        const QByteArray bytes = h->read(window / 3);
        readByHub += bytes.size();
        received += bytes;
        PUMP(link);
        // the writer keeps writing what it still has, when it is let,
        if (writable.count() > 0 && accepted < source.size()
            && d->write(source.mid(accepted, std::min(chunk, source.size() - accepted))))
            accepted += std::min(chunk, source.size() - accepted);
    }

    // then credit flows back, writable() fires, and everything arrives intact,
    QVERIFY(link.toDaemon.count(FrameKind::Credit, d->id()) > 0);
    QVERIFY(writable.count() >= 1);
    QCOMPARE(received.size(), accepted);
    QVERIFY(received == source.left(accepted));
    // still without ever exceeding one window in flight.
    QVERIFY(link.toHub.maxInFlight(d->id()) <= window);
    QCOMPARE(d->queuedBytes(), qsizetype(0));
}

void TestChannelMultiplexer::perConnectionCapAcrossTwoChannels()
{
    ChannelMultiplexer::Limits writerLimits;
    writerLimits.maxQueuedPerChannel = 64 * 1024;
    writerLimits.maxQueuedPerConnection = 96 * 1024;
    ChannelMultiplexer::Limits readerLimits;
    readerLimits.receiveWindow = 8 * 1024;
    Link link(writerLimits, readerLimits);
    Acceptor hubSide(link.hub);

    QPointer<Channel> c1 = *link.daemon.openChannel(meta(QStringLiteral("one")));
    QPointer<Channel> c2 = *link.daemon.openChannel(meta(QStringLiteral("two")));
    PUMP(link);
    QCOMPARE(hubSide.requested.size(), 2);

    auto fill = [&](Channel *c) {
        int accepted = 0;
        while (c->write(QByteArray(1024, 'x'))) {
            ++accepted;
            if (link.daemon.queuedBytes() > writerLimits.maxQueuedPerConnection || accepted > 1000)
                break;
        }
        return accepted;
    };

    // Given channel one filled to its own cap,
    const int first = fill(c1);
    PUMP(link);
    QCOMPARE(c1->queuedBytes(), writerLimits.maxQueuedPerChannel);
    QCOMPARE(first, (8 + 64));
    QCOMPARE(c1->refusedWrites(), quint64(1));
    // when channel two writes too,
    const int second = fill(c2);
    PUMP(link);
    // then the connection cap stops it before its own cap,
    QCOMPARE(link.daemon.queuedBytes(), writerLimits.maxQueuedPerConnection);
    QCOMPARE(
        c2->queuedBytes(), writerLimits.maxQueuedPerConnection - writerLimits.maxQueuedPerChannel);
    QCOMPARE(second, 8 + 32);
    QCOMPARE(c2->refusedWrites(), quint64(1));
    QCOMPARE(c2->writableBytes(), qsizetype(0));
    QCOMPARE(c1->writableBytes(), qsizetype(0));
    // and the window still bounds what crossed on each.
    QCOMPARE(link.toHub.dataBytes(c1->id()), qint64(8 * 1024));
    QCOMPARE(link.toHub.dataBytes(c2->id()), qint64(8 * 1024));

    // When channel one's reader drains everything,
    Channel *r1 = hubSide.requested[0];
    qsizetype drained = 0;
    for (int i = 0; i < 1000 && c1->queuedBytes() > 0; ++i) {
        drained += r1->readAll().size();
        PUMP(link);
    }
    drained += r1->readAll().size();
    // then its bytes all arrived and channel two has room again.
    QCOMPARE(drained, qsizetype(first) * 1024);
    QCOMPARE(link.daemon.queuedBytes(), c2->queuedBytes());
    QCOMPARE(c2->writableBytes(), writerLimits.maxQueuedPerChannel - c2->queuedBytes());
    QVERIFY(c2->write(QByteArray(1024, 'y')));
}

void TestChannelMultiplexer::connectionCapReleaseWakesOtherChannel()
{
    // Channel two is refused because channel one holds the whole connection
    // allowance. A stream writer then waits for writable() on channel two
    // ("stream-shaped traffic waits for writable()").
    ChannelMultiplexer::Limits writerLimits;
    writerLimits.maxQueuedPerChannel = 64 * 1024;
    writerLimits.maxQueuedPerConnection = 32 * 1024;
    ChannelMultiplexer::Limits readerLimits;
    readerLimits.receiveWindow = 8 * 1024;
    Link link(writerLimits, readerLimits);
    Acceptor hubSide(link.hub);
    // Both stay open throughout: plain pointers.
    Channel *c1 = *link.daemon.openChannel(meta(QStringLiteral("one")));
    Channel *c2 = *link.daemon.openChannel(meta(QStringLiteral("two")));
    QVERIFY(c1 && c2);
    PUMP(link);

    while (c1->write(QByteArray(1024, 'x')))
        QVERIFY(link.daemon.queuedBytes() <= writerLimits.maxQueuedPerConnection);
    PUMP(link);
    QCOMPARE(link.daemon.queuedBytes(), writerLimits.maxQueuedPerConnection);
    QVERIFY(!c2->write(QByteArray(1024, 'y')));
    QCOMPARE(c2->refusedWrites(), quint64(1));
    QSignalSpy c1Writable(c1, &Channel::writable);
    QSignalSpy c2Writable(c2, &Channel::writable);

    // When channel one's reader drains it,
    Channel *r1 = hubSide.requested[0];
    for (int i = 0; i < 1000 && c1->queuedBytes() > 0; ++i) {
        r1->readAll();
        PUMP(link);
    }
    QCOMPARE(c1->queuedBytes(), qsizetype(0));
    QCOMPARE(c1Writable.count(), 1);
    QCOMPARE(c2->writableBytes(), writerLimits.maxQueuedPerConnection);

    // then the refused channel two is told it may write again.
    QCOMPARE(c2Writable.count(), 1);
}

void TestChannelMultiplexer::simultaneousNormalCloseWithBacklog()
{
    // Both ends close normally at the same moment while each has more queued
    // than the other's window; both keep reading what arrives.
    ChannelMultiplexer::Limits small;
    small.receiveWindow = 4096;
    Link link(small, small);
    Acceptor hubSide(link.hub);
    QPointer<Channel> d = *link.daemon.openChannel(meta(QStringLiteral("x")));
    PUMP(link);
    QPointer<Channel> h = hubSide.requested.value(0);
    QVERIFY(h);

    QByteArray toHub, toDaemon;
    QObject::connect(h, &Channel::readyRead, h, [&] { toHub += h->readAll(); });
    QObject::connect(d, &Channel::readyRead, d, [&] { toDaemon += d->readAll(); });
    CloseLog hubLog, daemonLog;
    hubLog.watch(h, &toHub);
    daemonLog.watch(d, &toDaemon);

    QVERIFY(d->write(randomBytes(20'000, 21)));
    QVERIFY(h->write(randomBytes(20'000, 22)));
    d->close();
    h->close();
    PUMP(link);

    // Then both channels finish closing and every byte got through.
    QVERIFY(hubLog.count == 1 && daemonLog.count == 1);
    QCOMPARE(toHub.size(), qsizetype(20'000));
    QCOMPARE(toDaemon.size(), qsizetype(20'000));
}

void TestChannelMultiplexer::peerExceedingWindowIsError()
{
    ChannelMultiplexer::Limits small;
    small.receiveWindow = 1024;
    Link link({}, small);
    Acceptor hubSide(link.hub);
    QPointer<Channel> d = *link.daemon.openChannel(meta(QStringLiteral("x")));
    PUMP(link);
    const quint32 id = d->id();

    // A DATA frame larger than the whole window is a violation.
    Status status = link.hub.handleFrame(frame(ChannelFrame::data(id, QByteArray(1025, 'a'))));
    QVERIFY(!status.ok());
    QCOMPARE(status.error().code, QStringLiteral("flow_control_violation"));
    QVERIFY2(status.error().message.contains(QStringLiteral("1025 bytes with only 1024")),
        qPrintable(status.error().message));

    // So is exactly the window followed by one byte more before any credit.
    QVERIFY(link.hub.handleFrame(frame(ChannelFrame::data(id, QByteArray(1000, 'a')))).ok());
    QVERIFY(link.hub.handleFrame(frame(ChannelFrame::data(id, QByteArray(24, 'a')))).ok());
    status = link.hub.handleFrame(frame(ChannelFrame::data(id, QByteArrayLiteral("!"))));
    QVERIFY(!status.ok());
    QVERIFY2(status.error().message.contains(QStringLiteral("1 bytes with only 0")),
        qPrintable(status.error().message));

    // After the reader consumed and granted, the peer may send that much again.
    Channel *h = hubSide.requested.value(0);
    QCOMPARE(h->readAll().size(), qsizetype(1024));
    QVERIFY(link.hub.handleFrame(frame(ChannelFrame::data(id, QByteArray(1024, 'b')))).ok());
}

void TestChannelMultiplexer::dataBeforeAcceptIsError()
{
    Link link;
    Acceptor hubSide(link.hub, false);
    QPointer<Channel> d = *link.daemon.openChannel(meta(QStringLiteral("x")));
    PUMP(link);
    QCOMPARE(d->state(), Channel::State::Opening);

    // At the opener, DATA before the peer's ACCEPT:
    Status status
        = link.daemon.handleFrame(frame(ChannelFrame::data(d->id(), QByteArrayLiteral("z"))));
    QVERIFY(!status.ok());
    QCOMPARE(status.error().code, QStringLiteral("flow_control_violation"));
    QVERIFY(status.error().message.contains(QStringLiteral("data before accept")));

    // At the accepting side, DATA before it accepted:
    status = link.hub.handleFrame(frame(ChannelFrame::data(d->id(), QByteArrayLiteral("z"))));
    QVERIFY(!status.ok());
    QVERIFY(status.error().message.contains(QStringLiteral("data before accept")));
}

void TestChannelMultiplexer::openWithOwnParityIsError()
{
    Link link;
    Acceptor hubSide(link.hub);
    Acceptor daemonSide(link.daemon);

    // The hub opens even numbers, so a peer OPEN for 2 is not the daemon's to send.
    Status status = link.hub.handleFrame(frame(ChannelFrame::open(2, 1024, "{}")));
    QVERIFY(!status.ok());
    QCOMPARE(status.error().code, QStringLiteral("flow_control_violation"));
    QVERIFY(status.error().message.contains(QStringLiteral("reserved for this side")));
    // Nor odd numbers towards the daemon.
    status = link.daemon.handleFrame(frame(ChannelFrame::open(7, 1024, "{}")));
    QVERIFY(!status.ok());
    QVERIFY(status.error().message.contains(QStringLiteral("reserved for this side")));
    QVERIFY(hubSide.requested.isEmpty());
    QVERIFY(daemonSide.requested.isEmpty());

    // Opening the same number twice, or with metadata that is not an object,
    // is also a violation.
    QVERIFY(link.hub.handleFrame(frame(ChannelFrame::open(9, 1024, "{}"))).ok());
    status = link.hub.handleFrame(frame(ChannelFrame::open(9, 1024, "{}")));
    QVERIFY(!status.ok());
    QVERIFY(status.error().message.contains(QStringLiteral("opened twice")));
    status = link.hub.handleFrame(frame(ChannelFrame::open(11, 1024, "[1]")));
    QVERIFY(!status.ok());
    QVERIFY(status.error().message.contains(QStringLiteral("not a JSON object")));
    // And malformed frames are refused with the decoder's error.
    status = link.hub.handleFrame(QByteArrayLiteral("\x03\x00\x00\x00"));
    QVERIFY(!status.ok());
    QCOMPARE(status.error().code, QStringLiteral("malformed_frame"));
}

void TestChannelMultiplexer::unexpectedAcceptAndCreditOverflowAreErrors()
{
    Link link;
    Acceptor hubSide(link.hub);
    QPointer<Channel> d = *link.daemon.openChannel(meta(QStringLiteral("x")));
    PUMP(link);

    // An ACCEPT for a channel the hub did not open,
    Status status = link.hub.handleFrame(frame(ChannelFrame::accept(d->id(), 1024)));
    QVERIFY(!status.ok());
    QVERIFY(status.error().message.contains(QStringLiteral("unexpected accept")));
    // a second ACCEPT at the opener,
    status = link.daemon.handleFrame(frame(ChannelFrame::accept(d->id(), 1024)));
    QVERIFY(!status.ok());
    QVERIFY(status.error().message.contains(QStringLiteral("unexpected accept")));
    // and credit that would exceed the largest window are violations.
    status = link.daemon.handleFrame(frame(ChannelFrame::grant(d->id(), protocol::kMaxWindow)));
    QVERIFY(!status.ok());
    QVERIFY(status.error().message.contains(QStringLiteral("credit beyond the largest window")));
}

void TestChannelMultiplexer::framesForClosedChannelsAreDropped()
{
    Link link;
    Acceptor hubSide(link.hub);
    Channel *d = *link.daemon.openChannel(meta(QStringLiteral("x")));
    PUMP(link);
    Channel *h = hubSide.requested.value(0);
    QVERIFY(d && h);
    const quint32 id = d->id();

    // Given the hub wrote and then the daemon aborted before those bytes arrived,
    QVERIFY(h->write(QByteArrayLiteral("in flight")));
    d->close(CloseCode::DeviceGone, QStringLiteral("unplugged"));
    QCOMPARE(link.daemon.channelCount(), 0);
    // then the late frames are no error,
    PUMP(link);
    QCOMPARE(link.hub.channelCount(), 0);
    // nor are credit or close frames for a channel that is gone.
    QVERIFY(link.daemon.handleFrame(frame(ChannelFrame::grant(id, 100))).ok());
    QVERIFY(link.daemon.handleFrame(frame(ChannelFrame::close(id, CloseCode::Normal, {}))).ok());
}

void TestChannelMultiplexer::normalCloseStillReceivesInFlightData()
{
    Link link;
    Acceptor hubSide(link.hub);
    QPointer<Channel> d = *link.daemon.openChannel(meta(QStringLiteral("x")));
    PUMP(link);
    QPointer<Channel> h = hubSide.requested.value(0);
    QByteArray received;
    QObject::connect(d, &Channel::readyRead, d, [&] { received += d->readAll(); });
    CloseLog daemonLog, hubLog;
    daemonLog.watch(d);
    hubLog.watch(h);

    // Given the hub wrote and then the daemon closed normally before those bytes arrived,
    QVERIFY(h->write(QByteArrayLiteral("in flight")));
    d->close();
    QCOMPARE(d->state(), Channel::State::HalfClosed);
    // when the frames move, the daemon still receives what was in flight,
    PUMP(link);
    QCOMPARE(received, QByteArrayLiteral("in flight"));
    // and the hub's side answers with its own close, which ends both.
    QCOMPARE(daemonLog.count, 1);
    QCOMPARE(hubLog.count, 1);
    QCOMPARE(daemonLog.code, CloseCode::Normal);
    QCOMPARE(link.daemon.channelCount(), 0);
    QCOMPARE(link.hub.channelCount(), 0);
}

void TestChannelMultiplexer::maxChannelsEnforced()
{
    ChannelMultiplexer::Limits two;
    two.maxChannels = 2;
    Link link(two, two);
    Acceptor hubSide(link.hub);
    Acceptor daemonSide(link.daemon);

    // Locally: the third open fails with an error and sends nothing.
    QVERIFY(link.daemon.openChannel(meta(QStringLiteral("1"))).ok());
    QVERIFY(link.daemon.openChannel(meta(QStringLiteral("2"))).ok());
    const qsizetype framesBefore = link.toHub.pending();
    const auto third = link.daemon.openChannel(meta(QStringLiteral("3")));
    QVERIFY(!third.ok());
    QCOMPARE(third.error().code, QStringLiteral("too_many_channels"));
    QVERIFY(third.error().message.contains(QStringLiteral("2 channels")));
    QCOMPARE(link.toHub.pending(), framesBefore);
    PUMP(link);
    QCOMPARE(link.hub.channelCount(), 2);

    // From the peer: a hub at its limit refuses a further open with Refused.
    ChannelMultiplexer::Limits roomy;
    Link other(roomy, two);
    Acceptor otherHub(other.hub);
    QList<QPointer<Channel>> opened;
    std::vector<CloseLog> logs(3);
    for (int i = 0; i < 3; ++i) {
        auto c = other.daemon.openChannel(meta(QString::number(i)));
        QVERIFY(c.ok());
        opened.append(*c);
        logs[i].watch(*c);
    }
    PUMP(other);
    QCOMPARE(otherHub.requested.size(), 2);
    QCOMPARE(other.hub.channelCount(), 2);
    QCOMPARE(logs[0].count, 0);
    QCOMPARE(logs[1].count, 0);
    QCOMPARE(logs[2].code, CloseCode::Refused);
    QCOMPARE(other.daemon.channelCount(), 2);

    // Once one closes, the hub takes a new one again.
    opened[0]->close();
    PUMP(other);
    auto again = other.daemon.openChannel(meta(QStringLiteral("again")));
    QVERIFY(again.ok());
    CloseLog againLog;
    againLog.watch(*again);
    PUMP(other);
    QCOMPARE((*again)->state(), Channel::State::Open);
    QCOMPARE(againLog.count, 0);
}

void TestChannelMultiplexer::oversizeMetadataRefusedLocally()
{
    Link link;
    const QJsonObject huge { { QStringLiteral("blob"),
        QString(protocol::kMaxOpenMetadata, QLatin1Char('m')) } };
    const auto opened = link.daemon.openChannel(huge);
    QVERIFY(!opened.ok());
    QCOMPARE(opened.error().code, QStringLiteral("metadata_too_large"));
    QCOMPARE(link.daemon.channelCount(), 0);
    QVERIFY(link.toHub.isEmpty());
}

void TestChannelMultiplexer::closeAllClosesEveryChannel()
{
    ChannelMultiplexer::Limits small;
    small.receiveWindow = 1024;
    Link link({}, small);
    Acceptor hubSide(link.hub);
    Acceptor daemonSide(link.daemon);
    // Given channels the daemon opened, one the hub opened, and one whose
    // OPEN has not even been delivered yet,
    QList<QPointer<Channel>> channels { *link.daemon.openChannel(meta(QStringLiteral("a"))),
        *link.daemon.openChannel(meta(QStringLiteral("b"))) };
    QVERIFY(link.hub.openChannel(meta(QStringLiteral("c"))).ok());
    PUMP(link);
    channels.append(daemonSide.requested.value(0));
    channels.append(*link.daemon.openChannel(meta(QStringLiteral("d"))));
    QCOMPARE(channels.last()->state(), Channel::State::Opening);
    QCOMPARE(link.daemon.channelCount(), 4);
    QVERIFY(channels[0]->write(QByteArray(5000, 'q'))); // some of it stays queued
    QVERIFY(link.daemon.queuedBytes() > 0);

    std::vector<CloseLog> logs(channels.size());
    for (int i = 0; i < channels.size(); ++i)
        logs[i].watch(channels[i]);
    const qsizetype framesBefore = link.toHub.pending();

    // When the transport is gone,
    link.daemon.closeAll(QStringLiteral("tunnel dropped"));

    // then every channel closes with ConnectionLost and the reason,
    for (int i = 0; i < channels.size(); ++i) {
        QCOMPARE(logs[i].count, 1);
        QCOMPARE(logs[i].code, CloseCode::ConnectionLost);
        QCOMPARE(logs[i].reason, QStringLiteral("tunnel dropped"));
        QCOMPARE(channels[i]->state(), Channel::State::Closed);
    }
    // nothing is left, and nothing is sent into the dead transport.
    QCOMPARE(link.daemon.channelCount(), 0);
    QCOMPARE(link.daemon.queuedBytes(), qsizetype(0));
    QCOMPARE(link.toHub.pending(), framesBefore);
}

QTEST_GUILESS_MAIN(TestChannelMultiplexer)
#include "tst_channelmultiplexer.moc"
