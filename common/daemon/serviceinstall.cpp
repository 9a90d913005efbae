#include "common/daemon/serviceinstall.h"

#include "common/daemon/repincommand.h"
#include "common/util/atomicfile.h"
#include "common/util/commandline.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QRegularExpression>

#include <unistd.h>

namespace cloop::daemon {

using namespace Qt::StringLiterals;

namespace {

// Where things are on the machine, or under --root.
struct SystemPaths
{
    QString root; // empty: this machine
    QString path(const QString &absolute) const { return root + absolute; }
    QString config() const { return path(u"/etc/cloop"_s); }
    QString dropInFolder(const QString &unit) const
    {
        return path(u"/etc/systemd/system/%1.d"_s.arg(unit));
    }
    bool hasUnit(const QString &unit) const
    {
        for (const QString &folder :
            { u"/lib/systemd/system/"_s, u"/usr/lib/systemd/system/"_s, u"/etc/systemd/system/"_s })
            if (QFileInfo::exists(path(folder + unit)))
                return true;
        return false;
    }
};

// systemctl, on this machine or (offline) on the image under the root.
Status systemctl(const SystemPaths &paths, QStringList arguments)
{
    if (!paths.root.isEmpty())
        arguments.prepend(u"--root="_s + paths.root);
    QProcess process;
    process.start(u"systemctl"_s, arguments);
    if (!process.waitForFinished(120000) || process.exitStatus() != QProcess::NormalExit
        || process.exitCode() != 0)
        return Error::make(u"systemctl_failed"_s,
            u"systemctl %1 failed: %2"_s.arg(arguments.join(u' '),
                QString::fromLocal8Bit(process.readAllStandardError()).trimmed()
                    + process.errorString().left(
                        process.error() == QProcess::UnknownError ? 0 : 200)));
    return {};
}

Status makePrivateFolder(const QString &folder)
{
    if (!QDir().mkpath(folder))
        return Error::make(u"install_failed"_s, u"cannot make %1"_s.arg(folder));
    if (!QFile::setPermissions(folder, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner))
        return Error::make(u"install_failed"_s, u"cannot make %1 private"_s.arg(folder));
    return {};
}

// One Environment= line systemd splits into words when ExecStart says $VAR.
Result<QString> dropInFor(const ServiceSpec &spec, const QStringList &options)
{
    for (const QString &word : options) {
        if (word.contains(QRegularExpression(u"[\\s\"\\\\$%]"_s)))
            return Error::make(u"usage"_s,
                u"\"%1\": a value with spaces, quotes, $ or % cannot go into the unit"_s.arg(word));
    }
    return u"# Written by `%1 install`; `%1 uninstall` removes it.\n[Service]\nEnvironment=\"%2=%3\"\n"_s
        .arg(spec.command, spec.optionsVariable, options.join(u' '));
}

} // namespace

int runInstallCommand(const ServiceSpec &spec, const QStringList &arguments,
    const QList<QCommandLineOption> &daemonOptions)
{
    util::CommandLine commandLine(arguments.value(0),
        u"Install this machine's %1 as the service %2, as root: the bundle goes where only root\n"
        "reads it and the service redeems it on its first start."_s.arg(spec.command, spec.unit));
    const QCommandLineOption tokenFile(u"token-file"_s,
        u"The file holding the bundle `enroll` printed (removed once it is in /etc/cloop)."_s,
        u"FILE"_s);
    const QCommandLineOption ca(u"ca"_s, u"Also trust this PEM CA for the hub."_s, u"FILE"_s);
    const QCommandLineOption root(u"root"_s,
        u"Prepare the system image under DIR: enable the unit there, start nothing."_s, u"DIR"_s);
    commandLine.addOptions({ tokenFile, ca, root });
    commandLine.addOptions(daemonOptions);
    if (auto done = commandLine.parse(arguments, false))
        return *done;
    const SystemPaths paths { commandLine.value(root) };
    if (!commandLine.isSet(tokenFile))
        return commandLine.usageError(u"--token-file is required (see --help)"_s);
    if (paths.root.isEmpty() && ::geteuid() != 0)
        return commandLine.usageError(
            u"run it as root: the service and its credential are root's"_s);
    if (!paths.hasUnit(spec.unit))
        return commandLine.fail(
            u"there is no %1 on this machine: install its package first"_s.arg(spec.unit));

    QFile source(commandLine.value(tokenFile));
    if (!source.open(QIODevice::ReadOnly))
        return commandLine.usageError(
            u"cannot read %1: %2"_s.arg(source.fileName(), source.errorString()));
    const QByteArray bundle = source.read(2 * identity::EnrollmentBundle::kMaxLength).trimmed();
    source.close();
    // Checked before anything is written; redeemed only by the service.
    if (auto decoded = identity::EnrollmentBundle::decode(
            QString::fromUtf8(bundle), spec.bundleKind, net::PinRequirement::Required);
        !decoded)
        return commandLine.usageError(u"%1: %2"_s.arg(source.fileName(), decoded.error().message));
    const QString credential = paths.config() + u'/' + spec.credentialFile;
    if (QFileInfo::exists(credential))
        return commandLine.fail(
            u"%1 exists: this machine is enrolled already (`%2 uninstall --purge` forgets it)"_s
                .arg(credential, spec.command));

    QStringList options;
    for (const QCommandLineOption &option : daemonOptions) {
        const QString name = option.names().constFirst();
        if (!commandLine.isSet(option))
            continue;
        if (option.valueName().isEmpty()) {
            options.append(u"--"_s + name);
            continue;
        }
        for (const QString &value : commandLine.values(option))
            options << u"--"_s + name << value;
    }
    if (commandLine.isSet(ca))
        options << u"--ca"_s << QFileInfo(commandLine.value(ca)).absoluteFilePath();
    auto dropIn = dropInFor(spec, options);
    if (!dropIn)
        return commandLine.usageError(dropIn.error().message);

    if (Status made = makePrivateFolder(paths.config()); !made)
        return commandLine.fail(made.error().message);
    const QString bundlePath = paths.config() + u'/' + spec.bundleFile;
    if (Status saved = util::writeFileAtomically(bundlePath, bundle + '\n', 0600); !saved)
        return commandLine.fail(saved.error().message);
    const QString dropInFolder = paths.dropInFolder(spec.unit);
    if (!QDir().mkpath(dropInFolder))
        return commandLine.fail(u"cannot make %1"_s.arg(dropInFolder));
    if (Status saved
        = util::writeFileAtomically(dropInFolder + u"/install.conf"_s, dropIn->toUtf8(), 0644);
        !saved)
        return commandLine.fail(saved.error().message);
    // The one-time secret stays in one place only.
    if (!QFile::remove(source.fileName()))
        util::printLine(u"note: %1 could not be removed; delete it, it holds the bundle"_s.arg(
            source.fileName()));

    // On this machine: read the drop-in, then enable and start; on an image,
    // enable only (nothing runs there).
    Status enabled = paths.root.isEmpty() ? systemctl(paths, { u"daemon-reload"_s }) : Status();
    if (enabled)
        enabled = paths.root.isEmpty() ? systemctl(paths, { u"enable"_s, u"--now"_s, spec.unit })
                                       : systemctl(paths, { u"enable"_s, spec.unit });
    if (!enabled)
        return commandLine.fail(
            u"%1 (the bundle is in %2; `systemctl enable --now %3` starts it)"_s.arg(
                enabled.error().message, bundlePath, spec.unit));
    util::printLine(paths.root.isEmpty()
            ? u"%1 is enabled and started; it redeems the bundle on its first start.\n"
              "Follow it: journalctl -u %2 -f"_s.arg(spec.unit, spec.unit.section(u'.', 0, 0))
            : u"%1 is enabled in %2; it redeems the bundle on the image's first boot"_s.arg(
                spec.unit, paths.root));
    return util::kExitOk;
}

int runUninstallCommand(const ServiceSpec &spec, const QStringList &arguments)
{
    util::CommandLine commandLine(arguments.value(0),
        u"Stop and remove the service %1. The credential stays unless --purge."_s.arg(spec.unit));
    const QCommandLineOption purge(
        u"purge"_s, u"Also forget the enrollment: the credential and any bundle."_s);
    const QCommandLineOption root(u"root"_s, u"Operate on the system image under DIR."_s, u"DIR"_s);
    commandLine.addOptions({ purge, root });
    if (auto done = commandLine.parse(arguments, false))
        return *done;
    const SystemPaths paths { commandLine.value(root) };
    if (paths.root.isEmpty() && ::geteuid() != 0)
        return commandLine.usageError(u"run it as root: the service is root's"_s);
    const Status disabled = paths.root.isEmpty()
        ? systemctl(paths, { u"disable"_s, u"--now"_s, spec.unit })
        : systemctl(paths, { u"disable"_s, spec.unit });
    if (!disabled)
        return commandLine.fail(disabled.error().message);
    QDir(paths.dropInFolder(spec.unit)).removeRecursively();
    if (paths.root.isEmpty())
        (void)systemctl(paths, { u"daemon-reload"_s });
    QStringList forgotten;
    if (commandLine.isSet(purge)) {
        for (const QString &file : { spec.credentialFile, spec.bundleFile }) {
            const QString path = paths.config() + u'/' + file;
            if (QFile::remove(path))
                forgotten.append(path);
        }
    }
    util::printLine(u"%1 is stopped and removed; %2"_s.arg(spec.unit,
        commandLine.isSet(purge)
            ? (forgotten.isEmpty() ? u"there was no credential to forget"_s
                                   : u"forgot "_s + forgotten.join(u", "_s))
            : u"the credential in %1 stays (--purge forgets it)"_s.arg(paths.config())));
    return util::kExitOk;
}

bool isServiceSubcommand(const QString &word)
{
    return word == "install"_L1 || word == "uninstall"_L1 || word == "repin"_L1;
}

std::optional<int> runServiceSubcommand(const ServiceSpec &spec, const QStringList &arguments,
    const QList<QCommandLineOption> &daemonOptions)
{
    const QString subcommand = arguments.value(1);
    const QStringList rest
        = QStringList { arguments.value(0) + QLatin1Char(' ') + subcommand } + arguments.mid(2);
    if (subcommand == "install"_L1 && rest.contains(u"--upgrade"_s))
        return runUpgradeCommand(spec, rest);
    if (subcommand == "install"_L1)
        return runInstallCommand(spec, rest, daemonOptions);
    if (subcommand == "uninstall"_L1)
        return runUninstallCommand(spec, rest);
    if (subcommand == "repin"_L1)
        return runRepinCommand(rest, spec.credentialFile);
    return std::nullopt;
}

} // namespace cloop::daemon
