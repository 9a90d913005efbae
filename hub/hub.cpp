#include "hub/hub.h"

#include "common/api/hubeventname.h"

#include "cloop/buildinfo.h"
#include "cloop/commit.h"
#include "common/logging.h"
#include "common/protocol/protocolversion.h"
#include "common/util/atomicfile.h"
#include "common/util/clock.h"
#include "hub/cluster/clustermembers.h"
#include "hub/cluster/directstreamdoor.h"
#include "hub/cluster/memberlease.h"
#include "hub/cluster/sessionholders.h"
#include "hub/domain/bindingservice.h"
#include "hub/domain/eventbus.h"
#include "hub/domain/executorservice.h"
#include "hub/domain/releasecatalog.h"
#include "hub/domain/runlifecycle.h"
#include "hub/domain/tokenservice.h"
#include "hub/hubcluster.h"
#include "hub/hubcore.h"
#include "hub/localaccess.h"
#include "hub/metrics/hubmetrics.h"
#include "hub/metrics/metricsendpoint.h"
#include "hub/relay/relaylegdoor.h"
#include "hub/relay/relaythreads.h"
#include "hub/server/adminapi.h"
#include "hub/server/devicestreams.h"
#include "hub/server/eventstreamendpoint.h"
#include "hub/server/forwarderstates.h"
#include "hub/server/forwardertraffic.h"
#include "hub/server/hubgateways.h"
#include "hub/server/hubhttpserver.h"
#include "hub/server/rundispatcher.h"
#include "hub/storage/apitokenstore.h"
#include "hub/storage/database.h"
#include "hub/storage/forwarderstore.h"
#include "hub/storage/memberstore.h"
#include "hub/storage/releasestore.h"
#include "hub/storage/runlogstore.h"
#include "hub/storage/runstore.h"
#include "hub/storage/sessionholderstore.h"
#include "hub/tls/devcertificate.h"
#include "hub/tls/hubkeys.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QHostInfo>
#include <QRandomGenerator>
#include <QSslConfiguration>

#include <sys/resource.h>
#include <sys/stat.h>

namespace cloop::hub {

namespace {

Status ensureDataDir(const QString &dataDir)
{
    QDir dir(dataDir);
    if (dir.exists())
        return {};
    if (!QDir().mkpath(dataDir))
        return Error::make(QStringLiteral("io_error"),
            QStringLiteral("cannot create the data folder %1").arg(dataDir), true);
    ::chmod(QFile::encodeName(dataDir).constData(), 0700);
    return {};
}

int openFilesLimit()
{
    rlimit limit {};
    if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY)
        return 0;
    return static_cast<int>(std::min<rlim_t>(limit.rlim_cur, 1 << 30));
}

QString hostForUrl(const QHostAddress &address)
{
    if (address.protocol() == QAbstractSocket::IPv6Protocol)
        return QLatin1Char('[') + address.toString() + QLatin1Char(']');
    return address.toString();
}

// The data folder exists and the TLS files default to their places in it.
Status completeDataPaths(HubOptions &options)
{
    if (Status dir = ensureDataDir(options.dataDir); !dir)
        return dir;
    if (options.certificatePath.isEmpty())
        options.certificatePath = Hub::defaultCertificatePath(options.dataDir);
    if (options.keyPath.isEmpty())
        options.keyPath = Hub::defaultKeyPath(options.dataDir);
    return {};
}

QSslConfiguration serverTls(const TlsIdentity &identity)
{
    QSslConfiguration tls = QSslConfiguration::defaultConfiguration();
    tls.setLocalCertificateChain(identity.chain);
    tls.setPrivateKey(identity.key);
    tls.setProtocol(QSsl::TlsV1_2OrLater);
    // Clients authenticate in the tunnel, not by certificate; so nothing is
    // verified against a CA list, which each connection would load whole.
    tls.setPeerVerifyMode(QSslSocket::VerifyNone);
    tls.setCaCertificates({});
    return tls;
}

// Unauthenticated connections never hold more than a quarter of the
// descriptors the process may open: the rest is for sessions, streams
// and the database.
void capByOpenFiles(edge::PreAuthPool::Limits &preAuth)
{
    const int descriptors = openFilesLimit();
    if (descriptors <= 0)
        return;
    const int share = std::max(16, descriptors / 4);
    if (preAuth.maxTotal <= share)
        return;
    qCInfo(lcHub).noquote() << QStringLiteral("at most %1 unauthenticated connections (a quarter "
                                              "of the open-files limit %2)")
                                   .arg(share)
                                   .arg(descriptors);
    preAuth.maxTotal = share;
    preAuth.maxPerSource = std::min(preAuth.maxPerSource, share);
}

} // namespace

