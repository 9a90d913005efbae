// Tests of what a daemon endpoint (hub/server/daemongateway.h) tells its
// daemons about the hub: the daemon URLs of its cluster's live members and
// the pins of its keys, each in the welcome and as a message while a session
// lives, to the daemons whose protocol reads it. Daemons are plain
// QWebSockets on 127.0.0.1 speaking to an in-process QWebSocketServer; the
// directory behind the gateway admits every credential "daemon-<id>".

#include "common/net/qtmessagesocket.h"
#include "common/protocol/channelopen.h"
#include "common/protocol/controlmessage.h"
#include "common/protocol/protocolversion.h"
#include "hub/server/daemondirectory.h"
#include "hub/server/daemongateway.h"

#include <QHostAddress>
#include <QSignalSpy>
#include <QTest>
#include <QWebSocket>
#include <QWebSocketServer>

#include <memory>

using namespace cloop;
using namespace cloop::hub;

namespace {

constexpr int kEventTimeoutMs = 5000;
constexpr int kNewProtocol = protocol::kMinimumForHubMembers;
constexpr int kOldProtocol = protocol::kMinimumForHubMembers - 1;

QString pinOf(char fill)
{
    return QStringLiteral("sha256:") + QString::fromLatin1(QByteArray(32, fill).toBase64());
}

QList<QUrl> urls(const QStringList &texts)
{
    QList<QUrl> list;
    for (const QString &text : texts)
        list.append(QUrl(text));
    return list;
}

class AdmitEveryone final : public DaemonDirectory
{
public:
    protocol::PeerRole role() const override { return protocol::PeerRole::Forwarder; }
    QString endpointPath() const override { return QStringLiteral("/api/forwarders/connect"); }
    Result<AdmittedDaemon> authenticate(const protocol::Hello &hello) override
    {
        AdmittedDaemon admitted;
        admitted.id = hello.credential.section(QLatin1Char('-'), 1).toLongLong();
        admitted.name = hello.credential;
        admitted.welcome.protocol = protocol::kVersion;
        admitted.welcome.software = QStringLiteral("tst_daemongateway");
        admitted.welcome.id = admitted.id;
        admitted.welcome.name = admitted.name;
        return admitted;
    }
    Result<AdmittedDaemon> redeem(const protocol::Redeem &) override
    {
        return Error::make(QStringLiteral("token_unknown"), QStringLiteral("no tokens here"), true);
    }
    Result<AdmittedDaemon> identify(const protocol::Hello &hello) override
    {
        ++identified;
        return authenticate(hello);
    }
    Status touchLastSeen(qint64) override { return {}; }

    int identified = 0;
};

// One daemon: says hello with its protocol and keeps every control message.
class Daemon final : public QObject
{
public:
    Daemon(const QUrl &url, qint64 id, int protocolVersion, const QString &streamTicket = {})
    {
        connect(&socket, &QWebSocket::connected, this, [this, id, protocolVersion, streamTicket] {
            protocol::Hello hello;
            hello.protocol = protocolVersion;
            hello.software = QStringLiteral("daemon");
            hello.role = protocol::PeerRole::Forwarder;
            hello.credential = QStringLiteral("daemon-%1").arg(id);
            hello.streamTicket = streamTicket;
            socket.sendTextMessage(QString::fromUtf8(protocol::serializeControlMessage(hello)));
        });
        connect(&socket, &QWebSocket::textMessageReceived, this, [this](const QString &text) {
            auto parsed = protocol::parseControlMessage(text.toUtf8());
            if (parsed)
                messages.append(*parsed);
            else
                unreadable.append(text);
        });
        socket.open(url);
    }

    QStringList types() const
    {
        QStringList names;
        for (const protocol::ControlMessage &message : messages)
            names.append(protocol::controlMessageType(message));
        return names;
    }
    template <typename T> QList<T> all() const
    {
        QList<T> found;
        for (const protocol::ControlMessage &message : messages)
            if (const T *typed = std::get_if<T>(&message))
                found.append(*typed);
        return found;
    }

    QWebSocket socket;
    QList<protocol::ControlMessage> messages;
    QStringList unreadable;
};

} // namespace

