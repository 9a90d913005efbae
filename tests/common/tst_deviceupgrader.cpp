// The root helper's procedure, over a stand-in for dpkg and systemctl and a
// folder of signed packages in place of the hub. Signatures are real
// (Ed25519 through OpenSSL): what is verified here is what a device checks.

#include "common/daemon/deviceupgrader.h"
#include "support/verifyresult.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

using namespace cloop;
using namespace cloop::daemon;
using namespace Qt::StringLiterals;
using protocol::UpgradeStatus;

namespace {

const QString kCommit = u"6e750e98150523914a360f8569bf9154cd9cd84c"_s;

// A package file as the stand-in dpkg reads it: its control fields as text.
QByteArray packageBytes(const QString &version, const QByteArray &payload = "payload")
{
    return "Package: cloop-agent\nVersion: " + version.toUtf8() + "-1\n" + payload;
}

QString fieldOf(const QString &path, const QString &field)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    for (const QByteArray &line : file.readAll().split('\n'))
        if (line.startsWith(field.toUtf8() + ": "))
            return QString::fromUtf8(line.mid(field.size() + 2));
    return {};
}

// dpkg-query, dpkg-deb, dpkg and systemctl as the helper uses them. A
// restart of the unit leaves the connected mark of the installed version,
// unless that version never connects (`broken`) or exits at once
// (`exitsAtOnce`: systemd then counts one more automatic restart each time
// the helper looks).
class FakeSystem final : public util::CommandRunner
{
public:
    explicit FakeSystem(UpgradeSpool spool)
        : m_spool(std::move(spool))
    { }

    QString installed = u"0.4.0-1"_s;
    QStringList installs; // versions, in order
    QStringList broken;
    QStringList exitsAtOnce;
    int restarts = 0;
    int automaticRestarts = 0;

    QString findExecutable(const QString &name) const override { return name; }
    Result<util::CommandOutput> run(
        const QString &program, const QStringList &arguments, std::chrono::milliseconds) override
    {
        if (program == "dpkg-query"_L1)
            return util::CommandOutput { 0, installed.toUtf8(), {} };
        if (program == "dpkg-deb"_L1) {
            const QString path = arguments.last();
            const QString package = fieldOf(path, u"Package"_s);
            if (package.isEmpty())
                return util::CommandOutput { 2, {}, "not a Debian format archive" };
            return util::CommandOutput { 0,
                (package + u'\n' + fieldOf(path, u"Version"_s) + u'\n').toUtf8(), {} };
        }
        if (program == "dpkg"_L1) {
            installed = fieldOf(arguments.last(), u"Version"_s);
            installs.append(installed.section(u'-', 0, 0));
            return util::CommandOutput {};
        }
        const QString version = installed.section(u'-', 0, 0);
        if (program == "systemctl"_L1 && arguments.value(0) == "restart"_L1) {
            ++restarts;
            automaticRestarts = 0; // as systemd does for a restart it was asked for
            if (!broken.contains(version) && !exitsAtOnce.contains(version))
                (void)m_spool.markConnected(version, QDateTime::currentDateTimeUtc());
            return util::CommandOutput {};
        }
        if (program == "systemctl"_L1
            && arguments
                == QStringList { u"show"_s, u"--property=NRestarts"_s, u"--value"_s,
                    u"cloop-agent.service"_s }) {
            if (exitsAtOnce.contains(version))
                ++automaticRestarts;
            return util::CommandOutput { 0, QByteArray::number(automaticRestarts) + '\n', {} };
        }
        return Error::make(u"unexpected"_s, program + u' ' + arguments.join(u' '));
    }

private:
    UpgradeSpool m_spool;
};

// The hub's release list and downloads, from a folder.
class FolderSource final : public ReleaseSource
{
public:
    struct Entry
    {
        OfferedPackage offered;
        QString packageFile;
        QString signatureFile;
    };
    QList<Entry> entries;
    int lists = 0;
    int downloads = 0;

