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

Result<QJsonObject> AdminClient::call(
    const QByteArray &method, const QString &path, const QJsonObject &body, const QueryItems &query)
{
    auto request = api::adminRequest(m_endpoint, path, query);
    if (!request)
        return request.error();
    // The reply reads the body from the buffer until it is gone, so the
    // buffer is declared before it and outlives it.
    QBuffer buffer;
    buffer.setData(api::adminPayload(method, body));
    buffer.open(QIODevice::ReadOnly);
    if (!m_network) {
        m_network = std::make_unique<QNetworkAccessManager>();
        m_network->setStrictTransportSecurityEnabled(false);
    }
    auto reply = api::runGuarded(
        m_endpoint.trust, [&] { return m_network->sendCustomRequest(*request, method, &buffer); });
    if (!reply)
        return reply.error();
    return api::readAdminAnswer(reply->get());
}

} // namespace cloop::cli