class TestDaemonGateway final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void welcomeCarriesTheAnnouncedHubs();
    void hubMembersGoOnlyToDaemonsThatTakeThem();
    void olderDaemonsAreToldNoMorePinsThanTheyRead();
    void hubsNoDaemonWouldTakeAreLeftOut();
    void aDirectLegGoesToTheDoorAndIsNeverASession();
    void aStreamTicketIsRefusedAnywhereButItsDoor();
    void theRelayDoorTakesTheTicketsItKnowsFirst();
    void aStoppingHubAsksForASpreadReturn();
    void theReturnWindowGrowsWithTheSessions();

private:
    // A daemon, once welcomed.
    std::unique_ptr<Daemon> welcomed(qint64 id, int protocolVersion);

    AdmitEveryone m_directory;
    std::unique_ptr<DaemonGateway> m_gateway;
    std::unique_ptr<QWebSocketServer> m_server;
    QUrl m_url;
};

void TestDaemonGateway::init()
{
    m_directory.identified = 0;
    m_gateway = std::make_unique<DaemonGateway>(m_directory, DaemonGateway::Options {});
    m_server = std::make_unique<QWebSocketServer>(
        QStringLiteral("tst_daemongateway"), QWebSocketServer::NonSecureMode);
    QVERIFY(m_server->listen(QHostAddress::LocalHost, 0));
    connect(m_server.get(), &QWebSocketServer::newConnection, this, [this] {
        while (QWebSocket *socket = m_server->nextPendingConnection())
            m_gateway->handleSocket(std::make_unique<net::QtMessageSocket>(socket), {},
                socket->requestUrl().path() == protocol::kDirectLegPath
                    ? DaemonGateway::Purpose::DirectLeg
                    : DaemonGateway::Purpose::Session);
    });
    m_url = QUrl(
        QStringLiteral("ws://127.0.0.1:%1/api/forwarders/connect").arg(m_server->serverPort()));
}

void TestDaemonGateway::cleanup()
{
    m_server.reset();
    m_gateway.reset();
}

std::unique_ptr<Daemon> TestDaemonGateway::welcomed(qint64 id, int protocolVersion)
{
    auto daemon = std::make_unique<Daemon>(m_url, id, protocolVersion);
    // QTRY_* return from the function they are in: keep them in a lambda.
    [&] {
        QTRY_VERIFY_WITH_TIMEOUT(!daemon->all<protocol::Welcome>().isEmpty(), kEventTimeoutMs);
    }();
    return daemon;
}

void TestDaemonGateway::welcomeCarriesTheAnnouncedHubs()
{
    // Given a hub that announced its cluster's members,
    const QList<QUrl> members = urls(
        { QStringLiteral("wss://hub-a.example:7443"), QStringLiteral("wss://hub-b.example:7443") });
    m_gateway->announceHubs(members);
    QCOMPARE(m_gateway->announcedHubs(), members);

    // when daemons of this protocol and of the one before connect,
    auto current = welcomed(1, kNewProtocol);
    auto older = welcomed(2, kOldProtocol);

    // then both welcomes name the members, in order (an older daemon reads
    // past a key it does not know), and nothing else was sent.
    QCOMPARE(current->all<protocol::Welcome>().first().hubs, members);
    QCOMPARE(older->all<protocol::Welcome>().first().hubs, members);
    QCOMPARE(current->types(), QStringList { QStringLiteral("welcome") });
    QCOMPARE(older->types(), QStringList { QStringLiteral("welcome") });
}