// Expired bindings and requests are ended and audited this often; dispatch
// never sees them either way, since it asks for bindings valid at its time.
// An expired binding's device leaves its runs at the sweep, so the interval
// keeps that well within a second of the expiry (an indexed query each time).
constexpr int kSweepIntervalMs = 250;

Hub::Hub()
    : m_clock(std::make_unique<Clock>())
{
    m_sweepTimer.setInterval(kSweepIntervalMs);
    connect(&m_sweepTimer, &QTimer::timeout, this, &Hub::sweep);
}

void Hub::closeEverySession()
{
    if (!m_gateways)
        return;
    const QString reason = QStringLiteral("the hub is stopping");
    const auto returnWithin = returnSpreadFor(
        m_gateways->forwarders().sessionCount() + m_gateways->executors().sessionCount());
    m_gateways->forwarders().closeEverySession(reason, returnWithin);
    m_gateways->executors().closeEverySession(reason, returnWithin);
}

void Hub::closeSessions()
{
    // In one pass, then torn down in another: writing ten thousand close
    // frames between freeing sessions had the allocator sift through the
    // freed ones for every frame (seconds at that size), and the frames
    // still queued when a socket went were lost: half the daemons saw a
    // reset instead of the reason.
    closeEverySession();
    // What closing queued (the sockets' flushes, their disconnections)
    // runs now, once for all: left queued, each socket's teardown would
    // search the whole queue for its own.
    QCoreApplication::sendPostedEvents();
}

Hub::~Hub()
{
    // Told why even when nobody called closeSessions() (a hub in a test).
    closeEverySession();
    // The server and the streams go before what they use.
    m_server.reset();
    m_api.reset();
    m_cluster.reset();
    m_sessionHolders.reset();
    m_eventStream.reset();
    m_dispatcher.reset();
    m_traffic.reset();
    m_deviceStreams.reset();
    m_gateways.reset();
    // What still runs on the relay threads ends there, as lost.
    m_relayDoor.reset();
    m_relayThreads.reset();
}

void Hub::sweep()
{
    if (Status swept = m_core->bindings().expireDue(); !swept)
        if (m_sweepFailures.admit())
            qCWarning(lcHub).noquote() << "expiry sweep failed:" << swept.error().message;
}

