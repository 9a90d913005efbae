// A daemon's answer to the hub's upgrade request: its own settings decide,
// its work drains first, and the request is filed for the root helper.

#include "common/daemon/upgraderesponder.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace cloop;
using namespace cloop::daemon;
using namespace Qt::StringLiterals;
using protocol::UpgradeStatus;

class TestUpgradeResponder final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void aDeviceThatDidNotOptInRefuses();
    void anEdgeTargetOnAStableDeviceIsRefused();
    void theHubCannotSetTheChannel();
    void noDowngradeFromTheHub();
    void aTargetOutOfShapeIsRefused();
    void runsFinishBeforeTheRequestIsFiled();
    void oneUpgradeAtATime();
    void afterAReconnectTheOutcomeIsTold();

private:
    UpgradeResponder::Options options(bool remote, release::Channel channel);
    // The statuses the responder sent after `request`.
    QList<UpgradeStatus> answer(
        UpgradeResponder &responder, const QString &target, const QStringList &ignored = {});

    std::unique_ptr<QTemporaryDir> m_dir;
    int m_busy = 0;
};

void TestUpgradeResponder::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    m_busy = 0;
}

UpgradeResponder::Options TestUpgradeResponder::options(bool remote, release::Channel channel)
{
    UpgradeResponder::Options options;
    options.settings.channel = channel;
    options.settings.remoteUpgrade = remote;
    options.program = u"cloop executor agent"_s;
    options.spoolFolder = m_dir->filePath(u"upgrade"_s);
    options.installedVersion = u"0.4.0"_s;
    options.busy = [this] { return m_busy; };
    return options;
}

QList<UpgradeStatus> TestUpgradeResponder::answer(
    UpgradeResponder &responder, const QString &target, const QStringList &ignored)
{
    QList<UpgradeStatus> sent;
    const auto connection = connect(&responder, &UpgradeResponder::send, this,
        [&sent](const protocol::ControlMessage &message) {
            if (const auto *status = std::get_if<UpgradeStatus>(&message))
                sent.append(*status);
        });
    responder.onRequest(protocol::UpgradeRequest { target, ignored });
    disconnect(connection);
    return sent;
}

void TestUpgradeResponder::aDeviceThatDidNotOptInRefuses()
{
    UpgradeResponder responder(options(false, release::Channel::Stable));
    const auto sent = answer(responder, u"latest"_s);
    QCOMPARE(sent.size(), 1);
    QCOMPARE(sent.first().state, UpgradeStatus::State::Refused);
    QVERIFY2(
        sent.first().message.contains(u"cloop executor agent install --upgrade --remote-upgrade"_s),
        qPrintable(sent.first().message));
    QVERIFY(!QFile::exists(m_dir->filePath(u"upgrade/request"_s)));
}

void TestUpgradeResponder::anEdgeTargetOnAStableDeviceIsRefused()
{
    UpgradeResponder responder(options(true, release::Channel::Stable));
    const auto sent = answer(responder, u"edge:6e750e9"_s);
    QCOMPARE(sent.size(), 1);
    QCOMPARE(sent.first().state, UpgradeStatus::State::Refused);
    QVERIFY2(sent.first().message.contains(u"does not follow the edge channel"_s),
        qPrintable(sent.first().message));
    QVERIFY2(sent.first().message.contains(u"--channel edge"_s), qPrintable(sent.first().message));
    QVERIFY(!QFile::exists(m_dir->filePath(u"upgrade/request"_s)));
}

void TestUpgradeResponder::theHubCannotSetTheChannel()
{
    // The request says "channel": "edge"; the device still follows stable,
    // and says what it ignored.
    UpgradeResponder responder(options(true, release::Channel::Stable));
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression(u"carried channel.*ignored"_s));
    const auto sent = answer(responder, u"edge:6e750e9"_s, { u"channel"_s });
    QCOMPARE(sent.size(), 1);
    QCOMPARE(sent.first().state, UpgradeStatus::State::Refused);
    QVERIFY(sent.first().message.contains(u"does not follow the edge channel"_s));
}

void TestUpgradeResponder::noDowngradeFromTheHub()
{
    UpgradeResponder responder(options(true, release::Channel::Stable));
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression(u"allow_downgrade.*ignored"_s));
    const auto sent = answer(responder, u"0.3.0"_s, { u"allow_downgrade"_s });
    QCOMPARE(sent.size(), 1);
    QCOMPARE(sent.first().state, UpgradeStatus::State::Refused);
    QVERIFY2(
        sent.first().message.contains(u"older"_s) || sent.first().message.contains(u"downgrade"_s),
        qPrintable(sent.first().message));
}

