#pragma once

#include "common/net/hubtls.h"
#include "common/result.h"

#include <QJsonObject>
#include <QList>
#include <QUrl>

#include <utility>

namespace cloop::cli {

// Where the admin API is and how to prove who we are to it.
struct AdminEndpoint
{
    QUrl url; // wss:// or https:// base
    QString token;
    net::HubTrust trust;
    QString source; // where the token came from, for `cloop whoami`
};

// Query parameters of a GET, percent-encoded by the client.
using QueryItems = QList<std::pair<QString, QString>>;

// wss:// (or https://) anywhere, plaintext only to a loopback hub: API
// tokens never cross a network in the clear, and no flag says otherwise.
Status checkAdminUrl(const QUrl &url);

// A small synchronous JSON client for the admin API: the CLI does one call
// at a time and exits. The hub's key pin is checked on every call.
class AdminClient
{
public:
    explicit AdminClient(AdminEndpoint endpoint) : m_endpoint(std::move(endpoint)) { }

    Result<QJsonObject> get(const QString &path, const QueryItems &query = {}) { return call("GET", path, {}, query); }
    Result<QJsonObject> post(const QString &path, const QJsonObject &body) { return call("POST", path, body); }
    Result<QJsonObject> call(const QByteArray &method, const QString &path, const QJsonObject &body,
                             const QueryItems &query = {});

    const AdminEndpoint &endpoint() const { return m_endpoint; }

private:
    AdminEndpoint m_endpoint;
};

} // namespace cloop::cli
