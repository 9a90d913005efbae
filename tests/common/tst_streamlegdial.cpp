// A device stream's own leg (common/daemon/streamlegdial.h) and the client
// that dials it (common/daemon/legclient.h), against an in-process fake hub
// on 127.0.0.1 (tests/common/tunneltestsupport.h). The daemon's session is a
// real TunnelClient connected to it; the handle rides two multiplexers back
// to back, as the session's tunnel would carry it; every leg connection the
// hub accepts gets a hub end (a TunnelConnection) that opens streams on it.

#include "common/daemon/legclient.h"
#include "common/daemon/streamlegdial.h"
#include "common/net/qtmessagesocket.h"
#include "common/net/tlsstream.h"
#include "common/protocol/channelopen.h"
#include "common/tunnel/channelmultiplexer.h"
#include "common/tunnel/tunnelclient.h"
#include "common/tunnel/tunnelconnection.h"
#include "common/tunneltestsupport.h"
#include "support/multiplexerpair.h"

#include <QElapsedTimer>
#include <QPointer>
#include <QSignalSpy>
#include <QTest>
#include <QWebSocket>

#include <chrono>
#include <memory>
#include <vector>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

using namespace std::chrono_literals;
using namespace cloop;
using cloop::testsupport::ChannelEnding;
using cloop::testsupport::FakeHub;
using daemon::StreamLegDial;
using protocol::CloseCode;
using tunnel::Channel;
using tunnel::ChannelMultiplexer;
using tunnel::TunnelClient;
using tunnel::TunnelConnection;

namespace {

constexpr int kEventTimeoutMs = 5000;
constexpr qint64 kRunId = 5;
constexpr qint64 kBindingId = 7;

QString ticket()
{
    return QString(43, u't');
}

QString legPath()
{
    return QString(protocol::kForwarderLegPath);
}

protocol::SegmentOpen segmentOpen(qint64 runId, qint64 bindingId, bool withLeg)
{
    protocol::SegmentOpen open;
    open.runId = runId;
    open.bindingId = bindingId;
    if (withLeg)
        open.leg = protocol::DirectLeg { QString(), ticket() };
    return open;
}

// The stream the tests' handle stands for: run 5's segment of binding 7,
// without a leg of its own.
bool isRunFivesSegment(const QJsonObject &metadata)
{
    const auto open = protocol::SegmentOpen::fromMetadata(metadata);
    return open && !open->leg && open->runId == kRunId && open->bindingId == kBindingId;
}

// How a hub hears "carry the stream yourself".
bool isUnreachableClose(const ChannelEnding &ending)
{
    return ending.seen && ending.code == CloseCode::Refused
        && ending.reason.startsWith(protocol::kDirectLegUnreachable);
}

// One test's hub, session, handle and leg.
class LegRig final : public QObject
{
public:
    // How the hub answers a leg's hello.
    enum class LegAnswer
    {
        Welcome,
        RefuseForNow, // a passing error: the client tries again
        RefuseForGood,
    };

    LegRig()
    {
        m_hub.setResponder([this](FakeHub &hub, int connection, QWebSocket *socket,
                               const protocol::ControlMessage &message) {
            const auto *hello = std::get_if<protocol::Hello>(&message);
            if (!hello)
                return;
            if (hub.requestPath(connection) != legPath()) {
                hub.send(socket, FakeHub::welcome());
                return;
            }
            legHellos.append(*hello);
            const LegAnswer answer
                = legAnswers.isEmpty() ? LegAnswer::Welcome : legAnswers.takeFirst();
            if (answer != LegAnswer::Welcome) {
                hub.send(socket,
                    protocol::ErrorMessage { QStringLiteral("unknown_ticket"),
                        QStringLiteral("no such ticket waits here"),
                        answer == LegAnswer::RefuseForGood });
                return;
            }
            hub.send(socket, FakeHub::welcome());
            // Takes the socket over: streams are opened on it from now on.
            legs.push_back(std::make_unique<TunnelConnection>(new net::QtMessageSocket(socket),
                ChannelMultiplexer::Side::Hub, ChannelMultiplexer::Limits {},
                tunnel::TunnelTiming {}));
            legConnections.append(connection);
        });
    }

