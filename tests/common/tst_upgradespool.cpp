// The device's upgrade settings and the spool where the daemon and its root
// helper meet: what each accepts, and that a request is gone before it is read.

#include "common/daemon/upgradesettings.h"
#include "common/daemon/upgradespool.h"
#include "support/verifyresult.h"

#include <QDateTime>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace cloop;
using namespace cloop::daemon;
using namespace Qt::StringLiterals;

class TestUpgradeSpool final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void settingsComeFromTheDeviceAlone();
    void settingsOutOfShapeAreRefused_data();
    void settingsOutOfShapeAreRefused();
    void theDropInReadsBackAsWritten();
    void aRequestIsTakenBeforeItIsRead();
    void aRequestCarriesATargetAndNothingElse_data();
    void aRequestCarriesATargetAndNothingElse();
    void theOutcomeIsToldOnce();
    void theConnectedMarkNamesTheVersion();

private:
    void write(const QString &path, const QByteArray &bytes);
    QTemporaryDir m_dir;
};

void TestUpgradeSpool::write(const QString &path, const QByteArray &bytes)
{
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
    file.write(bytes);
}

void TestUpgradeSpool::settingsComeFromTheDeviceAlone()
{
    // Nothing set: the build's channel, and no upgrade from the hub.
    auto defaults = UpgradeSettings::fromEnvironment(QProcessEnvironment());
    CLOOP_VERIFY_OK(defaults);
    QCOMPARE(defaults->channel, UpgradeSettings::buildChannel());
    QVERIFY(!defaults->remoteUpgrade);

    QProcessEnvironment environment;
    environment.insert(u"CLOOP_CHANNEL"_s, u"edge"_s);
    environment.insert(u"CLOOP_REMOTE_UPGRADE"_s, u"yes"_s);
    auto set = UpgradeSettings::fromEnvironment(environment);
    CLOOP_VERIFY_OK(set);
    QCOMPARE(set->channel, release::Channel::Edge);
    QVERIFY(set->remoteUpgrade);
}

void TestUpgradeSpool::settingsOutOfShapeAreRefused_data()
{
    QTest::addColumn<QString>("variable");
    QTest::addColumn<QString>("value");
    QTest::addColumn<QString>("problem");
    QTest::newRow("a channel of its own") << u"CLOOP_CHANNEL"_s << u"nightly"_s << u"nightly"_s;
    QTest::newRow("an empty channel") << u"CLOOP_CHANNEL"_s << QString() << u"CLOOP_CHANNEL"_s;
    QTest::newRow("remote upgrade as 1")
        << u"CLOOP_REMOTE_UPGRADE"_s << u"1"_s << u"\"yes\" or \"no\""_s;
}

void TestUpgradeSpool::settingsOutOfShapeAreRefused()
{
    QFETCH(QString, variable);
    QFETCH(QString, value);
    QFETCH(QString, problem);
    QProcessEnvironment environment;
    environment.insert(variable, value);
    auto settings = UpgradeSettings::fromEnvironment(environment);
    QVERIFY(!settings.ok());
    QVERIFY2(settings.error().message.contains(problem), qPrintable(settings.error().message));
}

void TestUpgradeSpool::theDropInReadsBackAsWritten()
{
    UpgradeSettings settings;
    settings.channel = release::Channel::Edge;
    settings.remoteUpgrade = true;
    const QByteArray dropIn = settings.toDropIn(u"cloop executor agent"_s);
    QVERIFY(dropIn.contains("[Service]"));
    QVERIFY(dropIn.contains("Environment=\"CLOOP_CHANNEL=edge\""));
    auto read = UpgradeSettings::fromDropIn(dropIn);
    CLOOP_VERIFY_OK(read);
    QCOMPARE(*read, settings);
    // A line it does not write is no setting of the device's.
    auto foreign = UpgradeSettings::fromDropIn(dropIn + "ExecStart=/bin/sh\n");
    QVERIFY(!foreign.ok());
    QVERIFY2(foreign.error().message.contains(u"ExecStart"_s), qPrintable(foreign.error().message));
}

