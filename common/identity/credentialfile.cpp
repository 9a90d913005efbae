#include "common/identity/credentialfile.h"

#include "common/crypto/secrets.h"
#include "common/logging.h"
#include "common/net/huburls.h"
#include "common/util/atomicfile.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>

#include <cerrno>
#include <cmath>
#include <cstring>

#include <sys/stat.h>
#include <unistd.h>

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
// "server" first, then the other URLs of "servers". A file may name only
// "server" (written before clusters), and "server" is what an earlier
// version or a person editing the file changed, so it leads.
Result<QList<QUrl>> readServers(const QJsonObject &object)
{
    auto server = net::parseHubUrl(
        object.value(QLatin1String("server")).toString(), net::PlaintextHubUrls::LeftToTheDaemon);
    if (!server)
        return Error::make(server.error().code,
            QStringLiteral("\"server\" is not a URL: %1").arg(server.error().message));
    QList<QUrl> urls { *server };
    const QJsonValue list = object.value(QLatin1String("servers"));
    if (list.isUndefined())
        return urls;
    auto servers = net::parseHubUrlList(list, net::PlaintextHubUrls::LeftToTheDaemon);
    if (!servers)
        return Error::make(servers.error().code,
            QStringLiteral("\"servers\" is invalid: %1").arg(servers.error().message));
    for (const QUrl &url : std::as_const(*servers)) {
        if (!net::sameHub(url, *server))
            urls.append(url);
    }
    if (urls.size() > net::kMaxHubUrls)
        return Error::make(QStringLiteral("invalid_url"),
            QStringLiteral("\"server\" and \"servers\" name more than %1 hub URLs")
                .arg(net::kMaxHubUrls));
    return urls;
}
} // namespace

QList<QUrl> DaemonCredential::servers() const
{
    return QList<QUrl> { server } + moreServers;
}

void DaemonCredential::setServers(const QList<QUrl> &urls)
{
    server = urls.value(0);
    moreServers = urls.mid(1);
}

QJsonObject DaemonCredential::toJson() const
{
    // Role-specific keys first, so none of them can shadow a field below.
    QJsonObject object = extra;
    const QJsonObject known {
        { QStringLiteral("server"), server.toString() },
        { QStringLiteral("servers"), net::hubUrlListJson(servers()) },
        { QStringLiteral("id"), id },
        { QStringLiteral("name"), name },
        { QStringLiteral("credential"), credential },
        { QStringLiteral("pin"), pin },
        { QStringLiteral("enrolled_at"), enrolledAt.toUTC().toString(Qt::ISODateWithMs) },
    };
    for (auto it = known.begin(); it != known.end(); ++it)
        object.insert(it.key(), it.value());
    if (!caFile.isEmpty())
        object.insert(QStringLiteral("ca_file"), caFile);
    if (device)
        object.insert(QStringLiteral("device"), device->toJson());
    return object;
}

QString CredentialFile::defaultPath(const QString &fileName)
{
    return QDir::homePath() + QLatin1String("/.cloop/") + fileName;
}

Result<LoadedCredential> CredentialFile::load(net::PinRequirement pin) const
{
    LoadedCredential loaded;
    QFile file(m_path);
    if (!file.exists())
        return loaded;
    if (!file.open(QIODevice::ReadOnly))
        return broken(m_path, file.errorString());
    const int mode = util::fileMode(m_path);
    if (mode >= 0 && (mode & 0077) != 0)
        loaded.warnings.append(
            QStringLiteral("credential file %1 has mode %2; it holds a secret and "
                           "should be 0600 (chmod 600 %1)")
                .arg(m_path)
                .arg(mode, 4, 8, QLatin1Char('0')));
    const QByteArray bytes = file.read(1024 * 1024);
    QJsonParseError parseError {};
    const QJsonDocument document = QJsonDocument::fromJson(bytes, &parseError);
    if (parseError.error != QJsonParseError::NoError)
        return broken(m_path,
            QStringLiteral("not JSON (%1 at offset %2)")
                .arg(parseError.errorString())
                .arg(parseError.offset));
    if (!document.isObject())
        return broken(m_path, QStringLiteral("not a JSON object"));
    const QJsonObject object = document.object();

    DaemonCredential credential;
    auto servers = readServers(object);
    if (!servers)
        return broken(m_path, servers.error().message);
    credential.setServers(*servers);
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
    auto pins = net::PinSet::parse(credential.pin);
    if (!pins)
        return broken(m_path, QStringLiteral("\"pin\" is invalid: %1").arg(pins.error().message));
    if (pins->isEmpty() && pin == net::PinRequirement::Required)
        return Error::make(ErrorCode::CredentialUnpinned,
            QStringLiteral(
                "credential file %1 holds no pin of the hub's key (\"pin\" is empty): "
                "without one any certificate a CA issues for the hub's name would pass, and "
                "the daemon never falls back to that by itself. Enroll again with a new "
                "bundle or restore the file")
                .arg(m_path),
            true);
    credential.enrolledAt = QDateTime::fromString(
        object.value(QLatin1String("enrolled_at")).toString(), Qt::ISODateWithMs);
    credential.caFile = object.value(QLatin1String("ca_file")).toString();
    if (const QJsonValue device = object.value(QLatin1String("device")); !device.isUndefined()) {
        auto spec = device.isObject()
            ? protocol::DeviceSpec::fromJson(device.toObject())
            : Result<protocol::DeviceSpec>(
                Error::make(QStringLiteral("invalid_device"), QStringLiteral("not an object")));
        if (!spec)
            return broken(
                m_path, QStringLiteral("\"device\" is not a device: %1").arg(spec.error().message));
        credential.device = *spec;
    }
    static const QStringList known { QStringLiteral("server"), QStringLiteral("servers"),
        QStringLiteral("id"), QStringLiteral("name"), QStringLiteral("credential"),
        QStringLiteral("pin"), QStringLiteral("enrolled_at"), QStringLiteral("ca_file"),
        QStringLiteral("device") };
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

Status CredentialFile::keepPrivate() const
{
    const QByteArray path = QFile::encodeName(m_path);
    struct stat st
    {
    };
    if (::stat(path.constData(), &st) != 0) {
        if (errno == ENOENT)
            return {};
        return broken(m_path, QString::fromLocal8Bit(std::strerror(errno)));
    }
    if (st.st_uid != ::geteuid())
        return Error::make(QStringLiteral("credential_file_foreign"),
            QStringLiteral(
                "credential file %1 belongs to uid %2, not to this daemon (uid %3): whoever "
                "owns it can read and replace the credential. Give it to uid %3 with mode "
                "0600")
                .arg(m_path)
                .arg(st.st_uid)
                .arg(::geteuid()),
            true);
    if ((st.st_mode & 0077) != 0) {
        if (::chmod(path.constData(), 0600) != 0)
            return broken(m_path,
                QStringLiteral("its mode %1 is wider than 0600 and cannot be narrowed: %2")
                    .arg(st.st_mode & 07777, 4, 8, QLatin1Char('0'))
                    .arg(QString::fromLocal8Bit(std::strerror(errno))));
        qCWarning(lcIdentity).noquote()
            << QStringLiteral("narrowed credential file %1 from mode %2 to 0600: it holds "
                              "a secret")
                   .arg(m_path)
                   .arg(st.st_mode & 07777, 4, 8, QLatin1Char('0'));
    }
    return {};
}

} // namespace cloop::identity
