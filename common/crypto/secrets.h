#pragma once

#include <QByteArray>
#include <QString>

namespace cloop::secrets {

// Secrets are typed by a short prefix so a credential presented at the wrong
// door is recognised and refused with a precise message, and so a leaked
// string in a log says what it is.
enum class SecretKind
{
    ForwarderEnrollmentToken, // cft_
    ForwarderCredential, // cfc_
    AgentEnrollmentToken, // cet_ (executor)
    AgentCredential, // cec_ (executor)
    ApiToken, // cat_
    Unknown,
};

QString prefixFor(SecretKind kind);
SecretKind kindOf(const QString &secret);
QString describe(SecretKind kind);

// 256 bits from the kernel's CSPRNG, base64url without padding, prefixed.
QString generate(SecretKind kind);
// The same without a prefix (43 characters): a one-time ticket that only
// ever travels inside pinned TLS, beside the credential it goes with.
QString generateTicket();

// Lowercase hex SHA-256 of the UTF-8 secret: what the hub stores.
QString sha256Hex(const QString &secret);
QByteArray sha256(QByteArrayView data);

bool constantTimeEquals(QByteArrayView a, QByteArrayView b);

} // namespace cloop::secrets
