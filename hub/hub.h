#pragma once

#include "common/result.h"
#include "hub/server/forwardergateway.h"

#include <QHostAddress>
#include <QObject>
#include <QUrl>

#include <memory>

namespace cloop::hub {

class AdminApi;
class ApiTokenStore;
class Database;
class ForwarderStore;
class HubHttpServer;

struct HubOptions
{
    QString dataDir;
    QHostAddress listenAddress = QHostAddress::Any;
    quint16 port = 7443;
    QString certificatePath; // default: <data>/tls/cert.pem
    QString keyPath; // default: <data>/tls/key.pem
    QUrl publicUrl; // what bundles tell daemons to dial; derived when empty
    QString adminName = QStringLiteral("admin");
    ForwarderGateway::Options gateway;
};

// `cloop hub serve`: the data folder, the database, the TLS port and what
// listens on it, wired together. Owns everything it creates.
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
    ForwarderGateway &forwarders() { return *m_gateway; }

    static QString defaultCertificatePath(const QString &dataDir);
    static QString defaultKeyPath(const QString &dataDir);
    static QString databasePath(const QString &dataDir);

private:
    Hub() = default;
    Status writeLocalAccess(const HubOptions &options);

    std::unique_ptr<Database> m_database;
    std::unique_ptr<ApiTokenStore> m_tokens;
    std::unique_ptr<ForwarderStore> m_forwarderStore;
    std::unique_ptr<ForwarderGateway> m_gateway;
    std::unique_ptr<AdminApi> m_api;
    std::unique_ptr<HubHttpServer> m_server;
    quint16 m_port = 0;
    QUrl m_publicUrl;
    QString m_pin;
};

} // namespace cloop::hub