    Result<QList<OfferedPackage>> list(const QString &) override
    {
        ++lists;
        QList<OfferedPackage> offered;
        for (const Entry &entry : std::as_const(entries))
            offered.append(entry.offered);
        return offered;
    }
    Status download(const OfferedPackage &offered, const QString &packagePath,
        const QString &signaturePath) override
    {
        ++downloads;
        for (const Entry &entry : std::as_const(entries)) {
            if (entry.offered.id != offered.id)
                continue;
            if (!QFile::copy(entry.packageFile, packagePath)
                || !QFile::copy(entry.signatureFile, signaturePath))
                return Error::make(u"copy"_s, u"cannot copy"_s);
            return {};
        }
        return Error::make(u"not_found"_s, u"no such release"_s);
    }
};

} // namespace

class TestDeviceUpgrader final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void anUpgradeIsVerifiedInstalledAndAwaited();
    void aVersionThatDoesNotComeBackIsRolledBack();
    void aVersionThatKeepsExitingIsRolledBackWithoutWaitingOutTheBound();
    void aBadSignatureIsNeverInstalled();
    void anEdgeTargetOnAStableDeviceIsRefusedBeforeAnyFetch();
    void withoutTheInstalledPackageThereIsNoUpgrade();
    void onlyTheOperatorMayDowngrade();
    void verificationIsNeverSkippedForAnEdgeBuild();

private:
    // Offers `version` of cloop-agent, signed by the device's key (or, when
    // `signedBytes` is given, a signature of other bytes).
    void offer(const QString &version, const QByteArray &signedBytes = {},
        const QString &channel = u"stable"_s);
    UpgradeStatus upgrade(const QString &target, bool allowDowngrade = false,
        bool skipVerification = false, release::Channel channel = release::Channel::Stable);

    std::chrono::milliseconds m_wait { 300 };
    int m_sleeps = 0;
    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<UpgradeSpool> m_spool;
    std::unique_ptr<FakeSystem> m_system;
    std::unique_ptr<FolderSource> m_source;
    std::unique_ptr<release::ReleaseKey> m_key;
    release::ReleaseKeyring m_keyring;
};

void TestDeviceUpgrader::init()
{
    m_wait = std::chrono::milliseconds(300);
    m_sleeps = 0;
    m_dir = std::make_unique<QTemporaryDir>();
    m_spool = std::make_unique<UpgradeSpool>(m_dir->filePath(u"spool"_s));
    m_system = std::make_unique<FakeSystem>(*m_spool);
    m_source = std::make_unique<FolderSource>();
    auto key = release::ReleaseKey::generate();
    CLOOP_VERIFY_OK(key);
    m_key = std::make_unique<release::ReleaseKey>(std::move(*key));
    auto publicKey = release::ReleaseKey::fromPem(m_key->publicPem());
    CLOOP_VERIFY_OK(publicKey);
    m_keyring = release::ReleaseKeyring();
    m_keyring.add(std::move(*publicKey));
    offer(u"0.4.0"_s);
}

void TestDeviceUpgrader::offer(
    const QString &version, const QByteArray &signedBytes, const QString &channel)
{
    const QString file = m_dir->filePath(u"cloop-agent_%1.deb"_s.arg(version));
    QFile out(file);
    QVERIFY(out.open(QIODevice::WriteOnly));
    out.write(packageBytes(version));
    out.close();
    QString signedFile = file;
    if (!signedBytes.isEmpty()) {
        signedFile = file + u".other"_s;
        QFile other(signedFile);
        QVERIFY(other.open(QIODevice::WriteOnly));
        other.write(signedBytes);
    }
    auto digest = release::sha256OfFile(signedFile);
    CLOOP_VERIFY_OK(digest);
    auto signature = m_key->sign(
        release::ReleaseStatement { u"cloop-agent"_s, version, channel, kCommit, *digest });
    CLOOP_VERIFY_OK(signature);
    QFile sig(file + u".sig"_s);
    QVERIFY(sig.open(QIODevice::WriteOnly));
    sig.write(signature->toFile());
    m_source->entries.append({ OfferedPackage { m_source->entries.size() + 1, u"cloop-agent"_s,
                                   version, channel, kCommit, QFileInfo(file).size() },
        file, file + u".sig"_s });
}

