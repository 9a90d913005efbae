#pragma once

#include "common/net/hubtls.h"
#include "common/result.h"

#include <QJsonObject>
#include <QUrl>

namespace cloop::cli {

// Where the admin API is and how to prove who we are to it.
struct AdminEndpoint
{
    QUrl url; // wss:// or https:// base
    QString token;
    net::HubTrust trust;
};

// A small synchronous JSON client for the admin API: the CLI does one call
// at a time and exits. The hub's key pin is checked on every call.
class AdminClient
{
public:
    explicit AdminClient(AdminEndpoint endpoint) : m_endpoint(std::move(endpoint)) { }

    Result<QJsonObject> get(const QString &path) { return call("GET", path, {}); }
    Result<QJsonObject> post(const QString &path, const QJsonObject &body) { return call("POST", path, body); }
    Result<QJsonObject> call(const QByteArray &method, const QString &path, const QJsonObject &body);

private:
    AdminEndpoint m_endpoint;
};

} // namespace cloop::cli