    // The hub listens and the session is welcomed.
    bool startSession()
    {
        if (!m_hub.listenPlain())
            return false;
        tunnel::TunnelClientOptions options;
        options.hubUrls = { m_hub.url() };
        options.endpointPath = QStringLiteral("/api/forwarders/connect");
        options.capabilities = QJsonObject { { QStringLiteral("session"), true } };
        options.channel = QStringLiteral("edge");
        session = std::make_unique<TunnelClient>(options);
        session->setCredential(QStringLiteral("cred-forwarder"));
        QSignalSpy ready(session.get(), &TunnelClient::ready);
        session->start();
        return ready.wait(kEventTimeoutMs);
    }

    // The client makeLegClient makes for the session, at the forwarders' leg
    // path; the last one made is kept.
    StreamLegDial::Dialer sessionDialer(std::chrono::milliseconds bound)
    {
        return [this, bound](const protocol::DirectLeg &leg, QObject *parent) {
            legClient = daemon::makeLegClient(session.get(), QStringLiteral("cred-forwarder"), leg,
                protocol::kForwarderLegPath, bound, parent);
            return legClient.data();
        };
    }

    // The hub opens the handle; the daemon dials its leg at once.
    bool openHandle(const StreamLegDial::Dialer &dialer, std::chrono::milliseconds bound)
    {
        connect(&m_tunnel.daemon, &ChannelMultiplexer::channelRequested, this,
            [this, dialer, bound](Channel *channel) {
                const auto open = protocol::SegmentOpen::fromMetadata(channel->metadata());
                if (!open || !open->leg) {
                    channel->refuse(QStringLiteral("not a handle"));
                    return;
                }
                daemonHandle = channel;
                dial = new StreamLegDial(channel, *open->leg,
                    QStringLiteral("run %1's fwd-lab (binding %2)").arg(kRunId).arg(kBindingId),
                    isRunFivesSegment, dialer, bound, this);
                connect(dial.data(), &StreamLegDial::arrived, this, [this](Channel *stream) {
                    arrivals.append(stream);
                    if (refuseArrivals)
                        stream->refuse(QStringLiteral("the interface went away"));
                    else
                        stream->accept();
                });
                connect(dial.data(), &StreamLegDial::failed, this,
                    [this](const QString &reason) { failures.append(reason); });
                connect(dial.data(), &StreamLegDial::ended, this, [this] { ++endings; });
                dial->start();
            });
        auto opened = m_tunnel.hub.openChannel(segmentOpen(kRunId, kBindingId, true));
        if (!opened)
            return false;
        hubHandle = *opened;
        handleEnding.watch(hubHandle);
        return true;
    }

    // The session, the handle, and its leg welcomed by the hub.
    bool raiseLeg(std::chrono::milliseconds bound)
    {
        return startSession() && openHandle(sessionDialer(bound), bound)
            && QTest::qWaitFor([this] { return !legs.empty(); }, kEventTimeoutMs);
    }

    // raiseLeg, and the hub's end of the stream it opened there, once the
    // daemon took it; null when anything failed.
    Channel *raiseStream()
    {
        if (!raiseLeg(2s))
            return nullptr;
        Channel *stream = openStream(segmentOpen(kRunId, kBindingId, false));
        if (!stream || !QTest::qWaitFor([this] { return !arrivals.isEmpty(); }, kEventTimeoutMs))
            return nullptr;
        return stream;
    }

    // The hub opens `open` on the newest leg; null when there is none.
    Channel *openStream(const protocol::ChannelOpen &open)
    {
        if (legs.empty())
            return nullptr;
        auto opened = legs.back()->channels()->openChannel(open);
        return opened ? *opened : nullptr;
    }

    FakeHub &hub() { return m_hub; }

    std::unique_ptr<TunnelClient> session;
    QPointer<StreamLegDial> dial;
    QPointer<TunnelClient> legClient;
    QPointer<Channel> hubHandle;
    QPointer<Channel> daemonHandle;
    ChannelEnding handleEnding;
    QList<LegAnswer> legAnswers;
    QList<protocol::Hello> legHellos;
    std::vector<std::unique_ptr<TunnelConnection>> legs;
    QList<int> legConnections;
    QList<QPointer<Channel>> arrivals;
    bool refuseArrivals = false;
    QStringList failures;
    int endings = 0;

private:
    FakeHub m_hub;
    testing::MultiplexerPair m_tunnel;
};

} // namespace

