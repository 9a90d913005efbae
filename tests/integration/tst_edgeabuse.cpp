// Integration: the hub's port under the attacks of someone holding no
// credential, against a real `cloop hub serve` on loopback. Each attack is
// tried as an attacker would, and the test shows it fails: the hub keeps
// accepting, keeps answering /api/health quickly, stays small, lets a valid
// daemon in, and says no more than it must. Each test prints its figures.

#include "support/edgeclient.h"
#include "support/pinnedhttp.h"
#include "support/testrig.h"

#include "common/identity/enrollmentbundle.h"
#include "common/protocol/controlmessage.h"
#include "common/protocol/protocolversion.h"

#include <QElapsedTimer>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>
#include <QThread>

#include <atomic>

#include <csignal>
#include <sys/resource.h>

using namespace cloop;
using namespace cloop::testing;

namespace {

// How long until /api/health answers 200 (retrying), or -1 if not within limitMs.
qint64 healthWithin(HubProcess &hub, int limitMs)
{
    QElapsedTimer clock;
    clock.start();
    while (clock.elapsed() < limitMs) {
        const HttpResult answer = pinnedGet(hub.apiUrl(QStringLiteral("/api/health")), hub.pin(),
            {}, static_cast<int>(std::max<qint64>(100, limitMs - clock.elapsed())));
        if (answer.status == 200)
            return clock.elapsed();
        QTest::qWait(20);
    }
    return -1;
}

// One /api/health round trip, in milliseconds (-1 when it failed).
qint64 healthLatency(HubProcess &hub, int timeoutMs = 5000)
{
    QElapsedTimer clock;
    clock.start();
    const HttpResult answer
        = pinnedGet(hub.apiUrl(QStringLiteral("/api/health")), hub.pin(), {}, timeoutMs);
    if (answer.status != 200)
        qWarning().noquote() << "/api/health:" << answer.describe();
    return answer.status == 200 ? clock.elapsed() : -1;
}

QHostAddress source(int index)
{
    // 127.0.1.1 onwards: loopback addresses that each count as a source.
    return QHostAddress(QStringLiteral("127.0.%1.%2").arg(1 + index / 250).arg(1 + index % 250));
}

QByteArray jsonBody(const QJsonObject &object)
{
    return QJsonDocument(object).toJson(QJsonDocument::Compact);
}

QByteArray post(const QString &path, const QString &token, const QByteArray &body)
{
    return "POST " + path.toLatin1() + " HTTP/1.1\r\nHost: hub\r\nAuthorization: Bearer "
        + token.toLatin1() + "\r\nContent-Type: application/json\r\nContent-Length: "
        + QByteArray::number(body.size()) + "\r\n\r\n" + body;
}

QJsonObject bodyOf(const QByteArray &answer)
{
    return QJsonDocument::fromJson(answer.mid(answer.indexOf("\r\n\r\n") + 4)).object();
}

int countLines(const QString &log, const QString &needle)
{
    return static_cast<int>(log.count(needle));
}

} // namespace

class TestEdgeAbuse final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanup();

    void burstOfAbandonedConnectionsWhileBusy();
    void reconnectStormOfAThousand();
    void openFilesLimitReachedWithoutASpin();
    void hugeDeclaredBodyWithoutCredentials();
    void hugeHeadAnswered431WhileHealthAnswers();
    void daemonGetsInDuringAnUpgradeFlood();
    void garbageBeforeHelloEarnsOneReply();
    void idleConnectionsAreClosed();
    void slowHeadIsCut();

private:
    bool startHub(const QStringList &serveArguments = {}, int openFilesLimit = 0);
    // A forwarder enrolled, started (the real cloop-forward) and connected:
    // how long from its start, or -1.
    qint64 forwarderGetsIn(const QString &name);

    std::unique_ptr<TestRig> m_rig;
};

void TestEdgeAbuse::initTestCase()
{
    // The attackers below hold a thousand sockets or more.
    rlimit limit {};
    ::getrlimit(RLIMIT_NOFILE, &limit);
    limit.rlim_cur = limit.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &limit);
    QVERIFY2(limit.rlim_cur >= 4096, "the tests need 4096 open files");
}

