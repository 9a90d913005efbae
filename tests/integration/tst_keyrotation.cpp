// Integration: the hub's key rotated while a forwarder and an executor agent
// are connected: staged, both pin the next key at once; activated, both
// reconnect on it with no step on their machines. A forwarder that was away
// through the whole rotation is refused with a message naming its repin
// command, and connects once that command ran.

#include "support/testrig.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

using namespace cloop;
using namespace cloop::testing;
using namespace Qt::StringLiterals;

class TestKeyRotation final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();
    void aRotationCutsNobodyOff();
    void stepsOutOfOrderAreRefused();

private:
    CliResult key(const QString &step);
    std::unique_ptr<TestRig> m_rig;
};

namespace {
QString pinsIn(const QString &credentialFile)
{
    QFile file(credentialFile);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return QJsonDocument::fromJson(file.readAll()).object().value("pin"_L1).toString();
}

QString pinIn(const CliResult &staged)
{
    const QString out = staged.stdoutText();
    const qsizetype at = out.indexOf(u"sha256:"_s);
    return at < 0 ? QString() : out.mid(at).section(u' ', 0, 0).remove(u';');
}
} // namespace

void TestKeyRotation::init()
{
    m_rig = std::make_unique<TestRig>();
    QVERIFY2(m_rig->startHub(), qPrintable(m_rig->lastError()));
}

void TestKeyRotation::cleanup()
{
    if (QTest::currentTestFailed() && m_rig)
        m_rig->printDiagnostics();
    m_rig.reset();
}

CliResult TestKeyRotation::key(const QString &step)
{
    return runProgram(binaryPath(u"cloop-hub"_s),
        { u"key"_s, step, u"--data"_s, m_rig->hub().dataDir() },
        QProcessEnvironment::systemEnvironment());
}

