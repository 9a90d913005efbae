#include "hub/tls/hubkeys.h"

#include <QFile>
#include <QFileInfo>
#include <QSslCertificate>

namespace cloop::hub {

namespace {

Error keyError(const QString &message)
{
    return Error::make(QStringLiteral("hub_key"), message);
}

// The names the serving certificate is for, so that the next one is too.
QStringList namesOf(const QSslCertificate &certificate)
{
    QStringList names;
    const auto alternatives = certificate.subjectAlternativeNames();
    for (auto name = alternatives.cbegin(); name != alternatives.cend(); ++name) {
        if (!names.contains(name.value()))
            names.append(name.value());
    }
    return names.isEmpty() ? defaultDevHostNames() : names;
}

Status moveFile(const QString &from, const QString &to)
{
    QFile::remove(to);
    if (!QFile::rename(from, to))
        return keyError(QStringLiteral("cannot move %1 to %2").arg(from, to));
    return {};
}

} // namespace

HubKeys::HubKeys(QString certificatePath, QString keyPath)
    : m_certificatePath(std::move(certificatePath))
    , m_keyPath(std::move(keyPath))
{ }

QString HubKeys::sibling(const QString &name) const
{
    return QFileInfo(m_certificatePath).absolutePath() + QLatin1Char('/') + name;
}

Result<std::optional<TlsIdentity>> HubKeys::staged() const
{
    if (!QFileInfo::exists(stagedCertificatePath()) && !QFileInfo::exists(stagedKeyPath()))
        return std::optional<TlsIdentity>();
    auto identity = TlsIdentity::load(stagedCertificatePath(), stagedKeyPath());
    if (!identity)
        return keyError(
            QStringLiteral("the staged key cannot be read: %1").arg(identity.error().message));
    return std::optional<TlsIdentity>(std::move(*identity));
}

Result<TlsIdentity> HubKeys::stage() const
{
    auto serving = TlsIdentity::load(m_certificatePath, m_keyPath);
    if (!serving)
        return serving.error();
    auto already = staged();
    if (!already)
        return already.error();
    if (*already)
        return keyError(QStringLiteral("a key is staged already (pin %1): activate it first")
                            .arg((*already)->pin));
    DevCertificateRequest request;
    request.hostNames = namesOf(serving->chain.constFirst());
    if (Status made = generateDevCertificate(request, stagedCertificatePath(), stagedKeyPath());
        !made)
        return made.error();
    return TlsIdentity::load(stagedCertificatePath(), stagedKeyPath());
}

Result<TlsIdentity> HubKeys::activate() const
{
    auto next = staged();
    if (!next)
        return next.error();
    if (!*next)
        return keyError(QStringLiteral("no key is staged: stage one first"));
    if (Status kept = moveFile(m_certificatePath, sibling(QStringLiteral("previous-cert.pem")));
        !kept)
        return kept.error();
    if (Status kept = moveFile(m_keyPath, sibling(QStringLiteral("previous-key.pem"))); !kept)
        return kept.error();
    if (Status moved = moveFile(stagedCertificatePath(), m_certificatePath); !moved)
        return moved.error();
    if (Status moved = moveFile(stagedKeyPath(), m_keyPath); !moved)
        return moved.error();
    return std::move(**next);
}

QStringList HubKeys::pinsOf(const TlsIdentity &serving, const std::optional<TlsIdentity> &staged)
{
    QStringList pins { serving.pin };
    if (staged && staged->pin != serving.pin)
        pins.append(staged->pin);
    return pins;
}

} // namespace cloop::hub