void Hub::connectEvents()
{
    EventBus &bus = m_core->events();
    const auto announce = [this, &bus](DaemonGateway &gateway, protocol::PeerRole role) {
        const QString noun = protocol::roleName(role);
        // The holder's record first: a member that reads the event finds it.
        connect(&gateway, &DaemonGateway::daemonConnected, &bus,
            [this, &bus, noun, role](qint64 id, const QString &name) {
                if (m_sessionHolders)
                    m_sessionHolders->claim(role, id);
                bus.publish(HubEvent { noun + QLatin1String(".connected"),
                    { { QStringLiteral("id"), id }, { QStringLiteral("name"), name },
                        { QStringLiteral("hub_member"), hubMemberName(m_publicUrl) } },
                    std::nullopt });
            });
        connect(&gateway, &DaemonGateway::daemonDisconnected, &bus,
            [this, &bus, noun, role](qint64 id, const QString &reason) {
                if (m_sessionHolders)
                    m_sessionHolders->release(role, id);
                bus.publish(HubEvent { noun + QLatin1String(".disconnected"),
                    { { QStringLiteral("id"), id }, { QStringLiteral("reason"), reason },
                        { QStringLiteral("hub_member"), hubMemberName(m_publicUrl) } },
                    std::nullopt });
            });
        // A daemon has one tunnel: when it connected to another member later
        // than to this one (a link this member has not yet seen die), the
        // session here is a leftover.
        connect(&bus, &EventBus::published, &gateway,
            [this, &gateway, noun, role](const HubEvent &event) {
                if (!event.isFromAnotherMember())
                    return;
                if (m_sessionHolders
                    && (event.name == noun + QLatin1String(".connected")
                        || event.name == noun + QLatin1String(".disconnected")))
                    m_sessionHolders->invalidateView();
                if (event.name != noun + QLatin1String(".connected"))
                    return;
                const qint64 id = event.data.value(QLatin1String("id")).toInteger();
                if (!gateway.isConnected(id) || !m_sessionHolders)
                    return;
                const auto holder = m_sessionHolders->currentHolderOf(role, id);
                if (!holder || *holder == m_sessionHolders->memberName())
                    return;
                qCInfo(lcHubCluster).noquote()
                    << noun << id << "connected to member" << *holder
                    << "since; its session here is a leftover and is closed";
                gateway.drop(id,
                    protocol::ErrorMessage { QStringLiteral("moved"),
                        QStringLiteral("this %1 connected to hub member %2 since")
                            .arg(noun, *holder),
                        false });
            });
        // A revocation ends the live session at once, with a permanent refusal.
        connect(&bus, &EventBus::published, &gateway, [&gateway, noun](const HubEvent &event) {
            if (event.name != noun + QLatin1String(".revoked"))
                return;
            const QString by = event.data.value(QLatin1String("by")).toString();
            const QString reason = event.data.value(QLatin1String("reason")).toString();
            gateway.drop(event.data.value(QLatin1String("id")).toInteger(),
                protocol::ErrorMessage { QStringLiteral("revoked"),
                    QStringLiteral("this %1 was revoked by %2%3")
                        .arg(
                            noun, by, reason.isEmpty() ? QString() : QStringLiteral(": ") + reason),
                    true });
        });
    };
    announce(m_gateways->forwarders(), protocol::PeerRole::Forwarder);
    // A USB device plugged or unplugged at a connected forwarder.
    connect(&m_gateways->forwarderStates(), &ForwarderStates::usbPresenceChanged, &bus,
        [&bus](qint64 id, const QString &busId) {
            bus.publish(HubEvent { QString(api::hubeventname::kForwarderDevice),
                { { QStringLiteral("id"), id }, { QStringLiteral("usb_busid"), busId } },
                std::nullopt });
        });
    announce(m_gateways->executors(), protocol::PeerRole::Executor);
    // What a connected agent can do changed (it installed a harness).
    connect(&m_gateways->executors(), &DaemonGateway::controlReceived, this,
        [this](qint64 id, const protocol::ControlMessage &message) {
            const auto *report = std::get_if<protocol::CapabilitiesReport>(&message);
            if (!report)
                return;
            if (Status kept = m_core->executors().recordCapabilities(id, report->capabilities);
                !kept)
                qCWarning(lcHub).noquote()
                    << "executor" << id << "reported capabilities:" << kept.error().message;
        });
}

QString Hub::defaultCertificatePath(const QString &dataDir)
{
    return dataDir + QLatin1String("/tls/cert.pem");
}

QString Hub::defaultKeyPath(const QString &dataDir)
{
    return dataDir + QLatin1String("/tls/key.pem");
}

QString Hub::releasesPath(const QString &dataDir)
{
    return dataDir + QLatin1String("/releases");
}

QString Hub::memberKeyPath(const QString &dataDir)
{
    return dataDir + QLatin1String("/member.key");
}

QString Hub::databasePath(const QString &dataDir)
{
    return dataDir + QLatin1String("/hub.db");
}

