// Integration: an administrator asks agents to upgrade through a real hub.
// The agents are real host-mode agents on loopback; what they decide comes
// from their own settings (their environment, as their unit's drop-in sets
// it), and what they file is read from their upgrade folder. The root helper
// that applies a request is tested on a real systemd in the packages' guest.

#include "common/daemon/upgradesettings.h"
#include "common/daemon/upgradespool.h"
#include "common/protocol/protocolversion.h"
#include "support/pinnedhttp.h"
#include "support/releasepackages.h"
#include "support/testrig.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

using namespace cloop;
using namespace cloop::testing;
using namespace Qt::StringLiterals;

namespace {
const QString kProject = u"/srv/projects/bench"_s;
const QString kCommit = u"6e750e98150523914a360f8569bf9154cd9cd84c"_s;
} // namespace

class TestRemoteUpgrade final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void theHelloSaysTheDevicesChannel();
    void aDeviceThatDidNotOptInRefuses();
    void anEdgeTargetToAStableDeviceIsRefused();
    void theRequestIsFiledOnceTheRunsAreDone();
    void theOutcomeReachesTheAuditLog();
    void aDeviceFetchesReleasesWithItsOwnCredential();
    void onlyHubAdministratorsAsk();

private:
    struct Agent
    {
        qint64 id = 0;
        ForwarderProcess *process = nullptr;
        QString spool;
    };
    // Enrolls `name` and starts a host-mode agent with these settings.
    Agent startAgent(const QString &name, bool remoteUpgrade, const QString &channel = {});
    QJsonObject executor(qint64 id);
    CliResult upgrade(qint64 id, const QString &target);
    QJsonArray audit(const QString &action);

    std::unique_ptr<TestRig> m_rig;
};

void TestRemoteUpgrade::init()
{
    m_rig = std::make_unique<TestRig>();
    QVERIFY2(m_rig->startHub(), qPrintable(m_rig->lastError()));
    CLOOP_COMPARE_EXIT(m_rig->hub().cli({ u"project"_s, u"add"_s, kProject }), 0);
}

void TestRemoteUpgrade::cleanup()
{
    if (QTest::currentTestFailed() && m_rig)
        m_rig->printDiagnostics();
    m_rig.reset();
}

TestRemoteUpgrade::Agent TestRemoteUpgrade::startAgent(
    const QString &name, bool remoteUpgrade, const QString &channel)
{
    const QJsonObject enrolled
        = m_rig->hub()
              .cliJson({ u"executor"_s, u"enroll"_s, u"--name"_s, name, u"--json"_s })
              .toObject();
    Agent agent;
    agent.id = enrolled.value("executor"_L1).toObject().value("id"_L1).toInteger();
    const QString home = m_rig->newHome();
    agent.spool = home + u"/spool"_s;
    agent.process = &m_rig->addForwarder({ u"--bundle"_s, enrolled.value("bundle"_L1).toString(),
                                             u"--host-mode"_s, u"--upgrade-dir"_s, agent.spool },
        home, ForwarderProcess::Program::Agent);
    agent.process->setEnvironmentVariable(
        u"CLOOP_REMOTE_UPGRADE"_s, remoteUpgrade ? u"yes"_s : u"no"_s);
    if (!channel.isEmpty())
        agent.process->setEnvironmentVariable(u"CLOOP_CHANNEL"_s, channel);
    if (!agent.process->start()
        || !agent.process->waitForStderr(u"connected to the hub as executor"_s)) {
        qWarning().noquote() << agent.process->describe();
        return {};
    }
    return agent;
}

QJsonObject TestRemoteUpgrade::executor(qint64 id)
{
    for (const QJsonValue &entry : m_rig->hub().cliItems({ u"executor"_s, u"list"_s, u"--json"_s }))
        if (entry.toObject().value("id"_L1).toInteger() == id)
            return entry.toObject();
    return {};
}

CliResult TestRemoteUpgrade::upgrade(qint64 id, const QString &target)
{
    return m_rig->hub().cli(
        { u"executor"_s, u"upgrade"_s, QString::number(id), u"--target"_s, target });
}

QJsonArray TestRemoteUpgrade::audit(const QString &action)
{
    return m_rig->hub().cliItems({ u"audit"_s, u"--action"_s, action, u"--json"_s });
}

