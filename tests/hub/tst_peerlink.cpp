// Two hub members on loopback: member 1 ("hub-a") listens on its peer port
// and relays channels to a forwarder whose tunnel it holds (a pair of
// multiplexers back to back), member 2 ("hub-b") opens channels to it
// through its peer links. Both read one members table, in memory.

#include "common/tunnel/tunnelconnection.h"
#include "hub/cluster/peerlinks.h"
#include "hub/cluster/peerlistener.h"
#include "hub/cluster/peerrelay.h"
#include "hub/cluster/peerrelayopen.h"
#include "hub/peertestsupport.h"
#include "support/multiplexerpair.h"

#include <QPointer>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

using namespace cloop;
using namespace cloop::hub;
using protocol::CloseCode;
using tunnel::Channel;

namespace {

constexpr int kWaitMs = 15'000;
constexpr qint64 kForwarderId = 7;

QJsonObject relayTo(qint64 forwarderId)
{
    return PeerRelayOpen::of(forwarderId, protocol::SegmentOpen { 5, 6, {}, std::nullopt })
        .toMetadata();
}

char patternAt(qint64 offset)
{
    return static_cast<char>(offset % 251);
}

QByteArray patternChunk(qint64 offset, qsizetype size)
{
    QByteArray chunk(size, Qt::Uninitialized);
    for (qsizetype i = 0; i < size; ++i)
        chunk[i] = patternAt(offset + i);
    return chunk;
}

// A port nothing listens on (it did a moment ago).
quint16 closedPort()
{
    QTcpServer server;
    if (!server.listen(QHostAddress::LocalHost))
        return 0;
    const quint16 port = server.serverPort();
    server.close();
    return port;
}

struct ChannelEnd
{
    CloseCode code = CloseCode::Normal;
    QString reason;
    bool seen = false;
};

// Records how a channel ended, while it may already be gone.
std::shared_ptr<ChannelEnd> watchEnd(Channel *channel)
{
    auto end = std::make_shared<ChannelEnd>();
    QObject::connect(channel, &Channel::closed, channel, [end](CloseCode code, const QString &why) {
        end->code = code;
        end->reason = why;
        end->seen = true;
    });
    return end;
}

} // namespace

class TestPeerLink final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();

    void aRelayChannelCarriesBytesBothWays();
    void aBulkTransferToASlowReaderStaysWithinTheCaps();
    void channelsOpenedWhileDiallingDeliverOnceTheLinkIsUp();
    void aServerWithoutTheMembersKeyIsRefused();
    void aStrangersLinkIsRefused();
    void aDeadMemberIsNotDialled();
    void noLinkToItself();
    void aDroppedLinkClosesItsChannelsAndIsDialledAgain();
    void anUnreachableMemberBacksOff();
    void anIdleLinkCloses();
    void aSilentServerIsGivenUpOnAtTheDeadline();
    void tooMuchWaitingForTheLinkFailsIt();
    void aReloadedIdentityIsShownOnTheNextLink();
    void theRelaysRefusalsReachTheAskingMember();

private:
    void startLinks(PeerLinks::Options options = {});
    // A relay channel from member 2 with the forwarder's end open.
    Channel *openRelay(QPointer<Channel> *atForwarder);

    QTemporaryDir m_dir;
    std::optional<TlsIdentity> m_a;
    std::optional<TlsIdentity> m_b;
    std::optional<TlsIdentity> m_stranger;

    testing::FakePeerDirectory m_directory;
    // Member 1's side.
    std::unique_ptr<testing::MultiplexerPair> m_forwarder;
    QList<QPointer<Channel>> m_atForwarder;
    std::unique_ptr<PeerRelay> m_relay;
    std::unique_ptr<PeerListener> m_listener;
    QList<QPointer<tunnel::TunnelConnection>> m_peerConnections;
    // Member 2's side.
    std::unique_ptr<PeerLinks> m_links;
};

