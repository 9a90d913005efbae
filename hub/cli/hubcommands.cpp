#include "hub/cli/hubcommands.h"

#include "common/logging.h"
#include "common/net/hubtls.h"
#include "common/net/spkipin.h"
#include "common/protocol/agentcapabilities.h"
#include "common/util/bytesize.h"
#include "common/util/duration.h"
#include "common/util/unixsignalwatcher.h"
#include "hub/cli/command.h"
#include "hub/cli/output.h"
#include "hub/hub.h"
#include "hub/localaccess.h"
#include "hub/tls/devcertificate.h"

#include <QCoreApplication>
#include <QFileInfo>
#include <QSslCertificate>

#include <csignal>
#include <sys/resource.h>
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
            return Error::make(QStringLiteral("usage"),
                QStringLiteral("--listen \"%1\" is not [ADDRESS]:PORT").arg(text));
        host = text.mid(1, close - 1);
        port = text.mid(close + 2);
    } else if (const int colon = text.lastIndexOf(QLatin1Char(':')); colon >= 0) {
        host = text.left(colon);
        port = text.mid(colon + 1);
    }
    bool ok = false;
    const uint portNumber = port.toUInt(&ok);
    if (!ok || portNumber > 65535)
        return Error::make(QStringLiteral("usage"),
            QStringLiteral("--listen \"%1\": the port must be 0-65535").arg(text));
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
    Command command(QStringLiteral("hub tls-init"),
        QStringLiteral(
            "Create a self-signed development certificate for the hub and print its key pin.\n"
            "Daemons trust it through the pin that travels in every bundle."),
        Command::Endpoint::None);
    const QCommandLineOption host(QStringLiteral("host"),
        QStringLiteral("Another DNS name or IP address daemons use to reach the hub (repeatable)."),
        QStringLiteral("NAME"));
    const QCommandLineOption force(QStringLiteral("force"),
        QStringLiteral("Replace an existing certificate (daemons pinned to the old key will refuse "
                       "the new one)."));
    command.addOptions({ kDataOption, host, force });
    if (auto done = command.parse(arguments))
        return *done;
    const QString &name = command.name();
    const QString dataDir
        = command.isSet(kDataOption) ? command.value(kDataOption) : hub::defaultHubDataDir();
    const QString certificatePath = hub::Hub::defaultCertificatePath(dataDir);
    const QString keyPath = hub::Hub::defaultKeyPath(dataDir);
    if (QFileInfo::exists(certificatePath) && !command.isSet(force)) {
        auto existing = hub::TlsIdentity::load(certificatePath, keyPath);
        if (existing) {
            printLine(
                QStringLiteral("A certificate already exists at %1 (use --force to replace it).")
                    .arg(certificatePath));
            printLine(QStringLiteral("pin: %1").arg(existing->pin));
            return kExitOk;
        }
        return fail(name,
            QStringLiteral("%1 exists but cannot be used (%2); use --force to replace it")
                .arg(certificatePath, existing.error().message));
    }
    hub::DevCertificateRequest request;
    request.hostNames = hub::defaultDevHostNames();
    for (const QString &extra : command.values(host)) {
        if (!request.hostNames.contains(extra))
            request.hostNames.append(extra);
    }
    if (Status generated = hub::generateDevCertificate(request, certificatePath, keyPath);
        !generated)
        return fail(name, generated.error().message);
    auto identity = hub::TlsIdentity::load(certificatePath, keyPath);
    if (!identity)
        return fail(name, identity.error().message);
    printLine(QStringLiteral("Development certificate for %1 written to %2")
                  .arg(request.hostNames.join(QStringLiteral(", ")), certificatePath));
    printLine(QStringLiteral("pin: %1").arg(identity->pin));
    return kExitOk;
}

// A hub holds a descriptor per daemon session and per stream: the soft
// limit (often 1024) would cap it far below what the machine allows.
void raiseOpenFilesLimit()
{
    rlimit limit {};
    if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= limit.rlim_max)
        return;
    const rlim_t before = limit.rlim_cur;
    limit.rlim_cur = limit.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &limit) == 0)
        qCInfo(lcHub).noquote() << QStringLiteral("open-files limit raised from %1 to %2")
                                       .arg(before)
                                       .arg(limit.rlim_max);
    else
        qCWarning(lcHub).noquote()
            << QStringLiteral("cannot raise the open-files limit above %1").arg(before);
}

Result<int> positiveCount(const Command &command, const QCommandLineOption &option)
{
    bool ok = false;
    const int value = command.value(option).toInt(&ok);
    if (!ok || value < 1 || value > 1'000'000)
        return Error::make(QStringLiteral("usage"),
            QStringLiteral("--%1 \"%2\" is not a count from 1 to 1000000")
                .arg(option.names().constFirst(), command.value(option)));
    return value;
}

