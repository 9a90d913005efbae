#include "common/daemon/deviceupgrader.h"

#include "common/logging.h"
#include "common/release/debianpackage.h"

#include <QDateTime>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>

namespace cloop::daemon {

using namespace Qt::StringLiterals;
using protocol::UpgradeStatus;
using namespace std::chrono_literals;

namespace {

constexpr auto kPollInterval = 500ms;
constexpr auto kDpkgTimeout = std::chrono::minutes(5);
constexpr auto kSystemctlTimeout = std::chrono::minutes(2);
// A version that exits at once is restarted by its unit (Restart=on-failure)
// again and again and would never connect: after this many automatic
// restarts the helper stops waiting out the whole bound.
constexpr int kCrashLoopRestarts = 3;

QString fileNameOf(const OfferedPackage &offered)
{
    return u"%1_%2.deb"_s.arg(offered.package, offered.version);
}

Error upgradeError(const QString &message)
{
    return Error::make(u"upgrade_failed"_s, message);
}

// What a command said when it failed, in a line.
QString failureOf(const Result<util::CommandOutput> &output)
{
    if (!output)
        return output.error().message;
    const QString said = QString::fromUtf8(output->standardError + output->standardOutput)
                             .trimmed()
                             .section(u'\n', -3);
    return u"exit %1: %2"_s.arg(output->exitCode).arg(said);
}

} // namespace

DeviceUpgrader::DeviceUpgrader(Device device, UpgradeSpool spool,
    const release::ReleaseKeyring &keyring, ReleaseSource &source, util::CommandRunner &runner,
    Sleep sleep)
    : m_device(std::move(device))
    , m_spool(std::move(spool))
    , m_keyring(keyring)
    , m_source(source)
    , m_runner(runner)
    , m_sleep(std::move(sleep))
{ }

Result<release::ReleaseVersion> DeviceUpgrader::installedVersion()
{
    auto output = runTool(
        u"dpkg-query"_s, { u"--showformat=${Version}"_s, u"--show"_s, m_device.package }, 30s);
    if (!output || output->exitCode != 0)
        return upgradeError(u"cannot tell which %1 is installed (dpkg-query %2)"_s.arg(
            m_device.package, failureOf(output)));
    QString version = QString::fromUtf8(output->standardOutput).trimmed();
    if (const qsizetype revision = version.lastIndexOf(u'-'); revision > 0)
        version.truncate(revision);
    return release::ReleaseVersion::parse(version);
}

Result<QString> DeviceUpgrader::fetchVerified(const OfferedPackage &offered, bool skipVerification)
{
    const QString name = fileNameOf(offered);
    const QString packagePath = m_spool.stagingFolder() + u'/' + name;
    const QString signaturePath = packagePath + u".sig"_s;
    if (!QDir().mkpath(m_spool.stagingFolder()))
        return upgradeError(u"cannot make %1"_s.arg(m_spool.stagingFolder()));
    QFile::remove(packagePath);
    QFile::remove(signaturePath);
    if (Status fetched = m_source.download(offered, packagePath, signaturePath); !fetched)
        return upgradeError(u"cannot fetch %1: %2"_s.arg(name, fetched.error().message));

    // Nothing the hub said is believed: the signature names the file's
    // digest, package, version and channel, and a device key signed it.
    const auto check = [&]() -> Status {
        auto control = release::readDebianControl(packagePath, m_runner);
        if (!control)
            return control.error();
        if (control->package != m_device.package || control->version != offered.version)
            return upgradeError(u"the file is %1 %2, not %3 %4"_s.arg(
                control->package, control->version, m_device.package, offered.version));
        if (skipVerification) {
            qCWarning(lcUpgrade).noquote()
                << "--skip-verification: installing" << name
                << "without checking its signature, as this device's operator asked";
            return {};
        }
        QFile signatureFile(signaturePath);
        if (!signatureFile.open(QIODevice::ReadOnly))
            return upgradeError(u"no signature came with it"_s);
        auto signature = release::ReleaseSignature::fromFile(
            signatureFile.read(release::ReleaseSignature::kMaxFileBytes + 1));
        if (!signature)
            return signature.error();
        const release::ReleaseStatement &statement = signature->statement;
        if (statement.package != m_device.package || statement.version != offered.version
            || statement.channel != offered.channel)
            return upgradeError(u"its signature vouches for %1 %2 (%3), not for %4 %5 (%6)"_s.arg(
                statement.package, statement.version, statement.channel, m_device.package,
                offered.version, offered.channel));
        if (statement.channel == "edge"_L1 && m_device.settings.channel != release::Channel::Edge)
            return upgradeError(u"it is signed as an edge build, and this device follows the "
                                "stable channel"_s);
        if (m_keyring.isEmpty())
            return upgradeError(u"this device has no release key to check it with (install "
                                "cloop-release-keys)"_s);
        return m_keyring.verifyFile(packagePath, *signature);
    };
    if (Status verified = check(); !verified) {
        // Kept aside for whoever looks into it, where nothing installs from.
        QDir().mkpath(m_spool.rejectedFolder());
        const QString aside = m_spool.rejectedFolder() + u'/' + name;
        QFile::remove(aside);
        QFile::remove(aside + u".sig"_s);
        QFile::rename(packagePath, aside);
        QFile::rename(signaturePath, aside + u".sig"_s);
        return upgradeError(
            u"%1 failed its check and was not installed (kept aside in %2): %3"_s.arg(
                name, aside, verified.error().message));
    }
    return packagePath;
}

Result<QString> DeviceUpgrader::keepForRollback(
    const release::ReleaseVersion &installed, const QList<OfferedPackage> &offered)
{
    const QString kept
        = m_spool.keptFolder() + u"/%1_%2.deb"_s.arg(m_device.package, installed.toString());
    if (QFileInfo::exists(kept))
        return kept;
    for (const OfferedPackage &package : offered) {
        if (package.version != installed.toString())
            continue;
        auto fetched = fetchVerified(package, false);
        if (!fetched)
            return fetched.error();
        QDir(m_spool.keptFolder()).removeRecursively();
        QDir().mkpath(m_spool.keptFolder());
        if (!QFile::rename(*fetched, kept))
            return upgradeError(u"cannot keep %1 for a rollback"_s.arg(kept));
        QFile::remove(*fetched + u".sig"_s);
        return kept;
    }
    return upgradeError(u"the hub does not offer the installed %1 %2, so there would be nothing "
                        "to roll back to; add it there (cloop hub release add) first"_s.arg(
                            m_device.package, installed.toString()));
}

Status DeviceUpgrader::install(const QString &packagePath)
{
    auto output
        = runTool(u"dpkg"_s, { u"--install"_s, u"--force-confold"_s, packagePath }, kDpkgTimeout);
    if (!output || output->exitCode != 0)
        return upgradeError(u"dpkg could not install %1: %2"_s.arg(
            QFileInfo(packagePath).fileName(), failureOf(output)));
    return {};
}

Status DeviceUpgrader::restartAndWait(const QString &version, std::chrono::milliseconds wait)
{
    const QDateTime restarted = QDateTime::currentDateTimeUtc().addSecs(-1);
    auto output = runTool(u"systemctl"_s, { u"restart"_s, m_device.unit }, kSystemctlTimeout);
    if (!output || output->exitCode != 0)
        return upgradeError(
            u"systemctl restart %1 failed: %2"_s.arg(m_device.unit, failureOf(output)));
    QElapsedTimer waited;
    waited.start();
    const int restartsBefore = automaticRestarts().value_or(0);
    while (true) {
        if (const auto mark = m_spool.connectedMark();
            mark && mark->version == version && mark->at >= restarted)
            return {};
        if (const auto restarts = automaticRestarts();
            restarts && *restarts - restartsBefore >= kCrashLoopRestarts)
            return upgradeError(u"%1 did not come back connected on %2: it exited %3 times "
                                "since its restart"_s.arg(m_device.unit, version)
                                    .arg(*restarts - restartsBefore));
        if (waited.elapsed() >= wait.count())
            return upgradeError(
                u"%1 did not come back connected on %2 within %3 s"_s.arg(m_device.unit, version)
                    .arg(wait.count() / 1000));
        m_sleep(kPollInterval);
    }
}

Result<util::CommandOutput> DeviceUpgrader::runTool(
    const QString &name, const QStringList &arguments, std::chrono::milliseconds timeout)
{
    // A stand-in runner may know no path: the name is then run as it is.
    const QString path = m_runner.findExecutable(name);
    return m_runner.run(path.isEmpty() ? name : path, arguments, timeout);
}

std::optional<int> DeviceUpgrader::automaticRestarts()
{
    auto output = runTool(u"systemctl"_s,
        { u"show"_s, u"--property=NRestarts"_s, u"--value"_s, m_device.unit }, kSystemctlTimeout);
    if (!output || output->exitCode != 0)
        return std::nullopt;
    bool numeric = false;
    const int restarts = QString::fromUtf8(output->standardOutput).trimmed().toInt(&numeric);
    return numeric ? std::optional<int>(restarts) : std::nullopt;
}

protocol::UpgradeStatus DeviceUpgrader::finish(UpgradeStatus outcome)
{
    if (Status written = m_spool.writeOutcome(outcome); !written)
        qCWarning(lcUpgrade).noquote()
            << "the outcome could not be left for the daemon:" << written.error().message;
    return outcome;
}

protocol::UpgradeStatus DeviceUpgrader::run(const Job &job)
{
    QElapsedTimer took;
    took.start();
    UpgradeStatus outcome;
    outcome.target = job.target.toString();
    const auto refuse = [&](UpgradeStatus::State state, const QString &message) {
        outcome.state = state;
        outcome.message = message;
        qCWarning(lcUpgrade).noquote() << "upgrade to" << outcome.target << "-" << message;
        return finish(outcome);
    };