void TestEdgeAbuse::cleanup()
{
    if (QTest::currentTestFailed() && m_rig)
        m_rig->printDiagnostics();
    m_rig.reset();
}

bool TestEdgeAbuse::startHub(const QStringList &serveArguments, int openFilesLimit)
{
    m_rig = std::make_unique<TestRig>();
    m_rig->hub().setServeArguments(serveArguments);
    m_rig->hub().setOpenFilesLimit(openFilesLimit);
    if (!m_rig->startHub()) {
        qWarning().noquote() << m_rig->lastError();
        return false;
    }
    return true;
}

qint64 TestEdgeAbuse::forwarderGetsIn(const QString &name)
{
    const Enrollment enrollment = m_rig->hub().enroll(name);
    if (!enrollment.ok) {
        qWarning().noquote() << enrollment.error;
        return -1;
    }
    ForwarderProcess &forwarder
        = m_rig->addForwarder({ QStringLiteral("--bundle"), enrollment.bundle,
            QStringLiteral("--credential-file"), m_rig->path(name + QLatin1String(".json")) });
    QElapsedTimer clock;
    clock.start();
    if (!m_rig->startAndAwaitConnection(forwarder, enrollment.id)) {
        qWarning().noquote() << m_rig->lastError();
        return -1;
    }
    return clock.elapsed();
}

void TestEdgeAbuse::burstOfAbandonedConnectionsWhileBusy()
{
    QVERIFY(startHub());
    HubProcess &hub = m_rig->hub();
    const quint16 port = hub.port();

    // Given a hub busy for a moment (stopped), 31 clients connect and give
    // up before their TLS handshake: half with a FIN, half with a reset.
    QVERIFY(::kill(static_cast<pid_t>(hub.pid()), SIGSTOP) == 0);
    std::vector<util::Fd> clients;
    for (int i = 0; i < 31; ++i)
        clients.push_back(rawConnect(port));
    const bool connected = waitUntil(
        [&] {
            return std::all_of(clients.begin(), clients.end(),
                [](const util::Fd &c) { return rawIsConnected(c); });
        },
        5000);
    for (size_t i = 0; i < clients.size(); ++i) {
        if (i % 2)
            rawReset(clients[i]);
        else
            clients[i].reset();
    }
    QVERIFY(::kill(static_cast<pid_t>(hub.pid()), SIGCONT) == 0);
    QVERIFY2(connected, "the kernel queued every connection");

    // Then /api/health and a new forwarder get in within a second.
    const qint64 health = healthWithin(hub, 1000);
    qInfo("after 31 abandoned connections: /api/health answered in %lld ms",
        static_cast<long long>(health));
    QVERIFY2(health >= 0, "the hub answers /api/health within a second");
    const qint64 forwarder = forwarderGetsIn(QStringLiteral("after-burst"));
    qInfo("a new forwarder connected %lld ms after it started", static_cast<long long>(forwarder));
    QVERIFY(forwarder >= 0 && forwarder < 1000);
    QCOMPARE(hub.isRunning(), true);
}

