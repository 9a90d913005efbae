#pragma once

#include "common/result.h"
#include "common/util/logthrottle.h"
#include "hub/edge/edgelimits.h"
#include "hub/edge/preauthpool.h"
#include "hub/edge/tcplistener.h"

#include <QElapsedTimer>
#include <QObject>
#include <QPointer>
#include <QSslConfiguration>

#include <memory>

namespace cloop::net {
class TlsContext;
}

namespace cloop::hub::edge {

class HttpService;

// The hub's one port as the internet meets it: accepts connections by
// hand, does TLS (one context for them all, net::TlsStream), reads
// HTTP/1.1 requests within fixed limits and hands them to a service, and
// answers WebSocket upgrades itself, passing the service the socket with
// the place it holds in the pre-authentication pool.
class HttpFront final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(HttpFront)

public:
    struct Options
    {
        TcpListener::Options listen;
        QSslConfiguration tls;
        EdgeLimits limits;
    };

    static Result<std::unique_ptr<HttpFront>> start(
        Options options, HttpService &service, QObject *parent = nullptr);
    ~HttpFront() override;

    quint16 port() const { return m_listener->port(); }
    // What connections accepted from now on handshake with (a renewed
    // certificate); those already open keep theirs. Refused, and the old
    // kept, when the certificate and key cannot serve.
    Status setTls(const QSslConfiguration &tls);
    const PreAuthPool &preAuthPool() const { return m_pool; }
    int connectionCount() const { return m_connections; }
    const TcpListener &listener() const { return *m_listener; }

    // For the connections: throttles for what anyone can make the hub log.
    util::LogThrottle &handshakeLog() { return m_handshakeLog; }
    util::LogThrottle &refusalLog() { return m_refusalLog; }

private:
    HttpFront(Options options, HttpService &service, QObject *parent);
    void onAccepted(util::Fd descriptor, const QHostAddress &peer);

    Options m_options;
    HttpService &m_service;
    PreAuthPool m_pool;
    QElapsedTimer m_clock;
    util::LogThrottle m_handshakeLog;
    util::LogThrottle m_refusalLog;
    util::LogThrottle m_admissionLog;
    std::shared_ptr<const net::TlsContext> m_tlsContext;
    int m_connections = 0;
    std::unique_ptr<TcpListener> m_listener;
};

} // namespace cloop::hub::edge
