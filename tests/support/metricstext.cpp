#include "support/metricstext.h"

#include <QEventLoop>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QRegularExpression>
#include <QTimer>

namespace cloop::testing {

using namespace Qt::StringLiterals;

HttpResult plainHttp(const QUrl &url, const QByteArray &method, int timeoutMs)
{
    QNetworkAccessManager network;
    QNetworkRequest request(url);
    QNetworkReply *reply = network.sendCustomRequest(request, method);
    QEventLoop loop;
    QObject::connect(reply, &QNetworkReply::finished, &loop, &QEventLoop::quit);
    QTimer::singleShot(timeoutMs, &loop, &QEventLoop::quit);
    loop.exec();
    HttpResult result;
    if (!reply->isFinished()) {
        reply->abort();
        result.error = u"no answer within %1 ms"_s.arg(timeoutMs);
    } else {
        result.status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        result.body = reply->readAll();
        if (reply->error() != QNetworkReply::NoError)
            result.error = reply->errorString();
    }
    reply->deleteLater();
    return result;
}

std::optional<double> metricValue(
    const QByteArray &exposition, const QString &name, const QMap<QString, QString> &labels)
{
    static const QRegularExpression sample(
        uR"re(^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$)re"_s);
    static const QRegularExpression label(uR"re(([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)")re"_s);
    for (const QByteArray &line : exposition.split('\n')) {
        const auto match = sample.match(QString::fromUtf8(line));
        if (!match.hasMatch() || match.captured(1) != name)
            continue;
        QMap<QString, QString> found;
        for (auto it = label.globalMatch(match.captured(3)); it.hasNext();) {
            const auto pair = it.next();
            found.insert(pair.captured(1), pair.captured(2));
        }
        bool all = true;
        for (auto wanted = labels.cbegin(); wanted != labels.cend(); ++wanted)
            all = all && found.value(wanted.key()) == wanted.value();
        if (all)
            return match.captured(4).toDouble();
    }
    return std::nullopt;
}

QString metricType(const QByteArray &exposition, const QString &name)
{
    const QByteArray prefix = "# TYPE " + name.toUtf8() + ' ';
    for (const QByteArray &line : exposition.split('\n')) {
        if (line.startsWith(prefix))
            return QString::fromUtf8(line.mid(prefix.size()).trimmed());
    }
    return {};
}

} // namespace cloop::testing