class TestStreamLegDial final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void theStreamArrivesOnTheLegAndIsPassedOn();
    void anotherStreamIsRefusedAndTheDialWaits();
    void aPassingRefusalIsDialledAgainWithinTheBound();
    void theHandleClosingEndsTheStreamAndTheLeg();
    void theHandleClosingBeforeTheStreamEndsTheLeg();
    void theHubGivingUpOnLegsBeforeTheStreamIsAFailure();
    void theStreamClosingEndsTheHandle();
    void aStreamRefusedHereEndsTheHandle();
    void nothingWithinTheBoundClosesTheHandleAsUnreachable();
    void aLegRefusedForGoodFailsAtOnce();
    void aDialerWithoutClientFailsAtOnce();
    void aLegClientIsTheSessionsWithTheTicket();
    void aLegWithAUrlGoesThere();
    void noLegClientWithoutASession();
};

void TestStreamLegDial::theStreamArrivesOnTheLegAndIsPassedOn()
{
    // Given a forwarder's session and a handle whose leg names no URL,
    LegRig rig;
    QVERIFY(rig.startSession());
    QVERIFY(rig.openHandle(rig.sessionDialer(2s), 2s));
    QSignalSpy handleOpened(rig.hubHandle.data(), &Channel::opened);

    // when the daemon dials and the hub opens the stream on that leg,
    QVERIFY(handleOpened.wait(kEventTimeoutMs)); // the handle is taken at once
    QTRY_COMPARE_WITH_TIMEOUT(rig.legs.size(), std::size_t(1), kEventTimeoutMs);
    Channel *hubStream = rig.openStream(segmentOpen(kRunId, kBindingId, false));
    QVERIFY(hubStream);
    QSignalSpy streamOpened(hubStream, &Channel::opened);

    // then the leg went to the session's hub at the forwarders' leg path
    // with the daemon's credential and the ticket, and nothing of the
    // session's own,
    QCOMPARE(rig.hub().requestPath(rig.legConnections.first()), legPath());
    QCOMPARE(rig.legHellos.size(), 1);
    QCOMPARE(rig.legHellos.first().credential, QStringLiteral("cred-forwarder"));
    QCOMPARE(rig.legHellos.first().streamTicket, ticket());
    QVERIFY(rig.legHellos.first().capabilities.isEmpty());
    QVERIFY(rig.legHellos.first().channel.isEmpty());
    // with Nagle's algorithm off, as on every tunnel,
    QVERIFY(rig.legClient && rig.legClient->connection());
    const auto streams = rig.legClient->connection()->socket()->findChildren<net::TlsStream *>();
    QCOMPARE(streams.size(), 1);
    int noDelay = 0;
    socklen_t size = sizeof noDelay;
    QCOMPARE(
        ::getsockopt(streams.first()->descriptor(), IPPROTO_TCP, TCP_NODELAY, &noDelay, &size), 0);
    QCOMPARE(noDelay, 1);
    // and the stream is passed on once, and its bytes flow.
    QVERIFY(streamOpened.wait(kEventTimeoutMs));
    QCOMPARE(rig.arrivals.size(), 1);
    QPointer<Channel> stream = rig.arrivals.first();
    QVERIFY(stream);
    QVERIFY(isRunFivesSegment(stream->metadata()));
    QVERIFY(hubStream->write(QByteArrayLiteral("frame")));
    QTRY_COMPARE_WITH_TIMEOUT(stream->bytesAvailable(), qsizetype(5), kEventTimeoutMs);
    QCOMPARE(stream->readAll(), QByteArrayLiteral("frame"));
    QVERIFY(rig.failures.isEmpty());
    QCOMPARE(rig.endings, 0);
    QVERIFY(rig.hubHandle && rig.hubHandle->state() == Channel::State::Open);
}

