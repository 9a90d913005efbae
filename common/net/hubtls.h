#pragma once

#include "common/net/spkipin.h"
#include "common/net/tlsstream.h"
#include "common/result.h"

#include <QList>
#include <QSslConfiguration>
#include <QSslError>
#include <QUrl>

namespace cloop::net {

// How a client decides whether it is talking to its hub: the system's CAs
// plus an optional private CA file, and on top of that the SPKI pins stored
// with the credential. There is deliberately no way to skip verification.
class HubTrust
{
public:
    HubTrust() = default;
    HubTrust(PinSet pins, QList<QSslCertificate> extraAuthorities);

    // Reads a PEM file of one or more CA certificates.
    static Result<QList<QSslCertificate>> loadAuthorities(const QString &path);
    // The trust an operator gives: a pin set as written, and a CA file
    // (none when empty). The one place that turns the two into a trust.
    static Result<HubTrust> fromPinsAndCaFile(const PinSet &pins, const QString &caFile);

    const PinSet &pins() const { return m_pins; }
    QSslConfiguration configuration() const;
    // What an unpinned, untrusted certificate's refusal tells the person to
    // do, in the options of the program at hand; by default the command
    // line's (--pin, --ca).
    void setUntrustedRemedy(QString remedy) { m_untrustedRemedy = std::move(remedy); }
    // What a pinned key's mismatch tells the person to do: a daemon that
    // was away while the hub's key was rotated names its repin command.
    void setMismatchRemedy(QString remedy) { m_mismatchRemedy = std::move(remedy); }

    // From an sslErrors handler: the errors it is right to ignore (only the
    // "no trusted issuer" family, and only when a pin vouches for the key),
    // or the reason to refuse the connection.
    Result<QList<QSslError>> judge(
        const QList<QSslError> &errors, const QSslCertificate &peer) const;
    // The same verdict on what our own TLS client's verifier found, then
    // the pin itself: whether this connection may carry a secret. The key
    // comes as its digest (TlsStream::peerKeyDigest()).
    Status judge(const QList<CertificateProblem> &problems, const QByteArray &peerKey) const;
    // The client context that verifies as this trust does: made on first
    // use, shared by every copy of this trust and every connection.
    Result<std::shared_ptr<const TlsContext>> clientContext() const;

    // After the handshake, before any secret is sent.
    Status verifyPeer(const QSslCertificate &peer) const;

private:
    struct Problem
    {
        QString text;
        bool noTrustedIssuer = false;
    };
    Status judgeProblems(const QList<Problem> &problems, const QByteArray &peerKey) const;
    Status verifyKey(const QByteArray &peerKey) const;

    PinSet m_pins;
    QList<QSslCertificate> m_extraAuthorities;
    // Shared between copies: the context depends on the authorities alone.
    std::shared_ptr<std::shared_ptr<const TlsContext>> m_clientContext
        = std::make_shared<std::shared_ptr<const TlsContext>>();
    QString m_mismatchRemedy;
    QString m_untrustedRemedy
        = QStringLiteral(" (pin the hub's key with --pin or add its CA with --ca)");
};

// wss:// anywhere; ws:// only to a loopback host unless the operator passed
// the explicit insecure flag (then the caller warns on every attempt).
// Returns whether the URL is plaintext to a non-loopback host. A refusal
// names `insecureOption` when the program has one.
Result<bool> checkHubUrl(
    const QUrl &url, bool allowInsecure, const QString &insecureOption = QString());
bool isLoopbackHost(const QString &host);

// "https://h:p" / "wss://h:p" + path -> the WebSocket URL of an endpoint.
QUrl endpointUrl(const QUrl &hubUrl, const QString &path);

} // namespace cloop::net
