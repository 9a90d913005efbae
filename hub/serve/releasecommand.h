#pragma once

#include <QString>
#include <QStringList>

namespace cloop::hub {

// `cloop hub release add|list`: the signed packages the hub offers devices,
// kept in <data>/releases with their signatures in the database.
int runReleaseCommand(const QString &name, const QStringList &arguments);

} // namespace cloop::hub
