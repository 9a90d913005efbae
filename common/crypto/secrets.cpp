#include "common/crypto/secrets.h"

#include <QCryptographicHash>
#include <QRandomGenerator>

#include <array>

namespace cloop::secrets {

namespace {
struct PrefixEntry
{
    SecretKind kind;
    const char *prefix;
    const char *description;
};

constexpr std::array kPrefixes {
    PrefixEntry { SecretKind::ForwarderEnrollmentToken, "cft_", "a forwarder enrollment token" },
    PrefixEntry { SecretKind::ForwarderCredential, "cfc_", "a forwarder credential" },
    PrefixEntry { SecretKind::AgentEnrollmentToken, "cet_", "an executor enrollment token" },
    PrefixEntry { SecretKind::AgentCredential, "cec_", "an executor credential" },
    PrefixEntry { SecretKind::ApiToken, "cat_", "an API token" },
};
} // namespace

QString prefixFor(SecretKind kind)
{
    for (const auto &entry : kPrefixes) {
        if (entry.kind == kind)
            return QString::fromLatin1(entry.prefix);
    }
    return {};
}

SecretKind kindOf(const QString &secret)
{
    for (const auto &entry : kPrefixes) {
        if (secret.startsWith(QLatin1StringView(entry.prefix)))
            return entry.kind;
    }
    return SecretKind::Unknown;
}

QString describe(SecretKind kind)
{
    for (const auto &entry : kPrefixes) {
        if (entry.kind == kind)
            return QString::fromLatin1(entry.description);
    }
    return QStringLiteral("an unrecognised secret");
}

QString generate(SecretKind kind)
{
    return prefixFor(kind) + generateTicket();
}

QString generateTicket()
{
    std::array<quint32, 8> words {};
    QRandomGenerator::system()->fillRange(words.data(), words.size());
    const QByteArray raw(reinterpret_cast<const char *>(words.data()),
        static_cast<qsizetype>(words.size() * sizeof(quint32)));
    return QString::fromLatin1(
        raw.toBase64(QByteArray::Base64UrlEncoding | QByteArray::OmitTrailingEquals));
}

QByteArray sha256(QByteArrayView data)
{
    return QCryptographicHash::hash(data, QCryptographicHash::Sha256);
}

QString sha256Hex(const QString &secret)
{
    return QString::fromLatin1(sha256(secret.toUtf8()).toHex());
}

bool constantTimeEquals(QByteArrayView a, QByteArrayView b)
{
    if (a.size() != b.size())
        return false;
    unsigned char diff = 0;
    for (qsizetype i = 0; i < a.size(); ++i)
        diff |= static_cast<unsigned char>(a[i] ^ b[i]);
    return diff == 0;
}

} // namespace cloop::secrets
