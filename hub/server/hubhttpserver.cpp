#include "hub/server/hubhttpserver.h"

#include <QPointer>

#include "common/logging.h"
#include "hub/server/adminapi.h"
#include "hub/server/eventstream.h"
#include "hub/server/hubgateways.h"

#include <QHttpServerRequest>
#include <QHttpServerResponder>
#include <QJsonArray>
#include <QJsonDocument>
#include <QMetaEnum>
#include <QWebSocket>

namespace cloop::hub {

namespace {
QByteArray methodName(QHttpServerRequest::Method method)
{
    switch (method) {
    case QHttpServerRequest::Method::Get: return "GET";
    case QHttpServerRequest::Method::Put: return "PUT";
    case QHttpServerRequest::Method::Delete: return "DELETE";
    case QHttpServerRequest::Method::Post: return "POST";
    case QHttpServerRequest::Method::Head: return "HEAD";
    case QHttpServerRequest::Method::Options: return "OPTIONS";
    case QHttpServerRequest::Method::Patch: return "PATCH";
    default: return "OTHER";
    }
}
} // namespace

HubHttpServer::HubHttpServer(AdminApi &api, HubGateways &gateways, EventStream &events, QObject *parent)
    : QAbstractHttpServer(parent), m_api(api), m_gateways(gateways), m_events(events)
{
    connect(this, &QAbstractHttpServer::newWebSocketConnection, this, &HubHttpServer::onNewWebSocket);
}

bool HubHttpServer::handleRequest(const QHttpServerRequest &request, QTcpSocket *socket)
{
    // Qt 6.4 asks this function about a WebSocket upgrade first and hands the
    // socket over only when it returns true without answering. Callers are
    // authenticated afterwards, by their first message on the socket.
    if (request.value("upgrade").compare("websocket", Qt::CaseInsensitive) == 0) {
        const QString path = request.url().path();
        const bool known = path == kForwarderEndpoint || path == kExecutorEndpoint || path == kEventsEndpoint;
        // Device data rides these sockets, and Nagle's algorithm would hold
        // small frames back. Only here is the TCP socket within reach: the
        // WebSocket made from it does not own it.
        if (known)
            socket->setSocketOption(QAbstractSocket::LowDelayOption, 1);
        return known;
    }
    ApiRequest apiRequest;
    apiRequest.method = methodName(request.method());
    apiRequest.path = request.url().path();
    apiRequest.authorization = request.value("authorization");
    apiRequest.body = request.body();
    apiRequest.query = QUrlQuery(request.url());
    const ApiResponse response = m_api.handle(apiRequest);
    if (response.deferred && !response.deferred->isFinished()) {
        // The answer needs a daemon's reply. Whoever made it keeps it alive
        // until then; the client may leave before: nobody to write to.
        auto responder = std::make_shared<QHttpServerResponder>(makeResponder(request, socket));
        QPointer<QTcpSocket> client(socket);
        connect(response.deferred.get(), &DeferredResponse::finished, this,
                [responder, client](const ApiResponse &answer) {
                    if (client)
                        writeResponse(*responder, answer);
                });
        return true;
    }
    if (response.deferred) {
        QHttpServerResponder responder = makeResponder(request, socket);
        writeResponse(responder, response.deferred->result());
        return true;
    }
    qCDebug(lcHubApi).noquote() << apiRequest.method << apiRequest.path << "->" << response.status;
    QHttpServerResponder responder = makeResponder(request, socket);
    writeResponse(responder, response);
    return true;
}

void HubHttpServer::writeResponse(QHttpServerResponder &responder, const ApiResponse &response)
{
    const QJsonDocument document = response.body.isArray() ? QJsonDocument(response.body.toArray())
                                                           : QJsonDocument(response.body.toObject());
    responder.write(document.toJson(QJsonDocument::Compact),
                    {{"Content-Type", "application/json"}, {"Cache-Control", "no-store"}},
                    static_cast<QHttpServerResponder::StatusCode>(response.status));
}

void HubHttpServer::missingHandler(const QHttpServerRequest &request, QTcpSocket *socket)
{
    makeResponder(request, socket).write(QHttpServerResponder::StatusCode::NotFound);
}

void HubHttpServer::onNewWebSocket()
{
    while (hasPendingWebSocketConnections()) {
        std::unique_ptr<QWebSocket> socket = nextPendingWebSocketConnection();
        if (!socket)
            continue;
        const QString path = socket->requestUrl().path();
        if (path == kForwarderEndpoint) {
            m_gateways.forwarders().handleSocket(std::move(socket));
            continue;
        }
        if (path == kExecutorEndpoint) {
            m_gateways.executors().handleSocket(std::move(socket));
            continue;
        }
        if (path == kEventsEndpoint) {
            m_events.handleSocket(std::move(socket));
            continue;
        }
        qCInfo(lcHubGateway).noquote() << "closing WebSocket to unknown endpoint" << path << "from"
                                       << socket->peerAddress().toString();
        socket->close(QWebSocketProtocol::CloseCodePolicyViolated, QStringLiteral("no such endpoint"));
        socket.release()->deleteLater();
    }
}

} // namespace cloop::hub
