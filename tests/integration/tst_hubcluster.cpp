// Integration: hub members sharing one real PostgreSQL server (started by
// the test in a temporary folder). What one member does, every other
// member's event stream shows; a revocation through one member cuts the
// session another member holds. Skipped where PostgreSQL is not installed,
// unless CLOOP_REQUIRE_POSTGRES=1.

#include "support/eventclient.h"
#include "support/forwarderprocess.h"
#include "support/hubprocess.h"
#include "support/pinnedhttp.h"
#include "support/postgresserver.h"
#include "support/processutil.h"
#include "support/usbstandin/usbfixture.h"

#include <QElapsedTimer>
#include <QFile>
#include <QHash>
#include <QJsonArray>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>
#include <QUrl>

#include <memory>

#include <unistd.h>

using namespace cloop::testing;
using namespace cloop::testsupport::usb;
using namespace Qt::StringLiterals;

class TestHubCluster final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();

    void eachMemberHearsTheOthersEvents();
    void aRevocationThroughOneMemberCutsTheSessionAnotherHolds();
    void runsQueuedOnBothMembersAtOnceAreEachDispatchedOnce();
    void aTestThroughOneMemberReachesTheForwarderAnotherHolds();
    void aRevocationWhoseEventNeverCameStillCutsTheSession();
    void anAgentWhoseMemberDiesCarriesOnThroughAnotherWithItsLogWhole();
    void theDatabaseRestartedUnderLoadLosesNothing();
    void theDatabaseDownRefusesChangesAndEverythingResumes();

private:
    QString passwordFile();
    // Two members on a database of their own, started.
    bool startMembers();
    QString memberName(const HubProcess &hub) const;
    // A forwarder enrolled through `hub` and connected to it; false when it
    // did not come up (`forwarder` says why).
    bool connectForwarder(HubProcess &hub, const QString &name, Enrollment &enrolled,
        std::unique_ptr<ForwarderProcess> &forwarder, const QTemporaryDir &home);
    // A host-mode agent enrolled through `hub`, connected to it.
    bool startHostAgent(HubProcess &hub, const QString &name, int maxConcurrent,
        std::unique_ptr<ForwarderProcess> &agent, QTemporaryDir &home);

    PostgresServer m_server;
    QTemporaryDir m_dir;
    QString m_database;
    std::unique_ptr<HubProcess> m_a;
    std::unique_ptr<HubProcess> m_b;
};

void TestHubCluster::initTestCase()
{
    if (!m_server.start()) {
        const QString why = u"no PostgreSQL server for this test: %1"_s.arg(m_server.lastError());
        if (PostgresServer::required())
            QFAIL(qPrintable(why + u"\n(CLOOP_REQUIRE_POSTGRES=1: a failure here)"_s));
        QSKIP(qPrintable(why + u" (CLOOP_REQUIRE_POSTGRES=1 fails instead)"_s));
    }
}

void TestHubCluster::init()
{
    m_a = std::make_unique<HubProcess>();
    m_b = std::make_unique<HubProcess>();
    QVERIFY2(startMembers(), qPrintable(m_a->transcript() + m_b->transcript()));
}

void TestHubCluster::cleanup()
{
    if (QTest::currentTestFailed()) {
        for (const auto *hub : { m_a.get(), m_b.get() }) {
            if (hub)
                qInfo().noquote() << "--- member log:\n" << hub->log() << hub->transcript();
        }
    }
    m_a.reset();
    m_b.reset();
}

QString TestHubCluster::passwordFile()
{
    static int files = 0;
    const QString path = m_dir.filePath(u"password-%1"_s.arg(++files));
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(m_server.password().toUtf8() + '\n') <= 0)
        return {};
    file.close();
    file.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner);
    return path;
}

