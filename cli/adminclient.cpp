#include "cli/adminclient.h"

#include <QBuffer>
#include <QEventLoop>
#include <QNetworkAccessManager>
#include <QNetworkReply>

namespace cloop::cli {

Result<QJsonObject> AdminClient::call(
    const QByteArray &method, const QString &path, const QJsonObject &body, const QueryItems &query)
{
    auto request = api::adminRequest(m_endpoint, path, query);
    if (!request)
        return request.error();
    // The reply reads the body from the buffer and reports trust failures
    // into trustError until it is gone; it goes with the manager, so both
    // are declared before it and outlive it.
    QBuffer buffer;
    buffer.setData(api::adminPayload(method, body));
    buffer.open(QIODevice::ReadOnly);
    QNetworkAccessManager network;
    network.setStrictTransportSecurityEnabled(false);
    auto reply = api::runGuarded(
        m_endpoint.trust, [&] { return network.sendCustomRequest(*request, method, &buffer); });
    if (!reply)
        return reply.error();
    return api::readAdminAnswer(reply->get());
}

} // namespace cloop::cli