int serve(const QStringList &arguments)
{
    Command command(
        QStringLiteral("hub serve"), QStringLiteral("Run the hub."), Command::Endpoint::None);
    const QCommandLineOption listen(QStringLiteral("listen"),
        QStringLiteral("Address and port (default 0.0.0.0:7443)."), QStringLiteral("HOST:PORT"),
        QStringLiteral("0.0.0.0:7443"));
    const QCommandLineOption cert(QStringLiteral("cert"),
        QStringLiteral("PEM certificate chain (default <data>/tls/cert.pem)."),
        QStringLiteral("FILE"));
    const QCommandLineOption key(QStringLiteral("key"),
        QStringLiteral("PEM private key (default <data>/tls/key.pem)."), QStringLiteral("FILE"));
    const QCommandLineOption publicUrl(QStringLiteral("public-url"),
        QStringLiteral(
            "The URL daemons dial, put into bundles (default wss://<listen host>:<port>)."),
        QStringLiteral("URL"));
    const QCommandLineOption requestTtl(QStringLiteral("request-ttl"),
        QStringLiteral("How long a binding request waits for a decision (default 7d)."),
        QStringLiteral("DURATION"), QStringLiteral("7d"));
    const QCommandLineOption lostAfter(QStringLiteral("lost-after"),
        QStringLiteral(
            "How long an executor may stay away before its runs are lost (default 45s)."),
        QStringLiteral("DURATION"), QStringLiteral("45s"));
    const QCommandLineOption ownExecutor(QStringLiteral("executor"),
        QStringLiteral("Also run projects' runs here, in sandboxes, as executor \"hub\"."));
    const QCommandLineOption ownExecutorMax(QStringLiteral("executor-max-concurrent"),
        QStringLiteral("How many runs the hub's executor takes at once (default 0: the "
                       "number of CPUs)."),
        QStringLiteral("N"), QStringLiteral("0"));
    const QCommandLineOption maxUnauthenticated(QStringLiteral("max-unauthenticated"),
        QStringLiteral("Connections that have not proved who they are, in all (default 1024, "
                       "and at most a quarter of the open-files limit). When full, a newcomer "
                       "takes the place of the oldest of the address holding the most."),
        QStringLiteral("N"), QStringLiteral("1024"));
    const QCommandLineOption maxPerSource(QStringLiteral("max-unauthenticated-per-source"),
        QStringLiteral("The same, from one IPv4 address or IPv6 /64 (default 128)."),
        QStringLiteral("N"), QStringLiteral("128"));
    const QCommandLineOption connectionRate(QStringLiteral("connection-rate"),
        QStringLiteral("New connections per second one address may open, in bursts of four "
                       "times that (default 128)."),
        QStringLiteral("N"), QStringLiteral("128"));
    const QCommandLineOption preAuthTimeout(QStringLiteral("preauth-timeout"),
        QStringLiteral("How long a connection may take to finish its TLS handshake, to send a "
                       "request head, or to say hello on a daemon endpoint (default 10s)."),
        QStringLiteral("DURATION"), QStringLiteral("10s"));
    const QCommandLineOption runLogCap(QStringLiteral("run-log-cap"),
        QStringLiteral("What one run's log may take on disk; past it the oldest output "
                       "is dropped and the log says how much (default 64MiB)."),
        QStringLiteral("SIZE"), QStringLiteral("64MiB"));
    const QCommandLineOption runLogBudget(QStringLiteral("run-log-budget"),
        QStringLiteral("What all runs' logs may take on disk; past it the oldest "
                       "finished runs' logs are trimmed first (default 4GiB)."),
        QStringLiteral("SIZE"), QStringLiteral("4GiB"));
    command.addOptions({ kDataOption, listen, cert, key, publicUrl, requestTtl, lostAfter,
        ownExecutor, ownExecutorMax, maxUnauthenticated, maxPerSource, connectionRate,
        preAuthTimeout, runLogCap, runLogBudget });
    if (auto done = command.parse(arguments))
        return *done;
    const QString &name = command.name();
    auto address = parseListen(command.value(listen));
    if (!address)
        return fail(name, address.error().message, kExitUsage);
    hub::HubOptions options;
    options.dataDir
        = command.isSet(kDataOption) ? command.value(kDataOption) : hub::defaultHubDataDir();
    options.listenAddress = address->first;
    options.port = address->second;
    options.certificatePath = command.value(cert);
    options.keyPath = command.value(key);
    auto lifetime = util::parseDuration(command.value(requestTtl));
    if (!lifetime || lifetime->count() < 60)
        return fail(name,
            QStringLiteral("--request-ttl \"%1\" is not a duration of a minute or more (e.g. 7d)")
                .arg(command.value(requestTtl)),
            kExitUsage);
    options.requestLifetime = *lifetime;
    auto grace = util::parseDuration(command.value(lostAfter));
    if (!grace || grace->count() < 1)
        return fail(name,
            QStringLiteral("--lost-after \"%1\" is not a duration of a second or more (e.g. 45s)")
                .arg(command.value(lostAfter)),
            kExitUsage);
    options.runGrace = std::chrono::duration_cast<std::chrono::milliseconds>(*grace);
    for (const auto &[option, limit] : { std::pair { &runLogCap, &options.runLogs.perRun },
             std::pair { &runLogBudget, &options.runLogs.total } }) {
        auto size = util::parseByteSize(command.value(*option));
        if (!size)
            return fail(name,
                QStringLiteral("--%1: %2").arg(option->names().first(), size.error().message),
                kExitUsage);
        *limit = *size;
    }
    if (Status limits = options.runLogs.check(); !limits)
        return fail(name,
            QStringLiteral("--run-log-cap, --run-log-budget: %1").arg(limits.error().message),
            kExitUsage);
    for (const QCommandLineOption *count :
        { &maxUnauthenticated, &maxPerSource, &connectionRate }) {
        if (auto checked = positiveCount(command, *count); !checked)
            return fail(name, checked.error().message, kExitUsage);
    }
    options.edge.preAuth.maxTotal = command.value(maxUnauthenticated).toInt();
    options.edge.preAuth.maxPerSource = command.value(maxPerSource).toInt();
    options.edge.preAuth.admitPerSecond = command.value(connectionRate).toInt();
    options.edge.preAuth.admitBurst = 4 * command.value(connectionRate).toInt();
    auto strangerTime = util::parseDuration(command.value(preAuthTimeout));
    if (!strangerTime || strangerTime->count() < 1)
        return fail(name,
            QStringLiteral(
                "--preauth-timeout \"%1\" is not a duration of a second or more (e.g. 10s)")
                .arg(command.value(preAuthTimeout)),
            kExitUsage);
    const auto preAuthMs = std::chrono::duration_cast<std::chrono::milliseconds>(*strangerTime);
    options.edge.handshakeTimeout = preAuthMs;
    options.edge.firstRequestTimeout = preAuthMs;
    options.edge.headTimeout = preAuthMs;
    options.gateway.authenticationTimeout = preAuthMs;
    if (command.isSet(publicUrl)) {
        options.publicUrl = QUrl(command.value(publicUrl), QUrl::StrictMode);
        if (auto check = net::checkHubUrl(options.publicUrl, false); !check)
            return fail(name, check.error().message, kExitUsage);
    }
    if (command.isSet(ownExecutorMax) && !command.isSet(ownExecutor))
        return fail(name, QStringLiteral("--executor-max-concurrent needs --executor"), kExitUsage);
    if (command.isSet(ownExecutor)) {
        auto ceiling = protocol::AgentCapabilities::parseMaxConcurrent(
            command.value(ownExecutorMax), QStringLiteral("--executor-max-concurrent"));
        if (!ceiling)
            return fail(name, ceiling.error().message, kExitUsage);
        hub::OwnExecutor::Options executor;
        executor.maxConcurrent = *ceiling;
        options.ownExecutor = executor;
    }

    // Nothing the hub writes (database, tokens, keys) is for other users.
    ::umask(0077);
    raiseOpenFilesLimit();
    auto hub = hub::Hub::start(options);
    if (!hub)
        return fail(name, hub.error().message);
    util::UnixSignalWatcher signalWatcher({ SIGTERM, SIGINT });
    QObject::connect(&signalWatcher, &util::UnixSignalWatcher::received, qApp, [](int number) {
        qCInfo(lcHub) << "stopping on signal" << number;
        QCoreApplication::quit();
    });
    return QCoreApplication::exec();
}