bool TestHubCluster::startMembers()
{
    const QString database = m_server.createDatabase();
    if (database.isEmpty())
        return false;
    m_database = database;
    const QStringList shared { u"--database"_s,
        u"host=%1 dbname=%2 user=%3 connect_timeout=10"_s.arg(
            m_server.socketDirectory(), database, m_server.user()),
        u"--database-password-file"_s, passwordFile(), u"--member-lease"_s, u"3s"_s };
    m_a->setServeArguments(shared);
    m_b->setServeArguments(shared);
    return m_a->start() && m_b->start();
}

QString TestHubCluster::memberName(const HubProcess &hub) const
{
    return QUrl(hub.localAccess().value("url"_L1).toString()).authority();
}

void TestHubCluster::eachMemberHearsTheOthersEvents()
{
    // Given a dashboard subscribed to member B's event stream,
    EventClient onB(*m_b);
    QVERIFY(onB.subscribe(m_b->adminToken()));
    // when an administrator enrolls a forwarder and adds a project through A,
    QElapsedTimer took;
    took.start();
    const Enrollment enrolled = m_a->enroll(u"lab-a"_s);
    QVERIFY2(enrolled.ok, qPrintable(enrolled.error));
    // then B's subscribers hear of it, as A's own would,
    QVERIFY2(
        onB.waitForEvent(
            u"forwarder.enrolled"_s,
            [&](const QJsonObject &data) { return data.value("id"_L1).toInteger() == enrolled.id; },
            10'000),
        qPrintable(m_b->log()));
    qInfo().noquote() << u"forwarder.enrolled through A reached B's event stream %1 ms after "
                         "the enrollment began"_s.arg(took.elapsed());
    // and a forwarder that connects to A is announced on B too, naming A.
    QTemporaryDir home;
    ForwarderProcess forwarder({ u"--bundle"_s, enrolled.bundle }, home.path());
    QVERIFY(forwarder.start());
    QVERIFY2(onB.waitForEvent(
                 u"forwarder.connected"_s,
                 [&](const QJsonObject &data) {
                     return data.value("id"_L1).toInteger() == enrolled.id
                         && data.value("hub_member"_L1).toString() == memberName(*m_a);
                 },
                 kLongWaitMs),
        qPrintable(forwarder.describe() + m_b->log()));
    // Nothing of B's own was told twice.
    int enrolledSeen = 0;
    for (const QJsonObject &message : std::as_const(onB.messages))
        enrolledSeen += message.value("event"_L1).toString() == "forwarder.enrolled"_L1;
    QCOMPARE(enrolledSeen, 1);
}

void TestHubCluster::aRevocationThroughOneMemberCutsTheSessionAnotherHolds()
{
    // Given a forwarder whose session member A holds,
    Enrollment enrolled;
    QTemporaryDir home;
    std::unique_ptr<ForwarderProcess> started;
    QVERIFY2(connectForwarder(*m_a, u"lab-revoked"_s, enrolled, started, home),
        qPrintable(started ? started->describe() : m_a->transcript()));
    ForwarderProcess &forwarder = *started;
    EventClient onB(*m_b);
    QVERIFY(onB.subscribe(m_b->adminToken()));
    // when an administrator revokes it through member B,
    QElapsedTimer took;
    took.start();
    CLOOP_COMPARE_EXIT(m_b->cli({ u"forward"_s, u"revoke"_s, QString::number(enrolled.id),
                           u"--reason"_s, u"bench returned"_s }),
        0);
    // then A ends the session for good: the forwarder hears it was revoked
    // and stops retrying,
    QVERIFY2(forwarder.waitForExit(), qPrintable(forwarder.describe()));
    const qint64 cut = took.elapsed();
    QCOMPARE(forwarder.exitCode(), 3);
    QVERIFY2(forwarder.stderrText().contains(u"revoked"_s), qPrintable(forwarder.describe()));
    // B's stream says the session A held ended,
    QVERIFY2(onB.waitForEvent(
                 u"forwarder.disconnected"_s,
                 [&](const QJsonObject &data) {
                     return data.value("id"_L1).toInteger() == enrolled.id
                         && data.value("hub_member"_L1).toString() == memberName(*m_a);
                 },
                 10'000),
        qPrintable(m_a->log()));
    qInfo().noquote() << u"revoked through B, the session on A ended %1 ms later"_s.arg(cut);
    // and neither member lists it connected any more.
    QVERIFY(!m_a->forwarderConnected(enrolled.id));
    QVERIFY(!m_b->forwarderConnected(enrolled.id));
}

bool TestHubCluster::connectForwarder(HubProcess &hub, const QString &name, Enrollment &enrolled,
    std::unique_ptr<ForwarderProcess> &forwarder, const QTemporaryDir &home)
{
    enrolled = hub.enroll(name);
    if (!enrolled.ok)
        return false;
    forwarder = std::make_unique<ForwarderProcess>(
        QStringList { u"--bundle"_s, enrolled.bundle }, home.path());
    return forwarder->start() && waitUntil([&] { return hub.forwarderConnected(enrolled.id); });
}

bool TestHubCluster::startHostAgent(HubProcess &hub, const QString &name, int maxConcurrent,
    std::unique_ptr<ForwarderProcess> &agent, QTemporaryDir &home)
{
    const QJsonObject enrolled
        = hub.cliJson({ u"executor"_s, u"enroll"_s, u"--name"_s, name, u"--json"_s }).toObject();
    const QString bundle = enrolled.value("bundle"_L1).toString();
    if (bundle.isEmpty())
        return false;
    agent = std::make_unique<ForwarderProcess>(
        QStringList { u"--bundle"_s, bundle, u"--host-mode"_s, u"--max-concurrent"_s,
            QString::number(maxConcurrent) },
        home.path(), ForwarderProcess::Program::Agent);
    return agent->start() && agent->waitForStderr(u"connected to the hub as executor"_s);
}

void TestHubCluster::runsQueuedOnBothMembersAtOnceAreEachDispatchedOnce()
{
    if (::geteuid() != 0)
        QSKIP("needs root: host-process runs run as the run user");
    // Given a host-mode agent on each member and a project,
    QTemporaryDir homeA;
    QTemporaryDir homeB;
    std::unique_ptr<ForwarderProcess> agentA;
    std::unique_ptr<ForwarderProcess> agentB;
    QVERIFY2(startHostAgent(*m_a, u"box-a"_s, 6, agentA, homeA),
        qPrintable(agentA ? agentA->describe() : m_a->transcript()));
    QVERIFY2(startHostAgent(*m_b, u"box-b"_s, 6, agentB, homeB),
        qPrintable(agentB ? agentB->describe() : m_b->transcript()));
    const QString project = u"/srv/projects/queue"_s;
    CLOOP_COMPARE_EXIT(m_a->cli({ u"project"_s, u"add"_s, project }), 0);
    // when 100 runs are queued through each member at the same time,
    constexpr int kEach = 100;
    const QString queueThem
        = u"seq %1 | xargs -P 6 -I{} %2 run --project %3 --host-process --no-wait -- true"_s.arg(
            QString::number(kEach), binaryPath(u"cloop"_s), project);
    QProcess throughA;
    QProcess throughB;
    throughA.setProcessEnvironment(m_a->cliEnvironment());
    throughB.setProcessEnvironment(m_b->cliEnvironment());
    QElapsedTimer took;
    took.start();
    throughA.start(u"sh"_s, { u"-c"_s, queueThem });
    throughB.start(u"sh"_s, { u"-c"_s, queueThem });
    QVERIFY(throughA.waitForFinished(120'000) && throughB.waitForFinished(120'000));
    QCOMPARE(throughA.exitCode(), 0);
    QCOMPARE(throughB.exitCode(), 0);
    // then every one of the 200 runs finishes, and succeeds,
    QJsonArray runs;
    QVERIFY2(waitUntil(
                 [&] {
                     runs = m_a->cliItems({ u"run"_s, u"list"_s, u"--all"_s, u"--json"_s });
                     if (runs.size() != 2 * kEach)
                         return false;
                     for (const QJsonValue &run : std::as_const(runs))
                         if (!run.toObject().value("finished"_L1).toBool())
                             return false;
                     return true;
                 },
                 180'000),
        qPrintable(u"%1 runs listed"_s.arg(runs.size())));
    qInfo().noquote() << u"200 runs queued through two members finished %1 ms after queueing "
                         "began"_s.arg(took.elapsed());
    QSet<qint64> ids;
    for (const QJsonValue &value : std::as_const(runs)) {
        const QJsonObject run = value.toObject();
        QCOMPARE(run.value("state"_L1).toString(), u"succeeded"_s);
        ids.insert(run.value("id"_L1).toInteger());
    }
    QCOMPARE(ids.size(), 2 * kEach);
    // each was dispatched exactly once, by one member to one agent, and
    // each agent started it at most once.
    const QRegularExpression dispatched(u"run (\\d+) dispatched to executor"_s);
    QHash<qint64, int> dispatches;
    for (const HubProcess *hub : { m_a.get(), m_b.get() })
        for (auto it = dispatched.globalMatch(hub->log()); it.hasNext();)
            ++dispatches[it.next().captured(1).toLongLong()];
    const QRegularExpression started(u"run (\\d+) starting in"_s);
    QHash<qint64, int> starts;
    for (const ForwarderProcess *agent : { agentA.get(), agentB.get() })
        for (auto it = started.globalMatch(agent->stderrText()); it.hasNext();)
            ++starts[it.next().captured(1).toLongLong()];
    int byB = 0;
    for (const qint64 id : std::as_const(ids)) {
        QVERIFY2(dispatches.value(id) == 1,
            qPrintable(u"run %1 was dispatched %2 times"_s.arg(id).arg(dispatches.value(id))));
        QVERIFY2(starts.value(id) == 1,
            qPrintable(u"run %1 was started %2 times"_s.arg(id).arg(starts.value(id))));
        byB += agentB->stderrText().contains(u"run %1 starting in"_s.arg(id));
    }
    qInfo().noquote() << u"agent on A ran %1 runs, agent on B %2"_s.arg(2 * kEach - byB).arg(byB);
    // Both members took part.
    QVERIFY(byB > 0 && byB < 2 * kEach);
}

void TestHubCluster::aTestThroughOneMemberReachesTheForwarderAnotherHolds()
{
    // Given a USB forwarder (the kernel stand-in's fixture machine) whose
    // session member A holds,
    QTemporaryDir machine;
    FixtureDevice hsm;
    hsm.busId = u"1-1"_s;
    hsm.vendorId = 0x1d50;
    hsm.productId = 0x6089;
    hsm.serial = u"HSM0001"_s;
    QVERIFY(UsbFixture::makeForwarderMachine(machine.path(), { hsm }));
    const Enrollment enrolled = m_a->enroll(u"hsm"_s, { u"--usb"_s, u"1d50:6089:HSM0001"_s });
    QVERIFY2(enrolled.ok, qPrintable(enrolled.error));
    QTemporaryDir home;
    ForwarderProcess forwarder({ u"--bundle"_s, enrolled.bundle }, home.path(),
        ForwarderProcess::Program::ForwarderUsbStandIn);
    forwarder.setEnvironmentVariable(u"CLOOP_USB_STANDIN"_s, u"forwarder"_s);
    forwarder.setEnvironmentVariable(u"CLOOP_SYSFS_ROOT"_s, machine.path());
    QVERIFY(forwarder.start());
    QVERIFY2(forwarder.waitForStderr(u"is present as 1-1"_s), qPrintable(forwarder.describe()));
    QVERIFY(waitUntil([&] { return m_b->forwarderConnected(enrolled.id); }));
    QCOMPARE(m_b->forwarder(enrolled.id).value("hub_member"_L1).toString(), memberName(*m_a));
    // when an administrator tests it through member B,
    QElapsedTimer took;
    took.start();
    const QJsonObject tested
        = m_b->cliJson({ u"forward"_s, u"test"_s, QString::number(enrolled.id), u"--json"_s })
              .toObject();
    qInfo().noquote() << u"Test through B of a forwarder A holds answered in %1 ms"_s.arg(
        took.elapsed());
    // then the report is the forwarder's own device list, relayed by A,
    const QJsonObject report = tested.value("report"_L1).toObject();
    QVERIFY2(report.value("ok"_L1).toBool(), qPrintable(m_b->transcript() + m_b->log()));
    const QJsonArray devices = report.value("devices"_L1).toArray();
    QCOMPARE(devices.size(), 1);
    QCOMPARE(devices.at(0).toObject().value("busid"_L1).toString(), u"1-1"_s);
    QCOMPARE(devices.at(0).toObject().value("vendor_id"_L1).toString(), u"1d50"_s);
    // B linked to A over the peer channel, and A took the link from B.
    QVERIFY2(m_b->log().contains(u"linked to hub member"_s), qPrintable(m_b->log()));
    QVERIFY2(
        m_a->log().contains(u"(%1) linked from"_s.arg(memberName(*m_b))), qPrintable(m_a->log()));
    // and the forwarder answered a test, not an import.
    QVERIFY(!forwarder.stderrText().contains(u"lending"_s));
}

void TestHubCluster::aRevocationWhoseEventNeverCameStillCutsTheSession()
{
    // Given a forwarder whose session member B holds,
    Enrollment enrolled;
    QTemporaryDir home;
    std::unique_ptr<ForwarderProcess> started;
    QVERIFY2(connectForwarder(*m_b, u"lab-quiet"_s, enrolled, started, home),
        qPrintable(started ? started->describe() : m_b->transcript()));
    ForwarderProcess &forwarder = *started;
    // when it is revoked in the records without any event (as if the
    // member that revoked it died before its event was read),
    QVERIFY(m_server.execute(m_database,
        u"UPDATE forwarders SET revoked_at = '2026-12-03T00:00:00.000Z', revoked_by = 'test' "
        "WHERE id = %1"_s.arg(enrolled.id)));
    // then B's own check of what it holds ends the session for good within
    // a few seconds.
    QElapsedTimer took;
    took.start();
    QVERIFY2(forwarder.waitForExit(15'000), qPrintable(forwarder.describe() + m_b->log()));
    QCOMPARE(forwarder.exitCode(), 3);
    QVERIFY2(m_b->log().contains(u"found by the periodic check"_s), qPrintable(m_b->log()));
    qInfo().noquote() << u"a revocation with no event ended the session in %1 ms"_s.arg(
        took.elapsed());
}

void TestHubCluster::anAgentWhoseMemberDiesCarriesOnThroughAnotherWithItsLogWhole()
{
    if (::geteuid() != 0)
        QSKIP("needs root: host-process runs run as the run user");
    // Given a host-mode agent enrolled through A (its bundle names both
    // members) and a run of it that prints a line every 50 ms,
    QTemporaryDir home;
    std::unique_ptr<ForwarderProcess> agent;
    QVERIFY2(startHostAgent(*m_a, u"mover"_s, 2, agent, home),
        qPrintable(agent ? agent->describe() : m_a->transcript()));
    const QString project = u"/srv/projects/moving"_s;
    CLOOP_COMPARE_EXIT(m_a->cli({ u"project"_s, u"add"_s, project }), 0);
    const CliResult queued = m_a->cli({ u"run"_s, u"--project"_s, project, u"--host-process"_s,
        u"--no-wait"_s, u"--"_s, u"sh"_s, u"-c"_s,
        u"i=1; while [ $i -le 120 ]; do echo \"tick $i\"; i=$((i+1)); sleep 0.05; done"_s });
    CLOOP_COMPARE_EXIT(queued, 0);
    const QString id = queued.stdoutText().trimmed();
    QVERIFY(waitUntil([&] {
        return m_b->cli({ u"run"_s, u"logs"_s, id }).stdoutText().contains(u"tick 10\n"_s);
    }));
    // when A dies in the middle of it (once the agent heard of B),
    QVERIFY2(waitUntil([&] {
        const QString said = agent->stderrText();
        return said.contains(u"the hub is now dialled at"_s) && said.contains(memberName(*m_b));
    }),
        qPrintable(agent->describe()));
    m_a->kill();
    // then the agent connects to B, the run finishes there, and its log,
    // read through B, has every line once.
    QVERIFY2(
        waitUntil([&] { return agent->stderrCount(u"connected to the hub as executor"_s) >= 2; }),
        qPrintable(agent->describe()));
    QJsonObject run;
    QVERIFY2(waitUntil(
                 [&] {
                     run = m_b->cliJson({ u"run"_s, u"show"_s, id, u"--json"_s }).toObject();
                     return run.value("finished"_L1).toBool();
                 },
                 60'000),
        qPrintable(m_b->log()));
    QCOMPARE(run.value("state"_L1).toString(), u"succeeded"_s);
    QStringList expected;
    for (int i = 1; i <= 120; ++i)
        expected.append(u"tick %1"_s.arg(i));
    const CliResult log = m_b->cli({ u"run"_s, u"logs"_s, id });
    CLOOP_COMPARE_EXIT(log, 0);
    QCOMPARE(log.stdoutText(), expected.join(u'\n') + u'\n');
    QVERIFY2(!log.stderrText().contains(u"dropped"_s), qPrintable(log.describe()));
}

void TestHubCluster::theDatabaseRestartedUnderLoadLosesNothing()
{
    // Given administrators adding projects through both members, one after
    // the other as fast as they answer (and, after a refusal, a moment
    // later: a refusal is quick, and without the pause the 200 could all
    // be refused before the member finds the database again),
    const QString addThem
        = u"for i in $(seq 1 200); do "
          "if out=$(%1 project add /srv/projects/load-$i 2>&1); then echo \"ok $i\"; "
          "else echo \"fail $i $out\" | tr '\\n' ' '; echo; sleep 0.1; fi; done"_s.arg(
              binaryPath(u"cloop"_s));
    QProcess throughA;
    throughA.setProcessEnvironment(m_a->cliEnvironment());
    throughA.start(u"sh"_s, { u"-c"_s, addThem });
    QVERIFY(throughA.waitForStarted());
    // when PostgreSQL restarts under them,
    QTest::qWait(800);
    QVERIFY2(m_server.stop(), qPrintable(m_server.lastError()));
    QTest::qWait(1500);
    QVERIFY2(m_server.start(), qPrintable(m_server.lastError()));
    QVERIFY(throughA.state() == QProcess::NotRunning || throughA.waitForFinished(180'000));
    QCOMPARE(throughA.exitCode(), 0);
    const QStringList lines
        = QString::fromUtf8(throughA.readAllStandardOutput()).split(u'\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 200);
    // then every change that was answered as done is there, with its audit
    // row, and every one that was not says why and left nothing.
    QVERIFY(waitUntil([&] { return m_a->cli({ u"project"_s, u"list"_s }).exitCode == 0; }));
    QSet<QString> projects;
    for (const QJsonValue &project : m_b->cliItems({ u"project"_s, u"list"_s, u"--json"_s }))
        projects.insert(project.toObject().value("path"_L1).toString());
    const QJsonArray audit
        = m_b->cliItems({ u"audit"_s, u"--action"_s, u"project.add"_s, u"--json"_s });
    QSet<QString> audited;
    for (const QJsonValue &entry : audit)
        audited.insert(entry.toObject().value("subject"_L1).toString());
    int done = 0;
    int refused = 0;
    for (const QString &line : lines) {
        const QString path = u"/srv/projects/load-%1"_s.arg(line.section(u' ', 1, 1));
        if (line.startsWith(u"ok "_s)) {
            ++done;
            QVERIFY2(projects.contains(path), qPrintable(path));
            QVERIFY2(audited.contains(u"project:"_s + path) || audited.contains(path),
                qPrintable(path + u" has no audit row"_s));
        } else {
            ++refused;
            QVERIFY2(line.contains(u"database is unreachable"_s) || line.contains(u"PostgreSQL"_s),
                qPrintable(line));
            QVERIFY2(!projects.contains(path), qPrintable(path + u" half made"_s));
        }
    }
    qInfo().noquote() << u"%1 changes done, %2 refused while PostgreSQL restarted"_s.arg(done).arg(
        refused);
    QVERIFY(refused > 0);
    // (some went through after the restart, without anyone's help)
    QVERIFY(lines.last().startsWith(u"ok "_s));
    QCOMPARE(int(audited.size()), done);
    // and the members hear each other again (listening anew).
    EventClient onB(*m_b);
    QVERIFY(onB.subscribe(m_b->adminToken()));
    const Enrollment enrolled = m_a->enroll(u"after-restart"_s);
    QVERIFY2(enrolled.ok, qPrintable(enrolled.error));
    QVERIFY(onB.waitForEvent(
        u"forwarder.enrolled"_s,
        [&](const QJsonObject &data) { return data.value("id"_L1).toInteger() == enrolled.id; },
        10'000));
}

void TestHubCluster::theDatabaseDownRefusesChangesAndEverythingResumes()
{
    // Given a forwarder whose session A holds,
    Enrollment enrolled;
    QTemporaryDir home;
    std::unique_ptr<ForwarderProcess> started;
    QVERIFY2(connectForwarder(*m_a, u"lab-steady"_s, enrolled, started, home),
        qPrintable(started ? started->describe() : m_a->transcript()));
    ForwarderProcess &forwarder = *started;
    // when PostgreSQL goes away,
    QVERIFY2(m_server.stop(), qPrintable(m_server.lastError()));
    // then /api/health says so,
    HttpResult health;
    QVERIFY2(waitUntil(
                 [&] {
                     health = pinnedGet(m_a->apiUrl(u"/api/health"_s), m_a->pin());
                     return health.status == 503;
                 },
                 20'000),
        qPrintable(health.describe()));
    QCOMPARE(health.json().value("status"_L1).toString(), u"degraded"_s);
    QCOMPARE(health.errorCode(), u"database_unreachable"_s);
    // a change is refused with a clear error,
    const CliResult refused = m_a->cli({ u"project"_s, u"add"_s, u"/srv/projects/while-down"_s });
    QVERIFY(refused.exitCode != 0);
    QVERIFY2(refused.stderrText().contains(u"the cluster database is unreachable"_s),
        qPrintable(refused.describe()));
    // and the live session goes on: the forwarder is never cut off.
    QTest::qWait(4000);
    QVERIFY(forwarder.isRunning());
    QCOMPARE(forwarder.stderrCount(u"connected to the hub as forwarder"_s), qsizetype(1));
    // Once PostgreSQL is back, everything resumes by itself.
    QVERIFY2(m_server.start(), qPrintable(m_server.lastError()));
    QElapsedTimer took;
    took.start();
    QVERIFY2(waitUntil(
                 [&] {
                     health = pinnedGet(m_a->apiUrl(u"/api/health"_s), m_a->pin());
                     return health.status == 200;
                 },
                 30'000),
        qPrintable(health.describe()));
    qInfo().noquote() << u"healthy again %1 ms after PostgreSQL came back"_s.arg(took.elapsed());
    CLOOP_COMPARE_EXIT(m_a->cli({ u"project"_s, u"add"_s, u"/srv/projects/after"_s }), 0);
    QCOMPARE(forwarder.stderrCount(u"connected to the hub as forwarder"_s), qsizetype(1));
    // B reconnects on its own backoff, which may still be pausing when A is
    // healthy: by itself, it lists the forwarder connected again.
    QVERIFY(waitUntil([&] { return m_b->forwarderConnected(enrolled.id); }, 30'000));
}

QTEST_GUILESS_MAIN(TestHubCluster)
#include "tst_hubcluster.moc"