Result<std::unique_ptr<Hub>> Hub::start(HubOptions options)
{
    if (Status paths = completeDataPaths(options); !paths)
        return paths.error();
    auto identity = TlsIdentity::load(options.certificatePath, options.keyPath);
    if (!identity)
        return identity.error();

    std::unique_ptr<Hub> hub(new Hub);
    hub->m_pin = identity->pin;
    hub->m_tls = *identity;
    hub->m_certificatePath = options.certificatePath;
    hub->m_keyPath = options.keyPath;
    hub->m_dataDir = options.dataDir;
    if (Status opened = hub->openServices(options); !opened)
        return opened.error();
    if (Status listening = hub->startServer(options, serverTls(*identity)); !listening)
        return listening.error();
    hub->m_publicUrl = hub->publicUrlFor(options);
    hub->m_api->setIdentity(hub->identity());

    auto staged = HubKeys(options.certificatePath, options.keyPath).staged();
    if (!staged)
        qCWarning(lcHub).noquote() << staged.error().message << "- announcing the serving key only";
    hub->announcePins(HubKeys::pinsOf(*identity, staged ? *staged : std::nullopt));
    hub->startTraffic(options);
    if (Status metrics = hub->startMetrics(options); !metrics)
        return metrics.error();
    hub->m_localUrl = hub->localUrlFor(options);
    if (Status written = hub->writeLocalAccess(options); !written)
        return written.error();
    if (Status joined = hub->joinCluster(options); !joined)
        return joined.error();
    hub->sweep();
    hub->m_sweepTimer.start();
    qCInfo(lcHub).noquote() << "hub" << buildinfo::kVersion << "listening on"
                            << options.listenAddress.toString() + QLatin1Char(':')
            + QString::number(hub->m_port)
                            << "as" << hub->m_publicUrl.toString() << "key pin" << hub->m_pin;
    return hub;
}

