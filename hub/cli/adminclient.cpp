#include "hub/cli/adminclient.h"

#include <QBuffer>
#include <QEventLoop>
#include <QJsonDocument>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QTimer>

namespace cloop::cli {

Result<QJsonObject> AdminClient::call(const QByteArray &method, const QString &path, const QJsonObject &body)
{
    QUrl url = m_endpoint.url;
    if (url.scheme() == QLatin1String("wss"))
        url.setScheme(QStringLiteral("https"));
    else if (url.scheme() == QLatin1String("ws"))
        url.setScheme(QStringLiteral("http"));
    url.setPath(path);
    if (auto check = net::checkHubUrl(url, false); !check)
        return check.error();

    QNetworkAccessManager network;
    network.setStrictTransportSecurityEnabled(false);
    QNetworkRequest request(url);
    request.setSslConfiguration(m_endpoint.trust.configuration());
    request.setRawHeader("Authorization", "Bearer " + m_endpoint.token.toUtf8());
    request.setHeader(QNetworkRequest::ContentTypeHeader, QStringLiteral("application/json"));
    request.setAttribute(QNetworkRequest::Http2AllowedAttribute, false);
    request.setTransferTimeout(30'000);

    const QByteArray payload = body.isEmpty() && method == "GET"
            ? QByteArray()
            : QJsonDocument(body).toJson(QJsonDocument::Compact);
    QBuffer buffer;
    buffer.setData(payload);
    buffer.open(QIODevice::ReadOnly);
    QNetworkReply *reply = network.sendCustomRequest(request, method, &buffer);

    std::optional<Error> trustError;
    QObject::connect(reply, &QNetworkReply::sslErrors, reply, [&](const QList<QSslError> &errors) {
        auto verdict = m_endpoint.trust.judge(errors, reply->sslConfiguration().peerCertificate());
        if (verdict)
            reply->ignoreSslErrors(*verdict);
        else
            trustError = verdict.error();
    });
    // Checked again once encrypted, before the request (and its token) is sent.
    QObject::connect(reply, &QNetworkReply::encrypted, reply, [&] {
        if (Status pinned = m_endpoint.trust.verifyPeer(reply->sslConfiguration().peerCertificate()); !pinned) {
            trustError = pinned.error();
            reply->abort();
        }
    });
    QEventLoop loop;
    QObject::connect(reply, &QNetworkReply::finished, &loop, &QEventLoop::quit);
    loop.exec();
    reply->deleteLater();

    if (trustError)
        return *trustError;
    const QByteArray answer = reply->readAll();
    const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    if (status == 0)
        return Error::make(QStringLiteral("unreachable"),
                           QStringLiteral("cannot reach the hub at %1: %2").arg(url.authority(), reply->errorString()));
    QJsonParseError parseError{};
    const QJsonDocument document = QJsonDocument::fromJson(answer, &parseError);
    if (parseError.error != QJsonParseError::NoError || !document.isObject())
        return Error::make(QStringLiteral("bad_answer"),
                           QStringLiteral("the hub answered HTTP %1 without JSON").arg(status));
    const QJsonObject object = document.object();
    if (status >= 400) {
        const QJsonObject error = object.value(QLatin1String("error")).toObject();
        return Error::make(error.value(QLatin1String("code")).toString(QStringLiteral("http_%1").arg(status)),
                           error.value(QLatin1String("message")).toString(QStringLiteral("HTTP %1").arg(status)));
    }
    return object;
}

} // namespace cloop::cli
