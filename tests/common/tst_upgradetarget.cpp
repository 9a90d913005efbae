// Unit: versions, upgrade targets and what a device's own policy admits
// before anything is downloaded: every refusal, and the choice among what
// the hub offers.

#include "common/release/upgradetarget.h"
#include "support/verifyresult.h"

#include <QTest>

using namespace cloop;
using namespace cloop::release;
using namespace Qt::StringLiterals;

class TestUpgradeTarget final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void versionsOrderLikeDpkg();
    void versionsRefuseOtherShapes_data();
    void versionsRefuseOtherShapes();
    void targetsParse_data();
    void targetsParse();
    void targetsRefuseOtherForms_data();
    void targetsRefuseOtherForms();
    void channelsParse();
    void anEdgeTargetOnAStableDeviceIsRefusedWithTheRemedy();
    void aDowngradeNeedsTheOperatorsOwnPermission();
    void theInstalledVersionIsNoTarget();
    void choosesOnTheDevicesChannelOnly();
    void anAmbiguousCommitIsRefused();
};

namespace {

ReleaseVersion version(const QString &text)
{
    auto parsed = ReleaseVersion::parse(text);
    return parsed ? *parsed : ReleaseVersion();
}

const QString kCommitA = u"aaaaaaaaaaaa0000000000000000000000000000"_s;
const QString kCommitB = u"aaaaaaaaaaab0000000000000000000000000000"_s;

DevicePolicy stableDevice(const QString &installed)
{
    return DevicePolicy { Channel::Stable, version(installed), false, u"cloop executor agent"_s };
}

} // namespace

void TestUpgradeTarget::versionsOrderLikeDpkg()
{
    QVERIFY(version(u"0.2.0"_s) > version(u"0.1.9"_s));
    QVERIFY(version(u"0.10.0"_s) > version(u"0.9.0"_s));
    QVERIFY(version(u"1.0.0"_s) > version(u"0.99.99"_s));
    QVERIFY(version(u"0.2.0"_s) == version(u"0.2.0"_s));
    // A build sorts before the release of its number, after the one before.
    const ReleaseVersion build = version(u"0.3.0~gitaaaaaaaaaaaa"_s);
    QVERIFY(build < version(u"0.3.0"_s));
    QVERIFY(build > version(u"0.2.0"_s));
    QVERIFY(build.isEdge());
    QCOMPARE(build.build(), u"aaaaaaaaaaaa"_s);
    QCOMPARE(build.toString(), u"0.3.0~gitaaaaaaaaaaaa"_s);
    // Two builds of one number are not ordered.
    const ReleaseVersion other = version(u"0.3.0~gitbbbbbbbbbbbb"_s);
    QCOMPARE(build <=> other, std::partial_ordering::unordered);
    QVERIFY(!(build < other) && !(build > other) && !(build == other));
}

void TestUpgradeTarget::versionsRefuseOtherShapes_data()
{
    QTest::addColumn<QString>("text");
    for (const char *text : { "", "1", "1.2", "1.2.3.4", "v1.2.3", "01.2.3", "1.2.3-1", "1.2.3~git",
             "1.2.3~gitABCDEFABCDEF", "1.2.3~git0123", " 1.2.3", "1.2.3\n", "9999999.0.0" })
        QTest::newRow(text) << QString::fromLatin1(text);
}

void TestUpgradeTarget::versionsRefuseOtherShapes()
{
    QFETCH(QString, text);
    const auto parsed = ReleaseVersion::parse(text);
    QVERIFY(!parsed);
    QCOMPARE(parsed.error().code, u"bad_version"_s);
}

void TestUpgradeTarget::targetsParse_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<int>("kind");
    QTest::newRow("release") << u"0.2.0"_s << int(UpgradeTarget::Kind::Release);
    QTest::newRow("latest") << u"latest"_s << int(UpgradeTarget::Kind::Latest);
    QTest::newRow("edge, short") << u"edge:abc1234"_s << int(UpgradeTarget::Kind::Edge);
    QTest::newRow("edge, whole") << u"edge:"_s + kCommitA << int(UpgradeTarget::Kind::Edge);
}

void TestUpgradeTarget::targetsParse()
{
    QFETCH(QString, text);
    QFETCH(int, kind);
    const auto target = UpgradeTarget::parse(text);
    CLOOP_VERIFY_OK(target);
    QCOMPARE(int(target->kind), kind);
    QCOMPARE(target->toString(), text);
}

void TestUpgradeTarget::targetsRefuseOtherForms_data()
{
    QTest::addColumn<QString>("text");
    for (const char *text :
        { "", "Latest", "newest", "edge", "edge:", "edge:abc", "edge:ABC1234", "edge:abc1234 ",
            "edge:"
            "0123456789abcdef0123456789abcdef012345678",
            "0.2", "0.3.0~gitaaaaaaaaaaaa", "stable:0.2.0", "../0.2.0", "0.2.0;reboot" })
        QTest::newRow(text) << QString::fromLatin1(text);
}

void TestUpgradeTarget::targetsRefuseOtherForms()
{
    QFETCH(QString, text);
    const auto target = UpgradeTarget::parse(text);
    QVERIFY(!target);
    QCOMPARE(target.error().code, u"bad_target"_s);
    // It says which forms there are.
    QVERIFY2(target.error().message.contains("edge:"_L1), qPrintable(target.error().message));
}

