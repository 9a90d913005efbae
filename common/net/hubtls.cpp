#include "common/net/hubtls.h"

#include <QCryptographicHash>
#include <QFile>
#include <QHash>
#include <QHostAddress>
#include <QMutex>

namespace cloop::net {

HubTrust::HubTrust(PinSet pins, QList<QSslCertificate> extraAuthorities)
    : m_pins(std::move(pins))
    , m_extraAuthorities(std::move(extraAuthorities))
{ }

Result<HubTrust> HubTrust::fromPinsAndCaFile(const PinSet &pins, const QString &caFile)
{
    QList<QSslCertificate> authorities;
    if (!caFile.isEmpty()) {
        auto loaded = loadAuthorities(caFile);
        if (!loaded)
            return loaded.error();
        authorities = *loaded;
    }
    return HubTrust(pins, authorities);
}

Result<QList<QSslCertificate>> HubTrust::loadAuthorities(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return Error::make(QStringLiteral("ca_unreadable"),
            QStringLiteral("cannot read CA file %1: %2").arg(path, file.errorString()), true);
    const auto certificates = QSslCertificate::fromData(file.readAll(), QSsl::Pem);
    if (certificates.isEmpty())
        return Error::make(QStringLiteral("ca_invalid"),
            QStringLiteral("CA file %1 holds no PEM certificate").arg(path), true);
    return certificates;
}

QSslConfiguration HubTrust::configuration() const
{
    QSslConfiguration config = QSslConfiguration::defaultConfiguration();
    config.setPeerVerifyMode(QSslSocket::VerifyPeer);
    config.setProtocol(QSsl::TlsV1_2OrLater);
    if (!m_extraAuthorities.isEmpty()) {
        // Adding CAs turns off the on-demand loading of the system's roots:
        // add those explicitly so a private CA extends the trust, not replaces it.
        config.setCaCertificates(QSslConfiguration::systemCaCertificates() + m_extraAuthorities);
    }
    return config;
}

Result<QList<QSslError>> HubTrust::judge(
    const QList<QSslError> &errors, const QSslCertificate &peer) const
{
    // What Qt calls "no trusted issuer", as OpenSSL's verifier does.
    static const QList<QSslError::SslError> noTrustedIssuer {
        QSslError::SelfSignedCertificate,
        QSslError::SelfSignedCertificateInChain,
        QSslError::UnableToGetLocalIssuerCertificate,
        QSslError::UnableToGetIssuerCertificate,
        QSslError::UnableToVerifyFirstCertificate,
        QSslError::CertificateUntrusted,
    };
    QList<Problem> problems;
    for (const QSslError &error : errors)
        problems.append({ error.errorString(), noTrustedIssuer.contains(error.error()) });
    if (const Status verdict = judgeProblems(problems, PinSet::spkiSha256(peer)); !verdict)
        return verdict.error();
    return errors;
}

Status HubTrust::judge(const QList<CertificateProblem> &problems, const QByteArray &peerKey) const
{
    QList<Problem> found;
    for (const CertificateProblem &problem : problems)
        found.append({ problem.text, problem.noTrustedIssuer });
    // The pin is checked there on every connection, also when a public CA
    // vouched for the certificate.
    return judgeProblems(found, peerKey);
}

Status HubTrust::judgeProblems(const QList<Problem> &problems, const QByteArray &peerKey) const
{
    // Chain errors mean "no CA vouches for this key". A matching pin is a
    // stronger statement about the key, so only those may be waived, and
    // never an expired certificate or the wrong host name.
    const bool pinned = !m_pins.isEmpty() && m_pins.matchesKey(peerKey);
    if (!m_pins.isEmpty() && !pinned)
        return verifyKey(peerKey);
    QStringList fatal;
    for (const Problem &problem : problems) {
        if (!(pinned && problem.noTrustedIssuer) && !fatal.contains(problem.text))
            fatal.append(problem.text);
    }
    if (!fatal.isEmpty())
        return Error::make(QStringLiteral("tls_untrusted"),
            QStringLiteral("the hub's certificate is not trusted: %1%2")
                .arg(fatal.join(QStringLiteral("; ")),
                    m_pins.isEmpty() ? m_untrustedRemedy : QString()));
    return {};
}

Result<std::shared_ptr<const TlsContext>> HubTrust::clientContext() const
{
    if (*m_clientContext)
        return *m_clientContext;
    // Trusts made apart (a daemon's leg dials, a new pin the hub announced)
    // with the same authorities share one context while any holds it: the
    // system's CA store is read once, not per trust.
    static QMutex mutex;
    static QHash<QByteArray, std::weak_ptr<const TlsContext>> contexts;
    QByteArray key;
    for (const QSslCertificate &authority : m_extraAuthorities)
        key += authority.digest(QCryptographicHash::Sha256);
    const QMutexLocker locker(&mutex);
    std::shared_ptr<const TlsContext> context = contexts.value(key).lock();
    if (!context) {
        auto made = TlsContext::forClient(m_extraAuthorities);
        if (!made)
            return made.error();
        context = std::move(*made);
        contexts.insert(key, context);
    }
    *m_clientContext = context;
    return context;
}

Status HubTrust::verifyPeer(const QSslCertificate &peer) const
{
    return verifyKey(PinSet::spkiSha256(peer));
}

Status HubTrust::verifyKey(const QByteArray &peerKey) const
{
    Status verified = m_pins.verifyKey(peerKey);
    if (!verified)
        return Error::make(verified.error().code, verified.error().message + m_mismatchRemedy);
    return verified;
}

bool isLoopbackHost(const QString &host)
{
    if (host.compare(QLatin1String("localhost"), Qt::CaseInsensitive) == 0)
        return true;
    const QHostAddress address(host);
    return !address.isNull() && address.isLoopback();
}

Result<bool> checkHubUrl(const QUrl &url, bool allowInsecure, const QString &insecureOption)
{
    if (!url.isValid() || url.host().isEmpty())
        return Error::make(QStringLiteral("invalid_url"),
            QStringLiteral("\"%1\" is not a hub URL (expected wss://HOST:PORT)")
                .arg(url.toString()),
            true);
    const QString scheme = url.scheme();
    if (scheme == QLatin1String("wss") || scheme == QLatin1String("https"))
        return false;
    if (scheme == QLatin1String("ws") || scheme == QLatin1String("http")) {
        if (isLoopbackHost(url.host()))
            return false;
        if (allowInsecure)
            return true;
        return Error::make(ErrorCode::InsecureUrl,
            QStringLiteral("refusing plaintext %1 to %2: use wss://%3")
                .arg(scheme, url.host(),
                    insecureOption.isEmpty()
                        ? QString()
                        : QStringLiteral(", or pass %1 if this network is trusted")
                              .arg(insecureOption)),
            true);
    }
    return Error::make(QStringLiteral("invalid_url"),
        QStringLiteral("hub URL scheme \"%1\" is not wss:// or ws://").arg(scheme), true);
}

QUrl endpointUrl(const QUrl &hubUrl, const QString &path)
{
    QUrl url = hubUrl;
    if (url.scheme() == QLatin1String("https"))
        url.setScheme(QStringLiteral("wss"));
    else if (url.scheme() == QLatin1String("http"))
        url.setScheme(QStringLiteral("ws"));
    url.setPath(path);
    url.setQuery(QString());
    return url;
}

} // namespace cloop::net
