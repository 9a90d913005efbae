#pragma once

#include "common/logging.h"
#include "common/util/clock.h"
#include "common/util/logthrottle.h"

#include "common/result.h"
#include "hub/edge/edgelimits.h"
#include "hub/server/api/forwarderroutes.h"
#include "hub/server/daemongateway.h"
#include "hub/server/devicestreams.h"
#include "hub/storage/runlogstore.h"
#include "hub/tls/devcertificate.h"

#include <QHostAddress>
#include <QObject>
#include <QTimer>
#include <QUrl>

#include <chrono>
#include <memory>
#include <optional>

class QSslConfiguration;

namespace cloop::hub {

class AdminApi;
class HubCluster;
class ForwarderTraffic;
class ForwarderStates;
class EventStreamEndpoint;
class HubCore;
class HubGateways;
class HubHttpServer;
class HubMetrics;
class RelayLegDoor;
class RelayThreads;
class MemberLease;
class MemberStore;
class SessionHolderStore;
class SessionHolders;
class MetricsEndpoint;
class ReleaseCatalog;
class ReleaseStore;
class RunDispatcher;

struct HubOptions
{
    QString dataDir;
    // libpq keywords of a PostgreSQL database; empty: <data>/hub.db (SQLite).
    QString postgres;
    QHostAddress listenAddress = QHostAddress::Any;
    quint16 port = 7443;
    QString certificatePath; // default: <data>/tls/cert.pem
    QString keyPath; // default: <data>/tls/key.pem
    QUrl publicUrl; // what bundles tell daemons to dial; derived when empty
    QString adminName = QStringLiteral("admin");
    std::chrono::seconds requestLifetime { 7 * 24 * 3600 };
    // How long an executor may stay away before its runs are lost.
    std::chrono::milliseconds runGrace { 45'000 };
    // How long the hub counts as a live member of its cluster unrenewed.
    std::chrono::milliseconds memberLease { 15'000 };
    // How often a cluster member reads the others' events when no
    // notification woke it.
    std::chrono::milliseconds busPoll { 250 };
    // Where the other members of a cluster reach this one, over mutual TLS
    // pinned by the members table (a PostgreSQL hub only).
    struct PeerListen
    {
        QHostAddress address = QHostAddress::Any;
        quint16 port = 7444;
    };
    PeerListen peerListen;
    QUrl peerUrl; // what the other members dial; derived when empty
    DaemonGateway::Options gateway;
    // What runs' logs may take on disk, each and all together.
    RunLogLimits runLogs;
    // What the port lets anyone cost before they prove who they are.
    edge::EdgeLimits edge;
    int listenBacklog = 4096;
    // Where GET /metrics is served in plain HTTP; none: no metrics at all.
    struct MetricsListen
    {
        QHostAddress address;
        quint16 port = 0;
    };
    std::optional<MetricsListen> metrics;
    // How often each forwarder's relayed bytes are sampled for the
    // dashboard's graphs, which show the last 120 steps.
    std::chrono::milliseconds trafficStep { 5'000 };
    // Threads relaying device streams on legs; none set: one per core; 0:
    // streams go on the tunnels, through the main thread.
    std::optional<int> relayThreads;
};

// `cloop hub serve`: the data folder, the database and the services over
// it, the TLS port and what listens on it, wired together.
class Hub final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(Hub)

public:
    ~Hub() override;

    static Result<std::unique_ptr<Hub>> start(HubOptions options);

    quint16 port() const { return m_port; }
    QUrl publicUrl() const { return m_publicUrl; }
    QString pin() const { return m_pin; }
    // How programs on this machine reach the hub (loopback where it listens there).
    QUrl localUrl() const { return m_localUrl; }
    HubCore &core() { return *m_core; }
    RunLogStore &runLogs() { return *m_runLogs; }
    HubGateways &gateways() { return *m_gateways; }
    const HubHttpServer &server() const { return *m_server; }

    static QString defaultCertificatePath(const QString &dataDir);
    static QString defaultKeyPath(const QString &dataDir);
    static QString databasePath(const QString &dataDir);
    // The package files of the releases the hub offers.
    static QString releasesPath(const QString &dataDir);
    // This hub's own name in the cluster's members table, made once.
    static QString memberKeyPath(const QString &dataDir);

    // Reads the certificate and key files again (SIGHUP): a certificate
    // renewed with the same key serves new connections at once. One with
    // another key is refused and the old one kept: every daemon pins the
    // key, so a new key goes through a rotation instead.
    Status reloadCertificate();
    QStringList announcedPins() const { return m_announcedPins; }

    // Before the hub goes (its event loop over): every daemon session gets
    // its close frame, written out to the kernel, before any is torn down.
    void closeSessions();

private:
    Hub();
    void closeEverySession();
    // The database, the services over it and what daemons and subscribers
    // reach them through; nothing listens yet.
    Status openServices(const HubOptions &options);
    // The admin API and the TLS port in front of everything; sets the port.
    // The relay threads and the door of their legs; none with 0 threads.
    void openRelay(int threads);
    Status startServer(const HubOptions &options, const QSslConfiguration &tls);
    QUrl publicUrlFor(const HubOptions &options) const;
    QUrl localUrlFor(const HubOptions &options) const;
    Status writeLocalAccess(const HubOptions &options);
    // Registers this hub in the members table, with its lease.
    Status joinCluster(const HubOptions &options);
    void connectEvents();
    // The metrics' sources, and the endpoint serving them; sets their URL.
    Status startMetrics(const HubOptions &options);
    // Samples what each forwarder's streams carry, for GET /api/forwarders/traffic.
    void startTraffic(const HubOptions &options);
    // Bytes relayed for each binding, through here and on direct legs held here.
    std::map<qint64, DeviceStreams::Relayed> relayedByBinding() const;
    QUrl m_metricsUrl;
    void sweep();

    // Metrics outlive what reports to them.
    std::unique_ptr<HubMetrics> m_metrics;
    std::unique_ptr<MetricsEndpoint> m_metricsEndpoint;
    std::unique_ptr<Clock> m_clock;
    std::unique_ptr<HubCore> m_core;
    // Before the gateways, which ask the door, and the device streams,
    // which end what it relays: they go first.
    std::unique_ptr<RelayThreads> m_relayThreads;
    std::unique_ptr<RelayLegDoor> m_relayDoor;
    std::unique_ptr<HubGateways> m_gateways;
    std::unique_ptr<RunLogStore> m_runLogs;
    std::unique_ptr<ReleaseStore> m_releaseStore;
    std::unique_ptr<ReleaseCatalog> m_releases;
    std::unique_ptr<DeviceStreams> m_deviceStreams;
    std::unique_ptr<ForwarderTraffic> m_traffic;
    std::unique_ptr<MemberStore> m_memberStore;
    std::unique_ptr<MemberLease> m_memberLease;
    std::unique_ptr<SessionHolderStore> m_sessionHolderStore;
    std::unique_ptr<SessionHolders> m_sessionHolders;
    // A PostgreSQL hub's membership of its cluster.
    std::unique_ptr<HubCluster> m_cluster;
    // The TLS identity served now: what peers see of this member too.
    TlsIdentity m_tls;
    // Tells the daemons every live member's address and key.
    void announceMembers();
    std::unique_ptr<RunDispatcher> m_dispatcher;
    std::unique_ptr<EventStreamEndpoint> m_eventStream;
    std::unique_ptr<AdminApi> m_api;
    std::unique_ptr<HubHttpServer> m_server;
    QTimer m_sweepTimer;
    // The sweep runs four times a second; while the records do not answer
    // it says so a few times a minute.
    util::LogThrottle m_sweepFailures { lcHub(), QStringLiteral("failed expiry sweeps"), 3,
        std::chrono::minutes(1) };
    quint16 m_port = 0;
    QUrl m_publicUrl;
    QUrl m_localUrl;
    QString m_pin;
    QString m_certificatePath;
    QString m_keyPath;
    QString m_dataDir;
    QStringList m_announcedPins; // the serving key's pin, then the staged one's
    void announcePins(const QStringList &pins);
    // What bundles and the API say of the hub: in a cluster, every live
    // member's key.
    HubIdentity identity() const;
};

} // namespace cloop::hub
