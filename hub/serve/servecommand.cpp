#include "hub/serve/servecommand.h"

#include "common/logging.h"
#include "common/net/hubtls.h"
#include "common/protocol/agentcapabilities.h"
#include "common/util/bytesize.h"
#include "common/util/commandline.h"
#include "common/util/duration.h"
#include "common/util/unixsignalwatcher.h"
#include "hub/hub.h"
#include "hub/localaccess.h"
#include "hub/tls/devcertificate.h"

#include <QCoreApplication>
#include <QFile>
#include <QFileInfo>

#include <csignal>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

namespace cloop::hub {

namespace {

using util::kExitUsage;

Error usage(const QString &message)
{
    return Error::make(QStringLiteral("usage"), message);
}

// "HOST:PORT", "[v6]:PORT", ":PORT" or "PORT".
Result<std::pair<QHostAddress, quint16>> parseListen(const QString &text, const QString &option)
{
    QString host;
    QString port = text;
    if (text.startsWith(QLatin1Char('['))) {
        const int close = text.indexOf(QLatin1String("]:"));
        if (close < 0)
            return usage(QStringLiteral("%1 \"%2\" is not [ADDRESS]:PORT").arg(option, text));
        host = text.mid(1, close - 1);
        port = text.mid(close + 2);
    } else if (const int colon = text.lastIndexOf(QLatin1Char(':')); colon >= 0) {
        host = text.left(colon);
        port = text.mid(colon + 1);
    }
    bool ok = false;
    const uint portNumber = port.toUInt(&ok);
    // "localhost" alone is a host without its port, not a bad port.
    if (!ok && host.isEmpty() && !text.startsWith(QLatin1Char('[')))
        return usage(
            QStringLiteral("%1 \"%2\" is not HOST:PORT (for example 0.0.0.0:7443 or %2:7443)")
                .arg(option, text));
    if (!ok || portNumber > 65535)
        return usage(QStringLiteral("%1 \"%2\": the port must be 0-65535").arg(option, text));
    QHostAddress address(QHostAddress::Any);
    if (!host.isEmpty() && host != QLatin1String("*")) {
        if (host == QLatin1String("localhost"))
            address = QHostAddress(QHostAddress::LocalHost);
        else if (!address.setAddress(host))
            return usage(
                QStringLiteral("%1 \"%2\": \"%3\" is not an IP address").arg(option, text, host));
    }
    return std::make_pair(address, static_cast<quint16>(portNumber));
}

Result<std::chrono::milliseconds> duration(const util::CommandLine &commandLine,
    const QCommandLineOption &option, std::chrono::seconds least, const QString &example)
{
    const QString text = commandLine.value(option);
    auto parsed = util::parseDuration(text);
    if (!parsed || *parsed < least)
        return usage(
            QStringLiteral("--%1 \"%2\" is not a duration of %3 or more (e.g. %4)")
                .arg(option.names().constFirst(), text,
                    least.count() >= 60 ? QStringLiteral("a minute") : QStringLiteral("a second"),
                    example));
    return std::chrono::duration_cast<std::chrono::milliseconds>(*parsed);
}

Result<int> positiveCount(const util::CommandLine &commandLine, const QCommandLineOption &option)
{
    bool ok = false;
    const int value = commandLine.value(option).toInt(&ok);
    if (!ok || value < 1 || value > 1'000'000)
        return usage(QStringLiteral("--%1 \"%2\" is not a count from 1 to 1000000")
                         .arg(option.names().constFirst(), commandLine.value(option)));
    return value;
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

// Without it the hub still serves everything else: the operator reads why
// in the log, and `cloop executor list` shows the executor's state.
std::unique_ptr<OwnExecutor> startOwnExecutor(
    Hub &hub, const QString &dataDir, const OwnExecutor::Options &options)
{
    auto ownExecutor = std::make_unique<OwnExecutor>(hub.core(), dataDir, options);
    QObject::connect(ownExecutor.get(), &OwnExecutor::stopped, qApp, [](int exitCode) {
        qCWarning(lcHub).noquote()
            << QStringLiteral("the hub's own executor stopped (exit code %1); the hub goes "
                              "on without it")
                   .arg(exitCode);
    });
    if (Status started = ownExecutor->start(hub.localUrl(), hub.pin()); !started) {
        qCWarning(lcHub).noquote() << "the hub's own executor is off:" << started.error().message;
        return nullptr;
    }
    return ownExecutor;
}

} // namespace

QCommandLineOption dataDirOption()
{
    return QCommandLineOption(QStringLiteral("data"),
        QStringLiteral(
            "The hub's data folder (default ~/.cloop/hub; a service uses /var/lib/cloop)."),
        QStringLiteral("DIR"));
}

QString dataDirOf(const util::CommandLine &commandLine, const QCommandLineOption &data)
{
    return commandLine.isSet(data) ? commandLine.value(data) : defaultHubDataDir();
}

void giveToFolderOwner(const QString &dataDir, const QStringList &paths)
{
    const QFileInfo folder(dataDir);
    for (const QString &path : paths) {
        if (::chown(QFile::encodeName(path).constData(), folder.ownerId(), folder.groupId()) != 0)
            qCWarning(lcHub).noquote() << "cannot give" << path << "to the data folder's owner";
    }
}

ServeCommand::ServeCommand(QString name)
    : m_name(std::move(name))
    , m_data(dataDirOption())
    , m_listen(QStringLiteral("listen"), QStringLiteral("Address and port (default 0.0.0.0:7443)."),
          QStringLiteral("HOST:PORT"), QStringLiteral("0.0.0.0:7443"))
    , m_metricsListen(QStringLiteral("metrics-listen"),
          QStringLiteral("Where GET /metrics is served, in plain HTTP for Prometheus (default "
                         "127.0.0.1:9464; empty: none). Keep it off the internet."),
          QStringLiteral("HOST:PORT"), QStringLiteral("127.0.0.1:9464"))
    , m_cert(QStringLiteral("cert"),
          QStringLiteral("PEM certificate chain (default <data>/tls/cert.pem)."),
          QStringLiteral("FILE"))
    , m_key(QStringLiteral("key"), QStringLiteral("PEM private key (default <data>/tls/key.pem)."),
          QStringLiteral("FILE"))
    , m_publicUrl(QStringLiteral("public-url"),
          QStringLiteral(
              "The URL daemons dial, put into bundles (default wss://<listen host>:<port>)."),
          QStringLiteral("URL"))
    , m_requestTtl(QStringLiteral("request-ttl"),
          QStringLiteral("How long a binding request waits for a decision (default 7d)."),
          QStringLiteral("DURATION"), QStringLiteral("7d"))
    , m_lostAfter(QStringLiteral("lost-after"),
          QStringLiteral(
              "How long an executor may stay away before its runs are lost (default 45s)."),
          QStringLiteral("DURATION"), QStringLiteral("45s"))
    , m_trafficStep(QStringLiteral("traffic-step"),
          QStringLiteral(
              "How often each forwarder's relayed bytes are sampled for the dashboard's "
              "traffic graphs, which show the last 120 steps (default 5s: ten minutes)."),
          QStringLiteral("DURATION"), QStringLiteral("5s"))
    , m_memberLease(QStringLiteral("member-lease"),
          QStringLiteral("How long this hub counts as a live member of its cluster without "
                         "renewing (default 15s; renewed every third of it)."),
          QStringLiteral("DURATION"), QStringLiteral("15s"))
    , m_peerListen(QStringLiteral("peer-listen"),
          QStringLiteral("Where the other members of a cluster (hubs on the same PostgreSQL "
                         "database) reach this one, over mutual TLS with each member's key "
                         "pinned in the database (default 0.0.0.0:7444)."),
          QStringLiteral("HOST:PORT"), QStringLiteral("0.0.0.0:7444"))
    , m_peerUrl(QStringLiteral("peer-url"),
          QStringLiteral("The URL the other members dial (default wss://<public host>:<peer "
                         "port>); its host must be in this hub's certificate."),
          QStringLiteral("URL"))
    , m_clusterPoll(QStringLiteral("cluster-poll"),
          QStringLiteral("How often a cluster member reads the others' events when no "
                         "notification woke it (default 250ms)."),
          QStringLiteral("DURATION"), QStringLiteral("250ms"))
    , m_ownExecutor(QStringLiteral("executor"),
          QStringLiteral("Also run projects' runs here, in sandboxes, as executor \"hub\"."))
    , m_ownExecutorMax(QStringLiteral("executor-max-concurrent"),
          QStringLiteral(
              "How many runs the hub's executor takes at once (default 0: the number of CPUs)."),
          QStringLiteral("N"), QStringLiteral("0"))
    , m_maxUnauthenticated(QStringLiteral("max-unauthenticated"),
          QStringLiteral("Connections that have not proved who they are, in all (default 1024, "
                         "and at most a quarter of the open-files limit). When full, a newcomer "
                         "takes the place of the oldest of the address holding the most."),
          QStringLiteral("N"), QStringLiteral("1024"))
    , m_maxPerSource(QStringLiteral("max-unauthenticated-per-source"),
          QStringLiteral("The same, from one IPv4 address or IPv6 /64 (default 128)."),
          QStringLiteral("N"), QStringLiteral("128"))
    , m_connectionRate(QStringLiteral("connection-rate"),
          QStringLiteral("New connections per second one address may open, in bursts of four "
                         "times that (default 128)."),
          QStringLiteral("N"), QStringLiteral("128"))
    , m_preAuthTimeout(QStringLiteral("preauth-timeout"),
          QStringLiteral("How long a connection may take to finish its TLS handshake, to send a "
                         "request head, or to say hello on a daemon endpoint (default 10s)."),
          QStringLiteral("DURATION"), QStringLiteral("10s"))
    , m_runLogCap(QStringLiteral("run-log-cap"),
          QStringLiteral("What one run's log may take on disk; past it the oldest output "
                         "is dropped and the log says how much (default 64MiB)."),
          QStringLiteral("SIZE"), QStringLiteral("64MiB"))
    , m_runLogBudget(QStringLiteral("run-log-budget"),
          QStringLiteral("What all runs' logs may take on disk; past it the oldest "
                         "finished runs' logs are trimmed first (default 4GiB)."),
          QStringLiteral("SIZE"), QStringLiteral("4GiB"))
    , m_relayThreads(QStringLiteral("relay-threads"),
          QStringLiteral("Threads that relay device streams, away from the API and the database "
                         "(default auto: one per core; 0: streams go on the daemons' tunnels, "
                         "through the main thread, as with daemons before protocol 32)."),
          QStringLiteral("N"), QStringLiteral("auto"))
{ }

void ServeCommand::addOptions(util::CommandLine &commandLine) const
{
    commandLine.addOptions(m_database.all());
    commandLine.addOptions({ m_data, m_listen, m_metricsListen, m_cert, m_key, m_publicUrl,
        m_requestTtl, m_lostAfter, m_trafficStep, m_memberLease, m_peerListen, m_peerUrl,
        m_clusterPoll, m_ownExecutor, m_ownExecutorMax, m_maxUnauthenticated, m_maxPerSource,
        m_connectionRate, m_preAuthTimeout, m_runLogCap, m_runLogBudget, m_relayThreads });
}

int ServeCommand::run(const QStringList &arguments)
{
    util::CommandLine commandLine(m_name, QStringLiteral("Run the hub."));
    addOptions(commandLine);
    if (auto done = commandLine.parse(arguments, false))
        return *done;
    auto chosen = settings(commandLine);
    if (!chosen)
        return commandLine.usageError(chosen.error().message);
    return serve(*chosen);
}

Result<HubOptions> ServeCommand::hubOptions(const util::CommandLine &commandLine) const
{
    auto address = parseListen(commandLine.value(m_listen), QStringLiteral("--listen"));
    if (!address)
        return address.error();
    std::optional<HubOptions::MetricsListen> metrics;
    if (const QString text = commandLine.value(m_metricsListen); !text.isEmpty()) {
        auto metricsAddress = parseListen(text, QStringLiteral("--metrics-listen"));
        if (!metricsAddress)
            return metricsAddress.error();
        metrics = HubOptions::MetricsListen { metricsAddress->first, metricsAddress->second };
    }
    HubOptions options;
    options.dataDir = commandLine.isSet(m_data) ? commandLine.value(m_data) : defaultHubDataDir();
    auto postgres = m_database.postgres(commandLine);
    if (!postgres)
        return postgres.error();
    options.postgres = *postgres;
    options.listenAddress = address->first;
    options.port = address->second;
    options.metrics = metrics;
    options.certificatePath = commandLine.value(m_cert);
    options.keyPath = commandLine.value(m_key);
    auto lifetime
        = duration(commandLine, m_requestTtl, std::chrono::seconds(60), QStringLiteral("7d"));
    if (!lifetime)
        return lifetime.error();
    options.requestLifetime = std::chrono::duration_cast<std::chrono::seconds>(*lifetime);
    auto grace = duration(commandLine, m_lostAfter, std::chrono::seconds(1), QStringLiteral("45s"));
    if (!grace)
        return grace.error();
    options.runGrace = *grace;
    auto trafficStep
        = duration(commandLine, m_trafficStep, std::chrono::seconds(1), QStringLiteral("5s"));
    if (!trafficStep)
        return trafficStep.error();
    options.trafficStep = *trafficStep;
    auto lease
        = duration(commandLine, m_memberLease, std::chrono::seconds(1), QStringLiteral("15s"));
    if (!lease)
        return lease.error();
    options.memberLease = *lease;
    if (Status cluster = clusterOptions(commandLine, options); !cluster)
        return cluster.error();
    if (const QString threads = commandLine.value(m_relayThreads); threads != u"auto") {
        bool ok = false;
        options.relayThreads = threads.toInt(&ok);
        if (!ok || *options.relayThreads < 0 || *options.relayThreads > 256)
            return usage(
                QStringLiteral("--relay-threads \"%1\" is not auto or a count from 0 to 256")
                    .arg(threads));
    }
    for (const auto &[option, limit] : { std::pair { &m_runLogCap, &options.runLogs.perRun },
             std::pair { &m_runLogBudget, &options.runLogs.total } }) {
        auto size = util::parseByteSize(commandLine.value(*option));
        if (!size)
            return usage(
                QStringLiteral("--%1: %2").arg(option->names().first(), size.error().message));
        *limit = *size;
    }
    if (Status limits = options.runLogs.check(); !limits)
        return usage(
            QStringLiteral("--run-log-cap, --run-log-budget: %1").arg(limits.error().message));
    if (Status edge = edgeOptions(commandLine, options); !edge)
        return edge.error();
    if (commandLine.isSet(m_publicUrl)) {
        options.publicUrl = QUrl(commandLine.value(m_publicUrl), QUrl::StrictMode);
        if (auto check = net::checkHubUrl(options.publicUrl, false); !check)
            return check.error();
    }
    return options;
}

Status ServeCommand::clusterOptions(const util::CommandLine &commandLine, HubOptions &options) const
{
    auto peer = parseListen(commandLine.value(m_peerListen), QStringLiteral("--peer-listen"));
    if (!peer)
        return peer.error();
    options.peerListen = HubOptions::PeerListen { peer->first, peer->second };
    if (commandLine.isSet(m_peerUrl)) {
        options.peerUrl = QUrl(commandLine.value(m_peerUrl), QUrl::StrictMode);
        if (!options.peerUrl.isValid() || options.peerUrl.scheme() != QLatin1String("wss")
            || options.peerUrl.host().isEmpty() || options.peerUrl.port() <= 0)
            return usage(QStringLiteral("--peer-url: give wss://HOST:PORT, such as "
                                        "wss://hub-a.example:7444"));
    }
    // A poll is counted in milliseconds ("250ms") or as any duration ("1s").
    const QString poll = commandLine.value(m_clusterPoll);
    std::optional<std::chrono::milliseconds> interval;
    if (poll.endsWith(QLatin1String("ms"))) {
        bool isNumber = false;
        const int ms = poll.chopped(2).toInt(&isNumber);
        if (isNumber)
            interval = std::chrono::milliseconds(ms);
    } else if (auto parsed = util::parseDuration(poll)) {
        interval = *parsed;
    }
    if (!interval || *interval < std::chrono::milliseconds(10)
        || *interval > std::chrono::minutes(1))
        return usage(QStringLiteral("--cluster-poll \"%1\" is not between 10ms and 1m (e.g. "
                                    "250ms)")
                         .arg(poll));
    options.busPoll = *interval;
    return {};
}

Status ServeCommand::edgeOptions(const util::CommandLine &commandLine, HubOptions &options) const
{
    for (const QCommandLineOption *count :
        { &m_maxUnauthenticated, &m_maxPerSource, &m_connectionRate }) {
        if (auto checked = positiveCount(commandLine, *count); !checked)
            return checked.error();
    }
    auto &preAuth = options.edge.preAuth;
    preAuth.maxTotal = commandLine.value(m_maxUnauthenticated).toInt();
    preAuth.maxPerSource = commandLine.value(m_maxPerSource).toInt();
    preAuth.admitPerSecond = commandLine.value(m_connectionRate).toInt();
    preAuth.admitBurst = 4 * commandLine.value(m_connectionRate).toInt();
    auto strangerTime
        = duration(commandLine, m_preAuthTimeout, std::chrono::seconds(1), QStringLiteral("10s"));
    if (!strangerTime)
        return strangerTime.error();
    options.edge.handshakeTimeout = *strangerTime;
    options.edge.firstRequestTimeout = *strangerTime;
    options.edge.headTimeout = *strangerTime;
    options.gateway.authenticationTimeout = *strangerTime;
    return {};
}

Result<ServeSettings> ServeCommand::settings(const util::CommandLine &commandLine) const
{
    auto hub = hubOptions(commandLine);
    if (!hub)
        return hub.error();
    ServeSettings chosen { std::move(*hub), std::nullopt };
    if (commandLine.isSet(m_ownExecutorMax) && !commandLine.isSet(m_ownExecutor))
        return usage(QStringLiteral("--executor-max-concurrent needs --executor"));
    if (commandLine.isSet(m_ownExecutor)) {
        auto ceiling = protocol::AgentCapabilities::parseMaxConcurrent(
            commandLine.value(m_ownExecutorMax), QStringLiteral("--executor-max-concurrent"));
        if (!ceiling)
            return ceiling.error();
        OwnExecutor::Options executor;
        executor.maxConcurrent = *ceiling;
        chosen.ownExecutor = executor;
    }
    // Last, after every option was checked: a missing or unreadable TLS
    // identity is the configuration's fault (exit 2), found before anything starts.
    const HubOptions &options = chosen.hub;
    if (auto identity = TlsIdentity::load(options.certificatePath.isEmpty()
                ? Hub::defaultCertificatePath(options.dataDir)
                : options.certificatePath,
            options.keyPath.isEmpty() ? Hub::defaultKeyPath(options.dataDir) : options.keyPath);
        !identity)
        return identity.error();
    return chosen;
}

int ServeCommand::serve(const ServeSettings &settings) const
{
    // Nothing the hub writes (database, tokens, keys) is for other users.
    ::umask(0077);
    raiseOpenFilesLimit();
    auto hub = Hub::start(settings.hub);
    if (!hub) {
        std::fprintf(stderr, "%s: %s\n", qPrintable(m_name), qPrintable(hub.error().message));
        return util::kExitFailed;
    }
    // Declared after the hub: it leaves while the hub can still hear it go.
    std::unique_ptr<OwnExecutor> ownExecutor;
    if (settings.ownExecutor)
        ownExecutor = startOwnExecutor(**hub, settings.hub.dataDir, *settings.ownExecutor);
    util::UnixSignalWatcher signalWatcher({ SIGTERM, SIGINT, SIGHUP });
    QObject::connect(&signalWatcher, &util::UnixSignalWatcher::received, qApp, [&hub](int number) {
        if (number == SIGHUP) {
            if (Status reloaded = (*hub)->reloadCertificate(); !reloaded)
                qCWarning(lcHub).noquote()
                    << "SIGHUP: certificate not reloaded:" << reloaded.error().message;
            return;
        }
        qCInfo(lcHub) << "stopping on signal" << number;
        QCoreApplication::quit();
    });
    const int code = QCoreApplication::exec();
    (*hub)->closeSessions();
    return code;
}

} // namespace cloop::hub
