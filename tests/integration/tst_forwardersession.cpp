// Integration: the life of a connected forwarder's session. It survives the
// hub being killed and restarted, and a revocation ends it at once and for
// good. Every test function has a hub of its own on 127.0.0.1.

#include "support/testrig.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QTest>

using namespace cloop::testing;

class TestForwarderSession final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void reconnectsAfterHubRestart();
    void aHubThatStopsTellsItsForwardersWhy();
    void revokeDropsSessionAndRefusesReconnect();

private:
    std::unique_ptr<TestRig> m_rig;
};

void TestForwarderSession::init()
{
    m_rig = std::make_unique<TestRig>();
    QVERIFY2(m_rig->startHub(), qPrintable(m_rig->lastError()));
}

void TestForwarderSession::cleanup()
{
    if (QTest::currentTestFailed() && m_rig)
        m_rig->printDiagnostics();
    m_rig.reset();
}

void TestForwarderSession::reconnectsAfterHubRestart()
{
    HubProcess &hub = m_rig->hub();
    ConnectedForwarder forwarder;
    QVERIFY2(m_rig->enrollAndConnect(QStringLiteral("survivor"), forwarder),
        qPrintable(m_rig->lastError()));
    const quint16 port = hub.port();

    // When the hub dies without a chance to say goodbye
    hub.kill();
    QVERIFY(!hub.isRunning());

    // Then the command line says it cannot reach it
    const CliResult down
        = hub.cli({ QStringLiteral("forward"), QStringLiteral("list"), QStringLiteral("--json") });
    QVERIFY2(down.exitCode != 0 && down.exitCode != -1, qPrintable(down.describe()));
    QVERIFY2(down.stderrText().contains(QLatin1String("cannot reach the hub")),
        qPrintable(down.describe()));
    QVERIFY2(down.out.isEmpty(), qPrintable(down.describe()));
    // and the forwarder notices and keeps trying
    QVERIFY2(forwarder.process->waitForStderr(QStringLiteral("not connected")),
        qPrintable(forwarder.process->describe()));
    QVERIFY2(forwarder.process->isRunning(), qPrintable(forwarder.process->describe()));

    // When the hub comes back on the same port
    QVERIFY2(hub.start(), qPrintable(hub.lastError()));
    QCOMPARE(hub.port(), port);

    // Then the forwarder reconnects by itself
    QTRY_VERIFY2_WITH_TIMEOUT(hub.forwarderConnected(forwarder.enrollment.id),
        qPrintable(forwarder.process->describe()), kLongWaitMs);
    QVERIFY2(forwarder.process->isRunning(), qPrintable(forwarder.process->describe()));
    QTRY_COMPARE_WITH_TIMEOUT(
        forwarder.process->stderrCount(QStringLiteral("connected to the hub as forwarder")), 2,
        kLongWaitMs);
    // with the credential it was given, not by enrolling again
    QCOMPARE(forwarder.process->stderrCount(QStringLiteral("enrolled as forwarder")), 1);
}

void TestForwarderSession::aHubThatStopsTellsItsForwardersWhy()
{
    HubProcess &hub = m_rig->hub();
    ConnectedForwarder forwarder;
    QVERIFY2(m_rig->enrollAndConnect(QStringLiteral("listener"), forwarder),
        qPrintable(m_rig->lastError()));

    // When an operator stops the hub (SIGTERM, as systemd does)
    QCOMPARE(hub.stop(), 0);
    QVERIFY2(hub.log().contains(QLatin1String(
                 "closed 1 forwarder session(s): the hub is stopping (their return spread over")),
        qPrintable(hub.log()));

    // Then the forwarder heard why, not a reset, and over how long to
    // spread its return; it waits for the hub to come back
    QVERIFY2(forwarder.process->waitForStderr(QStringLiteral("the hub is stopping; back within")),
        qPrintable(forwarder.process->describe()));
    QVERIFY2(forwarder.process->isRunning(), qPrintable(forwarder.process->describe()));
    QVERIFY2(hub.start(), qPrintable(hub.lastError()));
    QTRY_VERIFY2_WITH_TIMEOUT(hub.forwarderConnected(forwarder.enrollment.id),
        qPrintable(forwarder.process->describe()), kLongWaitMs);
}

