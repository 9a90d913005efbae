#include "hub/cli/hubcommands.h"

#include "common/logging.h"
#include "common/net/hubtls.h"
#include "common/util/unixsignalwatcher.h"
#include "hub/cli/output.h"
#include "hub/hub.h"
#include "hub/localaccess.h"
#include "hub/tls/devcertificate.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QFileInfo>

#include <csignal>
#include <sys/stat.h>

namespace cloop::cli {

namespace {

const QCommandLineOption kDataOption(QStringLiteral("data"),
                                     QStringLiteral("The hub's data folder (default ~/.cloop/hub; a service uses /var/lib/cloop)."),
                                     QStringLiteral("DIR"));

// "HOST:PORT", "[v6]:PORT", ":PORT" or "PORT".
Result<std::pair<QHostAddress, quint16>> parseListen(const QString &text)
{
    QString host;
    QString port = text;
    if (text.startsWith(QLatin1Char('['))) {
        const int close = text.indexOf(QLatin1String("]:"));
        if (close < 0)
            return Error::make(QStringLiteral("usage"), QStringLiteral("--listen \"%1\" is not [ADDRESS]:PORT").arg(text));
        host = text.mid(1, close - 1);
        port = text.mid(close + 2);
    } else if (const int colon = text.lastIndexOf(QLatin1Char(':')); colon >= 0) {
        host = text.left(colon);
        port = text.mid(colon + 1);
    }
    bool ok = false;
    const uint portNumber = port.toUInt(&ok);
    if (!ok || portNumber > 65535)
        return Error::make(QStringLiteral("usage"), QStringLiteral("--listen \"%1\": the port must be 0-65535").arg(text));
    QHostAddress address(QHostAddress::Any);
    if (!host.isEmpty() && host != QLatin1String("*")) {
        if (host == QLatin1String("localhost"))
            address = QHostAddress(QHostAddress::LocalHost);
        else if (!address.setAddress(host))
            return Error::make(QStringLiteral("usage"),
                               QStringLiteral("--listen \"%1\": \"%2\" is not an IP address").arg(text, host));
    }
    return std::make_pair(address, static_cast<quint16>(portNumber));
}

int tlsInit(const QStringList &arguments)
{
    const QString name = QStringLiteral("hub tls-init");
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral(
            "Create a self-signed development certificate for the hub and print its key pin.\n"
            "Daemons trust it through the pin that travels in every bundle."));
    parser.addHelpOption();
    const QCommandLineOption host(QStringLiteral("host"),
                                  QStringLiteral("Another DNS name or IP address daemons use to reach the hub (repeatable)."),
                                  QStringLiteral("NAME"));
    const QCommandLineOption force(QStringLiteral("force"),
                                   QStringLiteral("Replace an existing certificate (daemons pinned to the old key will refuse the new one)."));
    parser.addOptions({kDataOption, host, force});
    if (!parser.parse(arguments))
        return fail(name, parser.errorText(), kExitUsage);
    if (parser.isSet(QStringLiteral("help"))) {
        printLine(parser.helpText());
        return kExitOk;
    }
    const QString dataDir = parser.isSet(kDataOption) ? parser.value(kDataOption) : hub::defaultHubDataDir();
    const QString certificatePath = hub::Hub::defaultCertificatePath(dataDir);
    const QString keyPath = hub::Hub::defaultKeyPath(dataDir);
    if (QFileInfo::exists(certificatePath) && !parser.isSet(force)) {
        auto existing = hub::TlsIdentity::load(certificatePath, keyPath);
        if (existing) {
            printLine(QStringLiteral("A certificate already exists at %1 (use --force to replace it).").arg(certificatePath));
            printLine(QStringLiteral("pin: %1").arg(existing->pin));
            return kExitOk;
        }
        return fail(name, QStringLiteral("%1 exists but cannot be used (%2); use --force to replace it")
                                  .arg(certificatePath, existing.error().message));
    }
    hub::DevCertificateRequest request;
    request.hostNames = hub::defaultDevHostNames();
    for (const QString &extra : parser.values(host)) {
        if (!request.hostNames.contains(extra))
            request.hostNames.append(extra);
    }
    if (Status generated = hub::generateDevCertificate(request, certificatePath, keyPath); !generated)
        return fail(name, generated.error().message);
    auto identity = hub::TlsIdentity::load(certificatePath, keyPath);
    if (!identity)
        return fail(name, identity.error().message);
    printLine(QStringLiteral("Development certificate for %1 written to %2").arg(request.hostNames.join(QStringLiteral(", ")), certificatePath));
    printLine(QStringLiteral("pin: %1").arg(identity->pin));
    return kExitOk;
}

int serve(const QStringList &arguments)
{
    const QString name = QStringLiteral("hub serve");
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Run the hub."));
    parser.addHelpOption();
    const QCommandLineOption listen(QStringLiteral("listen"), QStringLiteral("Address and port (default 0.0.0.0:7443)."),
                                    QStringLiteral("HOST:PORT"), QStringLiteral("0.0.0.0:7443"));
    const QCommandLineOption cert(QStringLiteral("cert"), QStringLiteral("PEM certificate chain (default <data>/tls/cert.pem)."),
                                  QStringLiteral("FILE"));
    const QCommandLineOption key(QStringLiteral("key"), QStringLiteral("PEM private key (default <data>/tls/key.pem)."),
                                 QStringLiteral("FILE"));
    const QCommandLineOption publicUrl(QStringLiteral("public-url"),
                                       QStringLiteral("The URL daemons dial, put into bundles (default wss://<listen host>:<port>)."),
                                       QStringLiteral("URL"));
    parser.addOptions({kDataOption, listen, cert, key, publicUrl});
    if (!parser.parse(arguments))
        return fail(name, parser.errorText(), kExitUsage);
    if (parser.isSet(QStringLiteral("help"))) {
        printLine(parser.helpText());
        return kExitOk;
    }
    auto address = parseListen(parser.value(listen));
    if (!address)
        return fail(name, address.error().message, kExitUsage);
    hub::HubOptions options;
    options.dataDir = parser.isSet(kDataOption) ? parser.value(kDataOption) : hub::defaultHubDataDir();
    options.listenAddress = address->first;
    options.port = address->second;
    options.certificatePath = parser.value(cert);
    options.keyPath = parser.value(key);
    if (parser.isSet(publicUrl)) {
        options.publicUrl = QUrl(parser.value(publicUrl), QUrl::StrictMode);
        if (auto check = net::checkHubUrl(options.publicUrl, false); !check)
            return fail(name, check.error().message, kExitUsage);
    }

    // Nothing the hub writes (database, tokens, keys) is for other users.
    ::umask(0077);
    auto hub = hub::Hub::start(options);
    if (!hub)
        return fail(name, hub.error().message);
    util::UnixSignalWatcher signalWatcher({SIGTERM, SIGINT});
    QObject::connect(&signalWatcher, &util::UnixSignalWatcher::received, qApp, [](int number) {
        qCInfo(lcHub) << "stopping on signal" << number;
        QCoreApplication::quit();
    });
    return QCoreApplication::exec();
}

} // namespace

int runHubCommand(const QStringList &arguments)
{
    const QString subcommand = arguments.value(1);
    const QStringList rest = QStringList{QStringLiteral("cloop hub ") + subcommand} + arguments.mid(2);
    if (subcommand == QLatin1String("tls-init"))
        return tlsInit(rest);
    if (subcommand == QLatin1String("serve"))
        return serve(rest);
    return fail(QStringLiteral("hub"),
                subcommand.isEmpty() ? QStringLiteral("expected a subcommand: tls-init, serve")
                                     : QStringLiteral("unknown subcommand \"%1\" (expected tls-init or serve)").arg(subcommand),
                kExitUsage);
}

} // namespace cloop::cli
