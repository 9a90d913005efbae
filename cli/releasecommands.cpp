#include "cli/releasecommands.h"

#include "cli/command.h"
#include "cli/output.h"
#include "common/release/debianpackage.h"
#include "common/release/releasesignature.h"
#include "common/release/releaseversion.h"
#include "common/util/atomicfile.h"
#include "common/util/processcommandrunner.h"

#include <QFile>
#include <QFileInfo>

namespace cloop::cli {

namespace {

using release::ReleaseKey;
using release::ReleaseKeyring;
using release::ReleaseSignature;
using release::ReleaseStatement;

Result<release::DebianControl> readControl(const QString &path)
{
    util::ProcessCommandRunner runner;
    return release::readDebianControl(path, runner);
}

Result<QByteArray> readSmallFile(const QString &path, qint64 limit)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return Error::make(QStringLiteral("io"),
            QStringLiteral("cannot read %1: %2").arg(path, file.errorString()));
    if (file.size() > limit)
        return Error::make(QStringLiteral("io"),
            QStringLiteral("%1 is larger than %2 bytes").arg(path).arg(limit));
    return file.readAll();
}

int keygen(const QStringList &arguments)
{
    Command command(QStringLiteral("release keygen"),
        QStringLiteral("Make a release key: the private half signs packages (keep it offline),\n"
                       "the public half is installed on devices in %1.")
            .arg(QLatin1String(ReleaseKeyring::kInstalledKeyDir)),
        Command::Endpoint::None);
    const QCommandLineOption privateFile(QStringLiteral("private"),
        QStringLiteral("Where the private key is written (0600; must not exist)."),
        QStringLiteral("FILE"));
    const QCommandLineOption publicFile(QStringLiteral("public"),
        QStringLiteral("Where the public key is written (must not exist)."),
        QStringLiteral("FILE"));
    command.addOptions({ privateFile, publicFile });
    if (auto done = command.parse(arguments))
        return *done;
    const QString syntax = QStringLiteral("cloop release keygen --private FILE --public FILE");
    auto privatePath = command.required(privateFile, syntax);
    auto publicPath = command.required(publicFile, syntax);
    if (!privatePath || !publicPath)
        return command.usageError((privatePath ? publicPath : privatePath).error().message);
    for (const QString &path : { *privatePath, *publicPath }) {
        if (QFileInfo::exists(path))
            return command.failed(Error::make(QStringLiteral("exists"),
                QStringLiteral("%1 exists; a key is never replaced").arg(path)));
    }
    auto key = ReleaseKey::generate();
    if (!key)
        return command.failed(key.error());
    if (Status written = util::writeFileAtomically(*privatePath, key->privatePem(), 0600); !written)
        return command.failed(written.error());
    if (Status written = util::writeFileAtomically(*publicPath, key->publicPem(), 0644); !written)
        return command.failed(written.error());
    printLine(QStringLiteral("release key %1: private half in %2, public half in %3")
                  .arg(key->id(), *privatePath, *publicPath));
    return kExitOk;
}

int sign(const QStringList &arguments)
{
    Command command(QStringLiteral("release sign"),
        QStringLiteral("Sign a package as a release (stable) or an edge build, writing\n"
                       "PACKAGE.sig beside it: its digest, package, version, channel and commit."),
        Command::Endpoint::None);
    command.addPositional(QStringLiteral("PACKAGE"), QStringLiteral("The .deb to sign."));
    const QCommandLineOption keyFile(QStringLiteral("key"),
        QStringLiteral("The private release key (PEM)."), QStringLiteral("FILE"));
    const QCommandLineOption channel(QStringLiteral("channel"),
        QStringLiteral("stable or edge (an edge build's version ends in ~git and its commit)."),
        QStringLiteral("CHANNEL"));
    const QCommandLineOption commit(QStringLiteral("commit"),
        QStringLiteral("The 40-hex git commit it was built from."), QStringLiteral("HEX"));
    command.addOptions({ keyFile, channel, commit });
    if (auto done = command.parse(arguments))
        return *done;
    const QString syntax = QStringLiteral(
        "cloop release sign PACKAGE --key FILE --channel stable|edge --commit HEX");
    auto package = command.positionals(1, syntax);
    auto keyPath = command.required(keyFile, syntax);
    auto channelName = command.required(channel, syntax);
    auto commitHex = command.required(commit, syntax);
    for (const Error *missing : { package ? nullptr : &package.error(),
             keyPath ? nullptr : &keyPath.error(), channelName ? nullptr : &channelName.error(),
             commitHex ? nullptr : &commitHex.error() }) {
        if (missing)
            return command.usageError(missing->message);
    }
    const QString packagePath = package->constFirst();
    const QString signaturePath = packagePath + QStringLiteral(".sig");
    if (QFileInfo::exists(signaturePath))
        return command.failed(Error::make(QStringLiteral("exists"),
            QStringLiteral("%1 exists; a signature is never replaced").arg(signaturePath)));
    auto pem = readSmallFile(*keyPath, 64 * 1024);
    if (!pem)
        return command.failed(pem.error());
    auto key = ReleaseKey::fromPem(*pem);
    if (!key)
        return command.failed(key.error());
    auto control = readControl(packagePath);
    if (!control)
        return command.failed(control.error());
    auto digest = release::sha256OfFile(packagePath);
    if (!digest)
        return command.failed(digest.error());
    auto signature = key->sign(ReleaseStatement {
        control->package, control->version, *channelName, commitHex->toLower(), *digest });
    if (!signature)
        return command.failed(signature.error());
    if (Status written = util::writeFileAtomically(signaturePath, signature->toFile(), 0644);
        !written)
        return command.failed(written.error());
    printLine(QStringLiteral("signed %1 %2 (%3) with %4: %5")
                  .arg(control->package, control->version, *channelName, key->id(), signaturePath));
    return kExitOk;
}

int verify(const QStringList &arguments)
{
    Command command(QStringLiteral("release verify"),
        QStringLiteral("Check a package against its signature and the release keys, as a device\n"
                       "does before it installs it."),
        Command::Endpoint::None);
    command.addPositional(QStringLiteral("PACKAGE"), QStringLiteral("The .deb to check."));
    const QCommandLineOption signatureFile(QStringLiteral("signature"),
        QStringLiteral("Its signature (default PACKAGE.sig)."), QStringLiteral("FILE"));
    const QCommandLineOption keys(QStringLiteral("keys"),
        QStringLiteral("The folder of trusted public keys (default %1).")
            .arg(QLatin1String(ReleaseKeyring::kInstalledKeyDir)),
        QStringLiteral("DIR"));
    command.addOptions({ signatureFile, keys });
    if (auto done = command.parse(arguments))
        return *done;
    auto package = command.positionals(1, QStringLiteral("cloop release verify PACKAGE"));
    if (!package)
        return command.usageError(package.error().message);
    const QString packagePath = package->constFirst();
    const QString signaturePath = command.isSet(signatureFile)
        ? command.value(signatureFile)
        : packagePath + QStringLiteral(".sig");
    auto keyring = ReleaseKeyring::fromDirectory(command.isSet(keys)
            ? command.value(keys)
            : QString::fromLatin1(ReleaseKeyring::kInstalledKeyDir));
    if (!keyring)
        return command.failed(keyring.error());
    auto bytes = readSmallFile(signaturePath, ReleaseSignature::kMaxFileBytes);
    if (!bytes)
        return command.failed(bytes.error());
    auto signature = ReleaseSignature::fromFile(*bytes);
    if (!signature)
        return command.failed(Error::make(signature.error().code,
            QStringLiteral("%1: %2").arg(signaturePath, signature.error().message)));
    if (Status verified = keyring->verifyFile(packagePath, *signature); !verified)
        return command.failed(verified.error());
    // The package's own control must agree with what was signed.
    auto control = readControl(packagePath);
    if (!control)
        return command.failed(control.error());
    const ReleaseStatement &statement = signature->statement;
    if (control->package != statement.package || control->version != statement.version)
        return command.failed(Error::make(QStringLiteral("bad_package"),
            QStringLiteral("%1 says it is %2 %3, its signature %4 %5")
                .arg(packagePath, control->package, control->version, statement.package,
                    statement.version)));
    printLine(QStringLiteral("verified: %1 %2 (%3, commit %4), signed by %5")
                  .arg(statement.package, statement.version, statement.channel,
                      statement.commit.left(12), signature->keyId));
    return kExitOk;
}

constexpr util::Subcommand kSubcommands[] = {
    { "keygen", keygen, "--private FILE --public FILE",
        "Make a release key: its private half signs packages.",
        "cloop release keygen --private release.key --public release.pub" },
    { "sign", sign, "PACKAGE --key FILE --channel stable|edge --commit HEX",
        "Sign a package, writing PACKAGE.sig beside it.",
        "cloop release sign cloop-forward_0.4.0_amd64.deb --key release.key --channel stable "
        "--commit 3f2c1d0" },
    { "verify", verify, "PACKAGE [--keys DIR]", "Check a package's signature as a device does.",
        "cloop release verify cloop-forward_0.4.0_amd64.deb" },
};

} // namespace

std::span<const util::Subcommand> releaseCommands()
{
    return kSubcommands;
}

} // namespace cloop::cli