void TestDaemonGateway::hubMembersGoOnlyToDaemonsThatTakeThem()
{
    // Given a daemon of this protocol and one of the protocol before,
    auto current = welcomed(1, kNewProtocol);
    auto older = welcomed(2, kOldProtocol);
    QVERIFY(current->all<protocol::Welcome>().first().hubs.isEmpty());

    // when the cluster's members are announced (twice, the same), followed
    // by the hub's pins, which both take and which mark the end,
    const QList<QUrl> members = urls({ QStringLiteral("wss://hub-b.example:7443"),
        QStringLiteral("wss://hub-a.example:7443"), QStringLiteral("ws://127.0.0.1:7443") });
    m_gateway->announceHubs(members);
    m_gateway->announceHubs(members);
    m_gateway->announcePins({ pinOf('a') });
    QTRY_VERIFY_WITH_TIMEOUT(
        !current->all<protocol::HubPins>().isEmpty() && !older->all<protocol::HubPins>().isEmpty(),
        kEventTimeoutMs);

    // then the current daemon heard the members once, before the pins, and
    // the older daemon never heard of them.
    QCOMPARE(current->types(),
        (QStringList { QStringLiteral("welcome"), QStringLiteral("hub.members"),
            QStringLiteral("hub.pins") }));
    QCOMPARE(current->all<protocol::HubMembers>().first().hubs, members);
    QCOMPARE(
        older->types(), (QStringList { QStringLiteral("welcome"), QStringLiteral("hub.pins") }));
    QVERIFY(current->unreadable.isEmpty());
    QVERIFY(older->unreadable.isEmpty());
}

void TestDaemonGateway::olderDaemonsAreToldNoMorePinsThanTheyRead()
{
    // Given a cluster whose members' keys make six pins,
    QStringList six;
    for (char fill = 'a'; fill < 'a' + 6; ++fill)
        six.append(pinOf(fill));
    m_gateway->announcePins(six);

    // when daemons of both protocols connect,
    auto current = welcomed(1, kNewProtocol);
    auto older = welcomed(2, kOldProtocol);

    // then the current one pins all six, the older one (which reads at most
    // four) is welcomed without pins and keeps those it has,
    QCOMPARE(current->all<protocol::Welcome>().first().pins, six);
    QVERIFY(older->all<protocol::Welcome>().first().pins.isEmpty());
    QVERIFY(older->unreadable.isEmpty());

    // and a new set of six reaches the current one only (the older one's
    // session ending marks the end of what it was sent).
    six.replace(0, pinOf('z'));
    m_gateway->announcePins(six);
    m_gateway->drop(2,
        protocol::ErrorMessage { QStringLiteral("replaced"), QStringLiteral("test over"), false });
    QTRY_VERIFY_WITH_TIMEOUT(!older->all<protocol::ErrorMessage>().isEmpty(), kEventTimeoutMs);
    QTRY_VERIFY_WITH_TIMEOUT(!current->all<protocol::HubPins>().isEmpty(), kEventTimeoutMs);
    QCOMPARE(current->all<protocol::HubPins>().first().pins, six);
    QCOMPARE(older->types(), (QStringList { QStringLiteral("welcome"), QStringLiteral("error") }));
}

void TestDaemonGateway::hubsNoDaemonWouldTakeAreLeftOut()
{
    auto current = welcomed(1, kNewProtocol);

    // Given a member list with URLs a daemon would refuse (plaintext to
    // another host, another scheme, one named twice, past the sixteenth),
    QStringList texts { QStringLiteral("wss://hub-a.example:7443"),
        QStringLiteral("ws://hub-b.example:7443"), QStringLiteral("ftp://hub-c.example"),
        QStringLiteral("https://hub-a.example:7443/") };
    for (int i = 1; i <= 20; ++i)
        texts.append(QStringLiteral("wss://member-%1.example:7443").arg(i));

    // when it is announced,
    m_gateway->announceHubs(urls(texts));

    // then what daemons hear is the first good sixteen, and they read it.
    QList<QUrl> expected { QUrl(QStringLiteral("wss://hub-a.example:7443")) };
    for (int i = 1; i <= protocol::kMaxHubMembers - 1; ++i)
        expected.append(QUrl(QStringLiteral("wss://member-%1.example:7443").arg(i)));
    QCOMPARE(m_gateway->announcedHubs(), expected);
    QTRY_VERIFY_WITH_TIMEOUT(!current->all<protocol::HubMembers>().isEmpty(), kEventTimeoutMs);
    QCOMPARE(current->all<protocol::HubMembers>().first().hubs, expected);
    QVERIFY(current->unreadable.isEmpty());
}

namespace {
const QString kGoodTicket(43, u'g');
const QString kOtherTicket(43, u'o');

template <typename T> QString firstErrorCode(const Daemon &daemon)
{
    const auto errors = daemon.all<T>();
    return errors.isEmpty() ? QString() : errors.first().code;
}
} // namespace

