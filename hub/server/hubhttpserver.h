#pragma once

#include <QAbstractHttpServer>
#include <QHttpServerResponder>

namespace cloop::hub {

class AdminApi;
class EventStream;
class HubGateways;
struct ApiResponse;

// The hub's one TLS port: admin REST calls go to AdminApi, WebSocket
// upgrades to the gateway of the endpoint they name.
class HubHttpServer final : public QAbstractHttpServer
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(HubHttpServer)

public:
    static constexpr QLatin1StringView kForwarderEndpoint{"/api/forwarders/connect"};
    static constexpr QLatin1StringView kExecutorEndpoint{"/api/executors/connect"};
    static constexpr QLatin1StringView kEventsEndpoint{"/api/events"};

    HubHttpServer(AdminApi &api, HubGateways &gateways, EventStream &events, QObject *parent = nullptr);

protected:
    bool handleRequest(const QHttpServerRequest &request, QTcpSocket *socket) override;
    void missingHandler(const QHttpServerRequest &request, QTcpSocket *socket) override;

private:
    static void writeResponse(QHttpServerResponder &responder, const ApiResponse &response);
    void onNewWebSocket();

    AdminApi &m_api;
    HubGateways &m_gateways;
    EventStream &m_events;
};

} // namespace cloop::hub