void TestUpgradeTarget::channelsParse()
{
    QCOMPARE(*parseChannel(u"stable"_s), Channel::Stable);
    QCOMPARE(*parseChannel(u"edge"_s), Channel::Edge);
    QCOMPARE(channelName(Channel::Edge), u"edge"_s);
    for (const QString &bad : { u""_s, u"Stable"_s, u"beta"_s })
        QCOMPARE(parseChannel(bad).error().code, u"bad_channel"_s);
}

void TestUpgradeTarget::anEdgeTargetOnAStableDeviceIsRefusedWithTheRemedy()
{
    const DevicePolicy device = stableDevice(u"0.2.0"_s);
    const Status refused = device.admits(*UpgradeTarget::parse(u"edge:aaaaaaa"_s));
    QVERIFY(!refused);
    QCOMPARE(refused.error().code, u"upgrade_refused"_s);
    QVERIFY2(refused.error().message.contains("does not follow the edge channel"_L1),
        qPrintable(refused.error().message));
    QVERIFY2(refused.error().message.contains(
                 "cloop executor agent install --upgrade --channel edge"_L1),
        qPrintable(refused.error().message));
    // Even when the hub offers that very build.
    const QList<OfferedRelease> offered { { version(u"0.3.0~gitaaaaaaaaaaaa"_s), Channel::Edge,
        kCommitA } };
    QCOMPARE(device.choose(*UpgradeTarget::parse(u"edge:aaaaaaa"_s), offered).error().code,
        u"upgrade_refused"_s);
    // An edge device takes it.
    DevicePolicy edge = device;
    edge.channel = Channel::Edge;
    const auto chosen = edge.choose(*UpgradeTarget::parse(u"edge:aaaaaaa"_s), offered);
    CLOOP_VERIFY_OK(chosen);
    QCOMPARE(chosen->commit, kCommitA);
}

void TestUpgradeTarget::aDowngradeNeedsTheOperatorsOwnPermission()
{
    DevicePolicy device = stableDevice(u"0.3.0"_s);
    const UpgradeTarget older = *UpgradeTarget::parse(u"0.2.0"_s);
    const Status refused = device.admits(older);
    QVERIFY(!refused);
    QVERIFY2(refused.error().message.contains("--allow-downgrade"_L1),
        qPrintable(refused.error().message));
    device.allowDowngrade = true;
    QVERIFY(device.admits(older));
    // "latest" that comes to an older release is a downgrade too.
    device.allowDowngrade = false;
    const QList<OfferedRelease> offered { { version(u"0.2.0"_s), Channel::Stable, kCommitA } };
    QCOMPARE(device.choose(*UpgradeTarget::parse(u"latest"_s), offered).error().code,
        u"upgrade_refused"_s);
}

void TestUpgradeTarget::theInstalledVersionIsNoTarget()
{
    const DevicePolicy device = stableDevice(u"0.2.0"_s);
    QCOMPARE(device.admits(*UpgradeTarget::parse(u"0.2.0"_s)).error().code, u"upgrade_refused"_s);
    const QList<OfferedRelease> offered { { version(u"0.2.0"_s), Channel::Stable, kCommitA } };
    QCOMPARE(
        device.choose(*UpgradeTarget::parse(u"latest"_s), offered).error().code, u"up_to_date"_s);
}

void TestUpgradeTarget::choosesOnTheDevicesChannelOnly()
{
    const QList<OfferedRelease> offered {
        { version(u"0.2.0"_s), Channel::Stable, kCommitA },
        { version(u"0.4.0~gitaaaaaaaaaaab"_s), Channel::Edge, kCommitB },
        { version(u"0.3.0"_s), Channel::Stable, kCommitB },
    };
    const UpgradeTarget latest = *UpgradeTarget::parse(u"latest"_s);
    // A stable device never sees the build, however new.
    const auto onStable = stableDevice(u"0.1.0"_s).choose(latest, offered);
    CLOOP_VERIFY_OK(onStable);
    QCOMPARE(onStable->version, version(u"0.3.0"_s));
    // An edge device follows builds and releases alike.
    DevicePolicy edge = stableDevice(u"0.1.0"_s);
    edge.channel = Channel::Edge;
    QCOMPARE(edge.choose(latest, offered)->version, version(u"0.4.0~gitaaaaaaaaaaab"_s));
    // A named release, and one the hub does not offer.
    QCOMPARE(stableDevice(u"0.1.0"_s).choose(*UpgradeTarget::parse(u"0.2.0"_s), offered)->commit,
        kCommitA);
    const auto missing
        = stableDevice(u"0.1.0"_s).choose(*UpgradeTarget::parse(u"0.9.0"_s), offered);
    QCOMPARE(missing.error().code, u"no_release"_s);
    QVERIFY(stableDevice(u"0.1.0"_s).choose(latest, {}).error().message.contains("stable"_L1));
}

void TestUpgradeTarget::anAmbiguousCommitIsRefused()
{
    DevicePolicy edge = stableDevice(u"0.1.0"_s);
    edge.channel = Channel::Edge;
    const QList<OfferedRelease> offered {
        { version(u"0.4.0~gitaaaaaaaaaaaa"_s), Channel::Edge, kCommitA },
        { version(u"0.4.0~gitaaaaaaaaaaab"_s), Channel::Edge, kCommitB },
    };
    QCOMPARE(edge.choose(*UpgradeTarget::parse(u"edge:aaaaaaa"_s), offered).error().code,
        u"upgrade_refused"_s);
    QCOMPARE(edge.choose(*UpgradeTarget::parse(u"edge:aaaaaaaaaaab"_s), offered)->commit, kCommitB);
}

QTEST_GUILESS_MAIN(TestUpgradeTarget)
#include "tst_upgradetarget.moc"
