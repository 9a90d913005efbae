// Tests of what a daemon keeps of what its hub tells it about the hub's
// cluster (common/daemon/daemonconnector.h): the daemon URLs of the live
// members, from a welcome or a hub.members message, saved in the credential
// file and dialled from the next attempt on. Against an in-process fake hub
// on 127.0.0.1 with a development certificate made at test time.

#include "common/crypto/secrets.h"
#include "common/daemon/daemonconnector.h"
#include "common/identity/credentialfile.h"
#include "common/protocol/controlmessage.h"
#include "common/tunnel/tunnelclient.h"
#include "common/tunneltestsupport.h"

#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QWebSocket>

#include <algorithm>
#include <memory>
#include <optional>

using namespace cloop;
using cloop::testsupport::FakeHub;

namespace {

constexpr int kEventTimeoutMs = 5000;

// Collects the warnings logged while it lives, and passes everything on.
class WarningLog
{
public:
    WarningLog()
    {
        s_current = this;
        m_previous = qInstallMessageHandler(&WarningLog::handle);
    }
    ~WarningLog()
    {
        qInstallMessageHandler(m_previous);
        s_current = nullptr;
    }
    Q_DISABLE_COPY_MOVE(WarningLog)

    int count(const QString &part) const
    {
        return static_cast<int>(std::count_if(m_warnings.cbegin(), m_warnings.cend(),
            [&part](const QString &warning) { return warning.contains(part); }));
    }

private:
    static void handle(QtMsgType type, const QMessageLogContext &context, const QString &message)
    {
        if (s_current && type == QtWarningMsg)
            s_current->m_warnings.append(message);
        if (s_current && s_current->m_previous)
            s_current->m_previous(type, context, message);
    }

    static inline WarningLog *s_current = nullptr;
    QtMessageHandler m_previous = nullptr;
    QStringList m_warnings;
};

QList<QUrl> savedServers(const QString &path)
{
    const auto loaded = identity::CredentialFile(path).load();
    if (!loaded || !loaded->credential)
        return {};
    return loaded->credential->servers();
}

} // namespace

class TestDaemonConnector final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();

    void hubMembersReplaceTheSavedList();
    void welcomeHubsReplaceTheSavedList();
    void listSharingNoUrlIsIgnoredWithOneWarning();

private:
    // A forwarder enrolled at `servers`, pinned to the fake hub's key,
    // connected and welcomed.
    void connectDaemon(const QList<QUrl> &servers);

    QTemporaryDir m_dir;
    std::optional<hub::TlsIdentity> m_identity;
    std::unique_ptr<FakeHub> m_hub;
    std::unique_ptr<daemon::DaemonConnector> m_connector;
    identity::DaemonCredential m_enrolled;
    QString m_path;
};

void TestDaemonConnector::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QVERIFY(m_dir.isValid());
    auto identity = testsupport::makeDevIdentity(m_dir.path(), QStringLiteral("hub"),
        { QStringLiteral("127.0.0.1"), QStringLiteral("localhost") });
    QVERIFY2(identity, qPrintable(identity.ok() ? QString() : identity.error().message));
    m_identity = *identity;
}

void TestDaemonConnector::init()
{
    m_hub = std::make_unique<FakeHub>();
    QVERIFY(m_hub->listenSecure(*m_identity));
    m_path = m_dir.filePath(
        QStringLiteral("%1.json").arg(QString::fromLatin1(QTest::currentTestFunction())));
}

void TestDaemonConnector::cleanup()
{
    if (m_connector)
        m_connector->stop();
    m_connector.reset();
    m_hub.reset();
}

void TestDaemonConnector::connectDaemon(const QList<QUrl> &servers)
{
    m_enrolled = {};
    m_enrolled.setServers(servers);
    m_enrolled.id = 42;
    m_enrolled.name = QStringLiteral("bench-forwarder");
    m_enrolled.credential = secrets::generate(secrets::SecretKind::ForwarderCredential);
    m_enrolled.pin = m_identity->pin;
    m_enrolled.enrolledAt = QDateTime::currentDateTimeUtc();
    QVERIFY(identity::CredentialFile(m_path).save(m_enrolled).ok());

    daemon::DaemonConnectorOptions options;
    options.role = protocol::PeerRole::Forwarder;
    options.endpointPath = QStringLiteral("/api/forwarders/connect");
    options.defaultCredentialFile = QStringLiteral("forwarder.json");
    options.connection.credentialPath = m_path;
    m_connector = std::make_unique<daemon::DaemonConnector>(options);
    const Status prepared = m_connector->prepare();
    QVERIFY2(prepared.ok(), qPrintable(prepared.ok() ? QString() : prepared.error().message));
    QCOMPARE(m_connector->client()->options().hubUrls, servers);
    QSignalSpy ready(m_connector.get(), &daemon::DaemonConnector::ready);
    m_connector->start();
    QVERIFY(ready.wait(kEventTimeoutMs));
}

