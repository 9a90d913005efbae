#include "hub/server/hubhttpserver.h"

#include "common/logging.h"
#include "hub/edge/greeting.h"
#include "hub/server/adminapi.h"
#include "hub/server/eventstreamendpoint.h"
#include "hub/server/hubgateways.h"

#include "common/net/messagesocket.h"
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QPointer>
#include <QUrl>
#include <QUrlQuery>

namespace cloop::hub {

HubHttpServer::HubHttpServer(
    AdminApi &api, HubGateways &gateways, EventStreamEndpoint &events, QObject *parent)
    : QObject(parent)
    , m_api(api)
    , m_gateways(gateways)
    , m_events(events)
{ }

HubHttpServer::~HubHttpServer() = default;

Status HubHttpServer::listen(edge::HttpFront::Options options)
{
    auto front = edge::HttpFront::start(std::move(options), *this, this);
    if (!front)
        return front.error();
    m_front = std::move(*front);
    return {};
}

quint16 HubHttpServer::port() const
{
    return m_front ? m_front->port() : 0;
}

edge::HttpAnswer HubHttpServer::answerOf(const ApiResponse &response)
{
    if (!response.contentType.isEmpty())
        return edge::HttpAnswer { response.status, response.contentType, response.raw, {} };
    const QJsonDocument document = response.body.isArray()
        ? QJsonDocument(response.body.toArray())
        : QJsonDocument(response.body.toObject());
    return edge::HttpAnswer::json(response.status, document.toJson(QJsonDocument::Compact));
}

edge::HeadDecision HubHttpServer::examine(const edge::HttpRequestHead &head, const QHostAddress &)
{
    const QUrl url(QString::fromLatin1(head.target), QUrl::StrictMode);
    const QString path = url.path();
    ApiAdmission admission = m_api.admit(head.method, path, head.value("authorization"));
    edge::HeadDecision decision;
    decision.authenticated = admission.caller.has_value();
    if (admission.refusal) {
        decision.refusal = answerOf(*admission.refusal);
        return decision;
    }
    decision.bodyLimit = admission.bodyLimit;
    decision.serve = [this, path, query = QUrlQuery(url), caller = std::move(admission.caller)](
                         const edge::HttpRequest &request, const edge::HttpResponder &respond) {
        ApiRequest apiRequest;
        apiRequest.method = request.head.method;
        apiRequest.path = path;
        apiRequest.authorization = request.head.value("authorization");
        apiRequest.body = request.body;
        apiRequest.query = query;
        QElapsedTimer took;
        took.start();
        const QString route = m_api.routeOf(apiRequest.method, apiRequest.path);
        const auto served = [this, method = apiRequest.method, route, took] {
            Q_EMIT requestServed(method, route, took.nsecsElapsed());
        };
        const ApiResponse response = m_api.handleAdmitted(apiRequest, caller);
        qCDebug(lcHubApi).noquote()
            << apiRequest.method << apiRequest.path << "->" << response.status;
        if (response.deferred && !response.deferred->isFinished()) {
            // The answer needs a daemon's reply; whoever made it finishes it
            // within a bounded time, and the responder outlives the client.
            connect(response.deferred.get(), &DeferredResponse::finished, this,
                [respond, served](const ApiResponse &answer) {
                    respond(answerOf(answer));
                    served();
                });
            return;
        }
        respond(answerOf(response.deferred ? response.deferred->result() : response));
        served();
    };
    return decision;
}

bool HubHttpServer::takesWebSocket(const QByteArray &path) const
{
    const QLatin1StringView view(path);
    return view == edge::kForwarderEndpoint || view == edge::kExecutorEndpoint
        || view == edge::kExecutorDirectLegEndpoint || view == edge::kForwarderLegEndpoint
        || view == edge::kEventsEndpoint;
}

void HubHttpServer::acceptWebSocket(std::unique_ptr<net::MessageSocket> socket,
    const QByteArray &path, edge::PreAuthPool::Place place)
{
    const QLatin1StringView endpoint(path);
    if (endpoint == edge::kForwarderEndpoint)
        m_gateways.forwarders().handleSocket(std::move(socket), std::move(place));
    else if (endpoint == edge::kExecutorEndpoint)
        m_gateways.executors().handleSocket(std::move(socket), std::move(place));
    else if (endpoint == edge::kExecutorDirectLegEndpoint)
        m_gateways.executors().handleSocket(
            std::move(socket), std::move(place), DaemonGateway::Purpose::DirectLeg);
    else if (endpoint == edge::kForwarderLegEndpoint)
        m_gateways.forwarders().handleSocket(
            std::move(socket), std::move(place), DaemonGateway::Purpose::DirectLeg);
    else if (endpoint == edge::kEventsEndpoint)
        m_events.handleSocket(std::move(socket), std::move(place));
    else
        socket->abort();
}

} // namespace cloop::hub