void TestPeerLink::initTestCase()
{
    QVERIFY(m_dir.isValid());
    const auto make = [this](std::optional<TlsIdentity> &slot, const QString &name) {
        auto identity = testing::makeMemberIdentity(m_dir.path(), name);
        if (identity)
            slot = *identity;
        return identity ? QString() : identity.error().message;
    };
    for (const QString &error : { make(m_a, QStringLiteral("a")), make(m_b, QStringLiteral("b")),
             make(m_stranger, QStringLiteral("c")) })
        QVERIFY2(error.isEmpty(), qPrintable(error));
}

void TestPeerLink::init()
{
    m_directory = testing::FakePeerDirectory();
    m_atForwarder.clear();
    m_peerConnections.clear();

    m_forwarder = std::make_unique<testing::MultiplexerPair>();
    connect(&m_forwarder->daemon, &tunnel::ChannelMultiplexer::channelRequested, this,
        [this](Channel *channel) {
            channel->accept();
            m_atForwarder.append(channel);
        });
    m_relay = std::make_unique<PeerRelay>([this](qint64 forwarderId, const QJsonObject &open,
                                              const PeerMember &) -> Result<Channel *> {
        if (forwarderId != kForwarderId)
            return Error::make(QStringLiteral("forwarder_offline"),
                QStringLiteral("forwarder %1 is not connected to hub-a").arg(forwarderId));
        return m_forwarder->hub.openChannel(open);
    });

    PeerListener::Options options;
    options.address = QHostAddress::LocalHost;
    options.selfId = 1;
    auto listener = PeerListener::listen(options, m_directory, m_a->chain, m_a->key);
    QVERIFY2(listener, qPrintable(listener ? QString() : listener.error().message));
    m_listener = std::move(*listener);
    connect(m_listener.get(), &PeerListener::peerConnected, this,
        [this](const PeerMember &member, tunnel::TunnelConnection *connection) {
            m_peerConnections.append(connection);
            m_relay->adopt(member, connection);
        });

    m_directory.put(testing::memberOf(1, QStringLiteral("hub-a"), *m_a, m_listener->port()));
    m_directory.put(testing::memberOf(2, QStringLiteral("hub-b"), *m_b));
    startLinks();
}

void TestPeerLink::startLinks(PeerLinks::Options options)
{
    options.selfId = 2;
    m_links.reset();
    m_links = std::make_unique<PeerLinks>(m_directory, m_b->chain, m_b->key, options);
}

void TestPeerLink::cleanup()
{
    m_links.reset();
    m_listener.reset();
    m_relay.reset();
    m_forwarder.reset();
}

Channel *TestPeerLink::openRelay(QPointer<Channel> *atForwarder)
{
    auto channel = m_links->openChannel(1, relayTo(kForwarderId));
    if (!channel) {
        qWarning() << channel.error().message;
        return nullptr;
    }
    QPointer<Channel> guarded = *channel;
    const qsizetype before = m_atForwarder.size();
    if (!testing::waitUntil(
            [&] {
                const Channel *opened = guarded.data();
                return !opened
                    || (opened->state() == Channel::State::Open && m_atForwarder.size() > before);
            },
            kWaitMs)
        || !guarded)
        return nullptr;
    *atForwarder = m_atForwarder.constLast();
    return guarded;
}

