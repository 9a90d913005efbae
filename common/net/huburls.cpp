#include "common/net/huburls.h"

#include "common/net/hubtls.h"

#include <QStringList>

namespace cloop::net {

namespace {
Error invalid(const QString &message)
{
    return Error::make(QStringLiteral("invalid_url"), message, true);
}
} // namespace

Result<QUrl> parseHubUrl(const QString &text, PlaintextHubUrls plaintext)
{
    if (text.size() > kMaxHubUrlLength)
        return invalid(QStringLiteral("\"%1…\" is longer than a hub URL may be (%2 characters)")
                           .arg(text.left(32))
                           .arg(kMaxHubUrlLength));
    const QUrl url(text, QUrl::StrictMode);
    if (!url.isValid() || url.host().isEmpty())
        return invalid(
            QStringLiteral("\"%1\" is not a hub URL (expected wss://HOST:PORT)").arg(text));
    // What is written back is the encoded form: it must fit as well.
    if (url.toString(QUrl::FullyEncoded).size() > kMaxHubUrlLength)
        return invalid(QStringLiteral("\"%1…\" is longer than a hub URL may be (%2 characters)")
                           .arg(text.left(32))
                           .arg(kMaxHubUrlLength));
    if (!url.userInfo().isEmpty() || url.hasQuery() || url.hasFragment())
        return invalid(QStringLiteral("\"%1\" is not a hub URL: it has a user name, a query or a "
                                      "fragment (expected wss://HOST:PORT)")
                           .arg(text));
    // The scheme rules are checkHubUrl's; only who may allow plaintext differs.
    const auto scheme = checkHubUrl(url, plaintext == PlaintextHubUrls::LeftToTheDaemon);
    if (!scheme)
        return scheme.error();
    return url;
}

Result<QList<QUrl>> parseHubUrlList(const QJsonValue &value, PlaintextHubUrls plaintext)
{
    const QJsonArray entries = value.toArray();
    if (!value.isArray() || entries.isEmpty() || entries.size() > kMaxHubUrls)
        return invalid(QStringLiteral("not a list of 1 to %1 hub URLs").arg(kMaxHubUrls));
    QList<QUrl> urls;
    for (const QJsonValue &entry : entries) {
        if (!entry.isString())
            return invalid(QStringLiteral("hub URLs must be strings"));
        auto url = parseHubUrl(entry.toString(), plaintext);
        if (!url)
            return url.error();
        for (const QUrl &earlier : std::as_const(urls)) {
            if (sameHub(earlier, *url))
                return invalid(
                    QStringLiteral("the hub URL %1 is named twice").arg(url->toString()));
        }
        urls.append(*url);
    }
    return urls;
}

QJsonArray hubUrlListJson(const QList<QUrl> &urls)
{
    QJsonArray array;
    for (const QUrl &url : urls)
        array.append(url.toString(QUrl::FullyEncoded));
    return array;
}

bool sameHub(const QUrl &a, const QUrl &b)
{
    return endpointUrl(a, QString()) == endpointUrl(b, QString());
}

QString describeHubUrls(const QList<QUrl> &urls)
{
    QStringList texts;
    for (const QUrl &url : urls)
        texts.append(url.toString());
    return texts.join(QStringLiteral(", "));
}

} // namespace cloop::net
