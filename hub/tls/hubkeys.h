#pragma once

#include "hub/tls/devcertificate.h"

#include <optional>

namespace cloop::hub {

// The hub's key and the next one, as files beside each other: cert.pem and
// key.pem serve; next-cert.pem and next-key.pem are staged (announced to
// every daemon, which pins both); activation makes the staged pair the one
// that serves and keeps the old one as previous-*.pem.
//
// Rotation without cutting anyone off: stage, let the daemons hear the new
// pin (each live one at once, the others when they next connect), activate.
class HubKeys
{
public:
    HubKeys(QString certificatePath, QString keyPath);

    QString stagedCertificatePath() const { return sibling(QStringLiteral("next-cert.pem")); }
    QString stagedKeyPath() const { return sibling(QStringLiteral("next-key.pem")); }

    // A new development key and certificate for the same names; refuses
    // when one is staged already.
    Result<TlsIdentity> stage() const;
    // The staged pair serves from now on; refuses when none is staged.
    Result<TlsIdentity> activate() const;
    // None when nothing is staged; an error when what is staged is unreadable.
    Result<std::optional<TlsIdentity>> staged() const;

    // What daemons are to pin: the serving key's pin, then the staged one's.
    static QStringList pinsOf(const TlsIdentity &serving, const std::optional<TlsIdentity> &staged);

private:
    QString sibling(const QString &name) const;

    QString m_certificatePath;
    QString m_keyPath;
};

} // namespace cloop::hub
