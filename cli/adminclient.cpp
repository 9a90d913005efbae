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
    QNetworkAccessManager network;
    network.setStrictTransportSecurityEnabled(false);
    QBuffer buffer;
    buffer.setData(api::adminPayload(method, body));
    buffer.open(QIODevice::ReadOnly);
    QNetworkReply *reply = network.sendCustomRequest(*request, method, &buffer);
    std::optional<Error> trustError;
    api::guardTrust(reply, m_endpoint.trust, &trustError);
    QEventLoop loop;
    QObject::connect(reply, &QNetworkReply::finished, &loop, &QEventLoop::quit);
    loop.exec();
    reply->deleteLater();
    if (trustError)
        return *trustError;
    return api::readAdminAnswer(reply);
}

} // namespace cloop::cli