void TestUpgradeSpool::aRequestIsTakenBeforeItIsRead()
{
    const UpgradeSpool spool(m_dir.filePath(u"taken"_s));
    auto target = release::UpgradeTarget::parse(u"0.4.0"_s);
    CLOOP_VERIFY_OK(target);
    CLOOP_VERIFY_OK(spool.fileRequest(*target));
    QVERIFY(spool.hasRequest());
    auto taken = spool.takeRequest();
    CLOOP_VERIFY_OK(taken);
    QVERIFY(taken->has_value());
    QCOMPARE(**taken, *target);
    QVERIFY(!spool.hasRequest());
    auto none = spool.takeRequest();
    CLOOP_VERIFY_OK(none);
    QVERIFY(!none->has_value());

    // A request out of shape is gone too: refused once, never retried.
    write(spool.requestPath(), "target=0.4\n");
    auto malformed = spool.takeRequest();
    QVERIFY(!malformed.ok());
    QVERIFY(!spool.hasRequest());
}

void TestUpgradeSpool::aRequestCarriesATargetAndNothingElse_data()
{
    QTest::addColumn<QByteArray>("request");
    QTest::newRow("a channel") << QByteArray("target=latest\nchannel=edge\n");
    QTest::newRow("a downgrade") << QByteArray("allow_downgrade=yes\ntarget=0.1.0\n");
    QTest::newRow("no target") << QByteArray("channel=edge\n");
    QTest::newRow("empty") << QByteArray();
    QTest::newRow("huge") << QByteArray("target=") + QByteArray(8000, 'a');
}

void TestUpgradeSpool::aRequestCarriesATargetAndNothingElse()
{
    QFETCH(QByteArray, request);
    const UpgradeSpool spool(m_dir.filePath(u"shape"_s));
    QDir().mkpath(spool.folder());
    write(spool.requestPath(), request);
    auto taken = spool.takeRequest();
    QVERIFY(!taken.ok());
    QVERIFY(!spool.hasRequest());
}

void TestUpgradeSpool::theOutcomeIsToldOnce()
{
    const UpgradeSpool spool(m_dir.filePath(u"outcome"_s));
    protocol::UpgradeStatus outcome;
    outcome.state = protocol::UpgradeStatus::State::RolledBack;
    outcome.target = u"0.5.0"_s;
    outcome.from = u"0.4.0"_s;
    outcome.to = u"0.5.0"_s;
    outcome.message = u"it did not come back"_s;
    CLOOP_VERIFY_OK(spool.writeOutcome(outcome));
    auto told = spool.takeOutcome();
    CLOOP_VERIFY_OK(told);
    QVERIFY(told->has_value());
    QCOMPARE(**told, outcome);
    auto again = spool.takeOutcome();
    CLOOP_VERIFY_OK(again);
    QVERIFY(!again->has_value());
    // Something else in its place is dropped, and said.
    write(spool.folder() + u"/outcome"_s, "{\"type\":\"hello\"}");
    QVERIFY(!spool.takeOutcome().ok());
    QVERIFY(!QFile::exists(spool.folder() + u"/outcome"_s));
}

void TestUpgradeSpool::theConnectedMarkNamesTheVersion()
{
    const UpgradeSpool spool(m_dir.filePath(u"mark"_s));
    QVERIFY(!spool.connectedMark());
    const QDateTime at = QDateTime::fromMSecsSinceEpoch(1'800'000'000'123, Qt::UTC);
    CLOOP_VERIFY_OK(spool.markConnected(u"0.4.0"_s, at));
    const auto mark = spool.connectedMark();
    QVERIFY(mark);
    QCOMPARE(mark->version, u"0.4.0"_s);
    QCOMPARE(mark->at, at);
}

QTEST_GUILESS_MAIN(TestUpgradeSpool)
#include "tst_upgradespool.moc"
