#pragma once

#include "common/result.h"
#include "hub/edge/httpfront.h"
#include "hub/edge/httpservice.h"

#include <QObject>

#include <memory>

namespace cloop::hub {

class AdminApi;
class EventStreamEndpoint;
class HubGateways;
struct ApiResponse;

// The hub's one TLS port: admin REST calls go to AdminApi, WebSocket
// upgrades to the gateway of the endpoint they name. The front below it
// bounds what anyone may cost before proving who they are.
class HubHttpServer final : public QObject, public edge::HttpService
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(HubHttpServer)

public:
    HubHttpServer(AdminApi &api, HubGateways &gateways, EventStreamEndpoint &events,
        QObject *parent = nullptr);
    ~HubHttpServer() override;

    Status listen(edge::HttpFront::Options options);
    quint16 port() const;
    const edge::HttpFront &front() const { return *m_front; }
    Status setTls(const QSslConfiguration &tls) { return m_front->setTls(tls); }

    edge::HeadDecision examine(
        const edge::HttpRequestHead &head, const QHostAddress &peer) override;
    bool takesWebSocket(const QByteArray &path) const override;
    void acceptWebSocket(std::unique_ptr<net::MessageSocket> socket, const QByteArray &path,
        edge::PreAuthPool::Place place) override;

    static edge::HttpAnswer answerOf(const ApiResponse &response);

Q_SIGNALS:
    // An admin API request answered: from its whole request read to its
    // answer, a daemon's reply included.
    void requestServed(const QByteArray &method, const QString &route, qint64 nanoseconds);

private:
    AdminApi &m_api;
    HubGateways &m_gateways;
    EventStreamEndpoint &m_events;
    std::unique_ptr<edge::HttpFront> m_front;
};

} // namespace cloop::hub