void TestRemoteUpgrade::theHelloSaysTheDevicesChannel()
{
    const Agent plain = startAgent(u"plain"_s, false);
    const Agent edge = startAgent(u"edgy"_s, false, u"edge"_s);
    QVERIFY(plain.process && edge.process);
    const QJsonObject listed = executor(plain.id);
    QCOMPARE(listed.value("channel"_L1).toString(),
        release::channelName(daemon::UpgradeSettings::buildChannel()));
    QVERIFY(!listed.value("version"_L1).toString().isEmpty());
    QCOMPARE(listed.value("protocol"_L1).toInt(), protocol::kVersion);
    QCOMPARE(listed.value("upgrading"_L1).toBool(), false);
    QCOMPARE(executor(edge.id).value("channel"_L1).toString(), u"edge"_s);

    // A setting out of shape stops the daemon before it connects, saying so.
    const CliResult bad = m_rig->runForwarder({ u"--help"_s }, m_rig->newHome());
    CLOOP_COMPARE_EXIT(bad, 0);
    QVERIFY2(bad.stdoutText().contains(u"--upgrade-dir"_s), qPrintable(bad.describe()));
}

void TestRemoteUpgrade::aDeviceThatDidNotOptInRefuses()
{
    const Agent plain = startAgent(u"plain"_s, false);
    QVERIFY(plain.process);
    const CliResult refused = upgrade(plain.id, u"latest"_s);
    CLOOP_COMPARE_EXIT(refused, 1);
    QVERIFY2(
        refused.stderrText().contains(u"cloop executor agent install --upgrade --remote-upgrade"_s),
        qPrintable(refused.describe()));
    QVERIFY(!QFile::exists(plain.spool + u"/request"_s));
    // Asked and refused, both in the audit log.
    const QJsonArray asked = audit(u"executor.upgrade"_s);
    QCOMPARE(asked.size(), 1);
    QCOMPARE(
        asked.first().toObject().value("subject"_L1).toString(), u"executor:%1"_s.arg(plain.id));
    const QJsonArray outcome = audit(u"executor.upgrade.outcome"_s);
    QCOMPARE(outcome.size(), 1);
    QCOMPARE(outcome.first().toObject().value("details"_L1).toObject().value("state"_L1).toString(),
        u"refused"_s);
    QCOMPARE(executor(plain.id).value("upgrading"_L1).toBool(), false);
}

void TestRemoteUpgrade::anEdgeTargetToAStableDeviceIsRefused()
{
    const Agent stable = startAgent(u"stable"_s, true, u"stable"_s);
    QVERIFY(stable.process);
    const CliResult refused = upgrade(stable.id, u"edge:6e750e9"_s);
    CLOOP_COMPARE_EXIT(refused, 1);
    QVERIFY2(refused.stderrText().contains(u"does not follow the edge channel"_s),
        qPrintable(refused.describe()));
    QVERIFY2(refused.stderrText().contains(u"--channel edge"_s), qPrintable(refused.describe()));
    QVERIFY(!QFile::exists(stable.spool + u"/request"_s));
    // A target that is none of the three forms is the hub's to refuse.
    const CliResult malformed = upgrade(stable.id, u"newest"_s);
    CLOOP_COMPARE_EXIT(malformed, 1);
    QVERIFY2(malformed.stderrText().contains(u"newest"_s), qPrintable(malformed.describe()));
    QVERIFY(!QFile::exists(stable.spool + u"/request"_s));
}

void TestRemoteUpgrade::theRequestIsFiledOnceTheRunsAreDone()
{
    const Agent agent = startAgent(u"busy"_s, true, u"stable"_s);
    QVERIFY(agent.process);
    // Where the run, as the workload user, sees the test's word to end.
    QTemporaryDir markers;
    QVERIFY(QFile::setPermissions(markers.path(),
        QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner | QFile::ReadGroup | QFile::ExeGroup
            | QFile::ReadOther | QFile::ExeOther));
    const QString marker = markers.filePath(u"go"_s);
    // A run that lasts until the test lets it end.
    const CliResult started = m_rig->hub().cli(
        { u"run"_s, u"--project"_s, kProject, u"--host-process"_s, u"--no-wait"_s, u"--"_s, u"sh"_s,
            u"-c"_s, u"while [ ! -e %1 ]; do sleep 0.1; done; echo done"_s.arg(marker) });
    CLOOP_COMPARE_EXIT(started, 0);
    QTRY_VERIFY_WITH_TIMEOUT(
        m_rig->hub().cli({ u"run"_s, u"list"_s }).stdoutText().contains(u"running"_s), 20000);

    const CliResult asked = upgrade(agent.id, u"latest"_s);
    CLOOP_COMPARE_EXIT(asked, 0);
    QVERIFY2(asked.stdoutText().contains(u"finishes its 1 run(s) first"_s),
        qPrintable(asked.describe()));
    QCOMPARE(executor(agent.id).value("upgrading"_L1).toBool(), true);
    const CliResult listed = m_rig->hub().cli({ u"executor"_s, u"list"_s });
    QVERIFY2(listed.stdoutText().contains(u"upgrading"_s), qPrintable(listed.describe()));

    // No new run goes to a draining agent: it waits in the queue.
    const CliResult queued = m_rig->hub().cli({ u"run"_s, u"--project"_s, kProject,
        u"--host-process"_s, u"--no-wait"_s, u"--"_s, u"true"_s });
    CLOOP_COMPARE_EXIT(queued, 0);
    QTest::qWait(1500);
    QVERIFY(!QFile::exists(agent.spool + u"/request"_s));
    const QJsonArray runs = m_rig->hub().cliItems({ u"run"_s, u"list"_s, u"--all"_s, u"--json"_s });
    QCOMPARE(runs.size(), 2);
    QCOMPARE(runs.last().toObject().value("state"_L1).toString(), u"queued"_s);

    // Once the run is done, the request is filed for the root helper.
    QVERIFY(QFile(marker).open(QIODevice::WriteOnly));
    QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(agent.spool + u"/request"_s), 20000);
    QFile request(agent.spool + u"/request"_s);
    QVERIFY(request.open(QIODevice::ReadOnly));
    QCOMPARE(request.readAll(), QByteArray("target=latest\n"));
    QTRY_COMPARE_WITH_TIMEOUT(
        executor(agent.id).value("upgrade"_L1).toObject().value("state"_L1).toString(),
        u"requested"_s, 10000);
    QVERIFY(m_rig->hub()
                .cli({ u"run"_s, u"logs"_s,
                    QString::number(runs.first().toObject().value("id"_L1).toInteger()) })
                .stdoutText()
                .contains(u"done"_s));
}

