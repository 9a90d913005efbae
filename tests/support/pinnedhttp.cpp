#include "support/pinnedhttp.h"

#include "common/net/spkipin.h"

#include <QEventLoop>
#include <QJsonDocument>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QSslConfiguration>
#include <QSslError>
#include <QTimer>

#include <memory>

namespace cloop::testing {

QJsonObject HttpResult::json() const
{
    return QJsonDocument::fromJson(body).object();
}

QString HttpResult::errorCode() const
{
    return json().value(QLatin1String("error")).toObject().value(QLatin1String("code")).toString();
}

QString HttpResult::describe() const
{
    return QStringLiteral("HTTP %1%2 body: %3")
        .arg(status)
        .arg(error.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(error),
            QString::fromUtf8(body.left(2000)));
}

HttpResult pinnedGet(const QUrl &url, const QString &pin, const QString &bearer, int timeoutMs)
{
    HttpResult result;
    const auto pins = net::PinSet::parse(pin);
    if (!pins || pins->isEmpty()) {
        result.error = QStringLiteral("no usable pin \"%1\"").arg(pin);
        return result;
    }

    QNetworkAccessManager network;
    network.setStrictTransportSecurityEnabled(false);
    QNetworkRequest request(url);
    QSslConfiguration tls = QSslConfiguration::defaultConfiguration();
    tls.setPeerVerifyMode(QSslSocket::VerifyPeer);
    request.setSslConfiguration(tls);
    request.setAttribute(QNetworkRequest::Http2AllowedAttribute, false);
    if (!bearer.isEmpty())
        request.setRawHeader("Authorization", "Bearer " + bearer.toUtf8());

    const std::unique_ptr<QNetworkReply> owner(network.get(request));
    QNetworkReply *reply = owner.get();
    QString refusal;
    QObject::connect(reply, &QNetworkReply::sslErrors, reply, [&](const QList<QSslError> &errors) {
        // A matching pin stands in for a CA, so only "nobody vouches for this
        // key" errors may be waived; never a wrong host name or an expired
        // certificate, and nothing at all when the key is not the pinned one.
        static const QList<QSslError::SslError> waivable {
            QSslError::SelfSignedCertificate,
            QSslError::SelfSignedCertificateInChain,
            QSslError::UnableToGetLocalIssuerCertificate,
            QSslError::UnableToGetIssuerCertificate,
            QSslError::UnableToVerifyFirstCertificate,
            QSslError::CertificateUntrusted,
        };
        const Status pinned = pins->verify(reply->sslConfiguration().peerCertificate());
        if (!pinned) {
            refusal = pinned.error().message;
            reply->abort();
            return;
        }
        for (const QSslError &error : errors) {
            if (!waivable.contains(error.error())) {
                refusal = QStringLiteral("certificate error not waived by the pin: %1")
                              .arg(error.errorString());
                reply->abort();
                return;
            }
        }
        reply->ignoreSslErrors(errors);
    });
    // Checked once more after the handshake, before the request is written.
    QObject::connect(reply, &QNetworkReply::encrypted, reply, [&] {
        if (const Status pinned = pins->verify(reply->sslConfiguration().peerCertificate());
            !pinned) {
            refusal = pinned.error().message;
            reply->abort();
        }
    });

    QEventLoop loop;
    QObject::connect(reply, &QNetworkReply::finished, &loop, &QEventLoop::quit);
    QTimer timeout;
    timeout.setSingleShot(true);
    bool timedOut = false;
    QObject::connect(&timeout, &QTimer::timeout, &loop, [&] {
        timedOut = true;
        reply->abort();
    });
    timeout.start(timeoutMs);
    if (!reply->isFinished())
        loop.exec();

    result.status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    result.body = reply->readAll();
    if (!refusal.isEmpty())
        result.error = refusal;
    else if (timedOut)
        result.error = QStringLiteral("no answer within %1 ms").arg(timeoutMs);
    else if (result.status == 0)
        result.error = reply->errorString();
    if (!refusal.isEmpty())
        result.status = 0;
    return result;
}

} // namespace cloop::testing