    auto installed = installedVersion();
    if (!installed)
        return refuse(UpgradeStatus::State::Failed, installed.error().message);
    outcome.from = installed->toString();
    const release::DevicePolicy policy { m_device.settings.channel, *installed, job.allowDowngrade,
        m_device.program };
    // Before anything is fetched.
    if (Status admitted = policy.admits(job.target); !admitted)
        return refuse(UpgradeStatus::State::Refused, admitted.error().message);
    if (job.skipVerification && job.target.kind != release::UpgradeTarget::Kind::Release)
        return refuse(UpgradeStatus::State::Refused,
            u"--skip-verification is for a named release only, never for %1"_s.arg(outcome.target));

    auto offered = m_source.list(m_device.package);
    if (!offered)
        return refuse(UpgradeStatus::State::Failed,
            u"cannot read what the hub offers: %1"_s.arg(offered.error().message));
    QList<release::OfferedRelease> candidates;
    QList<OfferedPackage> packages;
    for (const OfferedPackage &package : *offered) {
        auto version = release::ReleaseVersion::parse(package.version);
        auto channel = release::parseChannel(package.channel);
        if (package.package != m_device.package || !version || !channel)
            continue;
        candidates.append({ *version, *channel, package.commit });
        packages.append(package);
    }
    auto chosen = policy.choose(job.target, candidates);
    if (!chosen)
        return refuse(UpgradeStatus::State::Refused, chosen.error().message);
    const auto match
        = std::find_if(packages.cbegin(), packages.cend(), [&](const OfferedPackage &package) {
              return package.version == chosen->version.toString()
                  && package.commit == chosen->commit;
          });
    const OfferedPackage &target = *match;
    outcome.to = target.version;

