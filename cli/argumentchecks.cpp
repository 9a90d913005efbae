#include "cli/argumentchecks.h"

#include "common/api/daemonname.h"
#include "common/util/duration.h"
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
    return checkDaemonName(name, QLatin1StringView("user"));
}

Status checkDaemonName(const QString &name, QLatin1StringView noun)
{
    if (Status valid = api::validateDaemonName(name, noun); !valid)
        return Error::make(QStringLiteral("usage"), valid.error().message);
    return {};
}

Status checkDuration(const QString &text, const QString &option)
{
    if (auto parsed = util::parseDuration(text); !parsed)
        return Error::make(QStringLiteral("usage"),
            QStringLiteral("%1 %2: %3").arg(option, text, parsed.error().message));
    return {};
}

} // namespace cloop::cli
