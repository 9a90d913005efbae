#include "cli/argumentchecks.h"

#include "hub/storage/forwarderstore.h"
#include "hub/storage/projectstore.h"

namespace cloop::cli {

Result<qint64> parseId(const QString &text, const QString &what)
{
    bool isNumber = false;
    const qint64 id = text.toLongLong(&isNumber);
    if (!isNumber || id < 1)
        return Error::make(QStringLiteral("usage"),
            QStringLiteral("\"%1\" is not a %2 (a positive integer)").arg(text, what));
    return id;
}

Result<QString> checkProjectPath(const QString &text)
{
    QString path = text;
    while (path.size() > 1 && path.endsWith(QLatin1Char('/')))
        path.chop(1);
    if (Status valid = hub::ProjectStore::validateProjectPath(path); !valid)
        return valid.error();
    return path;
}

Status checkUserName(const QString &name)
{
    if (hub::ForwarderStore::validateName(name))
        return {};
    return Error::make(QStringLiteral("usage"),
        QStringLiteral("user name \"%1\" must be 1-63 characters of a-z, 0-9, '.', '_' or '-', "
                       "starting with a letter or digit")
            .arg(name.left(80)));
}

} // namespace cloop::cli
