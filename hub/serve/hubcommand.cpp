#include "hub/serve/hubcommand.h"

#include "common/logging.h"
#include "common/net/spkipin.h"
#include "common/util/atomicfile.h"
#include "common/util/commandline.h"
#include "common/util/versionreport.h"
#include "hub/hub.h"
#include "hub/localaccess.h"
#include "hub/serve/memberscommand.h"
#include "hub/serve/migratecommand.h"
#include "hub/serve/releasecommand.h"
#include "hub/serve/servecommand.h"
#include "hub/storage/sqlitebackup.h"
#include "hub/tls/devcertificate.h"
#include "hub/tls/hubkeys.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>

#include <QSslCertificate>
#include <csignal>
#include <cstdio>

#include <unistd.h>

namespace cloop::hub {

namespace {

using util::kExitOk;
using util::printLine;

int tlsInit(const QString &name, const QStringList &arguments)
{
    util::CommandLine commandLine(name,
        QStringLiteral(
            "Create a self-signed development certificate for the hub and print its key pin.\n"
            "Daemons trust it through the pin that travels in every bundle."));
    const QCommandLineOption data = dataDirOption();
    const QCommandLineOption host(QStringLiteral("host"),
        QStringLiteral("Another DNS name or IP address daemons use to reach the hub (repeatable)."),
        QStringLiteral("NAME"));
    const QCommandLineOption force(QStringLiteral("force"),
        QStringLiteral("Replace an existing certificate (daemons pinned to the old key will refuse "
                       "the new one)."));
    commandLine.addOptions({ data, host, force });
    if (auto done = commandLine.parse(arguments, false))
        return *done;
    const QString dataDir = dataDirOf(commandLine, data);
    const QString certificatePath = Hub::defaultCertificatePath(dataDir);
    const QString keyPath = Hub::defaultKeyPath(dataDir);
    if (QFileInfo::exists(certificatePath) && !commandLine.isSet(force)) {
        auto existing = TlsIdentity::load(certificatePath, keyPath);
        if (existing) {
            printLine(
                QStringLiteral("A certificate already exists at %1 (use --force to replace it).")
                    .arg(certificatePath));
            printLine(QStringLiteral("pin: %1").arg(existing->pin));
            return kExitOk;
        }
        return commandLine.fail(
            QStringLiteral("%1 exists but cannot be used (%2); use --force to replace it")
                .arg(certificatePath, existing.error().message));
    }
    DevCertificateRequest request;
    request.hostNames = defaultDevHostNames();
    for (const QString &extra : commandLine.values(host)) {
        if (!request.hostNames.contains(extra))
            request.hostNames.append(extra);
    }
    if (Status generated = generateDevCertificate(request, certificatePath, keyPath); !generated)
        return commandLine.fail(generated.error().message);
    auto identity = TlsIdentity::load(certificatePath, keyPath);
    if (!identity)
        return commandLine.fail(identity.error().message);
    printLine(QStringLiteral("Development certificate for %1 written to %2")
                  .arg(request.hostNames.join(QStringLiteral(", ")), certificatePath));
    printLine(QStringLiteral("pin: %1").arg(identity->pin));
    return kExitOk;
}

// What a person signing in for the first time compares with what their
// dashboard or `cloop login` shows.
int pin(const QString &name, const QStringList &arguments)
{
    util::CommandLine commandLine(name,
        QStringLiteral(
            "Print the key pin of the hub's TLS certificate, to compare with what a client shows\n"
            "on its first connection."));
    const QCommandLineOption data = dataDirOption();
    const QCommandLineOption certificate(QStringLiteral("certificate"),
        QStringLiteral("The certificate file (default: the one in the data folder)."),
        QStringLiteral("FILE"));
    commandLine.addOptions({ data, certificate });
    if (auto done = commandLine.parse(arguments, false))
        return *done;
    const QString path = commandLine.isSet(certificate)
        ? commandLine.value(certificate)
        : Hub::defaultCertificatePath(dataDirOf(commandLine, data));
    const QList<QSslCertificate> found = QSslCertificate::fromPath(path, QSsl::Pem);
    if (found.isEmpty())
        return commandLine.fail(
            QStringLiteral("no PEM certificate at %1 (create one with cloop hub tls-init)")
                .arg(path));
    printLine(net::PinSet::pinOf(found.first()));
    return kExitOk;
}

// The files beside the database that make a restored hub the same hub:
// its TLS identity, without which every pinned daemon would refuse it.
QStringList identityFiles()
{
    return { QStringLiteral("tls/cert.pem"), QStringLiteral("tls/key.pem") };
}

// The command line of backup, restore and key: --data and one argument. Parsed,
// it holds the data folder and the file; otherwise the exit code.
struct FileCommand
{
    util::CommandLine line;
    QCommandLineOption data = dataDirOption();
    QString dataDir;
    QString file;
    QString positionalName;

