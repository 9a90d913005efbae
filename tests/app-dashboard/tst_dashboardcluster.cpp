// The dashboard signed in to one member of a hub cluster (two hubs on a
// real PostgreSQL server the test starts) shows, live, the forwarders
// another member holds: the card turns live, names the member, and
// greys out when the forwarder goes, all from events that crossed members.

#include "app-dashboard/core/hubapi.h"
#include "app-dashboard/ui/forwardercard.h"
#include "app-dashboard/ui/forwarderspage.h"
#include "app-dashboard/ui/mainwindow.h"
#include "app-dashboard/ui/signindialog.h"
#include "app-dashboard/ui/statechip.h"
#include "support/forwarderprocess.h"
#include "support/hubprocess.h"
#include "support/postgresserver.h"
#include "support/processutil.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QUrl>

using namespace cloop;
using namespace cloop::dashboard;
using namespace cloop::testing;
using namespace Qt::StringLiterals;

class TestDashboardCluster final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void aCardOnBFollowsAForwarderThatAHolds();

private:
    PostgresServer m_server;
    QTemporaryDir m_dir;
};

void TestDashboardCluster::initTestCase()
{
    qputenv("DBUS_SESSION_BUS_ADDRESS", "unix:abstract=cloop-test-no-such-bus");
    if (!m_server.start()) {
        const QString why = u"no PostgreSQL server for this test: %1"_s.arg(m_server.lastError());
        if (PostgresServer::required())
            QFAIL(qPrintable(why));
        QSKIP(qPrintable(why));
    }
}

void TestDashboardCluster::aCardOnBFollowsAForwarderThatAHolds()
{
    // Given two members on one database,
    const QString database = m_server.createDatabase();
    QVERIFY(!database.isEmpty());
    const QString password = m_dir.filePath(u"password"_s);
    {
        QFile file(password);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(m_server.password().toUtf8() + '\n');
        file.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner);
    }
    const QStringList shared { u"--database"_s,
        u"host=%1 dbname=%2 user=%3"_s.arg(m_server.socketDirectory(), database, m_server.user()),
        u"--database-password-file"_s, password };
    HubProcess a;
    HubProcess b;
    a.setServeArguments(shared);
    b.setServeArguments(shared);
    QVERIFY2(a.start(), qPrintable(a.transcript()));
    QVERIFY2(b.start(), qPrintable(b.transcript()));
    const QString nameA = QUrl(a.localAccess().value("url"_L1).toString()).authority();

    // and an administrator's dashboard signed in to B,
    HubApi api;
    SignInDialog dialog(&api, nullptr);
    dialog.setHub(u"wss://127.0.0.1:%1"_s.arg(b.port()), b.pin());
    dialog.setToken(b.adminToken());
    QSignalSpy accepted(&dialog, &QDialog::accepted);
    QTest::mouseClick(dialog.actionButton(), Qt::LeftButton);
    QVERIFY(QTest::qWaitFor([&] { return accepted.count() == 1; }, kLongWaitMs));
    MainWindow window(&api, dialog.identity());
    window.resize(1280, 800);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QVERIFY(QTest::qWaitFor(
        [&] { return window.liveLabel()->text().contains(QLatin1String("live")); }, kLongWaitMs));
    ForwardersPage *page = window.forwardersPage();

    // when a forwarder enrolled through A connects to A,
    const Enrollment enrolled = a.enroll(u"lab-on-a"_s);
    QVERIFY2(enrolled.ok, qPrintable(enrolled.error));
    QVERIFY(QTest::qWaitFor([&] { return page->cardFor(enrolled.id) != nullptr; }, kLongWaitMs));
    QTemporaryDir home;
    ForwarderProcess forwarder({ u"--bundle"_s, enrolled.bundle }, home.path());
    QVERIFY(forwarder.start());
    // then B's card turns connected and names A,
    const auto card = [&] { return page->cardFor(enrolled.id); };
    // (connected: live, or unplugged on a machine without its USB device),
    QVERIFY2(QTest::qWaitFor(
                 [&] {
                     return card()->stateText() == QLatin1String("Live")
                         || card()->stateText() == QLatin1String("Unplugged");
                 },
                 kLongWaitMs),
        qPrintable(card()->stateText()));
    // (The member is in the state's tooltip: on one hub it would say nothing.)
    QVERIFY2(
        card()->stateChip()->toolTip().contains(nameA), qPrintable(card()->stateChip()->toolTip()));
    if (const QString folder = qEnvironmentVariable("CLOOP_SCREENSHOT_DIR"); !folder.isEmpty()) {
        QApplication::processEvents();
        window.grab().save(folder + u"/forwarders-cluster.png"_s);
    }
    // and greys out as soon as A says the forwarder went.
    QElapsedTimer took;
    took.start();
    QVERIFY(forwarder.kill());
    QVERIFY2(
        QTest::qWaitFor(
            [&] { return card()->stateText().startsWith(QLatin1String("Offline")); }, kLongWaitMs),
        qPrintable(card()->stateText()));
    qInfo().noquote() << u"the card on B went offline %1 ms after A's forwarder was killed"_s.arg(
        took.elapsed());
}

QTEST_MAIN(TestDashboardCluster)
#include "tst_dashboardcluster.moc"
