#include "hub/localaccess.h"

#include "common/util/atomicfile.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>

namespace cloop::hub {

QString defaultHubDataDir()
{
    const QString fromEnvironment = qEnvironmentVariable("CLOOP_HUB_DATA");
    if (!fromEnvironment.isEmpty())
        return fromEnvironment;
    return QDir::homePath() + QLatin1String("/.cloop/hub");
}

Result<LocalAccess> LocalAccess::load(const QString &dataDir)
{
    const QString path = dataDir + QLatin1Char('/') + fileName();
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return Error::make(QStringLiteral("no_local_hub"),
            QStringLiteral("no hub administration file at %1 (%2); on the hub's machine "
                           "start `cloop hub serve` first, elsewhere pass --hub URL")
                .arg(path, file.errorString()),
            true);
    const QJsonObject object = QJsonDocument::fromJson(file.read(64 * 1024)).object();
    LocalAccess access;
    access.url = QUrl(object.value(QLatin1String("url")).toString(), QUrl::StrictMode);
    access.pin = object.value(QLatin1String("pin")).toString();
    access.token = object.value(QLatin1String("token")).toString();
    access.metrics = QUrl(object.value(QLatin1String("metrics")).toString(), QUrl::StrictMode);
    access.pid = object.value(QLatin1String("pid")).toInteger();
    if (!access.url.isValid() || access.token.isEmpty())
        return Error::make(QStringLiteral("no_local_hub"),
            QStringLiteral("%1 is unreadable; restart the hub to rewrite it").arg(path), true);
    return access;
}

Status LocalAccess::save(const QString &dataDir) const
{
    QJsonObject object { { QStringLiteral("url"), url.toString() }, { QStringLiteral("pin"), pin },
        { QStringLiteral("token"), token } };
    if (!metrics.isEmpty())
        object.insert(QStringLiteral("metrics"), metrics.toString());
    if (pid > 0)
        object.insert(QStringLiteral("pid"), pid);
    return util::writeFileAtomically(dataDir + QLatin1Char('/') + fileName(),
        QJsonDocument(object).toJson(QJsonDocument::Indented), 0600);
}

} // namespace cloop::hub