Status Hub::joinCluster(const HubOptions &options)
{
    // The key names this data folder's hub across its restarts; a copy of
    // the folder started beside it would be the same member, and the
    // newer start takes the record over.
    const QString keyPath = memberKeyPath(options.dataDir);
    QFile keyFile(keyPath);
    QString key;
    if (keyFile.open(QIODevice::ReadOnly))
        key = QString::fromLatin1(keyFile.read(64)).trimmed();
    if (key.isEmpty()) {
        QByteArray bytes(16, Qt::Uninitialized);
        QRandomGenerator::system()->fillRange(
            reinterpret_cast<quint32 *>(bytes.data()), bytes.size() / 4);
        key = QString::fromLatin1(bytes.toHex());
        if (Status saved = util::writeFileAtomically(keyPath, key.toLatin1() + '\n', 0600); !saved)
            return saved.error();
    }
    m_memberStore = std::make_unique<MemberStore>(m_core->stores().database);
    MemberLease::Options lease;
    lease.lease = options.memberLease;
    lease.renewEvery = options.memberLease / 3;
    m_memberLease = std::make_unique<MemberLease>(*m_memberStore, *m_clock, lease);
    const bool cluster = m_core->stores().database.dialect() == Database::Dialect::Postgres;
    if (cluster) {
        HubCluster::Options peers;
        peers.peerAddress = options.peerListen.address;
        peers.peerPort = options.peerListen.port;
        peers.peerUrl = options.peerUrl;
        peers.publicUrl = m_publicUrl;
        peers.refreshEvery = options.memberLease / 3;
        peers.busPoll = options.busPoll;
        auto listening = HubCluster::listen(
            { *m_core, *m_gateways, *m_deviceStreams, *m_memberStore, *m_memberLease, *m_clock },
            peers, m_tls);
        if (!listening)
            return listening.error();
        m_cluster = std::move(*listening);
    }
    if (Status joined = m_memberLease->join(MemberStore::Joining { key, hubMemberName(m_publicUrl),
            m_publicUrl.toString(), m_cluster ? m_cluster->peerUrl().toString() : QString(), m_pin,
            QString::fromLatin1(buildinfo::kVersion) });
        !joined)
        return joined;
    m_sessionHolderStore = std::make_unique<SessionHolderStore>(m_core->stores().database);
    m_sessionHolders
        = std::make_unique<SessionHolders>(*m_sessionHolderStore, *m_memberLease, *m_clock);
    if (Status forgotten = m_sessionHolders->forgetEarlierStarts(); !forgotten)
        return forgotten;
    // Sessions that came before this point (none: nothing listened yet).
    for (const qint64 id : m_gateways->forwarders().connectedIds())
        m_sessionHolders->claim(protocol::PeerRole::Forwarder, id);
    for (const qint64 id : m_gateways->executors().connectedIds())
        m_sessionHolders->claim(protocol::PeerRole::Executor, id);
    m_gateways->forwarderReach().setCluster(m_sessionHolders.get(), {});
    // What a forwarder held here says of its device, for the members
    // planning runs with it.
    connect(&m_gateways->forwarderStates(), &ForwarderStates::stateChanged, m_sessionHolders.get(),
        [holders = m_sessionHolders.get()](qint64 id, const protocol::DeviceState &state) {
            holders->recordDeviceState(id, ForwarderStates::toJson(state));
        });
    m_api->setSessionHolders(m_sessionHolders.get());
    m_api->setMemberLease(m_memberLease.get());
    if (cluster) {
        m_dispatcher->setExecutorsElsewhere(
            [holders = m_sessionHolders.get(),
                lease = m_memberLease.get()]() -> std::optional<QList<qint64>> {
                if (!lease->viewIsSettled())
                    return std::nullopt;
                return holders->heldElsewhere(protocol::PeerRole::Executor);
            });
        // Daemons learn every live member's address and key, so that they
        // can move to another member when theirs dies.
        connect(m_cluster.get(), &HubCluster::membersChanged, this, &Hub::announceMembers);
        if (Status started = m_cluster->start(*m_sessionHolders); !started)
            return started;
        announceMembers();
    }
    return {};
}

void Hub::announceMembers()
{
    announcePins(m_announcedPins);
    m_gateways->announceHubs(m_cluster->members().daemonUrls());
}

Status Hub::openServices(const HubOptions &options)
{
    auto database = options.postgres.isEmpty()
        ? Database::openSqlite(databasePath(options.dataDir), *m_clock)
        : Database::openPostgres(options.postgres, *m_clock);
    if (!database)
        return database.error();
    qCInfo(lcHub).noquote() << "records in" << (*database)->location();
    if (options.metrics) {
        m_metrics = std::make_unique<HubMetrics>(
            HubMetrics::BuildInfo { QString::fromLatin1(buildinfo::kVersion),
                QString::fromLatin1(buildinfo::kCommit), protocol::kVersion });
        (*database)->setStatementObserver(
            [metrics = m_metrics.get()](
                std::chrono::nanoseconds took) { metrics->recordStatement(took); });
    }
    m_core = std::make_unique<HubCore>(
        std::move(*database), *m_clock, HubCore::Options { options.requestLifetime });
    m_gateways = std::make_unique<HubGateways>(
        *m_core, QString::fromLatin1(buildinfo::kVersion), options.gateway);
    // Logs of runs that may still grow are trimmed only after every finished
    // run's log.
    auto runLogs = openRunLogStore(
        m_core->stores().database, options.dataDir, options.runLogs, [core = m_core.get()] {
            QSet<qint64> active;
            auto runs = core->runLifecycle().unfinished();
            if (!runs) {
                qCWarning(lcHub).noquote()
                    << "cannot tell which runs are active:" << runs.error().message;
                return active;
            }
            for (const RunRecord &run : std::as_const(*runs))
                active.insert(run.id);
            return active;
        });
    if (!runLogs)
        return runLogs.error();
    m_runLogs = std::move(*runLogs);
    m_releaseStore = std::make_unique<ReleaseStore>(m_core->stores().database);
    m_releases = std::make_unique<ReleaseCatalog>(*m_releaseStore, releasesPath(options.dataDir));
    m_deviceStreams = std::make_unique<DeviceStreams>(m_gateways->forwarderReach(),
        m_gateways->executors(), m_core->events(), m_gateways->audit());
    openRelay(options.relayThreads.value_or(RelayThreads::defaultCount()));
    m_dispatcher = std::make_unique<RunDispatcher>(*m_core, m_core->runs(), m_gateways->executors(),
        *m_runLogs, *m_deviceStreams, m_gateways->forwarderReach(), options.runGrace);
    m_dispatcher->holdBackUpgrading(m_gateways->executorUpgrades());
    EventStreamEndpoint::Limits eventLimits;
    eventLimits.authenticationTimeout = options.gateway.authenticationTimeout;
    m_eventStream = std::make_unique<EventStreamEndpoint>(*m_core, eventLimits);
    connectEvents();
    return {};
}

