#include "common/daemon/deviceupgrader.h"
#include "common/daemon/hubreleasesource.h"
#include "common/daemon/serviceinstall.h"
#include "common/logging.h"
#include "common/util/atomicfile.h"
#include "common/util/commandline.h"
#include "common/util/processcommandrunner.h"

#include <QFile>
#include <QThread>

#include <unistd.h>

namespace cloop::daemon {

using namespace Qt::StringLiterals;

namespace {

QString dropInPath(const ServiceSpec &spec)
{
    return u"/etc/systemd/system/%1.d/%2"_s.arg(
        spec.unit, QString::fromLatin1(UpgradeSettings::kDropInName));
}

QString helperPathUnit(const ServiceSpec &spec)
{
    return QString(spec.unit).replace(u".service"_s, u"-upgrade.path"_s);
}

// The device's settings as its drop-in has them; the defaults without one.
Result<UpgradeSettings> readSettings(const ServiceSpec &spec)
{
    QFile file(dropInPath(spec));
    if (!file.exists())
        return UpgradeSettings();
    if (!file.open(QIODevice::ReadOnly))
        return Error::make(u"upgrade_settings_invalid"_s,
            u"cannot read %1: %2"_s.arg(file.fileName(), file.errorString()));
    auto settings = UpgradeSettings::fromDropIn(file.read(8192));
    if (!settings)
        return Error::make(
            settings.error().code, u"%1: %2"_s.arg(file.fileName(), settings.error().message));
    return settings;
}

Status systemctl(util::CommandRunner &runner, const QStringList &arguments)
{
    auto output = runner.run(u"systemctl"_s, arguments, std::chrono::minutes(2));
    if (!output || output->exitCode != 0)
        return Error::make(u"systemctl_failed"_s,
            u"systemctl %1 failed: %2"_s.arg(arguments.join(u' '),
                output ? QString::fromUtf8(output->standardError).trimmed()
                       : output.error().message));
    return {};
}

// The drop-in written, systemd told, the helper's path unit on or off and
// the daemon restarted so that its hello says what it follows now.
Status applySettings(
    const ServiceSpec &spec, const UpgradeSettings &settings, util::CommandRunner &runner)
{
    if (Status written
        = util::writeFileAtomically(dropInPath(spec), settings.toDropIn(spec.command), 0644);
        !written)
        return written;
    if (Status reloaded = systemctl(runner, { u"daemon-reload"_s }); !reloaded)
        return reloaded;
    if (Status helper = systemctl(runner,
            { settings.remoteUpgrade ? u"enable"_s : u"disable"_s, u"--now"_s,
                helperPathUnit(spec) });
        !helper)
        return helper;
    return systemctl(runner, { u"try-restart"_s, spec.unit });
}

} // namespace

int runUpgradeCommand(const ServiceSpec &spec, const QStringList &arguments)
{
    util::CommandLine commandLine(arguments.value(0),
        u"Upgrade settings and upgrades of %1, as root. --channel and --remote-upgrade are this\n"
        "device's own choice, kept in a drop-in of %2 that nothing the hub sends changes;\n"
        "--target upgrades now; --apply-request applies what the hub asked for (from the\n"
        "path unit %3)."_s.arg(spec.command, spec.unit, helperPathUnit(spec)));
    const QCommandLineOption upgrade(u"upgrade"_s, u"Upgrade settings and upgrades."_s);
    const QCommandLineOption channel(u"channel"_s,
        u"Follow this update channel: stable (releases) or edge (builds of a commit too)."_s,
        u"NAME"_s);
    const QCommandLineOption remote(u"remote-upgrade"_s,
        u"Let the hub's administrators ask this device to upgrade (cloop %1 upgrade)."_s.arg(
            spec.command.section(u' ', 1, 1)));
    const QCommandLineOption noRemote(
        u"no-remote-upgrade"_s, u"Refuse the hub's upgrade requests (the default)."_s);
    const QCommandLineOption target(
        u"target"_s, u"Upgrade now to a release (0.4.0), latest, or edge:COMMIT."_s, u"T"_s);
    const QCommandLineOption allowDowngrade(
        u"allow-downgrade"_s, u"With --target: install an older release than this one."_s);
    const QCommandLineOption skipVerification(u"skip-verification"_s,
        u"With --target RELEASE: install it without checking its signature (logged; never "
        "for an edge build)."_s);
    const QCommandLineOption applyRequest(
        u"apply-request"_s, u"Apply the request the daemon filed for the hub (the path unit's)."_s);
    const QCommandLineOption wait(u"wait"_s,
        u"Seconds to wait for the daemon to come back connected before rolling back "
        "(default 120)."_s,
        u"SECONDS"_s, u"120"_s);
    const QCommandLineOption spoolDir(u"upgrade-dir"_s,
        u"The daemon's upgrade folder (default %1)."_s.arg(spec.upgradeFolder), u"DIR"_s,
        spec.upgradeFolder);
    const QCommandLineOption credential(u"credential-file"_s,
        u"The daemon's credential, for the hub's address and key (default /etc/cloop/%1)."_s.arg(
            spec.credentialFile),
        u"FILE"_s, u"/etc/cloop/"_s + spec.credentialFile);
    const QCommandLineOption keys(u"keys"_s,
        u"The release keys packages are checked with (default %1)."_s.arg(
            QString::fromLatin1(release::ReleaseKeyring::kInstalledKeyDir)),
        u"DIR"_s, QString::fromLatin1(release::ReleaseKeyring::kInstalledKeyDir));
    commandLine.addOptions({ upgrade, channel, remote, noRemote, target, allowDowngrade,
        skipVerification, applyRequest, wait, spoolDir, credential, keys });
    if (auto done = commandLine.parse(arguments, false))
        return *done;

    const UpgradeSpool spool(commandLine.value(spoolDir));
    // A request is taken before anything else, so that whatever happens
    // next it is never applied twice.
    std::optional<release::UpgradeTarget> requested;
    if (commandLine.isSet(applyRequest)) {
        auto taken = spool.takeRequest();
        if (!taken) {
            protocol::UpgradeStatus refused;
            refused.state = protocol::UpgradeStatus::State::Refused;
            refused.message = taken.error().message;
            (void)spool.writeOutcome(refused);
            return commandLine.fail(u"the upgrade request was refused: "_s + taken.error().message);
        }
        if (!*taken) {
            util::printLine(u"there is no upgrade request in %1"_s.arg(spool.folder()));
            return util::kExitOk;
        }
        requested = *taken;
    }
    if (::geteuid() != 0)
        return commandLine.usageError(u"run it as root: packages and the unit are root's"_s);
    const bool changesSettings
        = commandLine.isSet(channel) || commandLine.isSet(remote) || commandLine.isSet(noRemote);
    const int actions = int(changesSettings) + int(commandLine.isSet(target))
        + int(commandLine.isSet(applyRequest));
    if (actions != 1)
        return commandLine.usageError(u"give one of --channel/--remote-upgrade, --target or "
                                      "--apply-request (see --help)"_s);
    if ((commandLine.isSet(allowDowngrade) || commandLine.isSet(skipVerification))
        && !commandLine.isSet(target))
        return commandLine.usageError(
            u"--allow-downgrade and --skip-verification go with --target only: a request "
            "from the hub can carry neither"_s);
    if (commandLine.isSet(remote) && commandLine.isSet(noRemote))
        return commandLine.usageError(u"give --remote-upgrade or --no-remote-upgrade, not both"_s);

    auto settings = readSettings(spec);
    if (!settings)
        return commandLine.fail(settings.error().message);
    util::ProcessCommandRunner runner;

    if (changesSettings) {
        if (commandLine.isSet(channel)) {
            auto followed = release::parseChannel(commandLine.value(channel));
            if (!followed)
                return commandLine.usageError(followed.error().message);
            settings->channel = *followed;
        }
        if (commandLine.isSet(remote) || commandLine.isSet(noRemote))
            settings->remoteUpgrade = commandLine.isSet(remote);
        if (Status applied = applySettings(spec, *settings, runner); !applied)
            return commandLine.fail(applied.error().message);
        util::printLine(u"%1 follows the %2 channel; upgrades from the hub are %3 (%4)"_s.arg(
            spec.unit, release::channelName(settings->channel),
            settings->remoteUpgrade ? u"allowed"_s : u"refused"_s, dropInPath(spec)));
        return util::kExitOk;
    }

    DeviceUpgrader::Job job;
    if (requested) {
        if (!settings->remoteUpgrade) {
            protocol::UpgradeStatus refused;
            refused.state = protocol::UpgradeStatus::State::Refused;
            refused.target = requested->toString();
            refused.message = u"this device no longer takes upgrades from the hub"_s;
            (void)spool.writeOutcome(refused);
            return commandLine.fail(refused.message);
        }
        job.target = *requested;
    } else {
        auto parsed = release::UpgradeTarget::parse(commandLine.value(target));
        if (!parsed)
            return commandLine.usageError(parsed.error().message);
        job.target = *parsed;
        job.allowDowngrade = commandLine.isSet(allowDowngrade);
        job.skipVerification = commandLine.isSet(skipVerification);
    }
    bool numeric = false;
    const int seconds = commandLine.value(wait).toInt(&numeric);
    if (!numeric || seconds < 5 || seconds > 3600)
        return commandLine.usageError(u"--wait takes 5 to 3600 seconds"_s);
    job.wait = std::chrono::seconds(seconds);

    auto loaded = identity::CredentialFile(commandLine.value(credential)).load();
    if (!loaded || !loaded->credential)
        return commandLine.fail(
            u"cannot read the daemon's credential %1: %2"_s.arg(commandLine.value(credential),
                loaded ? u"this device is not enrolled"_s : loaded.error().message));
    auto source = HubReleaseSource::fromCredential(*loaded->credential);
    if (!source)
        return commandLine.fail(source.error().message);
    auto keyring = release::ReleaseKeyring::fromDirectory(commandLine.value(keys));
    if (!keyring)
        return commandLine.fail(keyring.error().message);
    DeviceUpgrader upgrader(
        DeviceUpgrader::Device { spec.package, spec.unit, spec.command, *settings }, spool,
        *keyring, *source, runner,
        [](std::chrono::milliseconds pause) { QThread::msleep(pause.count()); });
    const protocol::UpgradeStatus outcome = upgrader.run(job);
    util::printLine(u"%1: %2%3"_s.arg(protocol::upgradeStateName(outcome.state),
        outcome.to.isEmpty() ? outcome.target : outcome.from + u" -> "_s + outcome.to,
        outcome.message.isEmpty() ? QString() : u" - "_s + outcome.message));
    // The path unit's run ends well once the outcome is left for the hub,
    // whatever it is; the operator's own command says whether it upgraded.
    if (requested)
        return util::kExitOk;
    return outcome.state == protocol::UpgradeStatus::State::Upgraded ? util::kExitOk
                                                                     : util::kExitFailed;
}

} // namespace cloop::daemon
