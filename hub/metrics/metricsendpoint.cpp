#include "hub/metrics/metricsendpoint.h"

#include "common/logging.h"
#include "hub/edge/httprequestparser.h"

#include <QTcpSocket>
#include <QTimer>

#include <memory>

namespace cloop::hub {

namespace {

// A scraper sends a few hundred bytes at once; anything slower or larger
// is not one.
constexpr int kHeadTimeoutMs = 5000;
constexpr qsizetype kMaxHeadBytes = 8 * 1024;
constexpr int kMaxConnections = 16;

QByteArray answer(int status, const QByteArray &reason, const QByteArray &contentType,
    const QByteArray &body, const QByteArray &extraHeaders = {})
{
    return "HTTP/1.1 " + QByteArray::number(status) + ' ' + reason + "\r\nContent-Type: "
        + contentType + "\r\nContent-Length: " + QByteArray::number(body.size())
        + "\r\nConnection: close\r\n" + extraHeaders + "\r\n" + body;
}

QByteArray refusal(int status, const QByteArray &reason, const QByteArray &extraHeaders = {})
{
    return answer(status, reason, "text/plain; charset=utf-8", reason + '\n', extraHeaders);
}

} // namespace

MetricsEndpoint::MetricsEndpoint(Scrape scrape, QObject *parent)
    : QObject(parent)
    , m_scrape(std::move(scrape))
{
    m_server.setMaxPendingConnections(kMaxConnections);
    connect(&m_server, &QTcpServer::newConnection, this, [this] {
        while (QTcpSocket *socket = m_server.nextPendingConnection())
            serve(socket);
    });
}

MetricsEndpoint::~MetricsEndpoint() = default;

Status MetricsEndpoint::listen(const QHostAddress &address, quint16 port)
{
    if (!m_server.listen(address, port))
        return Error::make(QStringLiteral("listen_failed"),
            QStringLiteral("cannot listen for metrics on %1:%2: %3")
                .arg(address.toString())
                .arg(port)
                .arg(m_server.errorString()));
    qCInfo(lcHub).noquote() << QStringLiteral("metrics on http://%1:%2/metrics")
                                   .arg(address.toString())
                                   .arg(m_server.serverPort());
    return {};
}

void MetricsEndpoint::serve(QTcpSocket *socket)
{
    socket->setParent(this);
    auto parser = std::make_shared<edge::HttpRequestParser>(
        edge::HttpRequestParser::Limits { kMaxHeadBytes, 32 });
    auto finish = [socket](const QByteArray &bytes) {
        socket->disconnect();
        socket->write(bytes);
        socket->disconnectFromHost();
        connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
        QTimer::singleShot(kHeadTimeoutMs, socket, &QObject::deleteLater);
    };
    QTimer::singleShot(kHeadTimeoutMs, socket, [socket, finish] {
        if (socket->state() == QAbstractSocket::ConnectedState)
            finish(refusal(408, "Request Timeout"));
    });
    connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
    connect(socket, &QTcpSocket::readyRead, socket, [this, socket, parser, finish] {
        const QByteArray data = socket->readAll();
        const auto progress = parser->feed(data);
        if (progress.step == edge::HttpRequestParser::Step::NeedMore)
            return;
        if (progress.step == edge::HttpRequestParser::Step::Failed)
            return finish(refusal(parser->error().status, parser->error().reason));
        const edge::HttpRequestHead &head = parser->head();
        if (head.announcesBody())
            return finish(refusal(413, "Payload Too Large"));
        if (head.path() != "/metrics")
            return finish(refusal(404, "Not Found"));
        if (head.method != "GET" && head.method != "HEAD")
            return finish(refusal(405, "Method Not Allowed", "Allow: GET, HEAD\r\n"));
        QByteArray exposition = m_scrape();
        QByteArray reply
            = answer(200, "OK", "text/plain; version=0.0.4; charset=utf-8", exposition);
        if (head.method == "HEAD")
            reply.chop(exposition.size());
        finish(reply);
    });
}

} // namespace cloop::hub