void TestPeerLink::aRelayChannelCarriesBytesBothWays()
{
    QSignalSpy up(m_links.get(), &PeerLinks::linkUp);
    QPointer<Channel> device;
    QPointer<Channel> asking = openRelay(&device);
    QVERIFY(asking && device);
    QCOMPARE(up.size(), 1);
    QCOMPARE(up[0][0].value<PeerMember>().id, 1);
    QVERIFY(m_links->isUp(1));
    QCOMPARE(m_links->linkCount(), 1);
    QCOMPARE(m_peerConnections.size(), 1);

    QVERIFY(asking->write("ping from hub-b"));
    QTRY_COMPARE_WITH_TIMEOUT(device->bytesAvailable(), 15, kWaitMs);
    QCOMPARE(device->readAll(), QByteArray("ping from hub-b"));
    QVERIFY(device->write("pong from the device"));
    QTRY_COMPARE_WITH_TIMEOUT(asking->bytesAvailable(), 20, kWaitMs);
    QCOMPARE(asking->readAll(), QByteArray("pong from the device"));
    QCOMPARE(m_relay->bytesToForwarders(), quint64(15));
    QCOMPARE(m_relay->bytesToPeers(), quint64(20));

    // A second channel rides the same link.
    QPointer<Channel> secondDevice;
    QPointer<Channel> second = openRelay(&secondDevice);
    QVERIFY(second && secondDevice);
    QCOMPARE(m_peerConnections.size(), 1);
    QCOMPARE(m_relay->relayCount(), 2);
}

