#include "hub/edge/httpanswer.h"

#include <QJsonDocument>
#include <QJsonObject>

namespace cloop::hub::edge {

HttpAnswer HttpAnswer::json(int status, QByteArray body)
{
    HttpAnswer answer;
    answer.status = status;
    answer.body = std::move(body);
    return answer;
}

HttpAnswer HttpAnswer::error(int status, const QString &code, const QString &message)
{
    const QJsonObject error { { QStringLiteral("code"), code },
        { QStringLiteral("message"), message } };
    return json(status,
        QJsonDocument(QJsonObject { { QStringLiteral("error"), error } })
            .toJson(QJsonDocument::Compact));
}

QByteArray reasonPhrase(int status)
{
    switch (status) {
    case 100:
        return "Continue";
    case 101:
        return "Switching Protocols";
    case 200:
        return "OK";
    case 201:
        return "Created";
    case 202:
        return "Accepted";
    case 204:
        return "No Content";
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 408:
        return "Request Timeout";
    case 409:
        return "Conflict";
    case 410:
        return "Gone";
    case 411:
        return "Length Required";
    case 413:
        return "Payload Too Large";
    case 422:
        return "Unprocessable Content";
    case 429:
        return "Too Many Requests";
    case 431:
        return "Request Header Fields Too Large";
    case 500:
        return "Internal Server Error";
    case 501:
        return "Not Implemented";
    case 502:
        return "Bad Gateway";
    case 503:
        return "Service Unavailable";
    case 504:
        return "Gateway Timeout";
    case 505:
        return "HTTP Version Not Supported";
    default:
        return status < 400 ? "OK" : "Error";
    }
}

QByteArray serializeHead(const HttpAnswer &answer, bool keepAlive)
{
    QByteArray out;
    out.reserve(160);
    out += "HTTP/1.1 " + QByteArray::number(answer.status) + ' ' + reasonPhrase(answer.status)
        + "\r\n";
    if (!answer.contentType.isEmpty())
        out += "Content-Type: " + answer.contentType + "\r\n";
    out += "Content-Length: " + QByteArray::number(answer.body.size()) + "\r\n";
    out += "Cache-Control: no-store\r\n";
    for (const HttpHeader &header : answer.headers)
        out += header.name + ": " + header.value + "\r\n";
    out += keepAlive ? "Connection: keep-alive\r\n" : "Connection: close\r\n";
    out += "\r\n";
    return out;
}

QByteArray serializeAnswer(const HttpAnswer &answer, bool keepAlive)
{
    return serializeHead(answer, keepAlive) + answer.body;
}

QByteArray continueLine()
{
    return QByteArrayLiteral("HTTP/1.1 100 Continue\r\n\r\n");
}

} // namespace cloop::hub::edge