void Hub::openRelay(int threads)
{
    if (threads == 0) {
        qCInfo(lcHub).noquote() << "device streams go on the daemons' tunnels (--relay-threads 0)";
        return;
    }
    m_relayThreads = std::make_unique<RelayThreads>(threads);
    m_relayDoor = std::make_unique<RelayLegDoor>(*m_relayThreads);
    const auto knows
        = [door = m_relayDoor.get()](const QString &ticket) { return door->knows(ticket); };
    for (const auto side : { RelayedStream::Side::Forwarder, RelayedStream::Side::Agent }) {
        DaemonGateway &gateway = side == RelayedStream::Side::Forwarder ? m_gateways->forwarders()
                                                                        : m_gateways->executors();
        gateway.setRelayDoor(knows,
            [door = m_relayDoor.get(), side](qint64 daemonId, const QString &ticket,
                const std::function<tunnel::TunnelConnection *()> &open) {
                return door->admit(side, daemonId, ticket, open);
            });
    }
    m_deviceStreams->setRelayDoor(m_relayDoor.get());
    qCInfo(lcHub).noquote() << "device streams are relayed on" << threads
                            << (threads == 1 ? "thread" : "threads");
}

Status Hub::startServer(const HubOptions &options, const QSslConfiguration &tls)
{
    // The public URL names the port, known only after listening; the
    // identity is completed in start, before the event loop serves any call.
    m_api = std::make_unique<AdminApi>(
        *m_core, *m_gateways, HubIdentity {}, m_runLogs.get(), m_releases.get());
    m_server = std::make_unique<HubHttpServer>(*m_api, *m_gateways, *m_eventStream);
    edge::HttpFront::Options front;
    front.listen.address = options.listenAddress;
    front.listen.port = options.port;
    front.listen.backlog = options.listenBacklog;
    front.tls = tls;
    front.limits = options.edge;
    capByOpenFiles(front.limits.preAuth);
    if (Status listening = m_server->listen(std::move(front)); !listening)
        return listening;
    m_port = m_server->port();
    return {};
}

QUrl Hub::publicUrlFor(const HubOptions &options) const
{
    if (!options.publicUrl.isEmpty())
        return options.publicUrl;
    const bool any = options.listenAddress == QHostAddress::Any
        || options.listenAddress == QHostAddress::AnyIPv4
        || options.listenAddress == QHostAddress::AnyIPv6;
    const QString host = any ? QHostInfo::localHostName() : hostForUrl(options.listenAddress);
    return QUrl(QStringLiteral("wss://%1:%2").arg(host).arg(m_port));
}

QUrl Hub::localUrlFor(const HubOptions &options) const
{
    const bool loopbackReachable = options.listenAddress == QHostAddress::Any
        || options.listenAddress == QHostAddress::AnyIPv4 || options.listenAddress.isLoopback();
    const QString host
        = loopbackReachable ? QStringLiteral("127.0.0.1") : hostForUrl(options.listenAddress);
    return QUrl(QStringLiteral("wss://%1:%2").arg(host).arg(m_port));
}