void TestDaemonGateway::aDirectLegGoesToTheDoorAndIsNeverASession()
{
    // Given a door that waits for daemon 5 with one ticket,
    QList<tunnel::TunnelConnection *> opened;
    m_gateway->setStreamDoor(
        [&opened](qint64 id, const QString &ticket,
            const std::function<tunnel::TunnelConnection *()> &open) -> Status {
            if (id != 5 || ticket != kGoodTicket)
                return Error::make(QStringLiteral("stream_ticket_refused"), QStringLiteral("no"));
            opened.append(open());
            return {};
        });
    QSignalSpy connected(m_gateway.get(), &DaemonGateway::daemonConnected);
    QUrl direct = m_url;
    direct.setPath(QString(protocol::kDirectLegPath));

    // when daemon 5 comes to the direct-leg path with it,
    Daemon leg(direct, 5, protocol::kVersion, kGoodTicket);
    QTRY_VERIFY_WITH_TIMEOUT(!leg.all<protocol::Welcome>().isEmpty(), kEventTimeoutMs);

    // then it is welcomed on a connection the door was given, identified
    // without being recorded, and it is no session of the hub's;
    QCOMPARE(opened.size(), 1);
    QCOMPARE(m_directory.identified, 1);
    QVERIFY(!m_gateway->isConnected(5));
    QCOMPARE(connected.size(), 0);

    // and daemon 6 with a ticket the door does not know is refused with the
    // door's word, and the door opened nothing for it.
    Daemon stranger(direct, 6, protocol::kVersion, kOtherTicket);
    QTRY_COMPARE_WITH_TIMEOUT(firstErrorCode<protocol::ErrorMessage>(stranger),
        QStringLiteral("stream_ticket_refused"), kEventTimeoutMs);
    QCOMPARE(opened.size(), 1);
    QVERIFY(stranger.all<protocol::Welcome>().isEmpty());
    QVERIFY(!m_gateway->isConnected(6));
    QCOMPARE(connected.size(), 0);
}

void TestDaemonGateway::aStreamTicketIsRefusedAnywhereButItsDoor()
{
    QUrl direct = m_url;
    direct.setPath(QString(protocol::kDirectLegPath));

    // A lone hub has no door: a ticket there is refused.
    Daemon alone(direct, 5, protocol::kVersion, kGoodTicket);
    QTRY_COMPARE_WITH_TIMEOUT(firstErrorCode<protocol::ErrorMessage>(alone),
        QStringLiteral("protocol_error"), kEventTimeoutMs);
    QCOMPARE(m_directory.identified, 0);

    int doorCalls = 0;
    m_gateway->setStreamDoor(
        [&doorCalls](qint64, const QString &, const std::function<tunnel::TunnelConnection *()> &) {
            ++doorCalls;
            return Status {};
        });
    // A ticket on the session's path, and a session's hello on the leg's,
    // are refused before any credential is looked at.
    Daemon ticketOnSessionPath(m_url, 5, protocol::kVersion, kGoodTicket);
    Daemon sessionOnLegPath(direct, 6, protocol::kVersion);
    QTRY_COMPARE_WITH_TIMEOUT(firstErrorCode<protocol::ErrorMessage>(ticketOnSessionPath),
        QStringLiteral("protocol_error"), kEventTimeoutMs);
    QTRY_COMPARE_WITH_TIMEOUT(firstErrorCode<protocol::ErrorMessage>(sessionOnLegPath),
        QStringLiteral("protocol_error"), kEventTimeoutMs);
    QCOMPARE(doorCalls, 0);
    QCOMPARE(m_directory.identified, 0);
    QVERIFY(!m_gateway->isConnected(5));
    QVERIFY(!m_gateway->isConnected(6));
}