UpgradeStatus TestDeviceUpgrader::upgrade(
    const QString &target, bool allowDowngrade, bool skipVerification, release::Channel channel)
{
    DeviceUpgrader::Device device { u"cloop-agent"_s, u"cloop-agent.service"_s,
        u"cloop executor agent"_s, UpgradeSettings { channel, true } };
    DeviceUpgrader upgrader(
        device, *m_spool, m_keyring, *m_source, *m_system, [this](std::chrono::milliseconds) {
            ++m_sleeps;
            QThread::msleep(5);
        });
    DeviceUpgrader::Job job;
    auto parsed = release::UpgradeTarget::parse(target);
    if (!parsed)
        qFatal("bad test target");
    job.target = *parsed;
    job.allowDowngrade = allowDowngrade;
    job.skipVerification = skipVerification;
    job.wait = m_wait;
    return upgrader.run(job);
}

void TestDeviceUpgrader::anUpgradeIsVerifiedInstalledAndAwaited()
{
    offer(u"0.5.0"_s);
    const UpgradeStatus outcome = upgrade(u"latest"_s);
    QCOMPARE(outcome.state, UpgradeStatus::State::Upgraded);
    QCOMPARE(outcome.from, u"0.4.0"_s);
    QCOMPARE(outcome.to, u"0.5.0"_s);
    QCOMPARE(m_system->installs, QStringList { u"0.5.0"_s });
    QCOMPARE(m_system->restarts, 1);
    // The new version is what a later rollback returns to,
    QVERIFY(QFile::exists(m_spool->keptFolder() + u"/cloop-agent_0.5.0.deb"_s));
    QVERIFY(!QFile::exists(m_spool->keptFolder() + u"/cloop-agent_0.4.0.deb"_s));
    // and the daemon is left the outcome to tell the hub.
    auto told = m_spool->takeOutcome();
    CLOOP_VERIFY_OK(told);
    QVERIFY(told->has_value());
    QCOMPARE(**told, outcome);
}

void TestDeviceUpgrader::aVersionThatDoesNotComeBackIsRolledBack()
{
    offer(u"0.5.0"_s);
    m_system->broken = { u"0.5.0"_s };
    const UpgradeStatus outcome = upgrade(u"0.5.0"_s);
    QCOMPARE(outcome.state, UpgradeStatus::State::RolledBack);
    QCOMPARE(m_system->installs, (QStringList { u"0.5.0"_s, u"0.4.0"_s }));
    QCOMPARE(m_system->installed, u"0.4.0-1"_s);
    QVERIFY2(outcome.message.contains(u"did not come back connected on 0.5.0"_s),
        qPrintable(outcome.message));
    QVERIFY2(outcome.message.contains(u"rolled back to 0.4.0"_s), qPrintable(outcome.message));
}

void TestDeviceUpgrader::aVersionThatKeepsExitingIsRolledBackWithoutWaitingOutTheBound()
{
    offer(u"0.5.0"_s);
    m_system->exitsAtOnce = { u"0.5.0"_s };
    m_wait = std::chrono::hours(1);
    const UpgradeStatus outcome = upgrade(u"0.5.0"_s);
    QCOMPARE(outcome.state, UpgradeStatus::State::RolledBack);
    QCOMPARE(m_system->installs, (QStringList { u"0.5.0"_s, u"0.4.0"_s }));
    QVERIFY2(outcome.message.contains(
                 u"did not come back connected on 0.5.0: it exited 3 times since its restart"_s),
        qPrintable(outcome.message));
    QVERIFY2(outcome.message.contains(u"rolled back to 0.4.0"_s), qPrintable(outcome.message));
    // A few looks at the unit, not an hour of them.
    QVERIFY2(m_sleeps < 10, qPrintable(QString::number(m_sleeps)));
}

