// Integration: executor agents enroll like forwarders, on their own
// endpoint, with credentials of their own kind. The real hub, `cloop` and
// `cloop-agent` on 127.0.0.1; every test function has a hub of its own.

#include "common/protocol/protocolversion.h"
#include "support/pinnedhttp.h"
#include "support/testrig.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

using namespace cloop::testing;

namespace {
QJsonObject readJson(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? QJsonDocument::fromJson(file.readAll()).object()
                                          : QJsonObject();
}
} // namespace

class TestExecutorEnrollment final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void enrollConnectListRevoke();
    void credentialsOnlyOpenTheirOwnDoor();

private:
    // Enrolls `name` and starts cloop-agent with its bundle in a new HOME;
    // the agent is connected when this returns true.
    bool startAgent(const QString &name, ForwarderProcess *&agent, qint64 &id);
    QJsonObject executor(qint64 id);

    std::unique_ptr<TestRig> m_rig;
};

void TestExecutorEnrollment::init()
{
    m_rig = std::make_unique<TestRig>();
    QVERIFY2(m_rig->startHub(), qPrintable(m_rig->lastError()));
}

void TestExecutorEnrollment::cleanup()
{
    if (QTest::currentTestFailed() && m_rig)
        m_rig->printDiagnostics();
    m_rig.reset();
}

QJsonObject TestExecutorEnrollment::executor(qint64 id)
{
    const QJsonArray executors = m_rig->hub().cliItems({ QStringLiteral("executor"),
        QStringLiteral("list"), QStringLiteral("--all"), QStringLiteral("--json") });
    for (const QJsonValue &value : executors) {
        if (value.toObject().value(QLatin1String("id")).toInteger() == id)
            return value.toObject();
    }
    return {};
}

bool TestExecutorEnrollment::startAgent(const QString &name, ForwarderProcess *&agent, qint64 &id)
{
    const QJsonObject answer = m_rig->hub()
                                   .cliJson({ QStringLiteral("executor"), QStringLiteral("enroll"),
                                       QStringLiteral("--name"), name, QStringLiteral("--json") })
                                   .toObject();
    const QString bundle = answer.value(QLatin1String("bundle")).toString();
    id = answer.value(QLatin1String("executor")).toObject().value(QLatin1String("id")).toInteger();
    if (!bundle.startsWith(QLatin1String("cloopexe1.")) || id <= 0)
        return false;
    agent = &m_rig->addForwarder(
        { QStringLiteral("--bundle"), bundle, QStringLiteral("--label"), QStringLiteral("site=lab"),
            QStringLiteral("--max-concurrent"), QStringLiteral("3") },
        m_rig->newHome(), ForwarderProcess::Program::Agent);
    return agent->start()
        && agent->waitForStderr(QStringLiteral("connected to the hub as executor"))
        && waitUntil([&] { return executor(id).value(QLatin1String("connected")).toBool(); });
}

void TestExecutorEnrollment::enrollConnectListRevoke()
{
    ForwarderProcess *agent = nullptr;
    qint64 id = 0;
    QVERIFY2(startAgent(QStringLiteral("buildbox"), agent, id),
        qPrintable(agent ? agent->describe() : m_rig->lastError()));

    // The credential is kept 0600 with the pin and the work root.
    const QString credentialPath = agent->home() + QLatin1String("/.cloop/agent.json");
    QCOMPARE(QFile::permissions(credentialPath) & (QFileDevice::ReadGroup | QFileDevice::ReadOther),
        QFileDevice::Permissions());
    const QJsonObject saved = readJson(credentialPath);
    QVERIFY(saved.value(QLatin1String("credential")).toString().startsWith(QLatin1String("cec_")));
    QVERIFY(saved.value(QLatin1String("pin")).toString().startsWith(QLatin1String("sha256:")));
    QCOMPARE(saved.value(QLatin1String("work_root")).toString(),
        agent->home() + QLatin1String("/.cloop/work"));

    // The hub knows what it reported about itself.
    const QJsonObject listed = executor(id);
    QCOMPARE(listed.value(QLatin1String("protocol")).toInt(), cloop::protocol::kVersion);
    QVERIFY(!listed.value(QLatin1String("version")).toString().isEmpty());
    const QJsonObject capabilities = listed.value(QLatin1String("capabilities")).toObject();
    QCOMPARE(capabilities.value(QLatin1String("max_concurrent")).toInt(), 3);
    QVERIFY2(QJsonDocument(capabilities).toJson().contains("site"),
        QJsonDocument(capabilities).toJson().constData());
    const CliResult table
        = m_rig->hub().cli({ QStringLiteral("executor"), QStringLiteral("list") });
    CLOOP_COMPARE_EXIT(table, 0);
    QVERIFY2(table.stdoutText().contains(QLatin1String("buildbox"))
            && table.stdoutText().contains(QLatin1String("connected")),
        qPrintable(table.describe()));

    // A plain restart reconnects with the saved credential.
    QVERIFY(agent->terminate());
    QVERIFY(agent->waitForExit());
    QCOMPARE(agent->exitCode(), 0);
    ForwarderProcess &again
        = m_rig->addForwarder({}, agent->home(), ForwarderProcess::Program::Agent);
    QVERIFY(again.start());
    QVERIFY2(again.waitForStderr(QStringLiteral("connected to the hub as executor")),
        qPrintable(again.describe()));
    QCOMPARE(again.stderrCount(QStringLiteral("enrolled as executor")), 0);

    // Revoking ends the session for good.
    CLOOP_COMPARE_EXIT(m_rig->hub().cli({ QStringLiteral("executor"), QStringLiteral("revoke"),
                           QString::number(id) }),
        0);
    QVERIFY2(again.waitForExit(), qPrintable(again.describe()));
    QCOMPARE(again.exitCode(), 3);
    QVERIFY2(again.stderrText().contains(QLatin1String("revoked")), qPrintable(again.describe()));
    QCOMPARE(executor(id).value(QLatin1String("state")).toString(), QStringLiteral("revoked"));
}