void TestDaemonGateway::theRelayDoorTakesTheTicketsItKnowsFirst()
{
    // Given the hub's relay door, which knows one ticket, and a cluster's,
    QStringList relayed;
    QStringList clustered;
    const auto doorInto = [](QStringList &calls) {
        return [&calls](qint64, const QString &ticket,
                   const std::function<tunnel::TunnelConnection *()> &open) -> Status {
            calls.append(ticket);
            open();
            return {};
        };
    };
    m_gateway->setRelayDoor(
        [](const QString &ticket) { return ticket == kGoodTicket; }, doorInto(relayed));
    m_gateway->setStreamDoor(doorInto(clustered));
    QUrl direct = m_url;
    direct.setPath(QString(protocol::kDirectLegPath));

    // a leg with that ticket goes to the relay door, any other to the
    // cluster's;
    Daemon relayedLeg(direct, 5, protocol::kVersion, kGoodTicket);
    Daemon clusterLeg(direct, 6, protocol::kVersion, kOtherTicket);
    QTRY_VERIFY_WITH_TIMEOUT(!relayedLeg.all<protocol::Welcome>().isEmpty(), kEventTimeoutMs);
    QTRY_VERIFY_WITH_TIMEOUT(!clusterLeg.all<protocol::Welcome>().isEmpty(), kEventTimeoutMs);
    QCOMPARE(relayed, QStringList { kGoodTicket });
    QCOMPARE(clustered, QStringList { kOtherTicket });

    // and without a cluster, the relay door answers for every ticket (it
    // refuses those it does not know).
    m_gateway->setStreamDoor({});
    Daemon lone(direct, 7, protocol::kVersion, kOtherTicket);
    QTRY_COMPARE_WITH_TIMEOUT(relayed.size(), 2, kEventTimeoutMs);
    QCOMPARE(clustered.size(), 1);
    QVERIFY(!m_gateway->isConnected(5) && !m_gateway->isConnected(6) && !m_gateway->isConnected(7));
}

void TestDaemonGateway::aStoppingHubAsksForASpreadReturn()
{
    // Given a daemon that reads a return window and one from before it,
    auto current = welcomed(1, protocol::kMinimumForReturnSpread);
    auto older = welcomed(2, protocol::kMinimumForReturnSpread - 1);
    QSignalSpy currentClosed(&current->socket, &QWebSocket::disconnected);
    QSignalSpy olderClosed(&older->socket, &QWebSocket::disconnected);

    // when the hub stops, asking for their return within 20 s,
    m_gateway->closeEverySession(QStringLiteral("the hub is stopping"), std::chrono::seconds(20));

    // then the current daemon is told the window before its close, the
    // older one only the close (an error it would log as a failure),
    QTRY_VERIFY_WITH_TIMEOUT(
        currentClosed.count() == 1 && olderClosed.count() == 1, kEventTimeoutMs);
    const QList<protocol::ErrorMessage> told = current->all<protocol::ErrorMessage>();
    QCOMPARE(told.size(), 1);
    QCOMPARE(told.first().code, QStringLiteral("hub_stopping"));
    QCOMPARE(told.first().message, QStringLiteral("the hub is stopping"));
    QCOMPARE(told.first().retryWithinMs, qint64(20'000));
    QVERIFY(!told.first().permanent);
    QCOMPARE(older->types(), QStringList { QStringLiteral("welcome") });
    // both with the reason in their close frame, and neither reported gone.
    QCOMPARE(current->socket.closeReason(), QStringLiteral("the hub is stopping"));
    QCOMPARE(older->socket.closeReason(), QStringLiteral("the hub is stopping"));
    QVERIFY(!m_gateway->isConnected(1) && !m_gateway->isConnected(2));
}

void TestDaemonGateway::theReturnWindowGrowsWithTheSessions()
{
    QCOMPARE(returnSpreadFor(0), std::chrono::milliseconds(0));
    QCOMPARE(returnSpreadFor(1), std::chrono::milliseconds(1000 / kReturnsPerSecond));
    QCOMPARE(returnSpreadFor(10'000), std::chrono::milliseconds(10'000'000 / kReturnsPerSecond));
    QCOMPARE(returnSpreadFor(-3), std::chrono::milliseconds(0));
    // However many, never beyond what a daemon takes.
    QCOMPARE(returnSpreadFor(100'000'000), std::chrono::milliseconds(protocol::kMaxRetryWithinMs));
}

QTEST_GUILESS_MAIN(TestDaemonGateway)
#include "tst_daemongateway.moc"
