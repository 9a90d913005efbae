#pragma once

#include "common/api/adminrequest.h"
#include "common/result.h"

#include <QJsonObject>

#include <memory>
#include <utility>

class QNetworkAccessManager;
class QNetworkReply;
class QBuffer;

namespace cloop::cli {

using api::AdminEndpoint;
using api::checkAdminUrl;
using api::QueryItems;

// A small synchronous JSON client for the admin API: the CLI does one call
// at a time and exits. The hub's key pin is checked on every connection.
// Calls share one connection while the hub keeps it open: a command that
// waits for a run asks every few hundred milliseconds, and a TLS handshake
// for each would cost the hub more than the answers do.
class AdminClient
{
public:
    explicit AdminClient(AdminEndpoint endpoint);
    ~AdminClient();
    AdminClient(AdminClient &&) noexcept;
    AdminClient &operator=(AdminClient &&) noexcept;

    Result<QJsonObject> get(const QString &path, const QueryItems &query = {})
    {
        return call("GET", path, {}, query);
    }
    Result<QJsonObject> post(const QString &path, const QJsonObject &body)
    {
        return call("POST", path, body);
    }
    Result<QJsonObject> call(const QByteArray &method, const QString &path, const QJsonObject &body,
        const QueryItems &query = {});
    // A GET whose successful answer is left as text (api::readAdminAnswerText).
    Result<QByteArray> getText(const QString &path, const QueryItems &query = {});

    const AdminEndpoint &endpoint() const { return m_endpoint; }

private:
    // The finished reply; `body` outlives it.
    Result<std::unique_ptr<QNetworkReply>> send(
        const QByteArray &method, const QString &path, QBuffer &body, const QueryItems &query);

    AdminEndpoint m_endpoint;
    std::unique_ptr<QNetworkAccessManager> m_network;
};

} // namespace cloop::cli
