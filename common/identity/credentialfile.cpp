#include "common/identity/credentialfile.h"

#include "common/crypto/secrets.h"
#include "common/util/atomicfile.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>

#include <cmath>

namespace cloop::identity {

namespace {
Error broken(const QString &path, const QString &problem)
{
    return Error::make(QStringLiteral("credential_file_broken"),
                       QStringLiteral("credential file %1 is unusable: %2. Enroll again with a new "
                                      "bundle, or restore the file.")
                               .arg(path, problem),
                       true);
}
} // namespace

QJsonObject DaemonCredential::toJson() const
{
    // Role-specific keys first, so none of them can shadow a field below.
    QJsonObject object = extra;
    const QJsonObject known{
        {QStringLiteral("server"), server.toString()},
        {QStringLiteral("id"), id},
        {QStringLiteral("name"), name},
        {QStringLiteral("credential"), credential},
        {QStringLiteral("pin"), pin},
        {QStringLiteral("enrolled_at"), enrolledAt.toUTC().toString(Qt::ISODateWithMs)},
    };
    for (auto it = known.begin(); it != known.end(); ++it)
        object.insert(it.key(), it.value());
    if (!caFile.isEmpty())
        object.insert(QStringLiteral("ca_file"), caFile);
    return object;
}

QString CredentialFile::defaultPath(const QString &fileName)
{
    return QDir::homePath() + QLatin1String("/.cloop/") + fileName;
}

Result<LoadedCredential> CredentialFile::load() const
{
    LoadedCredential loaded;
    QFile file(m_path);
    if (!file.exists())
        return loaded;
    if (!file.open(QIODevice::ReadOnly))
        return broken(m_path, file.errorString());
    const int mode = util::fileMode(m_path);
    if (mode >= 0 && (mode & 0077) != 0)
        loaded.warnings.append(QStringLiteral("credential file %1 has mode %2; it holds a secret and "
                                              "should be 0600 (chmod 600 %1)")
                                       .arg(m_path)
                                       .arg(mode, 4, 8, QLatin1Char('0')));
    const QByteArray bytes = file.read(1024 * 1024);
    QJsonParseError parseError{};
    const QJsonDocument document = QJsonDocument::fromJson(bytes, &parseError);
    if (parseError.error != QJsonParseError::NoError)
        return broken(m_path, QStringLiteral("not JSON (%1 at offset %2)")
                                      .arg(parseError.errorString())
                                      .arg(parseError.offset));
    if (!document.isObject())
        return broken(m_path, QStringLiteral("not a JSON object"));
    const QJsonObject object = document.object();

    DaemonCredential credential;
    credential.server = QUrl(object.value(QLatin1String("server")).toString(), QUrl::StrictMode);
    if (!credential.server.isValid() || credential.server.host().isEmpty())
        return broken(m_path, QStringLiteral("\"server\" is not a URL"));
    const double id = object.value(QLatin1String("id")).toDouble(0);
    // Range before conversion: a double outside qint64 does not convert.
    if (!(id >= 1 && id <= 9007199254740992.0) || std::trunc(id) != id)
        return broken(m_path, QStringLiteral("\"id\" is not a positive integer"));
    credential.id = static_cast<qint64>(id);
    credential.name = object.value(QLatin1String("name")).toString();
    credential.credential = object.value(QLatin1String("credential")).toString();
    if (credential.credential.isEmpty())
        return broken(m_path, QStringLiteral("\"credential\" is missing"));
    if (secrets::kindOf(credential.credential) == secrets::SecretKind::Unknown)
        return broken(m_path, QStringLiteral("\"credential\" is not a cloop credential"));
    credential.pin = object.value(QLatin1String("pin")).toString();
    credential.enrolledAt = QDateTime::fromString(object.value(QLatin1String("enrolled_at")).toString(),
                                                  Qt::ISODateWithMs);
    credential.caFile = object.value(QLatin1String("ca_file")).toString();
    static const QStringList known{QStringLiteral("server"),      QStringLiteral("id"),
                                   QStringLiteral("name"),        QStringLiteral("credential"),
                                   QStringLiteral("pin"),         QStringLiteral("enrolled_at"),
                                   QStringLiteral("ca_file")};
    for (auto it = object.begin(); it != object.end(); ++it) {
        if (!known.contains(it.key()))
            credential.extra.insert(it.key(), it.value());
    }
    loaded.credential = credential;
    return loaded;
}

Status CredentialFile::save(const DaemonCredential &credential) const
{
    return util::writeFileAtomically(
            m_path, QJsonDocument(credential.toJson()).toJson(QJsonDocument::Indented), 0600);
}

} // namespace cloop::identity