void TestExecutorEnrollment::credentialsOnlyOpenTheirOwnDoor()
{
    ForwarderProcess *agent = nullptr;
    qint64 id = 0;
    QVERIFY2(startAgent(QStringLiteral("buildbox"), agent, id),
        qPrintable(agent ? agent->describe() : m_rig->lastError()));
    const QString agentCredentialFile = agent->home() + QLatin1String("/.cloop/agent.json");
    const QString agentCredential
        = readJson(agentCredentialFile).value(QLatin1String("credential")).toString();

    // An executor credential is not an API token …
    const HttpResult api = pinnedGet(m_rig->hub().apiUrl(QStringLiteral("/api/forwarders")),
        m_rig->hub().pin(), agentCredential);
    QVERIFY2(api.status == 401, qPrintable(api.describe()));
    QCOMPARE(api.errorCode(), QStringLiteral("wrong_credential_type"));

    // … nor a forwarder's: on the forwarder endpoint it is refused for good.
    const CliResult asForwarder = m_rig->runForwarder(
        { QStringLiteral("--credential-file"), agentCredentialFile }, m_rig->newHome());
    CLOOP_COMPARE_EXIT(asForwarder, 3);
    QVERIFY2(asForwarder.stderrText().contains(QLatin1String("executor credential")),
        qPrintable(asForwarder.describe()));

    // And a forwarder's credential does not open the executor endpoint.
    ConnectedForwarder forwarder;
    QVERIFY2(
        m_rig->enrollAndConnect(QStringLiteral("lab"), forwarder), qPrintable(m_rig->lastError()));
    const CliResult asAgent = runProgram(binaryPath(QStringLiteral("cloop-agent")),
        { QStringLiteral("--credential-file"), forwarder.credentialFile },
        childEnvironment(m_rig->newHome()));
    CLOOP_COMPARE_EXIT(asAgent, 3);
    QVERIFY2(asAgent.stderrText().contains(QLatin1String("forwarder credential")),
        qPrintable(asAgent.describe()));

    // Bundles are typed too: an executor bundle is not a forwarder's.
    const QJsonObject second
        = m_rig->hub()
              .cliJson({ QStringLiteral("executor"), QStringLiteral("enroll"),
                  QStringLiteral("--name"), QStringLiteral("second"), QStringLiteral("--json") })
              .toObject();
    const CliResult wrongBundle = m_rig->runForwarder(
        { QStringLiteral("--bundle"), second.value(QLatin1String("bundle")).toString() },
        m_rig->newHome());
    CLOOP_COMPARE_EXIT(wrongBundle, 2);
    QVERIFY2(wrongBundle.stderrText().contains(QLatin1String("executor bundle")),
        qPrintable(wrongBundle.describe()));
    // The agent that was connected is untouched by all of this.
    QVERIFY(agent->isRunning());
    QVERIFY(executor(id).value(QLatin1String("connected")).toBool());
    // It names the hub that holds its session; one never seen has none.
    QCOMPARE(executor(id).value(QLatin1String("hub_member")).toString(),
        QStringLiteral("127.0.0.1:%1").arg(m_rig->hub().port()));
    QVERIFY(executor(
        second.value(QLatin1String("executor")).toObject().value(QLatin1String("id")).toInteger())
                .value(QLatin1String("hub_member"))
                .isNull());
}

QTEST_GUILESS_MAIN(TestExecutorEnrollment)
#include "tst_executorenrollment.moc"