void TestStreamLegDial::anotherStreamIsRefusedAndTheDialWaits()
{
    // Given a leg that is up,
    LegRig rig;
    QVERIFY(rig.raiseLeg(3s));

    // when the hub opens on it another run's, another binding's, another
    // kind's stream, and one with a leg of its own,
    protocol::UsbOpen usb;
    usb.runId = kRunId;
    usb.bindingId = kBindingId;
    const QList<protocol::ChannelOpen> others { segmentOpen(kRunId + 1, kBindingId, false),
        segmentOpen(kRunId, kBindingId + 1, false), usb, segmentOpen(kRunId, kBindingId, true) };
    for (const protocol::ChannelOpen &other : others) {
        Channel *wrong = rig.openStream(other);
        QVERIFY(wrong);
        ChannelEnding ending(wrong);
        // then each is refused, naming what the leg carries,
        QTRY_VERIFY_WITH_TIMEOUT(ending.seen, kEventTimeoutMs);
        QCOMPARE(ending.code, CloseCode::Refused);
        QVERIFY2(
            ending.reason.contains(QStringLiteral("run 5's fwd-lab")), qPrintable(ending.reason));
    }
    // while the handle stays open and the dial waits for its own stream,
    QVERIFY(rig.arrivals.isEmpty());
    QVERIFY(rig.dial);
    QVERIFY(rig.hubHandle && rig.hubHandle->state() == Channel::State::Open);
    QVERIFY(!rig.handleEnding.seen);
    Channel *right = rig.openStream(segmentOpen(kRunId, kBindingId, false));
    QVERIFY(right);
    QSignalSpy opened(right, &Channel::opened);
    QVERIFY(opened.wait(kEventTimeoutMs));
    QCOMPARE(rig.arrivals.size(), 1);

    // and a second one after it is refused too.
    Channel *again = rig.openStream(segmentOpen(kRunId, kBindingId, false));
    QVERIFY(again);
    ChannelEnding secondEnding(again);
    QTRY_VERIFY_WITH_TIMEOUT(secondEnding.seen, kEventTimeoutMs);
    QCOMPARE(secondEnding.code, CloseCode::Refused);
    QCOMPARE(rig.arrivals.size(), 1);
}

void TestStreamLegDial::aPassingRefusalIsDialledAgainWithinTheBound()
{
    // Given a hub that has not read the ticket yet when the leg first comes,
    LegRig rig;
    rig.legAnswers = { LegRig::LegAnswer::RefuseForNow, LegRig::LegAnswer::RefuseForNow };
    QVERIFY(rig.startSession());

    // when the daemon dials,
    QVERIFY(rig.openHandle(rig.sessionDialer(4s), 4s));

    // then it comes again until welcomed, within the bound,
    QTRY_COMPARE_WITH_TIMEOUT(rig.legs.size(), std::size_t(1), kEventTimeoutMs);
    QCOMPARE(rig.legHellos.size(), 3);
    for (const protocol::Hello &hello : std::as_const(rig.legHellos))
        QCOMPARE(hello.streamTicket, ticket());
    // and takes the stream opened there.
    Channel *hubStream = rig.openStream(segmentOpen(kRunId, kBindingId, false));
    QVERIFY(hubStream);
    QSignalSpy opened(hubStream, &Channel::opened);
    QVERIFY(opened.wait(kEventTimeoutMs));
    QCOMPARE(rig.arrivals.size(), 1);
    QVERIFY(rig.failures.isEmpty());
    QVERIFY(!rig.handleEnding.seen);
}

void TestStreamLegDial::theHandleClosingEndsTheStreamAndTheLeg()
{
    // Given a stream that arrived on its leg,
    LegRig rig;
    QPointer<Channel> hubStream = rig.raiseStream();
    QVERIFY(hubStream);
    ChannelEnding streamEnding(hubStream);
    QPointer<Channel> stream = rig.arrivals.first();
    QVERIFY(stream);
    ChannelEnding daemonStreamEnding(stream);
    const int legConnection = rig.legConnections.first();
    QSignalSpy legGone(&rig.hub(), &FakeHub::clientDisconnected);

    // when the hub closes the handle (the run is over),
    rig.hubHandle->close(CloseCode::Normal, QStringLiteral("the run ended"));

    // then the stream ends with the handle's cause on both ends,
    QTRY_VERIFY_WITH_TIMEOUT(streamEnding.seen, kEventTimeoutMs);
    QCOMPARE(streamEnding.reason, QStringLiteral("the run ended"));
    // the daemon's end closing as a stream does, not cut off with its leg,
    QTRY_VERIFY_WITH_TIMEOUT(daemonStreamEnding.seen, kEventTimeoutMs);
    QCOMPARE(daemonStreamEnding.code, CloseCode::Normal);
    QCOMPARE(daemonStreamEnding.reason, QStringLiteral("the run ended"));
    QTRY_VERIFY_WITH_TIMEOUT(!stream, kEventTimeoutMs);
    // the leg's connection goes, and so does the dial, once.
    QTRY_VERIFY_WITH_TIMEOUT(legGone.contains(QVariantList { legConnection }), kEventTimeoutMs);
    QTRY_VERIFY_WITH_TIMEOUT(!rig.dial, kEventTimeoutMs);
    QVERIFY(!rig.legClient);
    QCOMPARE(rig.endings, 1);
    QVERIFY(rig.failures.isEmpty());
}

