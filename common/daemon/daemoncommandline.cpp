#include "common/daemon/daemoncommandline.h"

#include <cstdio>

namespace cloop::daemon {

DaemonCommandLine::DaemonCommandLine(
    QString commandName, const QString &description, const QString &defaultCredentialFile)
    : m_commandName(std::move(commandName))
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
{
    m_parser.setApplicationDescription(description);
    m_parser.addHelpOption();
    m_parser.addOptions({ m_bundle, m_tokenFile, m_credential, m_ca, m_insecure, m_trustCaOnly });
}

std::optional<int> DaemonCommandLine::parse(const QStringList &arguments)
{
    if (!m_parser.parse(arguments))
        return usageError(m_parser.errorText());
    if (m_parser.isSet(QStringLiteral("help"))) {
        std::fputs(qPrintable(m_parser.helpText()), stdout);
        return 0;
    }
    if (!m_parser.positionalArguments().isEmpty())
        return usageError(QStringLiteral("unexpected argument \"%1\" (see --help)")
                              .arg(m_parser.positionalArguments().first()));
    return std::nullopt;
}

ConnectionOptions DaemonCommandLine::connection() const
{
    ConnectionOptions options;
    options.bundle = m_parser.value(m_bundle);
    options.tokenFile = m_parser.value(m_tokenFile);
    options.credentialPath = m_parser.value(m_credential);
    options.caFile = m_parser.value(m_ca);
    options.insecurePlaintext = m_parser.isSet(m_insecure);
    options.trustCaOnly = m_parser.isSet(m_trustCaOnly);
    return options;
}

int DaemonCommandLine::usageError(const QString &message) const
{
    std::fprintf(stderr, "%s: %s\n", qPrintable(m_commandName), qPrintable(message));
    return kExitUsage;
}

} // namespace cloop::daemon
