#pragma once

#include "common/result.h"
#include "hub/storage/apitokenstore.h"

#include <QByteArray>
#include <QJsonObject>
#include <QJsonValue>
#include <QString>
#include <QUrl>

#include <functional>

namespace cloop::hub {

class ForwarderGateway;
class ForwarderStore;

// An HTTP request as the API sees it, independent of the HTTP server
// library, so handlers are tested without sockets.
struct ApiRequest
{
    QByteArray method; // "GET", "POST", ...
    QString path;
    QByteArray authorization; // the Authorization header
    QByteArray body;
};

struct ApiResponse
{
    int status = 200;
    QJsonValue body;

    static ApiResponse error(int status, const QString &code, const QString &message);
    static ApiResponse fromError(const Error &error);
};

// What the API needs to tell daemons where the hub is.
struct HubIdentity
{
    QUrl publicUrl; // wss://host:port, put into bundles
    QString pin; // the TLS key's SPKI pin
    QString software;
};

// The admin REST API (JSON). Every route but /api/health needs a user's API
// token as a bearer token; errors are {"error": {"code", "message"}}.
class AdminApi
{
public:
    AdminApi(ApiTokenStore &tokens, ForwarderStore &forwarders, ForwarderGateway &gateway,
             HubIdentity identity);

    ApiResponse handle(const ApiRequest &request);
    void setIdentity(HubIdentity identity) { m_identity = std::move(identity); }

    static constexpr qsizetype kMaxBodySize = 1024 * 1024;

private:
    ApiResponse health() const;
    ApiResponse listForwarders();
    ApiResponse getForwarder(qint64 id);
    ApiResponse enrollForwarder(const ApiPrincipal &caller, const QJsonObject &body);
    ApiResponse revokeForwarder(const ApiPrincipal &caller, qint64 id, const QJsonObject &body);

    QJsonObject forwarderJson(const struct ForwarderRecord &record) const;

    ApiTokenStore &m_tokens;
    ForwarderStore &m_forwarders;
    ForwarderGateway &m_gateway;
    HubIdentity m_identity;
};

} // namespace cloop::hub