void TestEdgeAbuse::reconnectStormOfAThousand()
{
    QVERIFY(startHub());
    HubProcess &hub = m_rig->hub();

    // Given a thousand devices dialling at once, each from an address of its own
    std::vector<util::Fd> storm;
    for (int i = 0; i < 1000; ++i)
        storm.push_back(rawConnect(hub.port(), source(i)));
    int established = 0;
    waitUntil(
        [&] {
            established = static_cast<int>(std::count_if(
                storm.begin(), storm.end(), [](const util::Fd &c) { return rawIsConnected(c); }));
            return established == 1000;
        },
        10'000);
    qInfo("%d of 1000 simultaneous connects established (no SYN dropped)", established);
    QCOMPARE(established, 1000);

    // Then, while they are all still open, the hub answers and admits a forwarder.
    const qint64 health = healthWithin(hub, 1000);
    qInfo("during the storm: /api/health answered in %lld ms", static_cast<long long>(health));
    QVERIFY2(health >= 0, "the hub answers /api/health within a second");
    const qint64 forwarder = forwarderGetsIn(QStringLiteral("after-storm"));
    qInfo("during the storm: a new forwarder connected %lld ms after it started",
        static_cast<long long>(forwarder));
    QVERIFY(forwarder >= 0 && forwarder < 1000);
    storm.clear();
    QVERIFY(healthWithin(hub, 1000) >= 0);
}

void TestEdgeAbuse::openFilesLimitReachedWithoutASpin()
{
    // Given a hub allowed 160 open files, filled with forwarder sessions
    constexpr int kLimit = 160;
    QVERIFY(startHub({}, kLimit));
    HubProcess &hub = m_rig->hub();
    EdgeClient api;
    QVERIFY(api.connectTls(hub.port()));
    QList<QString> tokens;
    for (int i = 0; i < kLimit; ++i) {
        const QByteArray body
            = jsonBody({ { QStringLiteral("name"), QStringLiteral("fill-%1").arg(i) },
                { QStringLiteral("usb"), QStringLiteral("1050:0407") } });
        QVERIFY(api.send(post(QStringLiteral("/api/forwarders"), hub.adminToken(), body)));
        const QByteArray answer = api.readHttpAnswer();
        QCOMPARE(EdgeClient::statusOf(answer), 201);
        auto bundle = identity::EnrollmentBundle::decode(
            bodyOf(answer).value(QLatin1String("bundle")).toString(),
            identity::EnrollmentBundle::Kind::Forwarder);
        QVERIFY(bundle);
        tokens.append(bundle->token);
    }
    std::vector<std::unique_ptr<EdgeClient>> sessions;
    int admitted = 0;
    for (const QString &token : std::as_const(tokens)) {
        auto session = std::make_unique<EdgeClient>();
        if (!session->connectTls(hub.port(), 3000)
            || !session->upgradeWebSocket(QStringLiteral("/api/forwarders/connect"), 3000))
            continue;
        protocol::Redeem redeem;
        redeem.protocol = protocol::kVersion;
        redeem.software = QStringLiteral("edge-test");
        redeem.role = protocol::PeerRole::Forwarder;
        redeem.token = token;
        session->sendFrame(1, protocol::serializeControlMessage(redeem));
        sessions.push_back(std::move(session));
        ++admitted;
    }
    QVERIFY(waitUntil(
        [&] { return hub.log().contains(QLatin1String("out of file descriptors")); }, 10'000));
    qInfo("the hub ran out of descriptors after %d of %d sessions", admitted, kLimit);

    // When more connections arrive, each is refused at once, and the hub
    // does not spin while they wait.
    std::vector<util::Fd> refused;
    for (int i = 0; i < 20; ++i)
        refused.push_back(rawConnect(hub.port(), source(i)));
    QVERIFY(waitUntil(
        [&] {
            return std::all_of(refused.begin(), refused.end(),
                [](const util::Fd &c) { return rawClosedByPeer(c); });
        },
        2000));
    const ProcessStats before = processStats(hub.pid());
    QTest::qWait(2000);
    const ProcessStats after = processStats(hub.pid());
    const double cpu = after.cpuSeconds - before.cpuSeconds;
    qInfo("out of descriptors: %.2f s of CPU in 2 s, %d files open", cpu, after.openFiles);
    QVERIFY2(cpu < 0.3, qPrintable(QStringLiteral("the hub spent %1 s of CPU in 2 s").arg(cpu)));
    QVERIFY(hub.log().count(QLatin1String("out of file descriptors")) <= 10);

    // Then, with sessions gone, it serves again.
    sessions.resize(sessions.size() / 2);
    const qint64 health = healthWithin(hub, 3000);
    qInfo("after sessions left: /api/health answered in %lld ms", static_cast<long long>(health));
    QVERIFY(health >= 0);
    QVERIFY(hub.isRunning());
}

void TestEdgeAbuse::hugeDeclaredBodyWithoutCredentials()
{
    QVERIFY(startHub());
    HubProcess &hub = m_rig->hub();
    const qint64 rssBefore = processStats(hub.pid()).rssKiB;

    // An unauthenticated POST that declares 256 MiB and sends as fast as it can
    EdgeClient attacker;
    QVERIFY(attacker.connectTls(hub.port()));
    attacker.socket().write(
        "POST /api/forwarders HTTP/1.1\r\nHost: hub\r\nContent-Length: 268435456\r\n\r\n");
    const QByteArray chunk(64 * 1024, '\0');
    QByteArray answer;
    qint64 sent = 0;
    qint64 rssPeak = rssBefore;
    QElapsedTimer clock;
    clock.start();
    while (clock.elapsed() < 5000 && attacker.isOpen() && EdgeClient::statusOf(answer) == 0) {
        if (attacker.socket().bytesToWrite() + attacker.socket().encryptedBytesToWrite()
            < 1024 * 1024) {
            attacker.socket().write(chunk);
            sent += chunk.size();
        }
        QTest::qWait(1);
        answer += attacker.socket().readAll();
        rssPeak = std::max(rssPeak, processStats(hub.pid()).rssKiB);
    }
    answer += attacker.readHttpAnswer(2000);
    const qint64 growth = rssPeak - rssBefore;
    qInfo("256 MiB declared without a token: answered %d after %lld bytes (%lld ms); hub RSS %lld "
          "-> %lld KiB",
        EdgeClient::statusOf(answer), static_cast<long long>(sent),
        static_cast<long long>(clock.elapsed()), static_cast<long long>(rssBefore),
        static_cast<long long>(rssPeak));
    QCOMPARE(EdgeClient::statusOf(answer), 401);
    QVERIFY2(sent < 8 * 1024 * 1024, "the answer came before the body did");
    QVERIFY2(growth < 32 * 1024, qPrintable(QStringLiteral("the hub grew by %1 KiB").arg(growth)));

    // With a valid token, the declared length alone is refused: 413 at once.
    EdgeClient admin;
    QVERIFY(admin.connectTls(hub.port()));
    QVERIFY(admin.send("POST /api/forwarders HTTP/1.1\r\nHost: hub\r\nAuthorization: Bearer "
        + hub.adminToken().toLatin1() + "\r\nContent-Length: 268435456\r\n\r\n"));
    QCOMPARE(EdgeClient::statusOf(admin.readHttpAnswer()), 413);
    QVERIFY(healthLatency(hub) >= 0);
}

void TestEdgeAbuse::hugeHeadAnswered431WhileHealthAnswers()
{
    QVERIFY(startHub());
    HubProcess &hub = m_rig->hub();
    // What a probe costs on this machine now, without an attack: the
    // attack must add no stall to it.
    qint64 quiet = 0;
    for (int i = 0; i < 10; ++i) {
        quiet = std::max(quiet, healthLatency(hub));
        QTest::qWait(20);
    }

    // One connection sends a 16 MiB request head, from a thread of its own
    // so that encrypting it never delays the probes below.
    std::atomic<int> status { -1 };
    std::atomic<bool> closed { false };
    QThread attackerThread;
    QObject inAttackerThread;
    inAttackerThread.moveToThread(&attackerThread);
    attackerThread.start();
    const quint16 port = hub.port();
    QMetaObject::invokeMethod(
        &inAttackerThread,
        [port, &status, &closed] {
            EdgeClient attacker;
            if (!attacker.connectTls(port)) {
                status = 0;
                return;
            }
            attacker.socket().write("GET /api/health HTTP/1.1\r\nHost: hub\r\nX-Padding: ");
            attacker.socket().write(QByteArray(16 * 1024 * 1024, 'a'));
            status = EdgeClient::statusOf(attacker.readHttpAnswer(10'000));
            closed = attacker.waitClosed(5000);
        },
        Qt::QueuedConnection);
    // while /api/health is asked every few milliseconds.
    qint64 worst = 0;
    int probes = 0;
    QElapsedTimer clock;
    clock.start();
    int failedProbes = 0;
    // One probe every 20 ms: a new connection each, well within the rate
    // one address may open them at.
    while (clock.elapsed() < 10'000 && (probes < 20 || status < 0)) {
        const qint64 latency = healthLatency(hub);
        failedProbes += latency < 0;
        worst = std::max(worst, latency);
        ++probes;
        QTest::qWait(20);
    }
    waitUntil([&] { return status >= 0; }, 15'000);
    attackerThread.quit();
    attackerThread.wait();
    QCOMPARE(failedProbes, 0);
    qInfo("16 MiB head: answered %d; /api/health worst of %d probes %lld ms (%lld ms without the "
          "attack)",
        status.load(), probes, static_cast<long long>(worst), static_cast<long long>(quiet));
    QCOMPARE(status.load(), 431);
    QVERIFY(closed);
    // Within 100 ms of what a probe takes here anyway.
    QVERIFY2(worst < 100 + quiet,
        qPrintable(QStringLiteral("/api/health took %1 ms (%2 ms without the attack)")
                       .arg(worst)
                       .arg(quiet)));
}

void TestEdgeAbuse::daemonGetsInDuringAnUpgradeFlood()
{
    // A pool of 500 places, and 1000 upgrades from eight addresses that
    // never say hello.
    QVERIFY(startHub({ QStringLiteral("--max-unauthenticated"), QStringLiteral("500") }));
    HubProcess &hub = m_rig->hub();
    const int baseline = processStats(hub.pid()).openFiles;
    std::vector<std::unique_ptr<EdgeClient>> flood;
    for (int i = 0; i < 1000; ++i) {
        const QHostAddress from(QStringLiteral("127.0.0.%1").arg(2 + i % 8));
        flood.push_back(std::make_unique<EdgeClient>(from));
        flood.back()->socket().bind(from, 0);
        flood.back()->socket().connectToHostEncrypted(QStringLiteral("127.0.0.1"), hub.port());
        flood.back()->beginUpgrade(QStringLiteral("/api/forwarders/connect"));
    }
    int upgraded = 0;
    for (auto &client : flood) {
        if (client->upgradeAccepted(20'000))
            ++upgraded;
    }
    const int open = static_cast<int>(
        std::count_if(flood.begin(), flood.end(), [](const auto &c) { return c->isOpen(); }));
    qInfo("1000 upgrades that never say hello: %d upgraded, %d still open (the pool holds 500)",
        upgraded, open);
    // The pool is full to its cap, and none over it.
    QCOMPARE(open, 500);
    QCOMPARE(upgraded, 500);

    // A real forwarder still gets in, and the hub still answers.
    const qint64 forwarder = forwarderGetsIn(QStringLiteral("during-flood"));
    qInfo("a forwarder connected during the flood %lld ms after it started",
        static_cast<long long>(forwarder));
    QVERIFY(forwarder >= 0 && forwarder < 1000);
    QVERIFY(healthWithin(hub, 1000) >= 0);

    // When the flood leaves, every descriptor it took is given back (the
    // forwarder's session keeps one).
    flood.clear();
    QVERIFY2(waitUntil([&] { return processStats(hub.pid()).openFiles <= baseline + 2; }, 5000),
        qPrintable(QStringLiteral("%1 files open, %2 before the flood")
                       .arg(processStats(hub.pid()).openFiles)
                       .arg(baseline)));
}

void TestEdgeAbuse::garbageBeforeHelloEarnsOneReply()
{
    QVERIFY(startHub());
    HubProcess &hub = m_rig->hub();
    EdgeClient client;
    QVERIFY(client.connectTls(hub.port()));
    QVERIFY(client.upgradeWebSocket(QStringLiteral("/api/forwarders/connect")));

    // 2000 text frames that are not JSON, and binary ones, before any hello
    for (int i = 0; i < 2000; ++i)
        client.sendFrame(i % 10 == 9 ? 2 : 1, "garbage " + QByteArray::number(i));
    const auto frames = client.readFrames(5000);
    int texts = 0;
    bool closed = false;
    QJsonObject error;
    for (const auto &[opcode, payload] : frames) {
        if (opcode == 1) {
            ++texts;
            error = QJsonDocument::fromJson(payload).object();
        }
        closed |= opcode == 8;
    }
    const int logLines = countLines(hub.log(), QStringLiteral("refused forwarder connection"));
    qInfo("2000 garbage frames before a hello: %d error replies, %d log lines", texts, logLines);
    QCOMPARE(texts, 1);
    QCOMPARE(error.value(QLatin1String("code")).toString(), QStringLiteral("protocol_error"));
    QVERIFY(closed || !client.isOpen());
    QCOMPARE(logLines, 1);
    QVERIFY(client.waitClosed(5000));
}

void TestEdgeAbuse::idleConnectionsAreClosed()
{
    QVERIFY(startHub({ QStringLiteral("--preauth-timeout"), QStringLiteral("4s") }));
    HubProcess &hub = m_rig->hub();
    const int baseline = processStats(hub.pid()).openFiles;

    // 150 TLS connections that never send a request, 50 that never say a word
    std::vector<std::unique_ptr<EdgeClient>> quiet;
    for (int i = 0; i < 150; ++i) {
        quiet.push_back(std::make_unique<EdgeClient>(source(i)));
        quiet.back()->socket().bind(source(i), 0);
        quiet.back()->socket().connectToHostEncrypted(QStringLiteral("127.0.0.1"), hub.port());
    }
    std::vector<util::Fd> mute;
    for (int i = 0; i < 50; ++i)
        mute.push_back(rawConnect(hub.port(), source(200 + i)));
    QVERIFY(waitUntil(
        [&] {
            return std::all_of(quiet.begin(), quiet.end(),
                [](const auto &c) { return c->socket().isEncrypted(); });
        },
        5000));
    // The hub holds them (on a loaded machine the first may already be
    // timing out when the last arrive).
    QVERIFY(waitUntil([&] { return processStats(hub.pid()).openFiles >= baseline + 150; }, 5000));
    const int held = processStats(hub.pid()).openFiles;

    // All are closed by the hub once the time a stranger gets is up.
    QElapsedTimer clock;
    clock.start();
    QVERIFY(waitUntil([&] { return processStats(hub.pid()).openFiles <= baseline + 2; }, 10'000));
    qInfo("idle connections: hub files %d -> %d -> %d within %lld ms", baseline, held,
        processStats(hub.pid()).openFiles, static_cast<long long>(clock.elapsed()));
    for (auto &client : quiet)
        QVERIFY(client->waitClosed(1000));
    for (auto &socket : mute)
        QVERIFY(rawClosedByPeer(socket));
}

void TestEdgeAbuse::slowHeadIsCut()
{
    QVERIFY(startHub({ QStringLiteral("--preauth-timeout"), QStringLiteral("2s") }));
    HubProcess &hub = m_rig->hub();
    EdgeClient slow;
    QVERIFY(slow.connectTls(hub.port()));
    QVERIFY(slow.send("GET /api/health HTTP/1.1\r\n"));

    // One byte of header every 200 ms: the head never completes in time.
    QElapsedTimer clock;
    clock.start();
    QByteArray answer;
    while (clock.elapsed() < 8000 && slow.isOpen() && EdgeClient::statusOf(answer) == 0) {
        slow.socket().write("X");
        QTest::qWait(200);
        answer += slow.socket().readAll();
    }
    answer += slow.readHttpAnswer(1000);
    qInfo("a head sent a byte per 200 ms: answered %d after %lld ms", EdgeClient::statusOf(answer),
        static_cast<long long>(clock.elapsed()));
    QCOMPARE(EdgeClient::statusOf(answer), 408);
    QVERIFY(clock.elapsed() < 5000);
    QVERIFY(slow.waitClosed(3000));
}

QTEST_GUILESS_MAIN(TestEdgeAbuse)
#include "tst_edgeabuse.moc"
