#include "common/net/keyprobe.h"

#include "common/net/spkipin.h"

namespace cloop::net {

KeyProbe::KeyProbe(QObject *parent)
    : QObject(parent)
{
    m_deadline.setSingleShot(true);
    connect(&m_deadline, &QTimer::timeout, this, [this] {
        finish(Error::make(QStringLiteral("unreachable"),
            QStringLiteral("the hub did not complete a TLS handshake within 10 s")));
    });
    // Trust is what is being established: every certificate error is let
    // through for this handshake only, which carries no request and no token.
    connect(&m_socket, &QSslSocket::sslErrors, this, [this] { m_socket.ignoreSslErrors(); });
    connect(&m_socket, &QSslSocket::encrypted, this, [this] {
        const QSslCertificate peer = m_socket.peerCertificate();
        finish(peer.isNull() ? Result<QString>(Error::make(QStringLiteral("no_certificate"),
                   QStringLiteral("the hub presented no certificate")))
                             : Result<QString>(net::PinSet::pinOf(peer)));
    });
    connect(&m_socket, &QAbstractSocket::errorOccurred, this, [this] {
        if (m_done)
            finish(Error::make(QStringLiteral("unreachable"),
                QStringLiteral("cannot reach the hub: %1").arg(m_socket.errorString())));
    });
}

void KeyProbe::probe(const QUrl &hub, QObject *context, Callback done)
{
    m_socket.abort();
    m_context = context;
    m_done = std::move(done);
    const quint16 port = quint16(hub.port(443));
    m_deadline.start(10'000);
    m_socket.connectToHostEncrypted(
        hub.host(), port, QIODevice::ReadWrite, QAbstractSocket::AnyIPProtocol);
}

void KeyProbe::finish(const Result<QString> &pin)
{
    m_deadline.stop();
    Callback done = std::exchange(m_done, nullptr);
    m_socket.abort();
    if (done && m_context)
        done(pin);
}

} // namespace cloop::net