void TestUpgradeResponder::aTargetOutOfShapeIsRefused()
{
    UpgradeResponder responder(options(true, release::Channel::Edge));
    for (const QString &target : { u"newest"_s, u"0.4"_s, u"edge:xyz"_s, QString() }) {
        const auto sent = answer(responder, target);
        QCOMPARE(sent.size(), 1);
        QCOMPARE(sent.first().state, UpgradeStatus::State::Refused);
    }
    QVERIFY(!QFile::exists(m_dir->filePath(u"upgrade/request"_s)));
}

void TestUpgradeResponder::runsFinishBeforeTheRequestIsFiled()
{
    UpgradeResponder responder(options(true, release::Channel::Stable));
    QVERIFY(!responder.isDraining());
    m_busy = 2;
    const auto first = answer(responder, u"latest"_s);
    QCOMPARE(first.size(), 1);
    QCOMPARE(first.first().state, UpgradeStatus::State::Draining);
    QCOMPARE(first.first().draining, 2);
    QVERIFY(responder.isDraining());
    QVERIFY(!QFile::exists(m_dir->filePath(u"upgrade/request"_s)));

    QList<UpgradeStatus> sent;
    connect(&responder, &UpgradeResponder::send, this,
        [&sent](const protocol::ControlMessage &message) {
            sent.append(std::get<UpgradeStatus>(message));
        });
    // One run left: still draining, and the hub is told how many.
    m_busy = 1;
    QTRY_VERIFY_WITH_TIMEOUT(!sent.isEmpty(), 3 * UpgradeResponder::kDrainPollMs);
    QCOMPARE(sent.last().state, UpgradeStatus::State::Draining);
    QCOMPARE(sent.last().draining, 1);
    QVERIFY(!QFile::exists(m_dir->filePath(u"upgrade/request"_s)));
    m_busy = 0;
    QTRY_COMPARE_WITH_TIMEOUT(
        sent.last().state, UpgradeStatus::State::Requested, 3 * UpgradeResponder::kDrainPollMs);
    QVERIFY(!responder.isDraining());
    QFile request(m_dir->filePath(u"upgrade/request"_s));
    QVERIFY(request.open(QIODevice::ReadOnly));
    QCOMPARE(request.readAll(), QByteArray("target=latest\n"));
}

void TestUpgradeResponder::oneUpgradeAtATime()
{
    UpgradeResponder responder(options(true, release::Channel::Stable));
    QCOMPARE(answer(responder, u"latest"_s).constFirst().state, UpgradeStatus::State::Requested);
    const auto second = answer(responder, u"0.5.0"_s);
    QCOMPARE(second.size(), 1);
    QCOMPARE(second.first().state, UpgradeStatus::State::Refused);
    QVERIFY(second.first().message.contains(u"under way"_s));
}

void TestUpgradeResponder::afterAReconnectTheOutcomeIsTold()
{
    const UpgradeSpool spool(m_dir->filePath(u"upgrade"_s));
    UpgradeStatus outcome;
    outcome.state = UpgradeStatus::State::Upgraded;
    outcome.from = u"0.3.0"_s;
    outcome.to = u"0.4.0"_s;
    QVERIFY(spool.writeOutcome(outcome).ok());
    UpgradeResponder responder(options(true, release::Channel::Stable));
    QList<UpgradeStatus> sent;
    connect(&responder, &UpgradeResponder::send, this,
        [&sent](const protocol::ControlMessage &message) {
            sent.append(std::get<UpgradeStatus>(message));
        });
    const QDateTime before = QDateTime::currentDateTimeUtc().addSecs(-1);
    responder.onConnected();
    QCOMPARE(sent.size(), 1);
    QCOMPARE(sent.first(), outcome);
    // The helper's sign that the new version is back.
    const auto mark = spool.connectedMark();
    QVERIFY(mark);
    QCOMPARE(mark->version, u"0.4.0"_s);
    QVERIFY(mark->at >= before);
    // Told once,
    responder.onConnected();
    QCOMPARE(sent.size(), 1);
    // and as soon as the helper leaves one while connected: it does so once
    // it saw the mark of the new version.
    outcome.state = UpgradeStatus::State::RolledBack;
    QVERIFY(spool.writeOutcome(outcome).ok());
    QTRY_COMPARE(sent.size(), 2);
    QCOMPARE(sent.last(), outcome);
    // Not while the hub is away: it waits for the next welcome.
    responder.onDisconnected();
    outcome.state = UpgradeStatus::State::Failed;
    QVERIFY(spool.writeOutcome(outcome).ok());
    QTest::qWait(200);
    QCOMPARE(sent.size(), 2);
    responder.onConnected();
    QCOMPARE(sent.size(), 3);
    QCOMPARE(sent.last().state, UpgradeStatus::State::Failed);
}

QTEST_GUILESS_MAIN(TestUpgradeResponder)
#include "tst_upgraderesponder.moc"
