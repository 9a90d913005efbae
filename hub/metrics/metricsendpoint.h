#pragma once

#include "common/result.h"

#include <QHostAddress>
#include <QObject>
#include <QTcpServer>

#include <functional>

namespace cloop::hub {

// GET /metrics in plain HTTP on its own address (--metrics-listen, loopback
// by default), apart from the TLS port daemons and people use: a scraper
// needs no token, so what it can reach must be chosen by the address alone.
// Each connection gets one answer and is closed; a head that is slow, too
// large or not GET /metrics gets its 4xx and nothing else.
class MetricsEndpoint final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(MetricsEndpoint)

public:
    using Scrape = std::function<QByteArray()>;

    explicit MetricsEndpoint(Scrape scrape, QObject *parent = nullptr);
    ~MetricsEndpoint() override;

    Status listen(const QHostAddress &address, quint16 port);
    quint16 port() const { return m_server.serverPort(); }
    QHostAddress address() const { return m_server.serverAddress(); }

private:
    void serve(QTcpSocket *socket);

    Scrape m_scrape;
    QTcpServer m_server;
};

} // namespace cloop::hub