    FileCommand(const QString &name, const QString &description, const QString &fileHelp,
        QString positional = QStringLiteral("FILE"))
        : line(name, description)
        , positionalName(std::move(positional))
    {
        line.addOptions({ data });
        line.parser().addPositionalArgument(positionalName, fileHelp);
    }

    std::optional<int> parse(const QStringList &arguments)
    {
        if (auto done = line.parse(arguments))
            return done;
        const QStringList positionals = line.parser().positionalArguments();
        if (positionals.size() != 1)
            return line.usageError(
                QStringLiteral("expected one %1 (see --help)").arg(positionalName));
        file = positionals.constFirst();
        dataDir = dataDirOf(line, data);
        return std::nullopt;
    }
};

int backup(const QString &name, const QStringList &arguments)
{
    FileCommand command(name,
        QStringLiteral(
            "Copy the hub's database and TLS identity into FILE while the hub runs: one\n"
            "consistent moment of it, restored with restore. FILE must not exist."),
        QStringLiteral("Where the backup is written (mode 0600)."));
    if (auto done = command.parse(arguments))
        return *done;
    SqliteBackup::Files files;
    for (const QString &relative : identityFiles()) {
        QFile file(command.dataDir + QLatin1Char('/') + relative);
        if (!file.open(QIODevice::ReadOnly))
            return command.line.fail(
                QStringLiteral("cannot read %1: %2 (is %3 a hub's data folder?)")
                    .arg(file.fileName(), file.errorString(), command.dataDir));
        files.insert(relative, file.readAll());
    }
    if (Status written
        = SqliteBackup::write(Hub::databasePath(command.dataDir), command.file, files);
        !written)
        return command.line.fail(written.error().message);
    printLine(QStringLiteral("backup of %1 written to %2").arg(command.dataDir, command.file));
    return kExitOk;
}

int restore(const QString &name, const QStringList &arguments)
{
    FileCommand command(name,
        QStringLiteral("Make a hub's data folder from a backup: its database and TLS identity, so\n"
                       "that its daemons reconnect. The folder must hold no hub yet; run as the\n"
                       "user the hub runs as (cloop for the service)."),
        QStringLiteral("A file written by backup."));
    if (auto done = command.parse(arguments))
        return *done;
    for (const QString &relative : identityFiles()) {
        if (QFileInfo::exists(command.dataDir + QLatin1Char('/') + relative))
            return command.line.fail(
                QStringLiteral("%1/%2 exists; restore into a data folder that holds no hub")
                    .arg(command.dataDir, relative));
    }
    const bool madeFolder = !QFileInfo::exists(command.dataDir);
    if (madeFolder && !QDir().mkpath(command.dataDir))
        return command.line.fail(QStringLiteral("cannot make %1").arg(command.dataDir));
    QFile::setPermissions(command.dataDir, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
    auto files = SqliteBackup::restore(command.file, Hub::databasePath(command.dataDir));
    if (!files) {
        if (madeFolder)
            QDir().rmdir(command.dataDir); // a refused backup leaves nothing behind
        return command.line.fail(files.error().message);
    }
    if (!QDir().mkpath(command.dataDir + QStringLiteral("/tls")))
        return command.line.fail(QStringLiteral("cannot make %1/tls").arg(command.dataDir));
    QFile::setPermissions(command.dataDir + QStringLiteral("/tls"),
        QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
    for (const QString &relative : identityFiles()) {
        if (!files->contains(relative))
            return command.line.fail(
                QStringLiteral("%1 holds no %2: the database is restored, the TLS identity is not")
                    .arg(command.file, relative));
        if (Status saved = util::writeFileAtomically(
                command.dataDir + QLatin1Char('/') + relative, files->value(relative), 0600);
            !saved)
            return command.line.fail(saved.error().message);
    }
    printLine(QStringLiteral("hub restored into %1 from %2").arg(command.dataDir, command.file));
    return kExitOk;
}

// The running hub of `dataDir`, told to read its keys again; false when
// none runs (it reads them when it starts).
bool tellHubToReload(const QString &dataDir)
{
    auto access = LocalAccess::load(dataDir);
    if (!access || access->pid <= 0)
        return false;
    // A pid from a hub that is gone may be another program's now.
    QFile comm(QStringLiteral("/proc/%1/comm").arg(access->pid));
    if (!comm.open(QIODevice::ReadOnly) || !comm.readAll().startsWith("cloop"))
        return false;
    return ::kill(pid_t(access->pid), SIGHUP) == 0;
}

int key(const QString &name, const QStringList &arguments)
{
    FileCommand command(name,
        QStringLiteral(
            "Rotate the hub's key without cutting anyone off:\n"
            "  stage     make the next key; every daemon pins it beside the current one\n"
            "  activate  serve the staged key (daemons that missed it need `repin`)\n"
            "  status    the pins of the serving and the staged key"),
        QStringLiteral("stage, activate or status."), QStringLiteral("STEP"));
    if (auto done = command.parse(arguments))
        return *done;
    const QString &dataDir = command.dataDir;
    const HubKeys keys(Hub::defaultCertificatePath(dataDir), Hub::defaultKeyPath(dataDir));
    const QString &step = command.file;
    if (step == QLatin1String("status")) {
        auto serving
            = TlsIdentity::load(Hub::defaultCertificatePath(dataDir), Hub::defaultKeyPath(dataDir));
        if (!serving)
            return command.line.fail(serving.error().message);
        auto staged = keys.staged();
        if (!staged)
            return command.line.fail(staged.error().message);
        printLine(QStringLiteral("serving: %1").arg(serving->pin));
        printLine(
            QStringLiteral("staged:  %1").arg(*staged ? (*staged)->pin : QStringLiteral("none")));
        return kExitOk;
    }
    if (step != QLatin1String("stage") && step != QLatin1String("activate"))
        return command.line.usageError(
            QStringLiteral("\"%1\" is not stage, activate or status").arg(step));
    auto changed = step == QLatin1String("stage") ? keys.stage() : keys.activate();
    if (!changed)
        return command.line.fail(changed.error().message);
    giveToFolderOwner(dataDir,
        { Hub::defaultCertificatePath(dataDir), Hub::defaultKeyPath(dataDir),
            keys.stagedCertificatePath(), keys.stagedKeyPath() });
    const bool told = tellHubToReload(dataDir);
    if (step == QLatin1String("stage"))
        printLine(QStringLiteral("staged the key %1; %2")
                      .arg(changed->pin,
                          told ? QStringLiteral(
                              "every connected daemon pins it now, the others when they "
                              "next connect. Then: cloop hub key activate")
                               : QStringLiteral(
                                   "the hub is not running: it announces it when it starts")));
    else
        printLine(QStringLiteral("the hub serves the key %1 %2; a daemon that never heard of it "
                                 "needs `cloop forward repin` / `cloop executor agent repin`")
                      .arg(changed->pin,
                          told ? QStringLiteral("now") : QStringLiteral("when it starts")));
    return kExitOk;
}

// Each runs with "PROGRAM SUBCOMMAND" as its name.
template <int (*Run)(const QString &name, const QStringList &arguments)>
int named(const QStringList &arguments)
{
    return Run(arguments.constFirst(), arguments);
}

int serve(const QStringList &arguments)
{
    return ServeCommand(arguments.constFirst()).run(arguments);
}

constexpr util::Subcommand kSubcommands[] = {
    { "serve", serve, "[--data DIR] [--listen HOST:PORT] [options]", "Run the hub.",
        "cloop hub serve --listen 0.0.0.0:7443" },
    { "tls-init", named<tlsInit>, "[--data DIR] [--host NAME]",
        "Make the hub's development TLS certificate.",
        "cloop hub tls-init --host hub.lab.example" },
    { "pin", named<pin>, "[--data DIR]", "Print the key pin that clients compare on first contact.",
        "cloop hub pin" },
    { "backup", named<backup>, "FILE [--data DIR]",
        "Copy the hub's database and TLS identity while it runs.",
        "cloop hub backup /var/backups/cloop-hub.tar" },
    { "restore", named<restore>, "FILE [--data DIR]", "Make a hub's data folder from a backup.",
        "cloop hub restore /var/backups/cloop-hub.tar --data /var/lib/cloop" },
    { "key", named<key>, "stage|activate|status [--data DIR]",
        "Rotate the hub's key without cutting anyone off.", "cloop hub key stage" },
    { "release", nullptr, "add|list", "The signed packages the hub offers its devices.",
        "cloop hub release list", releaseSteps },
    { "migrate", named<runMigrateCommand>, "--to URL [--data DIR]",
        "Move this hub's records into PostgreSQL for a cluster.",
        "cloop hub migrate --to postgresql://cloop@db.lab.example/cloop" },
    { "members", named<runMembersCommand>, "[--json]", "List the hub cluster's members.",
        "cloop hub members" },
};

} // namespace

std::span<const util::Subcommand> hubCommands()
{
    return kSubcommands;
}

int runHubCommand(const QString &program, const QStringList &arguments)
{
    if (arguments.value(1) == QLatin1String("--version")) {
        printLine(util::VersionReport::of(program).toText());
        return kExitOk;
    }
    return util::runSubcommand(QStringList { program } + arguments.mid(1), kSubcommands,
        QStringLiteral("The hub: the one place daemons and people connect to."));
}

} // namespace cloop::hub
