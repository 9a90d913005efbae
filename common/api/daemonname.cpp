#include "common/api/daemonname.h"

#include <QRegularExpression>

namespace cloop::api {

Status validateDaemonName(const QString &name, QLatin1StringView noun)
{
    static const QRegularExpression pattern(QStringLiteral("\\A[a-z0-9][a-z0-9._-]{0,62}\\z"));
    if (!pattern.match(name).hasMatch())
        return Error::make(QStringLiteral("invalid_name"),
            QStringLiteral("%1 name \"%2\" must be 1-63 characters of a-z, 0-9, '.', '_' or '-', "
                           "starting with a letter or digit")
                .arg(noun, name.left(80)));
    return {};
}

} // namespace cloop::api
