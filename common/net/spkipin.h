#pragma once

#include "common/result.h"

#include <QByteArray>
#include <QList>
#include <QString>

class QSslCertificate;

namespace cloop::net {

// Whether a daemon may go without any pin. The pin travels in every bundle a
// hub makes and is kept with the credential, so a missing one means the
// file or bundle was edited or made by hand: it is refused, never read as
// "CA checks alone", unless the daemon's operator asked for exactly that.
enum class PinRequirement
{
    Required,
    Optional
};

// A set of SubjectPublicKeyInfo pins, "sha256:<base64>" separated by commas.
// Several pins let a hub stage a key rotation: daemons pinned to the old and
// the new key keep connecting across the switch.
class PinSet
{
public:
    PinSet() = default;
    static Result<PinSet> parse(const QString &text);
    static PinSet ofCertificate(const QSslCertificate &certificate);

    // SHA-256 over the DER SubjectPublicKeyInfo (what HPKP and curl's
    // --pinnedpubkey hash), empty when the certificate cannot be read.
    static QByteArray spkiSha256(const QSslCertificate &certificate);
    static QString pinOf(const QSslCertificate &certificate);
    // A pin as people compare it, in groups of four: "sha256: AbCd EfGh …".
    static QString grouped(const QString &pin);

    bool isEmpty() const { return m_digests.isEmpty(); }
    bool matches(const QSslCertificate &certificate) const;
    // The same for a key's digest (spkiSha256), as a TLS client has it
    // without decoding the certificate again.
    bool matchesKey(const QByteArray &spkiSha256) const;
    QString toString() const;

    // A refusal naming what was expected and what the server showed.
    Status verify(const QSslCertificate &certificate) const;
    Status verifyKey(const QByteArray &spkiSha256) const;

    friend bool operator==(const PinSet &, const PinSet &) = default;

private:
    QList<QByteArray> m_digests;
};

} // namespace cloop::net
