#include "cli/adminclient.h"

#include <QBuffer>
#include <QEventLoop>
#include <QNetworkAccessManager>
#include <QNetworkReply>

namespace cloop::cli {

AdminClient::AdminClient(AdminEndpoint endpoint)
    : m_endpoint(std::move(endpoint))
{ }

AdminClient::~AdminClient() = default;
AdminClient::AdminClient(AdminClient &&) noexcept = default;
AdminClient &AdminClient::operator=(AdminClient &&) noexcept = default;

Result<std::unique_ptr<QNetworkReply>> AdminClient::send(
    const QByteArray &method, const QString &path, QBuffer &body, const QueryItems &query)
{
    auto request = api::adminRequest(m_endpoint, path, query);
    if (!request)
        return request.error();
    if (!m_network) {
        m_network = std::make_unique<QNetworkAccessManager>();
        m_network->setStrictTransportSecurityEnabled(false);
    }
    return api::runGuarded(
        m_endpoint.trust, [&] { return m_network->sendCustomRequest(*request, method, &body); });
}

Result<QJsonObject> AdminClient::call(
    const QByteArray &method, const QString &path, const QJsonObject &body, const QueryItems &query)
{
    // The reply reads the body from the buffer until it is gone, so the
    // buffer is declared before it and outlives it.
    QBuffer payload;
    payload.setData(api::adminPayload(method, body));
    payload.open(QIODevice::ReadOnly);
    auto reply = send(method, path, payload, query);
    if (!reply)
        return reply.error();
    return api::readAdminAnswer(reply->get());
}

Result<QByteArray> AdminClient::getText(const QString &path, const QueryItems &query)
{
    QBuffer nothing;
    nothing.open(QIODevice::ReadOnly);
    auto reply = send("GET", path, nothing, query);
    if (!reply)
        return reply.error();
    return api::readAdminAnswerText(reply->get());
}

} // namespace cloop::cli