void TestRemoteUpgrade::theOutcomeReachesTheAuditLog()
{
    Agent agent = startAgent(u"helped"_s, true);
    QVERIFY(agent.process);
    QVERIFY(agent.process->terminate() && agent.process->waitForExit());
    // What the root helper leaves when the new version did not come back.
    protocol::UpgradeStatus outcome;
    outcome.state = protocol::UpgradeStatus::State::RolledBack;
    outcome.target = u"latest"_s;
    outcome.from = u"0.4.0"_s;
    outcome.to = u"0.5.0"_s;
    outcome.message = u"cloop-agent.service did not come back connected on 0.5.0 within 60 s"_s;
    QVERIFY(daemon::UpgradeSpool(agent.spool).writeOutcome(outcome).ok());
    // The agent as it starts again, on its saved credential.
    ForwarderProcess &again
        = m_rig->addForwarder({ u"--host-mode"_s, u"--upgrade-dir"_s, agent.spool },
            agent.process->home(), ForwarderProcess::Program::Agent);
    again.setEnvironmentVariable(u"CLOOP_REMOTE_UPGRADE"_s, u"yes"_s);
    QVERIFY(again.start());
    QVERIFY(again.waitForStderr(u"connected to the hub as executor"_s));
    QTRY_COMPARE_WITH_TIMEOUT(audit(u"executor.upgrade.outcome"_s).size(), 1, 10000);
    const QJsonObject details
        = audit(u"executor.upgrade.outcome"_s).first().toObject().value("details"_L1).toObject();
    QCOMPARE(details.value("state"_L1).toString(), u"rolled_back"_s);
    QCOMPARE(details.value("to"_L1).toString(), u"0.5.0"_s);
    QVERIFY(details.value("message"_L1).toString().contains(u"did not come back"_s));
    // Said once, and shown with the executor.
    QVERIFY(!QFile::exists(agent.spool + u"/outcome"_s));
    QCOMPARE(executor(agent.id).value("upgrade"_L1).toObject().value("state"_L1).toString(),
        u"rolled_back"_s);
    const CliResult listed = m_rig->hub().cli({ u"executor"_s, u"list"_s });
    QVERIFY2(listed.stdoutText().contains(u"upgrade rolled back"_s), qPrintable(listed.describe()));
}

