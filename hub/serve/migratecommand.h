#pragma once

#include <QString>
#include <QStringList>

namespace cloop::hub {

// `cloop hub migrate --to postgresql://…`: a single hub's records moved
// into the database a cluster's members share, checked row by row.
int runMigrateCommand(const QString &name, const QStringList &arguments);

} // namespace cloop::hub