Status Hub::reloadCertificate()
{
    auto identity = TlsIdentity::load(m_certificatePath, m_keyPath);
    if (!identity)
        return identity.error();
    // Another key is taken only when it was staged, so that daemons pin it.
    if (identity->pin != m_pin && !m_announcedPins.contains(identity->pin))
        return Error::make(QStringLiteral("key_changed"),
            QStringLiteral("%1 holds another key (pin %2) than the hub serves (pin %3), which "
                           "every daemon pins; the hub keeps serving the old certificate. A new "
                           "key goes through `cloop hub key stage` and `cloop hub key activate`")
                .arg(m_certificatePath, identity->pin, m_pin));
    auto staged = HubKeys(m_certificatePath, m_keyPath).staged();
    if (!staged)
        return staged.error();
    if (Status serving = m_server->setTls(serverTls(*identity)); !serving)
        return serving.error();
    m_tls = *identity;
    if (m_cluster)
        m_cluster->setIdentity(*identity);
    if (identity->pin != m_pin) {
        qCInfo(lcHub).noquote() << "the hub's key is rotated: pin" << m_pin << "->"
                                << identity->pin;
        m_pin = identity->pin;
        if (auto access = LocalAccess::load(m_dataDir)) {
            access->pin = m_pin;
            if (Status saved = access->save(m_dataDir); !saved)
                qCWarning(lcHub).noquote() << saved.error().message;
        }
    }
    announcePins(HubKeys::pinsOf(*identity, *staged));
    qCInfo(lcHub).noquote() << "certificate reloaded from" << m_certificatePath << "- valid until"
                            << identity->chain.constFirst().expiryDate().toString(Qt::ISODate)
                            << "with the same key, pin" << m_pin;
    return {};
}

void Hub::announcePins(const QStringList &pins)
{
    m_announcedPins = pins;
    // Daemons pin every live member's key, so that they can move to another
    // member when theirs dies; this member's own keys first.
    QStringList all = pins;
    if (m_cluster) {
        for (const QString &pin : m_cluster->members().otherPins())
            if (!all.contains(pin))
                all.append(pin);
    }
    m_gateways->announcePins(all.mid(0, protocol::kMaxHubPins));
    m_api->setIdentity(identity());
}

HubIdentity Hub::identity() const
{
    HubIdentity identity { m_publicUrl, m_pin, QString::fromLatin1(buildinfo::kVersion) };
    if (m_cluster) {
        QStringList pins { m_pin };
        for (const QString &pin : m_cluster->members().otherPins())
            if (!pins.contains(pin))
                pins.append(pin);
        identity.pin = pins.mid(0, protocol::kMaxHubPins).join(QLatin1Char(','));
        identity.clusterUrls = m_cluster->members().daemonUrls();
    }
    return identity;
}

std::map<qint64, DeviceStreams::Relayed> Hub::relayedByBinding() const
{
    std::map<qint64, DeviceStreams::Relayed> relayed = m_deviceStreams->relayedByBinding();
    // Another member's agent's direct leg to a forwarder held here is
    // relayed, and counted, here.
    if (const DirectStreamDoor *door = m_cluster ? m_cluster->directStreamDoor() : nullptr) {
        for (const auto &[binding, carried] : door->carriedByBinding()) {
            DeviceStreams::Relayed &bytes = relayed[binding];
            bytes.forwarderId = carried.forwarderId;
            bytes.toAgent += carried.toAgent;
            bytes.toForwarder += carried.toForwarder;
        }
    }
    return relayed;
}