void TestDaemonConnector::hubMembersReplaceTheSavedList()
{
    // Given a forwarder connected to the one hub URL it was enrolled with,
    const QUrl other(QStringLiteral("wss://127.0.0.1:1"));
    connectDaemon({ m_hub->url() });
    QVERIFY(!QTest::currentTestFailed());

    // when the hub announces its cluster's members, another one first,
    const QList<QUrl> members { other, m_hub->url() };
    QVERIFY(m_hub->socket(0));
    m_hub->send(m_hub->socket(0), protocol::HubMembers { members });

    // then the credential file lists them in that order, the rest of it as
    // it was, and the next attempt dials them.
    QTRY_COMPARE_WITH_TIMEOUT(savedServers(m_path), members, kEventTimeoutMs);
    const auto loaded = identity::CredentialFile(m_path).load();
    QVERIFY(loaded && loaded->credential);
    QCOMPARE(loaded->credential->server, other);
    QCOMPARE(loaded->credential->credential, m_enrolled.credential);
    QCOMPARE(loaded->credential->pin, m_enrolled.pin);
    QCOMPARE(loaded->credential->id, m_enrolled.id);
    QCOMPARE(m_connector->credential().servers(), members);
    QCOMPARE(m_connector->client()->options().hubUrls, members);
}

void TestDaemonConnector::welcomeHubsReplaceTheSavedList()
{
    // Given a hub whose welcome names two members, its own URL second,
    const QUrl own = m_hub->url();
    m_hub->setResponder(
        [own](FakeHub &hub, int, QWebSocket *socket, const protocol::ControlMessage &message) {
            if (!std::holds_alternative<protocol::Hello>(message))
                return;
            protocol::Welcome welcome = FakeHub::welcome();
            welcome.hubs = { QUrl(QStringLiteral("wss://localhost:1")), own };
            hub.send(socket, welcome);
        });

    // when a forwarder enrolled at that URL and one that left connects,
    connectDaemon({ own, QUrl(QStringLiteral("wss://127.0.0.1:2")) });
    QVERIFY(!QTest::currentTestFailed());

    // then, by the time it is ready, it keeps exactly the welcome's list.
    const QList<QUrl> expected { QUrl(QStringLiteral("wss://localhost:1")), own };
    QCOMPARE(savedServers(m_path), expected);
    QCOMPARE(m_connector->client()->options().hubUrls, expected);
}

void TestDaemonConnector::listSharingNoUrlIsIgnoredWithOneWarning()
{
    // Given a connected forwarder,
    connectDaemon({ m_hub->url() });
    QVERIFY(!QTest::currentTestFailed());
    WarningLog warnings;

    // when the hub twice names members none of which the forwarder knows,
    // then a list that shares one,
    const QList<QUrl> strangers { QUrl(QStringLiteral("wss://127.0.0.1:1")),
        QUrl(QStringLiteral("wss://127.0.0.1:2")) };
    const QList<QUrl> sharing { QUrl(QStringLiteral("wss://127.0.0.1:3")), m_hub->url() };
    QVERIFY(m_hub->socket(0));
    m_hub->send(m_hub->socket(0), protocol::HubMembers { strangers });
    m_hub->send(m_hub->socket(0), protocol::HubMembers { strangers });
    m_hub->send(m_hub->socket(0), protocol::HubMembers { sharing });

    // then only the last is taken (messages arrive in order, so the first
    // two were read by then), and the strangers were warned about once.
    QTRY_COMPARE_WITH_TIMEOUT(savedServers(m_path), sharing, kEventTimeoutMs);
    QCOMPARE(warnings.count(QStringLiteral("ignoring the hub URLs the hub announced")), 1);
}

QTEST_GUILESS_MAIN(TestDaemonConnector)
#include "tst_daemonconnector.moc"