void TestKeyRotation::aRotationCutsNobodyOff()
{
    HubProcess &hub = m_rig->hub();
    const QString oldPin = hub.pin();

    ConnectedForwarder live;
    QVERIFY2(m_rig->enrollAndConnect(u"bench-live"_s, live), qPrintable(m_rig->lastError()));
    ConnectedForwarder away;
    QVERIFY2(m_rig->enrollAndConnect(u"bench-away"_s, away), qPrintable(m_rig->lastError()));
    QVERIFY(away.process->terminate());

    const QJsonObject enrolled
        = hub.cliJson({ u"executor"_s, u"enroll"_s, u"--name"_s, u"box"_s, u"--json"_s })
              .toObject();
    const QString bundle = m_rig->path(u"agent.bundle"_s);
    const QString agentCredential = m_rig->path(u"agent.json"_s);
    QFile bundleFile(bundle);
    QVERIFY(bundleFile.open(QIODevice::WriteOnly));
    bundleFile.write(enrolled.value("bundle"_L1).toString().toLatin1());
    bundleFile.close();
    QFile::setPermissions(bundle, QFile::ReadOwner | QFile::WriteOwner);
    ForwarderProcess &agent
        = m_rig->addForwarder({ u"--token-file"_s, bundle, u"--credential-file"_s, agentCredential,
                                  u"--work-root"_s, m_rig->path(u"work"_s), u"--host-mode"_s },
            m_rig->newHome(), ForwarderProcess::Program::Agent);
    QVERIFY(agent.start());
    QVERIFY2(
        agent.waitForStderr(u"connected to the hub as executor"_s), qPrintable(agent.describe()));
    QCOMPARE(pinsIn(agentCredential), oldPin);

    // Staged: both live daemons pin the next key beside the current one.
    const CliResult staged = key(u"stage"_s);
    CLOOP_COMPARE_EXIT(staged, 0);
    const QString newPin = pinIn(staged);
    QVERIFY2(newPin.startsWith(u"sha256:"_s) && newPin != oldPin, qPrintable(staged.describe()));
    const QString both = oldPin + u',' + newPin;
    QTRY_COMPARE_WITH_TIMEOUT(pinsIn(live.credentialFile), both, 10000);
    QTRY_COMPARE_WITH_TIMEOUT(pinsIn(agentCredential), both, 10000);
    QCOMPARE(pinsIn(away.credentialFile), oldPin);
    QVERIFY(hub.forwarderConnected(live.enrollment.id));

    // Activated: the hub serves the new key; after its restart both come
    // back on it by themselves.
    CLOOP_COMPARE_EXIT(key(u"activate"_s), 0);
    QTRY_COMPARE_WITH_TIMEOUT(hub.pin(), newPin, 10000);
    const qsizetype agentConnections = agent.stderrCount(u"connected to the hub as executor"_s);
    QCOMPARE(hub.stop(), 0);
    QVERIFY2(hub.start(), qPrintable(m_rig->lastError()));
    QTRY_VERIFY2_WITH_TIMEOUT(
        hub.forwarderConnected(live.enrollment.id), qPrintable(live.process->describe()), 30000);
    QTRY_VERIFY2_WITH_TIMEOUT(
        agent.stderrCount(u"connected to the hub as executor"_s) > agentConnections,
        qPrintable(agent.describe()), 30000);
    // The old key is gone from the hub, and so from what they pin.
    QTRY_COMPARE_WITH_TIMEOUT(pinsIn(live.credentialFile), newPin, 10000);
    QTRY_COMPARE_WITH_TIMEOUT(pinsIn(agentCredential), newPin, 10000);

    // The forwarder that was away is refused, told how to re-pin it.
    ForwarderProcess &back = m_rig->addForwarder({ u"--credential-file"_s, away.credentialFile });
    QVERIFY(back.start());
    QVERIFY2(back.waitForStderr(u"cloop forward repin --credential-file"_s),
        qPrintable(back.describe()));
    QVERIFY(!hub.forwarderConnected(away.enrollment.id));
    QVERIFY(back.terminate());
    // A pin that is none is refused, and the credential left as it was.
    CLOOP_COMPARE_EXIT(m_rig->runForwarder({ u"repin"_s, u"--credential-file"_s,
                                               away.credentialFile, u"--pin"_s, u"sha256:nope"_s },
                           m_rig->newHome()),
        2);
    QCOMPARE(pinsIn(away.credentialFile), oldPin);
    CLOOP_COMPARE_EXIT(m_rig->runForwarder({ u"repin"_s, u"--credential-file"_s,
                                               away.credentialFile, u"--pin"_s, newPin },
                           m_rig->newHome()),
        0);
    QCOMPARE(pinsIn(away.credentialFile), newPin);
    ForwarderProcess &repinned
        = m_rig->addForwarder({ u"--credential-file"_s, away.credentialFile });
    QVERIFY(m_rig->startAndAwaitConnection(repinned, away.enrollment.id));
}

void TestKeyRotation::stepsOutOfOrderAreRefused()
{
    const QString pin = m_rig->hub().pin();
    CLOOP_COMPARE_EXIT(key(u"activate"_s), 1);
    CLOOP_COMPARE_EXIT(key(u"rotate"_s), 2);
    CLOOP_COMPARE_EXIT(key(u"stage"_s), 0);
    const CliResult again = key(u"stage"_s);
    CLOOP_COMPARE_EXIT(again, 1);
    QVERIFY2(again.stderrText().contains(u"staged already"_s), qPrintable(again.describe()));
    const CliResult status = key(u"status"_s);
    CLOOP_COMPARE_EXIT(status, 0);
    QVERIFY2(status.stdoutText().contains(u"serving: "_s + pin), qPrintable(status.describe()));
    // Staging changes nothing the hub serves.
    QCOMPARE(m_rig->hub().pin(), pin);
}

QTEST_GUILESS_MAIN(TestKeyRotation)
#include "tst_keyrotation.moc"