// What a person signing in for the first time compares with what their
// dashboard or `cloop login` shows.
int pin(const QStringList &arguments)
{
    Command command(QStringLiteral("hub pin"),
        QStringLiteral(
            "Print the key pin of the hub's TLS certificate, to compare with what a client shows\n"
            "on its first connection."),
        Command::Endpoint::None);
    const QCommandLineOption certificate(QStringLiteral("certificate"),
        QStringLiteral("The certificate file (default: the one in the data folder)."),
        QStringLiteral("FILE"));
    command.addOptions({ kDataOption, certificate });
    if (auto done = command.parse(arguments))
        return *done;
    const QString dataDir
        = command.isSet(kDataOption) ? command.value(kDataOption) : hub::defaultHubDataDir();
    const QString path = command.isSet(certificate) ? command.value(certificate)
                                                    : hub::Hub::defaultCertificatePath(dataDir);
    const QList<QSslCertificate> found = QSslCertificate::fromPath(path, QSsl::Pem);
    if (found.isEmpty())
        return fail(command.name(),
            QStringLiteral("no PEM certificate at %1 (create one with cloop hub tls-init)")
                .arg(path));
    printLine(net::PinSet::pinOf(found.first()));
    return kExitOk;
}

constexpr Subcommand kSubcommands[]
    = { { "tls-init", tlsInit }, { "serve", serve }, { "pin", pin } };

} // namespace

int runHubCommand(const QStringList &arguments)
{
    return runSubcommand(arguments, kSubcommands);
}

} // namespace cloop::cli
