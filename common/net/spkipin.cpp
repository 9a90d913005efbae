#include "common/net/spkipin.h"

#include "common/crypto/secrets.h"

#include <QSslCertificate>
#include <QStringList>

#include <openssl/x509.h>

#include <memory>

namespace cloop::net {

namespace {
constexpr QLatin1StringView kPrefix { "sha256:" };

QString formatPin(const QByteArray &digest)
{
    return kPrefix + QString::fromLatin1(digest.toBase64());
}
} // namespace

QByteArray PinSet::spkiSha256(const QSslCertificate &certificate)
{
    const QByteArray der = certificate.toDer();
    if (der.isEmpty())
        return {};
    const auto *cursor = reinterpret_cast<const unsigned char *>(der.constData());
    std::unique_ptr<X509, decltype(&X509_free)> x509(
        d2i_X509(nullptr, &cursor, der.size()), &X509_free);
    if (!x509)
        return {};
    unsigned char *spki = nullptr;
    const int length = i2d_X509_PUBKEY(X509_get_X509_PUBKEY(x509.get()), &spki);
    if (length <= 0)
        return {};
    const QByteArray digest
        = secrets::sha256(QByteArrayView(reinterpret_cast<const char *>(spki), length));
    OPENSSL_free(spki);
    return digest;
}

QString PinSet::pinOf(const QSslCertificate &certificate)
{
    const QByteArray digest = spkiSha256(certificate);
    return digest.isEmpty() ? QString() : formatPin(digest);
}

QString PinSet::grouped(const QString &pin)
{
    const qsizetype colon = pin.indexOf(u':');
    const QString digest = pin.mid(colon + 1);
    QStringList groups;
    for (qsizetype at = 0; at < digest.size(); at += 4)
        groups.append(digest.mid(at, 4));
    return pin.left(colon + 1) + u' ' + groups.join(u' ');
}

PinSet PinSet::ofCertificate(const QSslCertificate &certificate)
{
    PinSet set;
    const QByteArray digest = spkiSha256(certificate);
    if (!digest.isEmpty())
        set.m_digests.append(digest);
    return set;
}

Result<PinSet> PinSet::parse(const QString &text)
{
    PinSet set;
    const QStringList parts = text.split(QLatin1Char(','), Qt::SkipEmptyParts);
    for (QString part : parts) {
        part = part.trimmed();
        if (!part.startsWith(kPrefix))
            return Error::make(QStringLiteral("invalid_pin"),
                QStringLiteral("pin \"%1\" does not start with \"sha256:\"").arg(part.left(80)),
                true);
        const QByteArray base64 = part.mid(kPrefix.size()).toLatin1();
        const auto decoded
            = QByteArray::fromBase64Encoding(base64, QByteArray::AbortOnBase64DecodingErrors);
        if (!decoded || decoded.decoded.size() != 32)
            return Error::make(QStringLiteral("invalid_pin"),
                QStringLiteral("pin \"%1\" is not the base64 of a 32-byte SHA-256 digest")
                    .arg(part.left(80)),
                true);
        if (!set.m_digests.contains(decoded.decoded))
            set.m_digests.append(decoded.decoded);
    }
    return set;
}

bool PinSet::matches(const QSslCertificate &certificate) const
{
    return matchesKey(spkiSha256(certificate));
}

bool PinSet::matchesKey(const QByteArray &digest) const
{
    if (digest.isEmpty())
        return false;
    for (const QByteArray &pinned : m_digests) {
        if (secrets::constantTimeEquals(pinned, digest))
            return true;
    }
    return false;
}

QString PinSet::toString() const
{
    QStringList pins;
    for (const QByteArray &digest : m_digests)
        pins.append(formatPin(digest));
    return pins.join(QLatin1Char(','));
}

Status PinSet::verify(const QSslCertificate &certificate) const
{
    return verifyKey(spkiSha256(certificate));
}

Status PinSet::verifyKey(const QByteArray &digest) const
{
    if (isEmpty() || matchesKey(digest))
        return {};
    return Error::make(QStringLiteral("pin_mismatch"),
        QStringLiteral("the hub's certificate key does not match the pinned key: "
                       "expected %1, the server presented %2")
            .arg(toString(),
                digest.isEmpty() ? QStringLiteral("no certificate") : formatPin(digest)));
}

} // namespace cloop::net
