#include "common/daemon/daemoncommandline.h"

#include "cloop/buildinfo.h"

#include <QDir>
#include <QFileInfo>

namespace cloop::daemon {

DaemonCommandLine::DaemonCommandLine(
    QString commandName, const QString &description, const QString &defaultCredentialFile)
    : m_commandLine(std::move(commandName), description)
    , m_bundle(QStringLiteral("bundle"),
          QStringLiteral(
              "Enroll with this bundle (every local user can read a command line: prefer "
              "--token-file)."),
          QStringLiteral("BUNDLE"))
    , m_tokenFile(QStringLiteral("token-file"),
          QStringLiteral("Enroll with the bundle in this file, deleted once redeemed."),
          QStringLiteral("FILE"))
    , m_credential(QStringLiteral("credential-file"),
          QStringLiteral("Where the credential is kept (default %1).").arg(defaultCredentialFile),
          QStringLiteral("FILE"))
    , m_ca(QStringLiteral("ca"), QStringLiteral("Also trust this PEM CA for the hub."),
          QStringLiteral("FILE"))
    , m_insecure(QStringLiteral("insecure-plaintext"),
          QStringLiteral("Allow ws:// to a host that is not loopback (warns on every attempt)."))
    , m_trustCaOnly(QStringLiteral("trust-ca-only"),
          QStringLiteral(
              "Accept a bundle or credential that pins no key of the hub and trust the hub on "
              "its certificate's CA chain alone (warns on every attempt)."))
    , m_upgradeDir(QStringLiteral("upgrade-dir"),
          QStringLiteral("Where upgrade requests are filed for the root helper (default %1).")
              .arg(QStringLiteral("~/.cloop/") + QFileInfo(defaultCredentialFile).completeBaseName()
                  + QStringLiteral("-upgrade")),
          QStringLiteral("DIR"))
    , m_defaultUpgradeDir(QDir::homePath() + QStringLiteral("/.cloop/")
          + QFileInfo(defaultCredentialFile).completeBaseName() + QStringLiteral("-upgrade"))
{
    m_commandLine.addOptions(
        { m_bundle, m_tokenFile, m_credential, m_ca, m_insecure, m_trustCaOnly, m_upgradeDir });
}

Result<UpgradeResponder::Options> DaemonCommandLine::upgrade(
    const QString &program, const QProcessEnvironment &environment) const
{
    auto settings = UpgradeSettings::fromEnvironment(environment);
    if (!settings)
        return settings.error();
    UpgradeResponder::Options options;
    options.settings = *settings;
    options.program = program;
    options.spoolFolder = m_commandLine.isSet(m_upgradeDir) ? m_commandLine.value(m_upgradeDir)
                                                            : m_defaultUpgradeDir;
    options.installedVersion = QString::fromLatin1(buildinfo::kVersion);
    return options;
}

std::optional<int> DaemonCommandLine::parse(const QStringList &arguments)
{
    return m_commandLine.parse(arguments, false);
}

ConnectionOptions DaemonCommandLine::connection() const
{
    ConnectionOptions options;
    options.bundle = m_commandLine.value(m_bundle);
    options.tokenFile = m_commandLine.value(m_tokenFile);
    options.credentialPath = m_commandLine.value(m_credential);
    options.caFile = m_commandLine.value(m_ca);
    options.insecurePlaintext = m_commandLine.isSet(m_insecure);
    options.trustCaOnly = m_commandLine.isSet(m_trustCaOnly);
    return options;
}

int DaemonCommandLine::usageError(const QString &message) const
{
    return m_commandLine.usageError(message);
}

} // namespace cloop::daemon
