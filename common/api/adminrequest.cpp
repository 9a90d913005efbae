#include "common/api/adminrequest.h"

#include <QEventLoop>

#include <QJsonDocument>
#include <QNetworkReply>
#include <QStringList>

namespace cloop::api {

Status checkAdminUrl(const QUrl &url)
{
    auto check = net::checkHubUrl(url, false);
    if (check)
        return {};
    if (check.error().is(ErrorCode::InsecureUrl))
        return Error::make(check.error().code,
            QStringLiteral("refusing plaintext %1:// to %2: API tokens travel only over wss:// "
                           "(plain ws:// only to this machine)")
                .arg(url.scheme(), url.host()),
            true);
    return check.error();
}

Result<QNetworkRequest> adminRequest(
    const AdminEndpoint &endpoint, const QString &path, const QueryItems &query)
{
    if (Status check = checkAdminUrl(endpoint.url); !check)
        return check.error();
    QUrl url = endpoint.url;
    if (url.scheme() == QLatin1String("wss"))
        url.setScheme(QStringLiteral("https"));
    else if (url.scheme() == QLatin1String("ws"))
        url.setScheme(QStringLiteral("http"));
    url.setPath(path);
    // Every reserved character encoded, '+' and '&' in a project path included.
    if (!query.isEmpty()) {
        QStringList pairs;
        for (const auto &[name, value] : query)
            pairs.append(QString::fromLatin1(
                QUrl::toPercentEncoding(name) + '=' + QUrl::toPercentEncoding(value)));
        url.setQuery(pairs.join(QLatin1Char('&')), QUrl::StrictMode);
    }
    if (Status check = checkAdminUrl(url); !check)
        return check.error();

    QNetworkRequest request(url);
    request.setSslConfiguration(endpoint.trust.configuration());
    request.setRawHeader("Authorization", "Bearer " + endpoint.token.toUtf8());
    request.setHeader(QNetworkRequest::ContentTypeHeader, QStringLiteral("application/json"));
    request.setAttribute(QNetworkRequest::Http2AllowedAttribute, false);
    request.setTransferTimeout(30'000);
    return request;
}

QByteArray adminPayload(const QByteArray &method, const QJsonObject &body)
{
    return body.isEmpty() && method == "GET" ? QByteArray()
                                             : QJsonDocument(body).toJson(QJsonDocument::Compact);
}

void guardTrust(QNetworkReply *reply, const net::HubTrust &trust, std::optional<Error> *failure)
{
    QObject::connect(reply, &QNetworkReply::sslErrors, reply,
        [reply, trust, failure](const QList<QSslError> &errors) {
            auto verdict = trust.judge(errors, reply->sslConfiguration().peerCertificate());
            if (verdict)
                reply->ignoreSslErrors(*verdict);
            else
                *failure = verdict.error();
        });
    QObject::connect(reply, &QNetworkReply::encrypted, reply, [reply, trust, failure] {
        if (Status pinned = trust.verifyPeer(reply->sslConfiguration().peerCertificate());
            !pinned) {
            *failure = pinned.error();
            reply->abort();
        }
    });
}

Result<std::unique_ptr<QNetworkReply>> runGuarded(const net::HubTrust &trust,
    const std::function<QNetworkReply *()> &send, const std::function<void(QNetworkReply *)> &watch)
{
    std::optional<Error> trustError;
    std::unique_ptr<QNetworkReply> reply(send());
    guardTrust(reply.get(), trust, &trustError);
    if (watch)
        watch(reply.get());
    QEventLoop loop;
    QObject::connect(reply.get(), &QNetworkReply::finished, &loop, &QEventLoop::quit);
    if (!reply->isFinished())
        loop.exec();
    // The handlers that write trustError go with the reply's connections.
    reply->disconnect();
    if (trustError)
        return *trustError;
    return reply;
}

namespace {

// The JSON object of an answer, or why it is none.
Result<QJsonObject> answerObject(const QByteArray &answer, int status)
{
    QJsonParseError parseError {};
    const QJsonDocument document = QJsonDocument::fromJson(answer, &parseError);
    if (parseError.error != QJsonParseError::NoError || !document.isObject())
        return Error::make(QStringLiteral("bad_answer"),
            QStringLiteral("the hub answered HTTP %1 without JSON").arg(status));
    return document.object();
}

} // namespace

Result<QByteArray> readAdminAnswerText(QNetworkReply *reply)
{
    QByteArray answer = reply->readAll();
    const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    if (status == 0)
        return Error::make(QStringLiteral("unreachable"),
            QStringLiteral("cannot reach the hub at %1: %2")
                .arg(reply->url().authority(), reply->errorString()));
    if (status >= 400) {
        auto object = answerObject(answer, status);
        if (!object)
            return object.error();
        const QJsonObject error = object->value(QLatin1String("error")).toObject();
        return Error::make(
            error.value(QLatin1String("code")).toString(QStringLiteral("http_%1").arg(status)),
            error.value(QLatin1String("message")).toString(QStringLiteral("HTTP %1").arg(status)));
    }
    return answer;
}

Result<QJsonObject> readAdminAnswer(QNetworkReply *reply)
{
    auto answer = readAdminAnswerText(reply);
    if (!answer)
        return answer.error();
    return answerObject(
        *answer, reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt());
}

} // namespace cloop::api
