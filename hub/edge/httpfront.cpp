#include "hub/edge/httpfront.h"

#include "common/logging.h"
#include "common/net/tlsstream.h"
#include "hub/edge/httpconnection.h"
#include "hub/edge/httpservice.h"

#include <QPointer>

namespace cloop::hub::edge {

HttpFront::HttpFront(Options options, HttpService &service, QObject *parent)
    : QObject(parent)
    , m_options(std::move(options))
    , m_service(service)
    , m_pool(m_options.limits.preAuth)
    , m_handshakeLog(lcHubEdge(), QStringLiteral("TLS handshake failures"))
    , m_refusalLog(lcHubEdge(), QStringLiteral("refused requests"))
    , m_admissionLog(lcHubEdge(), QStringLiteral("connections refused at the door"))
{
    m_clock.start();
}

HttpFront::~HttpFront()
{
    // Connections are children and go with us; the listener first, so that
    // nothing new arrives while they do.
    m_listener.reset();
}

Result<std::unique_ptr<HttpFront>> HttpFront::start(
    Options options, HttpService &service, QObject *parent)
{
    std::unique_ptr<HttpFront> front(new HttpFront(std::move(options), service, parent));
    if (Status tls = front->setTls(front->m_options.tls); !tls)
        return tls.error();
    HttpFront *raw = front.get();
    auto listener = TcpListener::listen(
        raw->m_options.listen,
        [raw](util::Fd descriptor, const QHostAddress &peer, quint16) {
            raw->onAccepted(std::move(descriptor), peer);
        },
        raw);
    if (!listener)
        return listener.error();
    front->m_listener = std::move(*listener);
    return front;
}

Status HttpFront::setTls(const QSslConfiguration &tls)
{
    auto context = net::TlsContext::forServer(tls.localCertificateChain(), tls.privateKey());
    if (!context)
        return context.error();
    m_options.tls = tls;
    m_tlsContext = std::move(*context);
    return {};
}

void HttpFront::onAccepted(util::Fd descriptor, const QHostAddress &peer)
{
    auto *stream = new net::TlsStream(std::move(descriptor), m_tlsContext, this);
    QPointer<net::TlsStream> guarded(stream);
    auto place = m_pool.enter(peer, m_clock.elapsed(), [guarded] {
        if (guarded)
            guarded->abort();
    });
    if (!place) {
        if (m_admissionLog.admit())
            qCInfo(lcHubEdge).noquote() << "refused a connection from" << peer.toString()
                                        << ": too many new connections from that address";
        delete stream;
        return;
    }
    auto *connection
        = new HttpConnection(stream, std::move(*place), *this, m_service, m_options.limits);
    ++m_connections;
    connect(connection, &QObject::destroyed, this, [this] { --m_connections; });
    connection->start();
}

} // namespace cloop::hub::edge