void TestPeerLink::aBulkTransferToASlowReaderStaysWithinTheCaps()
{
    constexpr qint64 kTotal = 16 * 1024 * 1024;
    constexpr qsizetype kChunk = 64 * 1024;
    QPointer<Channel> device;
    QPointer<Channel> asking = openRelay(&device);
    QVERIFY(asking && device);
    QVERIFY(!m_peerConnections.isEmpty());
    tunnel::ChannelMultiplexer *atHolder = m_peerConnections.constFirst()->channels();
    QPointer<Channel> holderEnd = atHolder->channel(asking->id());
    QVERIFY(holderEnd);
    const tunnel::ChannelMultiplexer *link = m_links->channelsTo(1);
    QVERIFY(link);
    const auto peerLimits = link->limits();
    const auto forwarderLimits = m_forwarder->hub.limits();

    // Every queue and buffer on the way, against its cap, all along.
    bool withinCaps = true;
    QString breach;
    const auto check = [&] {
        const auto over = [&](const char *what, qint64 value, qint64 cap) {
            if (value > cap && withinCaps) {
                withinCaps = false;
                breach = QStringLiteral("%1: %2 > %3").arg(QLatin1String(what)).arg(value).arg(cap);
            }
        };
        if (const Channel *sender = asking.data())
            over("sender's channel queue", sender->queuedBytes(), peerLimits.maxQueuedPerChannel);
        over("sender's link queue", link->queuedBytes(), peerLimits.maxQueuedPerConnection);
        if (const Channel *holder = holderEnd.data())
            over("holder's receive buffer", holder->bytesAvailable(), peerLimits.receiveWindow);
        over("holder's peer queue", atHolder->queuedBytes(), peerLimits.maxQueuedPerConnection);
        over("holder's forwarder queue", m_forwarder->hub.queuedBytes(),
            forwarderLimits.maxQueuedPerConnection);
        if (const Channel *reader = device.data())
            over("forwarder's receive buffer", reader->bytesAvailable(),
                forwarderLimits.receiveWindow);
    };
    QTimer sampler;
    connect(&sampler, &QTimer::timeout, &sampler, check);
    sampler.start(2);

    qint64 written = 0;
    qint64 received = 0;
    bool inOrder = true;
    // Connections made here end with this test, whatever outlives it.
    QObject scope;
    const auto pump = [&] {
        Channel *sender = asking.data();
        while (sender && written < kTotal) {
            const qsizetype size
                = static_cast<qsizetype>(std::min<qint64>(kChunk, kTotal - written));
            if (!sender->write(patternChunk(written, size)))
                break;
            written += size;
        }
        check();
    };
    connect(asking.data(), &Channel::writable, &scope, pump);
    pump();

    // The reader does not read yet: the sender must come to a stop with
    // no more in flight than the windows and caps on the way allow.
    QVERIFY2(testing::waitUntil(
                 [&] {
                     const Channel *reader = device.data();
                     const Channel *sender = asking.data();
                     return reader && sender
                         && reader->bytesAvailable() == forwarderLimits.receiveWindow
                         && sender->writableBytes() < kChunk;
                 },
                 kWaitMs),
        qPrintable(QStringLiteral("written %1, received by the forwarder %2")
                       .arg(written)
                       .arg(device ? device->bytesReceived() : 0)));
    const qint64 inFlightBound = peerLimits.maxQueuedPerChannel + peerLimits.receiveWindow
        + protocol::kMaxDataPayload + forwarderLimits.maxQueuedPerChannel
        + forwarderLimits.receiveWindow;
    QVERIFY2(written <= inFlightBound,
        qPrintable(QStringLiteral("%1 bytes taken with the reader stopped; at most %2 may be")
                       .arg(written)
                       .arg(inFlightBound)));
    QVERIFY(written < kTotal);

    // Now a slow reader: a little at a time, on a timer.
    QTimer reader;
    connect(&reader, &QTimer::timeout, &scope, [&] {
        if (!device)
            return;
        const QByteArray bytes = device->read(16 * 1024);
        for (qsizetype i = 0; i < bytes.size() && inOrder; ++i)
            inOrder = bytes[i] == patternAt(received + i);
        received += bytes.size();
        check();
    });
    reader.start(1);
    QVERIFY2(testing::waitUntil([&] { return received == kTotal || !inOrder; }, 120'000),
        qPrintable(QStringLiteral("received %1 of %2").arg(received).arg(kTotal)));
    QVERIFY(inOrder);
    QCOMPARE(written, kTotal);
    QVERIFY2(withinCaps, qPrintable(breach));
    QCOMPARE(m_relay->bytesToForwarders(), quint64(kTotal));
    // Nothing was refused and dropped: a stream waits, it does not lose.
    QCOMPARE(device->bytesReceived(), quint64(kTotal));
}

void TestPeerLink::channelsOpenedWhileDiallingDeliverOnceTheLinkIsUp()
{
    QSignalSpy up(m_links.get(), &PeerLinks::linkUp);
    QList<QPointer<Channel>> early;
    for (int i = 0; i < 3; ++i) {
        auto channel = m_links->openChannel(1, relayTo(kForwarderId));
        QVERIFY(channel);
        QCOMPARE((*channel)->state(), Channel::State::Opening);
        QVERIFY((*channel)->write(QByteArray("early bytes of channel ") + QByteArray::number(i)));
        early.append(*channel);
    }
    QVERIFY(!m_links->isUp(1));
    QCOMPARE(m_links->linkCount(), 1);

    QVERIFY(up.wait(kWaitMs));
    QTRY_COMPARE_WITH_TIMEOUT(m_atForwarder.size(), 3, kWaitMs);
    QSet<QByteArray> arrived;
    for (const QPointer<Channel> &guarded : std::as_const(m_atForwarder)) {
        Channel *device = guarded.data();
        QVERIFY(device);
        QTRY_COMPARE_WITH_TIMEOUT(device->bytesAvailable(), 24, kWaitMs);
        arrived.insert(device->readAll());
    }
    QCOMPARE(arrived,
        (QSet<QByteArray> {
            "early bytes of channel 0", "early bytes of channel 1", "early bytes of channel 2" }));
    for (const QPointer<Channel> &channel : std::as_const(early))
        QCOMPARE(channel->state(), Channel::State::Open);
}

void TestPeerLink::aServerWithoutTheMembersKeyIsRefused()
{
    // The members table says member 1's key is another: whoever answers at
    // its URL is not it.
    PeerMember impostor
        = testing::memberOf(1, QStringLiteral("hub-a"), *m_stranger, m_listener->port());
    m_directory.put(impostor);
    QSignalSpy failed(m_links.get(), &PeerLinks::dialFailed);
    QSignalSpy connected(m_listener.get(), &PeerListener::peerConnected);
    auto channel = m_links->openChannel(1, relayTo(kForwarderId));
    QVERIFY(channel);
    const auto end = watchEnd(*channel);
    QVERIFY(failed.wait(kWaitMs));
    QTRY_VERIFY_WITH_TIMEOUT(end->seen, kWaitMs);
    QCOMPARE(end->code, CloseCode::ConnectionLost);
    QVERIFY2(end->reason.startsWith(QLatin1String("cannot link to hub member 1 (hub-a) at wss://")),
        qPrintable(end->reason));
    QVERIFY2(
        end->reason.contains(QStringLiteral("it presented the key %1, not its registered key %2")
                                 .arg(m_a->pin, m_stranger->pin)),
        qPrintable(end->reason));
    QCOMPARE(connected.size(), 0);
    QVERIFY(m_atForwarder.isEmpty());
}

void TestPeerLink::aStrangersLinkIsRefused()
{
    QSignalSpy connected(m_listener.get(), &PeerListener::peerConnected);
    QSignalSpy refused(m_listener.get(), &PeerListener::connectionRefused);
    PeerLinks::Options options;
    options.selfId = 3;
    PeerLinks stranger(m_directory, m_stranger->chain, m_stranger->key, options);
    auto channel = stranger.openChannel(1, relayTo(kForwarderId));
    QVERIFY(channel);
    const auto end = watchEnd(*channel);
    QVERIFY(refused.wait(kWaitMs));
    QVERIFY2(refused[0][1].toString().contains(
                 QStringLiteral("%1 is not that of a live hub member").arg(m_stranger->pin)),
        qPrintable(refused[0][1].toString()));
    QTRY_VERIFY_WITH_TIMEOUT(end->seen, kWaitMs);
    QCOMPARE(end->code, CloseCode::ConnectionLost);
    QVERIFY2(end->reason.contains(QLatin1String("hub member 1 (hub-a)")), qPrintable(end->reason));
    QCOMPARE(connected.size(), 0);
    QVERIFY(m_atForwarder.isEmpty());
}

void TestPeerLink::aDeadMemberIsNotDialled()
{
    m_directory.remove(1);
    auto channel = m_links->openChannel(1, relayTo(kForwarderId));
    QVERIFY(!channel);
    QCOMPARE(channel.error().message, QStringLiteral("hub member 1 is not alive"));
    QCOMPARE(m_links->linkCount(), 0);

    // A member without a peer URL yet is refused as plainly.
    PeerMember unlisted = testing::memberOf(1, QStringLiteral("hub-a"), *m_a);
    m_directory.put(unlisted);
    auto again = m_links->openChannel(1, relayTo(kForwarderId));
    QVERIFY(!again);
    QVERIFY2(again.error().message.contains(QLatin1String("hub member 1 (hub-a) has no peer URL")),
        qPrintable(again.error().message));
}

void TestPeerLink::noLinkToItself()
{
    auto channel = m_links->openChannel(2, relayTo(kForwarderId));
    QVERIFY(!channel);
    QCOMPARE(channel.error().code, QStringLiteral("peer_is_self"));
}

void TestPeerLink::aDroppedLinkClosesItsChannelsAndIsDialledAgain()
{
    QSignalSpy down(m_links.get(), &PeerLinks::linkDown);
    QPointer<Channel> device;
    QPointer<Channel> asking = openRelay(&device);
    QVERIFY(asking && device);
    const auto end = watchEnd(asking);
    const auto deviceEnd = watchEnd(device);

    QVERIFY(m_peerConnections.constFirst());
    m_peerConnections.constFirst()->abort(QStringLiteral("the test cut the link"));
    QVERIFY(down.wait(kWaitMs));
    QTRY_VERIFY_WITH_TIMEOUT(end->seen, kWaitMs);
    QCOMPARE(end->code, CloseCode::ConnectionLost);
    QVERIFY2(end->reason.startsWith(QLatin1String("the link to hub member 1 (hub-a) was lost: ")),
        qPrintable(end->reason));
    QCOMPARE(down[0][1].toString(), end->reason);
    // The forwarder's end of the relay ends too, on the holder's side.
    QTRY_VERIFY_WITH_TIMEOUT(deviceEnd->seen, kWaitMs);
    QCOMPARE(deviceEnd->code, CloseCode::ConnectionLost);
    QCOMPARE(m_links->linkCount(), 0);
    QTRY_COMPARE_WITH_TIMEOUT(m_relay->relayCount(), 0, kWaitMs);

    // The next channel dials again, at once: the member was there a moment ago.
    QPointer<Channel> againDevice;
    QPointer<Channel> again = openRelay(&againDevice);
    QVERIFY(again && againDevice);
    QVERIFY(again->write("still here"));
    QTRY_COMPARE_WITH_TIMEOUT(againDevice->bytesAvailable(), 10, kWaitMs);
    QCOMPARE(m_peerConnections.size(), 2);
}

void TestPeerLink::anUnreachableMemberBacksOff()
{
    PeerLinks::Options options;
    options.initialBackoff = std::chrono::milliseconds(300);
    options.maxBackoff = std::chrono::milliseconds(300);
    startLinks(options);
    const quint16 port = closedPort();
    QVERIFY(port != 0);
    m_directory.put(testing::memberOf(3, QStringLiteral("hub-gone"), *m_stranger, port));

    QSignalSpy failed(m_links.get(), &PeerLinks::dialFailed);
    auto channel = m_links->openChannel(3, relayTo(kForwarderId));
    QVERIFY(channel);
    const auto end = watchEnd(*channel);
    // A holder that asks again as soon as its channel closes.
    std::optional<Result<Channel *>> retried;
    connect(*channel, &Channel::closed, this,
        [&] { retried = m_links->openChannel(3, relayTo(kForwarderId)); });
    QVERIFY(failed.wait(kWaitMs));
    QTRY_VERIFY_WITH_TIMEOUT(end->seen, kWaitMs);
    QCOMPARE(end->code, CloseCode::ConnectionLost);
    QVERIFY2(end->reason.startsWith(
                 QStringLiteral("cannot link to hub member 3 (hub-gone) at wss://127.0.0.1:%1")
                     .arg(port)),
        qPrintable(end->reason));

    // Not hammered: refused at once until the backoff has passed...
    QVERIFY(retried.has_value());
    QVERIFY(!retried->ok());
    QCOMPARE(retried->error().code, QStringLiteral("peer_unreachable"));
    auto refused = m_links->openChannel(3, relayTo(kForwarderId));
    QVERIFY(!refused);
    QCOMPARE(refused.error().code, QStringLiteral("peer_unreachable"));
    QVERIFY2(refused.error().message.contains(end->reason), qPrintable(refused.error().message));
    QVERIFY2(refused.error().message.contains(QLatin1String("next attempt in")),
        qPrintable(refused.error().message));
    QCOMPARE(failed.size(), 1);

    // ...then dialled again.
    QTRY_VERIFY_WITH_TIMEOUT(m_links->openChannel(3, relayTo(kForwarderId)).ok(), kWaitMs);
    QVERIFY(failed.wait(kWaitMs));
    QCOMPARE(failed.size(), 2);
}

void TestPeerLink::anIdleLinkCloses()
{
    PeerLinks::Options options;
    options.link.idleTimeout = std::chrono::milliseconds(300);
    startLinks(options);
    QSignalSpy down(m_links.get(), &PeerLinks::linkDown);
    QPointer<Channel> device;
    QPointer<Channel> asking = openRelay(&device);
    QVERIFY(asking && device);
    asking->close();
    QVERIFY(down.wait(kWaitMs));
    QVERIFY2(down[0][1].toString().contains(QLatin1String("no channel for 300 ms")),
        qPrintable(down[0][1].toString()));
    QCOMPARE(m_links->linkCount(), 0);
    QTRY_COMPARE_WITH_TIMEOUT(m_listener->connectionCount(), 0, kWaitMs);
}

void TestPeerLink::aSilentServerIsGivenUpOnAtTheDeadline()
{
    PeerLinks::Options options;
    options.link.connectTimeout = std::chrono::milliseconds(300);
    startLinks(options);
    // Takes connections and never says a word.
    QTcpServer silent;
    QVERIFY(silent.listen(QHostAddress::LocalHost));
    m_directory.put(
        testing::memberOf(3, QStringLiteral("hub-mute"), *m_stranger, silent.serverPort()));
    QSignalSpy failed(m_links.get(), &PeerLinks::dialFailed);
    auto channel = m_links->openChannel(3, relayTo(kForwarderId));
    QVERIFY(channel);
    const auto end = watchEnd(*channel);
    QVERIFY(failed.wait(kWaitMs));
    QTRY_VERIFY_WITH_TIMEOUT(end->seen, kWaitMs);
    QCOMPARE(end->code, CloseCode::ConnectionLost);
    QVERIFY2(end->reason.contains(QLatin1String("hub member 3 (hub-mute)"))
            && end->reason.endsWith(QLatin1String("no verified connection within 300 ms")),
        qPrintable(end->reason));
}

void TestPeerLink::tooMuchWaitingForTheLinkFailsIt()
{
    PeerLinks::Options options;
    options.link.maxHeldBytes = 300;
    startLinks(options);
    QSignalSpy failed(m_links.get(), &PeerLinks::dialFailed);
    QList<std::shared_ptr<ChannelEnd>> ends;
    for (int i = 0; i < 5; ++i) {
        auto channel = m_links->openChannel(1, relayTo(kForwarderId));
        QVERIFY(channel);
        ends.append(watchEnd(*channel));
    }
    QVERIFY(failed.wait(kWaitMs));
    for (const auto &end : std::as_const(ends)) {
        QTRY_VERIFY_WITH_TIMEOUT(end->seen, kWaitMs);
        QCOMPARE(end->code, CloseCode::ConnectionLost);
        QVERIFY2(end->reason.endsWith(
                     QLatin1String("more than 300 bytes of channel frames waited for the link")),
            qPrintable(end->reason));
    }
    // Nothing of it reached the member.
    QVERIFY(m_atForwarder.isEmpty());
}

void TestPeerLink::aReloadedIdentityIsShownOnTheNextLink()
{
    // Member 2 rotated its key: the members table has the new one, and so
    // do its links from now on.
    m_directory.put(testing::memberOf(2, QStringLiteral("hub-b"), *m_stranger));
    m_links->setIdentity(m_stranger->chain, m_stranger->key);
    QSignalSpy connected(m_listener.get(), &PeerListener::peerConnected);
    QPointer<Channel> device;
    QPointer<Channel> asking = openRelay(&device);
    QVERIFY(asking && device);
    QCOMPARE(connected.size(), 1);
    QCOMPARE(connected[0][0].value<PeerMember>().keyPin, m_stranger->pin);
}

void TestPeerLink::theRelaysRefusalsReachTheAskingMember()
{
    QJsonObject malformed = relayTo(kForwarderId);
    malformed.insert(QStringLiteral("forwarder_id"), QStringLiteral("seven"));
    auto first = m_links->openChannel(1, malformed);
    QVERIFY(first);
    const auto firstEnd = watchEnd(*first);
    auto second = m_links->openChannel(1, relayTo(99));
    QVERIFY(second);
    const auto secondEnd = watchEnd(*second);

    QTRY_VERIFY_WITH_TIMEOUT(firstEnd->seen && secondEnd->seen, kWaitMs);
    QCOMPARE(firstEnd->code, CloseCode::Refused);
    QVERIFY2(firstEnd->reason.contains(QLatin1String("\"forwarder_id\" must be an integer")),
        qPrintable(firstEnd->reason));
    QCOMPARE(secondEnd->code, CloseCode::Refused);
    QCOMPARE(secondEnd->reason, QStringLiteral("forwarder 99 is not connected to hub-a"));
    QCOMPARE(m_relay->refusedCount(), quint64(2));
    QVERIFY(m_atForwarder.isEmpty());
    // The link itself is fine.
    QVERIFY(m_links->isUp(1));
}

QTEST_GUILESS_MAIN(TestPeerLink)
#include "tst_peerlink.moc"