void TestDeviceUpgrader::aBadSignatureIsNeverInstalled()
{
    offer(u"0.5.0"_s, packageBytes(u"0.5.0"_s, "what the key signed"));
    const UpgradeStatus outcome = upgrade(u"latest"_s);
    QCOMPARE(outcome.state, UpgradeStatus::State::Failed);
    QVERIFY(m_system->installs.isEmpty());
    QCOMPARE(m_system->restarts, 0);
    QVERIFY2(outcome.message.contains(u"kept aside"_s), qPrintable(outcome.message));
    QVERIFY(QFile::exists(m_spool->rejectedFolder() + u"/cloop-agent_0.5.0.deb"_s));
    QVERIFY(!QFile::exists(m_spool->stagingFolder() + u"/cloop-agent_0.5.0.deb"_s));
}

void TestDeviceUpgrader::anEdgeTargetOnAStableDeviceIsRefusedBeforeAnyFetch()
{
    offer(u"0.5.0~git6e750e981505"_s, {}, u"edge"_s);
    const UpgradeStatus outcome = upgrade(u"edge:6e750e9"_s);
    QCOMPARE(outcome.state, UpgradeStatus::State::Refused);
    QVERIFY2(outcome.message.contains(u"does not follow the edge channel"_s),
        qPrintable(outcome.message));
    QCOMPARE(m_source->lists, 0);
    QCOMPARE(m_source->downloads, 0);
    QVERIFY(m_system->installs.isEmpty());
    // On an edge device the same target is installed.
    const UpgradeStatus edge = upgrade(u"edge:6e750e9"_s, false, false, release::Channel::Edge);
    QCOMPARE(edge.state, UpgradeStatus::State::Upgraded);
    QCOMPARE(m_system->installs, QStringList { u"0.5.0~git6e750e981505"_s });
}

void TestDeviceUpgrader::withoutTheInstalledPackageThereIsNoUpgrade()
{
    m_source->entries.clear();
    offer(u"0.5.0"_s);
    const UpgradeStatus outcome = upgrade(u"latest"_s);
    QCOMPARE(outcome.state, UpgradeStatus::State::Failed);
    QVERIFY2(outcome.message.contains(u"nothing to roll back to"_s), qPrintable(outcome.message));
    QVERIFY(m_system->installs.isEmpty());
}

void TestDeviceUpgrader::onlyTheOperatorMayDowngrade()
{
    offer(u"0.3.0"_s);
    const UpgradeStatus refused = upgrade(u"0.3.0"_s);
    QCOMPARE(refused.state, UpgradeStatus::State::Refused);
    QVERIFY(m_system->installs.isEmpty());
    const UpgradeStatus allowed = upgrade(u"0.3.0"_s, true);
    QCOMPARE(allowed.state, UpgradeStatus::State::Upgraded);
    QCOMPARE(m_system->installs, QStringList { u"0.3.0"_s });
}

void TestDeviceUpgrader::verificationIsNeverSkippedForAnEdgeBuild()
{
    offer(u"0.5.0~git6e750e981505"_s, {}, u"edge"_s);
    const UpgradeStatus outcome = upgrade(u"edge:6e750e9"_s, false, true, release::Channel::Edge);
    QCOMPARE(outcome.state, UpgradeStatus::State::Refused);
    QVERIFY(outcome.message.contains(u"--skip-verification"_s));
    QCOMPARE(m_source->downloads, 0);
}

QTEST_GUILESS_MAIN(TestDeviceUpgrader)
#include "tst_deviceupgrader.moc"