void TestForwarderSession::revokeDropsSessionAndRefusesReconnect()
{
    HubProcess &hub = m_rig->hub();
    ConnectedForwarder forwarder;
    QVERIFY2(m_rig->enrollAndConnect(QStringLiteral("doomed"), forwarder),
        qPrintable(m_rig->lastError()));
    const QString id = QString::number(forwarder.enrollment.id);

    // When an administrator revokes it
    const Clock::time_point revokeStarted = Clock::now();
    const CliResult revoke = hub.cli({ QStringLiteral("forward"), QStringLiteral("revoke"), id,
        QStringLiteral("--reason"), QStringLiteral("integration test") });
    CLOOP_COMPARE_EXIT(revoke, 0);
    QVERIFY2(revoke.stdoutText().contains(QStringLiteral("Revoked forwarder %1").arg(id)),
        qPrintable(revoke.describe()));

    // Then the running daemon is told at once and stops for good
    QTRY_VERIFY2_WITH_TIMEOUT(
        forwarder.process->hasExited(), qPrintable(forwarder.process->describe()), 10'000);
    QVERIFY2(forwarder.process->exitCode() == 3, qPrintable(forwarder.process->describe()));
    QVERIFY2(forwarder.process->stderrText().contains(QLatin1String("revoked")),
        qPrintable(forwarder.process->describe()));
    const auto latencyMs = std::chrono::duration_cast<std::chrono::milliseconds>(
        forwarder.process->exitedAt() - revokeStarted)
                               .count();
    qInfo("revoke latency: %lld ms from starting `cloop forward revoke` to the forwarder's exit",
        static_cast<long long>(latencyMs));
    QVERIFY2(latencyMs < 1000,
        qPrintable(
            QStringLiteral("the forwarder exited %1 ms after the revoke began").arg(latencyMs)));

    // and the hub lists it revoked (revoked forwarders are listed with --all)
    const QJsonObject listed = hub.forwarder(forwarder.enrollment.id);
    QVERIFY2(!listed.isEmpty(), qPrintable(hub.transcript()));
    QCOMPARE(listed.value(QLatin1String("connected")).toBool(true), false);
    QCOMPARE(listed.value(QLatin1String("state")).toString(), QStringLiteral("revoked"));
    QVERIFY(listed.value(QLatin1String("revoked_at")).isString());
    const QJsonValue active = hub.cliJson(
        { QStringLiteral("forward"), QStringLiteral("list"), QStringLiteral("--json") });
    QVERIFY2(
        active.toObject().value(QLatin1String("items")).isArray(), qPrintable(hub.lastError()));
    for (const QJsonValue &entry : active.toObject().value(QLatin1String("items")).toArray())
        QVERIFY(entry.toObject().value(QLatin1String("id")).toInteger() != forwarder.enrollment.id);

    // When the daemon is started again with its saved credential
    ForwarderProcess &again
        = m_rig->addForwarder({ QStringLiteral("--credential-file"), forwarder.credentialFile },
            forwarder.process->home());
    QVERIFY2(again.start(), qPrintable(again.describe()));

    // Then the hub refuses it for good, quickly
    QTRY_VERIFY2_WITH_TIMEOUT(again.hasExited(), qPrintable(again.describe()), 10'000);
    QVERIFY2(again.exitCode() == 3, qPrintable(again.describe()));
    QVERIFY2(again.stderrText().contains(QLatin1String("revoked")), qPrintable(again.describe()));
    QVERIFY2(!again.stderrText().contains(QLatin1String("connected to the hub")),
        qPrintable(again.describe()));
    QVERIFY(!hub.forwarderConnected(forwarder.enrollment.id));
}

QTEST_GUILESS_MAIN(TestForwarderSession)
#include "tst_forwardersession.moc"
