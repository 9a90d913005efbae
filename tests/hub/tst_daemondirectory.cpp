#include "common/protocol/agentcapabilities.h"
#include "common/protocol/protocolversion.h"
#include "common/util/clock.h"
#include "hub/hubcore.h"
#include "hub/server/daemondirectory.h"
#include "hub/storage/database.h"
#include "hub/storage/executorstore.h"
#include "hub/storage/forwarderstore.h"

#include <QTemporaryDir>
#include <QtTest>

using namespace cloop;
using namespace cloop::hub;

namespace {
protocol::AgentCapabilities validCapabilities()
{
    protocol::AgentCapabilities capabilities;
    capabilities.softwareVersion = QStringLiteral("0.1.0");
    capabilities.protocolVersion = protocol::kVersion;
    capabilities.os = QStringLiteral("linux");
    capabilities.arch = QStringLiteral("x86_64");
    capabilities.cpus = 4;
    capabilities.memoryBytes = qint64(8) << 30;
    capabilities.maxConcurrent = 3;
    return capabilities;
}
} // namespace

// What the hub's daemon endpoints accept as a first message, without sockets.
class TestDaemonDirectory : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void executorCapabilitiesAreCheckedAndKept();
    void malformedCapabilitiesAreRefused();
    void redeemedExecutorIsWelcomedWithItsCredential();
    void forwarderIsWelcomedWithItsDevice();

private:
    protocol::Hello hello(const QString &credential, const QJsonObject &capabilities) const
    {
        return protocol::Hello { protocol::kVersion, QStringLiteral("0.1.0"),
            protocol::PeerRole::Executor, credential, capabilities, {}, {} };
    }

    std::unique_ptr<QTemporaryDir> m_dir;
    Clock m_clock;
    // The directories ask the services; the fixture writes the stores.
    std::unique_ptr<HubCore> m_core;
    ExecutorStore *m_executors = nullptr;
    QString m_credential;
    qint64 m_id = 0;
};

void TestDaemonDirectory::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    auto db = Database::openSqlite(m_dir->filePath(QStringLiteral("hub.db")));
    QVERIFY(db);
    m_core = std::make_unique<HubCore>(std::move(*db), m_clock, HubCore::Options {});
    m_executors = &m_core->stores().executors;
    auto enrolled = m_executors->enroll(QStringLiteral("buildbox"), QStringLiteral("user:admin"));
    QVERIFY(enrolled);
    auto redeemed = m_executors->redeem(enrolled->token);
    QVERIFY(redeemed);
    m_id = redeemed->first.id;
    m_credential = redeemed->second;
}

void TestDaemonDirectory::cleanup()
{
    m_executors = nullptr;
    m_core.reset();
    m_dir.reset();
}

void TestDaemonDirectory::executorCapabilitiesAreCheckedAndKept()
{
    protocol::AgentCapabilities capabilities = validCapabilities();
    capabilities.labels.insert(QStringLiteral("site"), QStringLiteral("lab"));
    ExecutorDirectory directory(m_core->executors(), QStringLiteral("9.9.9"));

    auto admitted = directory.authenticate(hello(m_credential, capabilities.toJson()));
    QVERIFY2(admitted, qPrintable(admitted.ok() ? QString() : admitted.error().message));
    QCOMPARE(admitted->id, m_id);
    QCOMPARE(admitted->welcome.software, QStringLiteral("9.9.9"));
    QVERIFY(!admitted->welcome.device);

    auto record = m_executors->find(m_id);
    QVERIFY(record);
    QCOMPARE(record->protocol, protocol::kVersion);
    auto kept = protocol::AgentCapabilities::fromJson(record->capabilities);
    QVERIFY(kept);
    QCOMPARE(kept->maxConcurrent, 3);
    QCOMPARE(kept->labels.value(QStringLiteral("site")), QStringLiteral("lab"));
}

void TestDaemonDirectory::malformedCapabilitiesAreRefused()
{
    ExecutorDirectory directory(m_core->executors(), QStringLiteral("9.9.9"));
    QJsonObject capabilities = validCapabilities().toJson();
    capabilities.insert(QStringLiteral("cpus"), QStringLiteral("many"));
    auto refused = directory.authenticate(hello(m_credential, capabilities));
    QVERIFY(!refused);
    QCOMPARE(refused.error().code, QStringLiteral("protocol_error"));
    QVERIFY(refused.error().message.contains(QStringLiteral("cpus")));
    // Nothing of the refused report was kept.
    auto record = m_executors->find(m_id);
    QVERIFY(record && record->capabilities.isEmpty());
}

void TestDaemonDirectory::redeemedExecutorIsWelcomedWithItsCredential()
{
    auto enrolled = m_executors->enroll(QStringLiteral("second"), QStringLiteral("user:admin"));
    QVERIFY(enrolled);
    ExecutorDirectory directory(m_core->executors(), QStringLiteral("9.9.9"));
    auto admitted = directory.redeem(protocol::Redeem { protocol::kVersion, QStringLiteral("0.1.0"),
        protocol::PeerRole::Executor, enrolled->token, {}, {} });
    QVERIFY(admitted);
    QVERIFY(admitted->enrolled);
    QVERIFY(admitted->enrolled->credential.startsWith(QStringLiteral("cec_")));
    QVERIFY(m_executors->authenticate(admitted->enrolled->credential));
}

void TestDaemonDirectory::forwarderIsWelcomedWithItsDevice()
{
    ForwarderStore &forwarders = m_core->stores().forwarders;
    auto enrolled = forwarders.enroll(QStringLiteral("lab"),
        *protocol::DeviceSpec::parseInterface(QStringLiteral("eth1")),
        QStringLiteral("user:admin"));
    QVERIFY(enrolled);
    ForwarderDirectory directory(m_core->forwarders(), QStringLiteral("9.9.9"));
    auto admitted = directory.redeem(protocol::Redeem { protocol::kVersion, QStringLiteral("0.1.0"),
        protocol::PeerRole::Forwarder, enrolled->token, {}, {} });
    QVERIFY(admitted);
    QVERIFY(admitted->welcome.device);
    QCOMPARE(admitted->welcome.device->interfaceName, QStringLiteral("eth1"));
    // An executor's credential does not pass as a forwarder's.
    auto wrong = directory.authenticate(hello(m_credential, {}));
    QVERIFY(!wrong);
    QCOMPARE(wrong.error().code, QStringLiteral("wrong_credential_type"));
}

QTEST_GUILESS_MAIN(TestDaemonDirectory)
#include "tst_daemondirectory.moc"