void Hub::startTraffic(const HubOptions &options)
{
    m_traffic = std::make_unique<ForwarderTraffic>(
        [this] {
            std::map<qint64, ForwarderTraffic::Totals> byForwarder;
            for (const auto &[binding, relayed] : relayedByBinding()) {
                ForwarderTraffic::Counts &counts = byForwarder[relayed.forwarderId].counts;
                counts.toAgent += relayed.toAgent;
                counts.toForwarder += relayed.toForwarder;
            }
            for (const auto &[forwarder, frames] : m_gateways->forwarderFrames().totals()) {
                ForwarderTraffic::Totals &totals = byForwarder[forwarder];
                totals.framesCounted = true;
                totals.unit = frames.unit;
                totals.counts.framesToAgent = frames.framesToRun;
                totals.counts.framesToForwarder = frames.framesFromRun;
                totals.counts.droppedToAgent = frames.droppedToRun;
                totals.counts.droppedToForwarder = frames.droppedFromRun;
            }
            return byForwarder;
        },
        m_core->clock(), options.trafficStep);
    m_traffic->start();
    m_api->setForwarderTraffic(m_traffic.get());
}

Status Hub::startMetrics(const HubOptions &options)
{
    if (!m_metrics)
        return {};
    m_metrics->setSampler([this] {
        HubMetrics::Sample sample;
        sample.forwardersConnected = int(m_gateways->forwarders().connectedIds().size());
        sample.executorsConnected = int(m_gateways->executors().connectedIds().size());
        sample.deviceStreamsOpen = m_deviceStreams->streamCount();
        if (auto queued = m_core->runLifecycle().queued())
            sample.runsQueued = int(queued->size());
        for (const auto &[binding, relayed] : relayedByBinding())
            sample.relayedByBinding.insert(binding, { relayed.toAgent, relayed.toForwarder });
        return sample;
    });
    HubMetrics *metrics = m_metrics.get();
    connect(&m_core->events(), &EventBus::published, this, [metrics](const HubEvent &event) {
        // Each member counts its own: the cluster's sum counts each once.
        if (!event.isFromAnotherMember())
            metrics->recordEvent(event);
    });
    connect(m_server.get(), &HubHttpServer::requestServed, this,
        [metrics](const QByteArray &method, const QString &route, qint64 nanoseconds) {
            metrics->recordRequest(method, route, std::chrono::nanoseconds(nanoseconds));
        });
    connect(m_dispatcher.get(), &RunDispatcher::runRefused, this,
        [metrics](const QString &code) { metrics->recordRefusal(code); });
    m_metricsEndpoint = std::make_unique<MetricsEndpoint>([metrics] { return metrics->scrape(); });
    if (Status listening
        = m_metricsEndpoint->listen(options.metrics->address, options.metrics->port);
        !listening) {
        // The port people and daemons use matters more than a scraper's.
        qCWarning(lcHub).noquote() << listening.error().message << "- serving no metrics";
        m_metricsEndpoint.reset();
        return {};
    }
    m_metricsUrl = QUrl(QStringLiteral("http://%1:%2/metrics")
                            .arg(hostForUrl(m_metricsEndpoint->address()))
                            .arg(m_metricsEndpoint->port()));
    return {};
}

Status Hub::writeLocalAccess(const HubOptions &options)
{
    LocalAccess access;
    access.url = m_localUrl;
    access.pin = m_pin;
    access.metrics = m_metricsUrl;
    access.pid = QCoreApplication::applicationPid();

    // Keep a still-valid token across restarts; mint a new one when the file
    // is gone or its token no longer authenticates.
    if (auto existing = LocalAccess::load(options.dataDir);
        existing && m_core->tokens().authenticate(existing->token))
        access.token = existing->token;
    if (access.token.isEmpty()) {
        auto adminId = m_core->stores().tokens.ensureHubAdmin(options.adminName);
        if (!adminId)
            return adminId.error();
        auto token = m_core->stores().tokens.createToken(
            *adminId, QStringLiteral("local cli"), QStringLiteral("hub"));
        if (!token)
            return token.error();
        access.token = *token;
        qCInfo(lcHub).noquote() << "created an administrator token for" << options.adminName << "in"
                                << options.dataDir + QLatin1Char('/') + LocalAccess::fileName();
    }
    return access.save(options.dataDir);
}

} // namespace cloop::hub