void TestStreamLegDial::theHandleClosingBeforeTheStreamEndsTheLeg()
{
    // Given a leg that is up but carries no stream yet,
    LegRig rig;
    QVERIFY(rig.raiseLeg(2s));
    const int legConnection = rig.legConnections.first();
    QSignalSpy legGone(&rig.hub(), &FakeHub::clientDisconnected);

    // when the hub takes the device back,
    rig.hubHandle->close(CloseCode::Normal, QStringLiteral("the binding ended"));

    // then the leg's connection goes with the dial, and is not dialled
    // again: nothing is passed on and nothing failed.
    QTRY_VERIFY_WITH_TIMEOUT(legGone.contains(QVariantList { legConnection }), kEventTimeoutMs);
    QTRY_VERIFY_WITH_TIMEOUT(!rig.dial, kEventTimeoutMs);
    QCOMPARE(rig.endings, 1);
    QVERIFY(rig.failures.isEmpty());
    QVERIFY(rig.arrivals.isEmpty());
    const int connections = rig.hub().connectionCount();
    QTest::qWait(1200); // longer than the leg's longest backoff
    QCOMPARE(rig.hub().connectionCount(), connections);
}

void TestStreamLegDial::theHubGivingUpOnLegsBeforeTheStreamIsAFailure()
{
    // Given a leg that is up but carries no stream yet,
    LegRig rig;
    QVERIFY(rig.raiseLeg(2s));
    const int legConnection = rig.legConnections.first();
    QSignalSpy legGone(&rig.hub(), &FakeHub::clientDisconnected);

    // when the hub closes the handle because the other daemon's leg was
    // unreachable,
    rig.hubHandle->close(CloseCode::Refused,
        QString(protocol::kDirectLegUnreachable) + QStringLiteral("no stream within 5 s"));

    // then the dial fails with that reason, so its owner awaits the stream
    // on the tunnels, and the leg goes without being dialled again.
    QTRY_COMPARE_WITH_TIMEOUT(rig.failures.size(), 1, kEventTimeoutMs);
    QCOMPARE(rig.failures.first(), QStringLiteral("no stream within 5 s"));
    QTRY_VERIFY_WITH_TIMEOUT(legGone.contains(QVariantList { legConnection }), kEventTimeoutMs);
    QTRY_VERIFY_WITH_TIMEOUT(!rig.dial, kEventTimeoutMs);
    QCOMPARE(rig.endings, 1);
    QVERIFY(rig.arrivals.isEmpty());
}

void TestStreamLegDial::theStreamClosingEndsTheHandle()
{
    // Given a stream that arrived on its leg,
    LegRig rig;
    QPointer<Channel> hubStream = rig.raiseStream();
    QVERIFY(hubStream);
    QSignalSpy legGone(&rig.hub(), &FakeHub::clientDisconnected);

    // when the stream ends on the hub's side (the far end went),
    hubStream->close(CloseCode::DeviceGone, QStringLiteral("the agent lost the device"));

    // then the handle ends with the stream's cause, the leg goes, and the
    // dial with it.
    QTRY_VERIFY_WITH_TIMEOUT(rig.handleEnding.seen, kEventTimeoutMs);
    QCOMPARE(rig.handleEnding.code, CloseCode::DeviceGone);
    QCOMPARE(rig.handleEnding.reason, QStringLiteral("the agent lost the device"));
    QTRY_VERIFY_WITH_TIMEOUT(!legGone.isEmpty(), kEventTimeoutMs);
    QTRY_VERIFY_WITH_TIMEOUT(!rig.dial, kEventTimeoutMs);
    QCOMPARE(rig.endings, 1);
    QVERIFY(rig.failures.isEmpty());
}