    auto rollback = keepForRollback(*installed, packages);
    if (!rollback)
        return refuse(UpgradeStatus::State::Failed, rollback.error().message);
    auto staged = fetchVerified(target, job.skipVerification);
    if (!staged)
        return refuse(UpgradeStatus::State::Failed, staged.error().message);
    qCInfo(lcUpgrade).noquote() << "installing" << m_device.package << target.version << "over"
                                << installed->toString() << "(verified; rollback kept in"
                                << *rollback + u')';

    Status upgraded = install(*staged);
    if (upgraded)
        upgraded = restartAndWait(target.version, job.wait);
    if (upgraded) {
        // The new version is what a later rollback returns to.
        QDir(m_spool.keptFolder()).removeRecursively();
        QDir().mkpath(m_spool.keptFolder());
        QFile::rename(*staged, m_spool.keptFolder() + u'/' + QFileInfo(*staged).fileName());
        QFile::remove(*staged + u".sig"_s);
        outcome.state = UpgradeStatus::State::Upgraded;
        outcome.message = u"%1 is connected on %2 (%3 s after the request was taken)"_s.arg(
            m_device.unit, target.version, QString::number(double(took.elapsed()) / 1000, 'f', 1));
        qCInfo(lcUpgrade).noquote() << outcome.message;
        return finish(outcome);
    }

    qCWarning(lcUpgrade).noquote()
        << upgraded.error().message << "- rolling back to" << installed->toString();
    Status rolledBack = install(*rollback);
    if (rolledBack)
        rolledBack = restartAndWait(installed->toString(), job.wait);
    QFile::remove(*staged);
    QFile::remove(*staged + u".sig"_s);
    if (!rolledBack)
        return refuse(UpgradeStatus::State::Failed,
            u"%1; the rollback to %2 failed too: %3"_s.arg(
                upgraded.error().message, installed->toString(), rolledBack.error().message));
    outcome.state = UpgradeStatus::State::RolledBack;
    outcome.message = u"%1; rolled back to %2 (%3 s after the request was taken)"_s.arg(
        upgraded.error().message, installed->toString(),
        QString::number(double(took.elapsed()) / 1000, 'f', 1));
    qCWarning(lcUpgrade).noquote() << outcome.message;
    return finish(outcome);
}

} // namespace cloop::daemon