void TestRemoteUpgrade::aDeviceFetchesReleasesWithItsOwnCredential()
{
    if (QStandardPaths::findExecutable(u"dpkg-deb"_s).isEmpty())
        QSKIP("dpkg-deb is not installed (scripts/install-deps installs dpkg-dev)");
    const Agent agent = startAgent(u"fetcher"_s, true);
    QVERIFY(agent.process);
    HubProcess &hub = m_rig->hub();
    // A release newer than what the agent runs, signed and added.
    const QString work = m_rig->path(u"release"_s);
    QVERIFY(QDir().mkpath(work + u"/keys"_s));
    const QProcessEnvironment environment = childEnvironment(work);
    CLOOP_COMPARE_EXIT(runProgram(binaryPath(u"cloop"_s),
                           { u"release"_s, u"keygen"_s, u"--private"_s, work + u"/release.pem"_s,
                               u"--public"_s, work + u"/keys/release.pem"_s },
                           environment),
        0);
    const QString deb = makeDebianPackage(work, u"cloop-agent"_s, u"99.0.0-1"_s, "newer");
    QVERIFY(!deb.isEmpty());
    CLOOP_COMPARE_EXIT(runProgram(binaryPath(u"cloop"_s),
                           { u"release"_s, u"sign"_s, deb, u"--key"_s, work + u"/release.pem"_s,
                               u"--channel"_s, u"stable"_s, u"--commit"_s, kCommit },
                           environment),
        0);
    CLOOP_COMPARE_EXIT(runProgram(binaryPath(u"cloop-hub"_s),
                           { u"release"_s, u"add"_s, deb, u"--keys"_s, work + u"/keys"_s,
                               u"--data"_s, hub.dataDir() },
                           environment),
        0);

    // The skew at a glance.
    QTRY_COMPARE_WITH_TIMEOUT(
        executor(agent.id).value("offered_version"_L1).toString(), u"99.0.0"_s, 10000);
    const CliResult listed = hub.cli({ u"executor"_s, u"list"_s });
    QVERIFY2(listed.stdoutText().contains(u"99.0.0 offered"_s), qPrintable(listed.describe()));

    // The agent's credential lists and fetches releases, and reaches nothing else.
    QFile saved(agent.process->home() + u"/.cloop/agent.json"_s);
    QVERIFY(saved.open(QIODevice::ReadOnly));
    const QString credential
        = QJsonDocument::fromJson(saved.readAll()).object().value("credential"_L1).toString();
    QVERIFY(!credential.isEmpty());
    const HttpResult releases = pinnedGet(hub.apiUrl(u"/api/releases"_s), hub.pin(), credential);
    QCOMPARE(releases.status, 200);
    const QJsonArray items = releases.json().value("releases"_L1).toArray();
    QCOMPARE(items.size(), 1);
    const qint64 id = items.first().toObject().value("id"_L1).toInteger();
    const HttpResult package
        = pinnedGet(hub.apiUrl(u"/api/releases/%1/package"_s.arg(id)), hub.pin(), credential);
    QCOMPARE(package.status, 200);
    QFile original(deb);
    QVERIFY(original.open(QIODevice::ReadOnly));
    QCOMPARE(package.body, original.readAll());
    const HttpResult signature
        = pinnedGet(hub.apiUrl(u"/api/releases/%1/signature"_s.arg(id)), hub.pin(), credential);
    QCOMPARE(signature.status, 200);
    QVERIFY(signature.body.startsWith("cloop-release 1\n"));
    for (const QString &elsewhere :
        { u"/api/executors"_s, u"/api/forwarders"_s, u"/api/audit"_s }) {
        const HttpResult refused = pinnedGet(hub.apiUrl(elsewhere), hub.pin(), credential);
        QCOMPARE(refused.status, 401);
        QCOMPARE(refused.errorCode(), u"wrong_credential_type"_s);
    }
    // A revoked device fetches nothing.
    CLOOP_COMPARE_EXIT(hub.cli({ u"executor"_s, u"revoke"_s, QString::number(agent.id) }), 0);
    const HttpResult revoked = pinnedGet(hub.apiUrl(u"/api/releases"_s), hub.pin(), credential);
    QCOMPARE(revoked.status, 401);
    const HttpResult nobody = pinnedGet(hub.apiUrl(u"/api/releases"_s), hub.pin());
    QCOMPARE(nobody.status, 401);
}

void TestRemoteUpgrade::onlyHubAdministratorsAsk()
{
    const Agent agent = startAgent(u"guarded"_s, true);
    QVERIFY(agent.process);
    HubProcess &hub = m_rig->hub();
    const QString token = hub.tokenOfNewUser(u"maintainer"_s, kProject, u"maintainer"_s);
    QVERIFY(!token.isEmpty());
    const CliResult refused
        = hub.cliAs(token, { u"executor"_s, u"upgrade"_s, QString::number(agent.id) });
    CLOOP_COMPARE_EXIT(refused, 1);
    QVERIFY2(refused.stderrText().contains(u"upgrading"_s), qPrintable(refused.describe()));
    QVERIFY(!QFile::exists(agent.spool + u"/request"_s));
    QCOMPARE(audit(u"executor.upgrade"_s).size(), 0);
    // Nor is an offline device asked.
    QVERIFY(agent.process->terminate() && agent.process->waitForExit());
    QTRY_COMPARE_WITH_TIMEOUT(executor(agent.id).value("connected"_L1).toBool(), false, 10000);
    const CliResult offline = upgrade(agent.id, u"latest"_s);
    CLOOP_COMPARE_EXIT(offline, 1);
    QVERIFY2(offline.stderrText().contains(u"not connected"_s), qPrintable(offline.describe()));
}

QTEST_GUILESS_MAIN(TestRemoteUpgrade)
#include "tst_remoteupgrade.moc"