void TestStreamLegDial::aStreamRefusedHereEndsTheHandle()
{
    // Given a daemon that cannot take its stream when it arrives,
    LegRig rig;
    rig.refuseArrivals = true;
    QVERIFY(rig.raiseLeg(2s));

    // when the stream comes,
    QPointer<Channel> hubStream = rig.openStream(segmentOpen(kRunId, kBindingId, false));
    QVERIFY(hubStream);
    ChannelEnding streamEnding(hubStream);

    // then the stream is refused and the handle closes with the same reason.
    QTRY_VERIFY_WITH_TIMEOUT(rig.handleEnding.seen, kEventTimeoutMs);
    QCOMPARE(rig.handleEnding.code, CloseCode::Refused);
    QCOMPARE(rig.handleEnding.reason, QStringLiteral("the interface went away"));
    QTRY_VERIFY_WITH_TIMEOUT(streamEnding.seen, kEventTimeoutMs);
    QCOMPARE(streamEnding.code, CloseCode::Refused);
    QTRY_VERIFY_WITH_TIMEOUT(!rig.dial, kEventTimeoutMs);
    QVERIFY(rig.failures.isEmpty());
}

void TestStreamLegDial::nothingWithinTheBoundClosesTheHandleAsUnreachable()
{
    // Given a hub that welcomes the leg but never opens the stream on it,
    LegRig rig;
    QVERIFY(rig.startSession());
    QElapsedTimer clock;
    clock.start();

    // when the dial's bound passes,
    QVERIFY(rig.openHandle(rig.sessionDialer(400ms), 400ms));
    QSignalSpy legGone(&rig.hub(), &FakeHub::clientDisconnected);

    // then the handle is closed saying the leg is unreachable, so the hub
    // carries the stream itself,
    QTRY_VERIFY_WITH_TIMEOUT(rig.handleEnding.seen, kEventTimeoutMs);
    QVERIFY(clock.elapsed() >= 400);
    QVERIFY2(isUnreachableClose(rig.handleEnding), qPrintable(rig.handleEnding.reason));
    QVERIFY2(rig.handleEnding.reason.contains(QStringLiteral("no stream within")),
        qPrintable(rig.handleEnding.reason));
    // the dial says so once, and its connection goes.
    QCOMPARE(rig.failures.size(), 1);
    QTRY_VERIFY_WITH_TIMEOUT(!rig.dial, kEventTimeoutMs);
    QCOMPARE(rig.endings, 1);
    QTRY_VERIFY_WITH_TIMEOUT(!legGone.isEmpty(), kEventTimeoutMs);
    QVERIFY(rig.arrivals.isEmpty());
}

void TestStreamLegDial::aLegRefusedForGoodFailsAtOnce()
{
    // Given a hub that refuses the leg for good (another daemon's ticket),
    LegRig rig;
    rig.legAnswers = { LegRig::LegAnswer::RefuseForGood };
    QVERIFY(rig.startSession());
    QElapsedTimer clock;
    clock.start();

    // when the daemon dials within a long bound,
    QVERIFY(rig.openHandle(rig.sessionDialer(30s), 30s));

    // then the handle closes as unreachable with the hub's word, long
    // before the bound, and the leg is not dialled again.
    QTRY_VERIFY_WITH_TIMEOUT(rig.handleEnding.seen, kEventTimeoutMs);
    QVERIFY(clock.elapsed() < 5000);
    QVERIFY2(isUnreachableClose(rig.handleEnding), qPrintable(rig.handleEnding.reason));
    QVERIFY2(rig.handleEnding.reason.contains(QStringLiteral("no such ticket waits here")),
        qPrintable(rig.handleEnding.reason));
    QCOMPARE(rig.failures.size(), 1);
    QTRY_VERIFY_WITH_TIMEOUT(!rig.dial, kEventTimeoutMs);
    QCOMPARE(rig.legHellos.size(), 1);
}

