#include "hub/serve/releasecommand.h"

#include "common/release/debianpackage.h"
#include "common/release/releasesignature.h"
#include "common/util/commandline.h"
#include "common/util/processcommandrunner.h"
#include "hub/hub.h"
#include "hub/serve/databaseoption.h"
#include "hub/serve/servecommand.h"
#include "hub/storage/database.h"
#include "hub/storage/releasestore.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QUuid>

#include <pwd.h>
#include <unistd.h>

namespace cloop::hub {

namespace {

using release::ReleaseKeyring;
using release::ReleaseSignature;
using util::kExitOk;
using util::printLine;

QString releasesDir(const QString &dataDir)
{
    return Hub::releasesPath(dataDir);
}

// Who ran the command, for the audit log: the machine's user.
QString localActor()
{
    const passwd *entry = ::getpwuid(::geteuid());
    return QStringLiteral("local:")
        + (entry ? QString::fromLocal8Bit(entry->pw_name) : QString::number(::geteuid()));
}

Result<ReleaseSignature> readSignature(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return Error::make(QStringLiteral("io"),
            QStringLiteral("cannot read %1: %2").arg(path, file.errorString()));
    auto signature = ReleaseSignature::fromFile(file.read(ReleaseSignature::kMaxFileBytes + 1));
    if (!signature)
        return Error::make(
            signature.error().code, QStringLiteral("%1: %2").arg(path, signature.error().message));
    return signature;
}

int add(const QString &name, const QStringList &arguments)
{
    util::CommandLine line(name,
        QStringLiteral("Offer a signed package to the hub's devices. It is checked against its\n"
                       "signature and the release keys first; what fails is not added."));
    const QCommandLineOption data = dataDirOption();
    const QCommandLineOption signatureFile(QStringLiteral("signature"),
        QStringLiteral("Its signature (default PACKAGE.sig)."), QStringLiteral("FILE"));
    const QCommandLineOption keys(QStringLiteral("keys"),
        QStringLiteral("The folder of release keys to check it with (default %1).")
            .arg(QLatin1String(ReleaseKeyring::kInstalledKeyDir)),
        QStringLiteral("DIR"));
    const DatabaseOptions database;
    line.addOptions({ data, signatureFile, keys });
    line.addOptions(database.all());
    line.parser().addPositionalArgument(
        QStringLiteral("PACKAGE"), QStringLiteral("The .deb, as scripts/release wrote it."));
    if (auto done = line.parse(arguments))
        return *done;
    const QStringList positionals = line.parser().positionalArguments();
    if (positionals.size() != 1)
        return line.usageError(QStringLiteral("expected one PACKAGE (see --help)"));
    const QString package = positionals.constFirst();
    const QString dataDir = dataDirOf(line, data);
    auto signature = readSignature(
        line.isSet(signatureFile) ? line.value(signatureFile) : package + QStringLiteral(".sig"));
    if (!signature)
        return line.fail(signature.error().message);
    auto keyring = ReleaseKeyring::fromDirectory(line.isSet(keys)
            ? line.value(keys)
            : QString::fromLatin1(ReleaseKeyring::kInstalledKeyDir));
    if (!keyring)
        return line.fail(keyring.error().message);
    auto records = database.open(line, dataDir);
    if (!records)
        return line.fail(records.error().message);

    // The copy is what is checked and kept: the file given may change after.
    const QString dir = releasesDir(dataDir);
    if (!QDir().mkpath(dir))
        return line.fail(QStringLiteral("cannot make %1").arg(dir));
    const release::ReleaseStatement &statement = signature->statement;
    const QString fileName = QStringLiteral("%1_%2.deb")
                                 .arg(statement.package,
                                     statement.version + QLatin1Char('_')
                                         + QString::fromLatin1(statement.sha256.toHex().left(16)));
    const QString incoming
        = dir + QStringLiteral("/.incoming-") + QUuid::createUuid().toString(QUuid::WithoutBraces);
    if (!QFile::copy(package, incoming))
        return line.fail(QStringLiteral("cannot copy %1 into %2").arg(package, dir));
    const auto failed = [&](const QString &message) {
        QFile::remove(incoming);
        return line.fail(message);
    };
    if (Status verified = keyring->verifyFile(incoming, *signature); !verified)
        return failed(verified.error().message);
    util::ProcessCommandRunner runner;
    auto control = release::readDebianControl(incoming, runner);
    if (!control)
        return failed(control.error().message);
    if (control->package != statement.package || control->version != statement.version)
        return failed(QStringLiteral("%1 says it is %2 %3, its signature %4 %5")
                          .arg(package, control->package, control->version, statement.package,
                              statement.version));
    auto added = ReleaseStore(**records).add(
        *signature, fileName, QFileInfo(incoming).size(), localActor());
    if (!added)
        return failed(added.error().message);
    QFile::setPermissions(
        incoming, QFile::ReadOwner | QFile::WriteOwner | QFile::ReadGroup | QFile::ReadOther);
    const QString kept = dir + QLatin1Char('/') + fileName;
    QFile::remove(kept);
    if (!QFile::rename(incoming, kept))
        return failed(QStringLiteral("cannot move the package to %1").arg(kept));
    giveToFolderOwner(dataDir, { dir, kept });
    printLine(QStringLiteral("release %1: %2 %3 (%4, commit %5), signed by %6")
                  .arg(added->id)
                  .arg(statement.package, statement.version, statement.channel,
                      statement.commit.left(12), added->keyId));
    return kExitOk;
}

int list(const QString &name, const QStringList &arguments)
{
    util::CommandLine line(name, QStringLiteral("The packages the hub offers its devices."));
    const QCommandLineOption json(QStringLiteral("json"), QStringLiteral("Print them as JSON."));
    auto opened = openRecordsFromCommandLine(line, arguments, { json });
    if (const int *done = std::get_if<int>(&opened))
        return *done;
    Database &records = *std::get<std::unique_ptr<Database>>(opened);
    auto releases = ReleaseStore(records).list();
    if (!releases)
        return line.fail(releases.error().message);
    if (line.isSet(json)) {
        QJsonArray items;
        for (const ReleaseRecord &record : *releases)
            items.append(QJsonObject { { QStringLiteral("id"), record.id },
                { QStringLiteral("package"), record.statement.package },
                { QStringLiteral("version"), record.statement.version },
                { QStringLiteral("channel"), record.statement.channel },
                { QStringLiteral("commit"), record.statement.commit },
                { QStringLiteral("sha256"), QString::fromLatin1(record.statement.sha256.toHex()) },
                { QStringLiteral("key"), record.keyId },
                { QStringLiteral("size_bytes"), record.sizeBytes },
                { QStringLiteral("added_at"), record.addedAt.toString(Qt::ISODateWithMs) },
                { QStringLiteral("added_by"), record.addedBy } });
        printLine(QString::fromUtf8(
            QJsonDocument(QJsonObject { { QStringLiteral("items"), items } }).toJson()));
        return kExitOk;
    }
    if (releases->isEmpty()) {
        printLine(QStringLiteral("no releases (add one with: cloop hub release add PACKAGE.deb)"));
        return kExitOk;
    }
    printLine(QStringLiteral("%1  %2  %3  %4  %5  %6")
                  .arg(QStringLiteral("ID"), -4)
                  .arg(QStringLiteral("PACKAGE"), -16)
                  .arg(QStringLiteral("VERSION"), -24)
                  .arg(QStringLiteral("CHANNEL"), -7)
                  .arg(QStringLiteral("COMMIT"), -12)
                  .arg(QStringLiteral("ADDED")));
    for (const ReleaseRecord &record : *releases)
        printLine(QStringLiteral("%1  %2  %3  %4  %5  %6")
                      .arg(QString::number(record.id), -4)
                      .arg(record.statement.package, -16)
                      .arg(record.statement.version, -24)
                      .arg(record.statement.channel, -7)
                      .arg(record.statement.commit.left(12), -12)
                      .arg(record.addedAt.toString(Qt::ISODate) + QStringLiteral(" by ")
                          + record.addedBy));
    return kExitOk;
}

constexpr util::Subcommand kSteps[] = {
    { "add", [](const QStringList &arguments) { return add(arguments.constFirst(), arguments); },
        "PACKAGE [--signature FILE] [--keys DIR]", "Offer a signed package to the hub's devices.",
        "cloop hub release add cloop-forward_0.4.0_amd64.deb" },
    { "list", [](const QStringList &arguments) { return list(arguments.constFirst(), arguments); },
        "[--json]", "List the packages the hub offers.", "cloop hub release list" },
};

} // namespace

std::span<const util::Subcommand> releaseSteps()
{
    return kSteps;
}

} // namespace cloop::hub