void TestStreamLegDial::aDialerWithoutClientFailsAtOnce()
{
    // Given a daemon that cannot make a client for the leg,
    LegRig rig;
    QVERIFY(rig.startSession());
    const StreamLegDial::Dialer none = [](const protocol::DirectLeg &, QObject *) {
        return static_cast<TunnelClient *>(nullptr);
    };

    // when the handle comes,
    QVERIFY(rig.openHandle(none, 30s));

    // then it is closed as unreachable straight away, nothing is dialled,
    QTRY_VERIFY_WITH_TIMEOUT(rig.handleEnding.seen, kEventTimeoutMs);
    QVERIFY2(isUnreachableClose(rig.handleEnding), qPrintable(rig.handleEnding.reason));
    QCOMPARE(rig.failures.size(), 1);
    QCOMPARE(rig.endings, 1);
    QCOMPARE(rig.hub().connectionCount(), 1); // the session's only
    // and the dial is gone.
    QTRY_VERIFY_WITH_TIMEOUT(!rig.dial, kEventTimeoutMs);
}

void TestStreamLegDial::aLegClientIsTheSessionsWithTheTicket()
{
    // Given a session connected to its hub,
    LegRig rig;
    QVERIFY(rig.startSession());

    // when a client is made for a leg without a URL,
    QObject owner;
    const protocol::DirectLeg leg { QString(), ticket() };
    TunnelClient *client = daemon::makeLegClient(rig.session.get(),
        QStringLiteral("cred-forwarder"), leg, protocol::kForwarderLegPath, 1500ms, &owner);

    // then it goes to the URL the session is connected to, at the leg's
    // path, trusting as the session does, with the ticket and nothing of
    // the session's own, and quick retries within the bound.
    QVERIFY(client);
    QCOMPARE(client->parent(), &owner);
    QCOMPARE(client->state(), TunnelClient::State::Idle);
    const tunnel::TunnelClientOptions &options = client->options();
    QCOMPARE(options.hubUrls, QList<QUrl> { rig.session->currentUrl() });
    QCOMPARE(options.endpointPath, legPath());
    QCOMPARE(options.streamTicket, ticket());
    QVERIFY(options.capabilities.isEmpty());
    QVERIFY(options.channel.isEmpty());
    QCOMPARE(options.role, rig.session->options().role);
    QCOMPARE(options.allowInsecurePlaintext, rig.session->options().allowInsecurePlaintext);
    QCOMPARE(options.authenticationTimeout, 1500ms);
    QCOMPARE(options.initialBackoff, 100ms);
    QCOMPARE(options.maxBackoff, 800ms);
}

void TestStreamLegDial::aLegWithAUrlGoesThere()
{
    // Given a session, when a client is made for a leg naming another
    // member, it goes there; a URL that is no hub URL makes none.
    LegRig rig;
    QVERIFY(rig.startSession());
    QObject owner;
    TunnelClient *client = daemon::makeLegClient(rig.session.get(), QStringLiteral("c"),
        protocol::DirectLeg { QStringLiteral("wss://hub-a.example:7443"), ticket() },
        protocol::kDirectLegPath, 5s, &owner);
    QVERIFY(client);
    QCOMPARE(client->options().hubUrls,
        QList<QUrl> { QUrl(QStringLiteral("wss://hub-a.example:7443")) });
    QCOMPARE(client->options().endpointPath, QString(protocol::kDirectLegPath));
    QVERIFY(!daemon::makeLegClient(rig.session.get(), QStringLiteral("c"),
        protocol::DirectLeg { QStringLiteral("ws://hub-a.example:7443"), ticket() },
        protocol::kDirectLegPath, 5s, &owner));
}

void TestStreamLegDial::noLegClientWithoutASession()
{
    // A leg to "this hub" needs a session connected now.
    QObject owner;
    const protocol::DirectLeg leg { QString(), ticket() };
    QVERIFY(!daemon::makeLegClient(
        nullptr, QStringLiteral("c"), leg, protocol::kForwarderLegPath, 5s, &owner));
    tunnel::TunnelClientOptions options;
    options.hubUrls = { QUrl(QStringLiteral("wss://hub.example:7443")) };
    TunnelClient idle(options);
    QVERIFY(!daemon::makeLegClient(
        &idle, QStringLiteral("c"), leg, protocol::kForwarderLegPath, 5s, &owner));
    QVERIFY(owner.children().isEmpty());
}

QTEST_GUILESS_MAIN(TestStreamLegDial)
#include "tst_streamlegdial.moc"
